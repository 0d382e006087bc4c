import Foundation
import GraphQL
import RealmAdapter

/// The GraphQL schema of one Realm, generated from its schema (the legacy GraphQL service's
/// shape). Per object type `Item`:
/// - `items(sortBy:, descending:, skip:, take:)`, sorted and paged by SQLite;
/// - `item(<primary key>:)` for a type with a primary key;
/// - `createItem(input:, updatePolicy:)` and `createItems(input:, updatePolicy:)`, each one
///   Realm transaction (NONE: an existing object is an error; MODIFIED: the given properties
///   change; ALL: the missing optional ones become null too);
/// - `deleteItem(<primary key>:)`.
///
/// Links are fields of the target's type, lists of links lists of it; an input gives a link as
/// the target's primary key. Properties whose names GraphQL cannot carry are left out.
enum RealmGraphQLSchema {
    /// - Parameter intsAsFloats: `int` properties are GraphQL `Float`s, which carry integers up
    ///   to 2^53 exactly (GraphQL's `Int` has 32 bits), the legacy `presentIntsAsFloatsInSchema`.
    static func make(_ realm: Schema, intsAsFloats: Bool = false) throws -> (GraphQLSchema, DirectQuery.Plan) {
        // Names GraphQL cannot carry, and the schema's own names (Query, the scalars, inputs), are left out.
        let names = Set(realm.types.map(\.name))
        let types = realm.types.filter { t in
            isName(t.name) && !reserved.contains(t.name)
                && !(t.name.hasSuffix("Input") && names.contains(String(t.name.dropLast(5))))
        }
        let known = Set(types.map(\.name))
        func shown(_ t: ObjectSchema) -> [Property] {
            t.properties.filter { p in
                guard isName(p.name) else { return false }
                if case .linkingObjects(let origin, _) = p.type { return known.contains(origin) }
                if case .link(let target) = p.type, !known.contains(target) { return false }
                if case .list(.link(let target)) = p.type, !known.contains(target) { return false }
                return true
            }
        }
        // Object types refer to each other (links): their fields are made on first use, from the box.
        let box = ObjectTypes(intsAsFloats: intsAsFloats)
        for t in types {
            box.objects[t.name] = try GraphQLObjectType(name: t.name, fields: { try fields(t, shown(t), box) })
        }
        try GraphQLLinkingObjects.make(types, taken: names, box)
        let objects = box.objects
        let updatePolicy = try GraphQLEnumType(
            name: "UpdatePolicy",
            values: [
                "NONE": GraphQLEnumValue(value: .string("NONE"), description: "An existing object is an error."),
                "MODIFIED": GraphQLEnumValue(value: .string("MODIFIED"), description: "The given properties change."),
                "ALL": GraphQLEnumValue(
                    value: .string("ALL"),
                    description: "The given properties change; missing optional ones become null."),
            ])
        var query: GraphQLFieldMap = [:]
        var mutation: GraphQLFieldMap = [:]
        let aclInput = try GraphQLInputObjectType(
            name: "_PermissionInput", description: "A role's privileges on a new object.",
            fields: [
                "role": InputObjectField(type: GraphQLNonNull(GraphQLString)),
                "privileges": InputObjectField(type: GraphQLNonNull(GraphQLList(GraphQLNonNull(GraphQLString)))),
            ])
        let aclArgument = GraphQLArgument(
            type: GraphQLList(GraphQLNonNull(aclInput)),
            description: "The ACL of each object created (only what the caller holds on the type). Without it, the "
                + "creator's own role gets what they hold of read, update, delete and setPermissions; [] leaves "
                + "the object to admins.")
        for t in types {
            let object = objects[t.name]!
            if query[plural(t.name)] == nil { box.plan.roots[plural(t.name)] = .plural(t.name) }
            define(&query, plural(t.name)) {
                GraphQLField(
                    type: GraphQLNonNull(GraphQLList(GraphQLNonNull(object))),
                    description: "The \(t.name) objects, sorted by sortBy (default: the key) and paged.",
                    args: pageArguments,
                    resolve: { _, args, context, _ in
                        let c = context as! GraphQLContext
                        let q = try page(args)
                        let objects = try c.objects(t.name, q, root: true)
                        try c.budget.spend(objects.count)
                        return objects
                    })
            }
            guard t.primaryKey != nil else { continue }  // objects without a key cannot be named to update
            let inputs = try inputFields(t, shown(t), realm, box)
            let input = try GraphQLInputObjectType(name: t.name + "Input", fields: { inputs })
            let hasACL = realm.aclProperty(of: t.name) != nil
            define(&mutation, "create" + t.name) {
                var args: GraphQLArgumentConfigMap = [
                    "input": GraphQLArgument(type: GraphQLNonNull(input)),
                    "updatePolicy": GraphQLArgument(type: updatePolicy, defaultValue: .string("NONE")),
                ]
                if hasACL { args["acl"] = aclArgument }
                return GraphQLField(
                    type: object,
                    description: "Creates (or, by updatePolicy, updates) one \(t.name) in one Realm transaction.",
                    args: args,
                    resolve: { _, args, context, _ in
                        let c = context as! GraphQLContext
                        let policy = args["updatePolicy"].string
                        return try GraphQLMutations.create(t, [args["input"]], policy: policy, acl: args["acl"], c)
                            .first
                    })
            }
            define(&mutation, "create" + t.name + "s") {
                var args: GraphQLArgumentConfigMap = [
                    "input": GraphQLArgument(type: GraphQLNonNull(GraphQLList(GraphQLNonNull(input)))),
                    "updatePolicy": GraphQLArgument(type: updatePolicy, defaultValue: .string("NONE")),
                ]
                if hasACL { args["acl"] = aclArgument }
                return GraphQLField(
                    type: GraphQLNonNull(GraphQLList(GraphQLNonNull(object))),
                    description: "Creates (or updates) several \(t.name) objects in one Realm transaction.",
                    args: args,
                    resolve: { _, args, context, _ in
                        let c = context as! GraphQLContext
                        return try GraphQLMutations.create(
                            t, args["input"].array ?? [], policy: args["updatePolicy"].string, acl: args["acl"], c)
                    })
            }
            guard let pk = t.primaryKey, let key = t.properties.first(where: { $0.name == pk }), isName(pk),
                case .scalar(let keyType) = key.type
            else { continue }
            if query[singular(t.name)] == nil { box.plan.roots[singular(t.name)] = .singular(t.name, key: pk) }
            define(&query, singular(t.name)) {
                GraphQLField(
                    type: object, description: "The \(t.name) with this \(pk), or null.",
                    args: [pk: GraphQLArgument(type: GraphQLNonNull(box.scalar(keyType)))],
                    resolve: { _, args, context, _ in
                        let c = context as! GraphQLContext
                        try c.budget.spend(1)
                        return try c.object(
                            t.name, try RealmAdapter.Value(json: GraphQLValues.json(args[pk])), root: true)
                    })
            }
            define(&mutation, "delete" + t.name + "s") {
                GraphQLField(
                    type: GraphQLNonNull(GraphQLInt),
                    description: "Deletes the \(t.name) objects the query selects, in one Realm transaction; how many.",
                    args: ["query": GraphQLArgument(type: GraphQLNonNull(GraphQLString))],
                    resolve: { _, args, context, _ in
                        try GraphQLMutations.delete(t, matching: args["query"].string ?? "", context as! GraphQLContext)
                    })
            }
            define(&mutation, "delete" + t.name) {
                GraphQLField(
                    type: GraphQLNonNull(GraphQLBoolean),
                    description: "Deletes the \(t.name) with this \(pk); false if there was none.",
                    args: [pk: GraphQLArgument(type: GraphQLNonNull(box.scalar(keyType)))],
                    resolve: { _, args, context, _ in
                        try GraphQLMutations.delete(
                            t, try RealmAdapter.Value(json: GraphQLValues.json(args[pk])), context as! GraphQLContext)
                    })
            }
        }
        try GraphQLPermissions.add(query: &query, mutation: &mutation)
        let graphQL = try GraphQLSchema(
            query: try GraphQLObjectType(name: "Query", fields: query),
            mutation: mutation.isEmpty ? nil : try GraphQLObjectType(name: "Mutation", fields: mutation),
            // A subscription asks what a query asks, and is answered again whenever that changes.
            subscription: try GraphQLObjectType(name: "Subscription", fields: query),
            types: Array(objects.values))
        // Making the schema made every type's fields, and so completed the plan.
        return (graphQL, box.plan)
    }

