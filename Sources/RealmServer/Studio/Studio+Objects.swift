import Foundation
import GraphQL
import Hummingbird
import RealmAdapter

/// A type's objects (paged, filtered with the query language GraphQL takes, sorted by a column),
/// one object with its values, and the edits: each a Realm transaction with origin
/// `studio:<user id>`, made by GraphQL's mutations with their checks.
extension Studio {
    /// `GET /studio/objects?path=…&type=…&q=…&sort=…&desc=1&page=…`
    func objects(_ session: StudioSession, _ query: [String: String]) throws -> Response {
        let (path, typeName) = (try Self.required("path", query), try Self.required("type", query))
        let context = try self.context(session, path)
        guard let type = context.schema[type: typeName] else { throw StudioError.noType(typeName, path) }
        let filter = (query["q"] ?? "").trimmingCharacters(in: .whitespaces)
        let columns = type.properties.filter(\.type.isStored)
        let sort = query["sort"].flatMap { s in columns.first { $0.name == s && !$0.type.isList } }
        let descending = sort != nil && query["desc"] == "1"
        var values: [String: Any] = [
            "path": path, "type": typeName, "q": filter, "realm": Self.link("realm", ["path": path]),
        ]
        let keep = [
            "path": path, "type": typeName, "q": filter, "sort": sort?.name ?? "", "desc": descending ? "1" : "",
        ]
        var objects: [RealmObject] = []
        var total = 0
        var pager = StudioPager(total: 0, query: query, link: "objects", keep: keep)
        do {
            let base = ObjectQuery(sortBy: sort?.name, descending: descending, filter: filter.isEmpty ? nil : filter)
            if let q = try context.readable(typeName, base, root: true) {
                let asked = (max(1, Int(query["page"] ?? "") ?? 1) - 1) * Self.pageSize
                (objects, total) = try server.store.page(of: typeName, in: path, with(q, offset: asked))
                pager = StudioPager(total: total, query: query, link: "objects", keep: keep)
                // Past the last page: the last page.
                if pager.offset != asked {
                    objects = try server.store.objects(of: typeName, in: path, with(q, offset: pager.offset))
                }
            }
        } catch let e as RealmAdapterError where !filter.isEmpty {
            values["queryError"] = e.message
            if let at = e.context["query.position"].flatMap(Int.init) {
                values["caret"] = String(repeating: " ", count: max(0, at - 1)) + "^"
            }
        }
        values["columns"] = columns.map { p in
            let next = sort?.name == p.name && !descending
            return [
                "column": p.name, "columnType": p.typeString, "sortable": !p.type.isList,
                "sorted": sort?.name == p.name ? (descending ? "▼" : "▲") : "",
                "sortLink": Self.link(
                    "objects",
                    keep.filter { !$0.value.isEmpty && $0.key != "desc" }.merging(["sort": p.name]) { $1 }
                        .merging(next ? ["desc": "1"] : [:]) { $1 }),
            ] as [String: Any]
        }
        values["rows"] = objects.map { o in
            [
                "objectLink": Self.objectLink(path, typeName, o.identity),
                "key": StudioValues.text(o.identity),
                "cells": columns.map { p in StudioValues.cell(o.values[p.name] ?? .null, p, path: path) },
            ] as [String: Any]
        }
        values["total"] = total
        values["plural"] = total == 1 ? "" : "s"
        values["pager"] = pager.values
        values["none"] = objects.isEmpty
        values["csrf"] = session.csrf
        values["writable"] =
            context.level >= .write && type.primaryKey != nil && !PermissionTypes.isSystemType(typeName)
        values["fields"] = columns.filter { !$0.type.isList }.map { p in
            [
                "field": "value." + p.name, "label": p.name, "fieldType": p.typeString,
                "given": query["value." + p.name] ?? "",
            ]
        }
        if let e = query["addError"] { values["addError"] = e }
        return page(
            "\(typeName) in \(path)", template: "objects", values, session: session,
            status: query["addError"] == nil ? .ok : .badRequest, live: Self.events(path),
            at: Self.link("objects", keep.merging(["page": pager.shown]) { $1 }.filter { !$0.value.isEmpty }))
    }