    /// An object type's fields: its stored properties, links resolved to their targets.
    static func fields(_ t: ObjectSchema, _ properties: [Property], _ box: ObjectTypes) throws -> GraphQLFieldMap {
        var out: GraphQLFieldMap = [:]
        for p in properties {
            let name = p.name
            switch p.type {
            case .scalar(let s):
                box.plan.fields[t.name, default: [:]][name] = .scalar(s, optional: p.isOptional)
                let type = box.scalar(s)
                let checked = s == .int && !box.intsAsFloats
                out[name] = GraphQLField(
                    type: p.isOptional ? type : GraphQLNonNull(type),
                    resolve: { source, _, _, _ in
                        let value = (source as! RealmObject).values[name]
                        if checked, case .int(let i)? = value, Int32(exactly: i) == nil {
                            throw GraphQLValues.pastInt32(t.name, name, i)
                        }
                        return value.flatMap(GraphQLValues.output)
                    })
            case .list(.scalar(let s)):
                box.plan.fields[t.name, default: [:]][name] = .scalars(s, optional: p.isOptional)
                let element = box.scalar(s)
                out[name] = GraphQLField(
                    type: GraphQLNonNull(GraphQLList(p.isOptional ? element : GraphQLNonNull(element))),
                    resolve: { source, _, _, _ in
                        (source as! RealmObject).values[name].flatMap(GraphQLValues.output) ?? [any Sendable]()
                    })
            case .link(let target):
                box.plan.fields[t.name, default: [:]][name] = .link(target)
                out[name] = GraphQLField(
                    type: box.objects[target]!,
                    resolve: { source, _, context, _ in
                        let c = context as! GraphQLContext
                        guard let id = (source as! RealmObject).values[name], !id.isNull else { return nil }
                        try c.budget.spend(1)
                        return try c.object(target, id)
                    })
            case .list(.link(let target)):
                box.plan.fields[t.name, default: [:]][name] = .links(target)
                out[name] = GraphQLField(
                    type: GraphQLNonNull(GraphQLList(GraphQLNonNull(box.objects[target]!))),
                    resolve: { source, _, context, _ in
                        let c = context as! GraphQLContext
                        guard case .list(let ids)? = (source as! RealmObject).values[name] else {
                            return [RealmObject]()
                        }
                        try c.budget.spend(ids.count)
                        return try ids.compactMap { try c.object(target, $0) }
                    })
            case .linkingObjects(let origin, let property):
                box.plan.fields[t.name, default: [:]][name] = .linking(origin, property: property)
                out[name] = GraphQLLinkingObjects.field(origin: origin, property: property, box)
            }
        }
        if out["_linkingObjects"] == nil { out["_linkingObjects"] = GraphQLLinkingObjects.field(of: t, box) }
        return out
    }

    /// An input type's fields: every stored property, optional (what is missing is left as it
    /// is, or to its default for a new object), links by their target's primary key.
    static func inputFields(_ t: ObjectSchema, _ properties: [Property], _ realm: Schema, _ box: ObjectTypes) throws
        -> InputObjectFieldMap
    {
        var out: InputObjectFieldMap = [:]
        for p in properties {
            switch p.type {
            case .scalar(let s): out[p.name] = InputObjectField(type: box.scalar(s))
            case .list(.scalar(let s)): out[p.name] = InputObjectField(type: GraphQLList(box.scalar(s)))
            case .link(let target), .list(.link(let target)):
                guard let tt = realm[type: target], let pk = tt.primaryKey,
                    case .scalar(let keyType)? = tt.properties.first(where: { $0.name == pk })?.type
                else { continue }
                let key = box.scalar(keyType)
                out[p.name] = InputObjectField(type: p.type.isList ? GraphQLList(GraphQLNonNull(key)) : key)
            case .linkingObjects:
                continue
            }
        }
        return out
    }

    /// A plural query's arguments (and `_linkingObjects`'s, besides its own): filter, order, page.
    static let pageArguments: GraphQLArgumentConfigMap = [
        "query": GraphQLArgument(
            type: GraphQLString, description: "A filter in the Realm query language (docs/server.md has the subset)."),
        "sortBy": GraphQLArgument(type: GraphQLString),
        "descending": GraphQLArgument(type: GraphQLBoolean, defaultValue: .bool(false)),
        "skip": GraphQLArgument(type: GraphQLInt, defaultValue: .number(0)),
        "take": GraphQLArgument(type: GraphQLInt),
    ]