    func with(_ q: ObjectQuery, offset: Int) -> ObjectQuery {
        var q = q
        q.offset = offset
        q.limit = Self.pageSize
        return q
    }

    /// `GET /studio/object?path=…&type=…&key=<JSON>`: every value, and a form to edit each.
    func object(
        _ session: StudioSession, _ query: [String: String], error: String? = nil, notice: String? = nil
    ) throws -> Response {
        let (path, typeName, keyText) = (
            try Self.required("path", query), try Self.required("type", query), try Self.required("key", query)
        )
        let context = try self.context(session, path)
        guard let type = context.schema[type: typeName] else { throw StudioError.noType(typeName, path) }
        let key = try Self.key(keyText, of: typeName, in: context.schema)
        guard let object = try context.object(typeName, key, root: true) else {
            throw StudioError.noObject(typeName, keyText)
        }
        // The permission metadata's types change through `role` and `permission`, with their checks.
        let writable = context.level >= .write && type.primaryKey != nil && !PermissionTypes.isSystemType(typeName)
        let properties: [[String: Any]] = type.properties.filter(\.type.isStored).map { p in
            let value = object.values[p.name] ?? .null
            var row = StudioValues.cell(value, p, path: path)
            row["property"] = p.name
            row["propertyType"] = p.typeString
            row["editable"] = writable && !p.type.isList && p.name != type.primaryKey
            row["current"] = value.isNull ? "" : StudioValues.editable(value)
            row["optional"] = p.isOptional
            row["isNull"] = value.isNull
            return row
        }
        let values: [String: Any] = [
            "path": path, "type": typeName, "key": keyText, "shownKey": StudioValues.text(key), "csrf": session.csrf,
            "properties": properties, "writable": writable,
            "objects": Self.link("objects", ["path": path, "type": typeName]),
            "realm": Self.link("realm", ["path": path]),
        ].merging(try objectPermissions(context, typeName, key)) { a, _ in a }
        return page(
            "\(typeName) \(StudioValues.text(key))", template: "object", values, session: session, notice: notice,
            error: error, status: error == nil ? .ok : .badRequest, live: Self.events(path),
            at: Self.objectLink(path, typeName, key))
    }

    /// `POST /studio/object` (path, type, key, property, value, null, csrf): sets one value, in
    /// one transaction; the object's page again, with the store's error when the value does not fit.
    func edit(_ session: StudioSession, _ form: [String: String]) async throws -> Response {
        let (path, typeName, keyText, name) = (
            try Self.required("path", form), try Self.required("type", form), try Self.required("key", form),
            try Self.required("property", form)
        )
        let context = try self.context(session, path)
        guard context.level >= .write else {
            throw ServerError.forbidden(path, need: .write, have: context.level)
        }
        let type = try Self.editable(typeName, in: context.schema, path)
        guard let pk = type.primaryKey else { throw StudioError.noKey(typeName) }
        let key = try Self.key(keyText, of: typeName, in: context.schema)
        do {
            guard let property = type[property: name], property.type.isStored, !property.type.isList, name != pk
            else {
                throw GraphQLError(message: "\(typeName) has no property \(name) that Studio can change.")
            }
            let value: JSONValue =
                form["null"] == "1"
                ? .null : StudioValues.json(from: form["value"] ?? "", for: property, in: context.schema)
            let input = Map.dictionary([pk: GraphQLValues.map(key.json), name: GraphQLValues.map(value)])
            _ = try await server.store.perform {
                try GraphQLMutations.create(type, [input], policy: GraphQLMutations.updateOnly, context)
            }
        } catch let e as GraphQLError {
            return try object(session, form, error: e.message)
        }
        return Response.redirect(
            to: Self.objectLink(path, typeName, key) + "&saved=\(Self.encode(name))", type: .normal)
    }