    /// A plural query's arguments (query, sortBy, descending, skip, take) as an ``ObjectQuery``.
    static func page(_ args: Map, linkingTo property: String? = nil, _ source: (any Sendable)? = nil) throws
        -> ObjectQuery
    {
        let q = ObjectQuery(
            sortBy: args["sortBy"].string, descending: args["descending"].bool ?? false,
            offset: args["skip"].int ?? 0, limit: args["take"].int, filter: args["query"].string,
            linkingTo: property.map { .init(property: $0, identity: (source as! RealmObject).identity) })
        guard q.offset >= 0, (q.limit ?? 0) >= 0 else {
            throw GraphQLError(message: "skip and take cannot be negative.")
        }
        return q
    }

    /// Adds a field unless an earlier type's took its name (`Thing`'s `createThings` and
    /// `Things`' `createThings`): the first type in the schema keeps it.
    static func define(_ map: inout GraphQLFieldMap, _ name: String, _ field: () -> GraphQLField) {
        if map[name] == nil { map[name] = field() }
    }

    /// Names the generated schema uses itself.
    static let reserved: Set<String> = [
        "Query", "Mutation", "Subscription", "UpdatePolicy", "String", "Int", "Float", "Boolean", "ID",
        GraphQLLinkingObjects.union,
    ]

    /// `Item` → `items`, `Company` → `companies`, `Bus` → `buses`.
    static func plural(_ name: String) -> String {
        let s = singular(name)
        if s.hasSuffix("y"), let before = s.dropLast().last, !"aeiou".contains(before) { return s.dropLast() + "ies" }
        if ["s", "x", "z", "ch", "sh"].contains(where: { s.hasSuffix($0) }) { return s + "es" }
        return s + "s"
    }

    /// `Item` → `item`, `URLRecord` → `uRLRecord`.
    static func singular(_ name: String) -> String { name.prefix(1).lowercased() + name.dropFirst() }

    /// Whether a stored property is one GraphQL shows: its name is one GraphQL carries, and so
    /// is its link target's (an ACL, a list of `__Permission`, is not shown).
    static func isShown(_ p: Property) -> Bool {
        isName(p.name) && (p.type.linkTarget.map(isName) ?? true)
    }

    /// Whether GraphQL can carry the name (`[_A-Za-z][_0-9A-Za-z]*`, not starting with `__`).
    static func isName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !name.hasPrefix("__") else { return false }
        func letter(_ c: Unicode.Scalar) -> Bool { c == "_" || ("a"..."z").contains(c) || ("A"..."Z").contains(c) }
        return letter(first) && name.unicodeScalars.allSatisfy { letter($0) || ("0"..."9").contains($0) }
    }
}

/// The object types of one schema, filled before any of their fields is made.
final class ObjectTypes: @unchecked Sendable {
    let intsAsFloats: Bool
    init(intsAsFloats: Bool) {
        self.intsAsFloats = intsAsFloats
        plan = DirectQuery.Plan(intsAsFloats: intsAsFloats)
    }
    /// What ``DirectQuery`` needs to answer plain queries without the executor, filled as the
    /// fields are made.
    var plan: DirectQuery.Plan

    /// A Realm scalar's GraphQL type in this schema.
    func scalar(_ s: ScalarType) -> GraphQLScalarType {
        s == .int && intsAsFloats ? GraphQLFloat : GraphQLValues.scalar(s)
    }

    var objects: [String: GraphQLObjectType] = [:]
    /// `_LinkingObjects`, the union of the `<Type>Collection` types (nil when there are none).
    var collections: GraphQLUnionType?
    /// The names of the `<Type>Collection` types.
    var collectionTypes: Set<String> = []
}