    /// `POST /studio/add-object` (path, type, `value.<property>` for each single-value property
    /// given, csrf): creates the object, in one transaction; its page, or the type's page with the
    /// store's error. Empty fields of optional properties stay null.
    func add(_ session: StudioSession, _ form: [String: String]) async throws -> Response {
        let (path, typeName) = (try Self.required("path", form), try Self.required("type", form))
        let context = try self.context(session, path)
        guard context.level >= .write else { throw ServerError.forbidden(path, need: .write, have: context.level) }
        let type = try Self.editable(typeName, in: context.schema, path)
        var fields: [(String, Map)] = []
        for p in type.properties where p.type.isStored && !p.type.isList {
            guard let text = form["value." + p.name], !(text.isEmpty && p.isOptional) else { continue }
            fields.append((p.name, GraphQLValues.map(StudioValues.json(from: text, for: p, in: context.schema))))
        }
        let input = Map.dictionary(.init(uniqueKeysWithValues: fields))
        let created: [RealmObject]
        do {
            created = try await server.store.perform {
                try GraphQLMutations.create(type, [input], policy: "NONE", context)
            }
        } catch let e as GraphQLError {
            var query = form
            query["addError"] = e.message
            return try objects(session, query)
        }
        guard let object = created.first else { throw StudioError.noObject(typeName, "(new)") }
        return Response.redirect(to: Self.objectLink(path, typeName, object.identity), type: .normal)
    }

    /// `POST /studio/delete` (path, type, key, csrf): deletes the object, in one transaction.
    func delete(_ session: StudioSession, _ form: [String: String]) async throws -> Response {
        let (path, typeName, keyText) = (
            try Self.required("path", form), try Self.required("type", form), try Self.required("key", form)
        )
        let context = try self.context(session, path)
        guard context.level >= .write else { throw ServerError.forbidden(path, need: .write, have: context.level) }
        let type = try Self.editable(typeName, in: context.schema, path)
        let key = try Self.key(keyText, of: typeName, in: context.schema)
        do {
            _ = try await server.store.perform { try GraphQLMutations.delete(type, key, context) }
        } catch let e as GraphQLError {
            return try object(session, form, error: e.message)
        }
        return Response.redirect(to: Self.link("objects", ["path": path, "type": typeName]), type: .normal)
    }

    /// A type whose objects Studio may change: not one of the permission metadata's, which change
    /// only through `role` and `permission` (as GraphQL shows them only through its permission API).
    static func editable(_ name: String, in schema: Schema, _ path: String) throws -> ObjectSchema {
        guard let type = schema[type: name] else { throw StudioError.noType(name, path) }
        guard !PermissionTypes.isSystemType(name) else { throw StudioError.systemType(name) }
        return type
    }

    /// The reads and mutations of the session in the Realm at `path`, with GraphQL's checks.
    func context(_ session: StudioSession, _ path: String) throws -> GraphQLContext {
        let (level, schema) = try access(session, path)
        return try GraphQLContext(
            store: server.store, path: path, schema: schema, viewer: session.viewer, level: level,
            budget: ObjectBudget(), users: server.users, origin: session.origin)
    }

    /// A key as a link carries it (JSON: `1`, `"R1"`), as the type's key.
    static func key(_ text: String, of type: String, in schema: Schema) throws -> RealmAdapter.Value {
        guard let json = try? JSONValue(parsing: Data(text.utf8)), let value = try? RealmAdapter.Value(json: json)
        else {
            throw StudioError.badKey(text)
        }
        do { return try value.coercedKey(of: type, in: schema) } catch let e as RealmAdapterError {
            throw ServerError(400, e.message)
        }
    }

    static func objectLink(_ path: String, _ type: String, _ key: RealmAdapter.Value) -> String {
        link("object", ["path": path, "type": type, "key": key.json.serialized()])
    }
}
