import Foundation
import GraphQL
import RealmAdapter

/// Answers plain queries without GraphQL's executor, which spends about 15 µs on each field of
/// each object (collecting fields again per object, boxing every value): a page of 1,000
/// objects took 45 ms, fifty times the store's read of it.
///
/// A plain query, once GraphQL's validation accepts it, is one operation (not a mutation) of
/// plural and singular root fields and of fields of objects (properties, links, lists,
/// `linkingObjects` properties, `__typename`), with aliases, fragments (named and inline),
/// `@skip` and `@include`, and arguments that are literals or variables of scalar types. Not
/// introspection (`__schema`, `__type`) nor `_linkingObjects` (a union). Its answer is read with
/// the same store calls as the resolvers make, and written as the executor would write it.
///
/// Anything else, and any error at all, is left to the executor (``answer(_:_:variables:operation:context:)``
/// returns nil): it answers again from the start, so errors keep GraphQL's shape and paths.
/// `DirectQueryTests` compares the two answers byte for byte.
enum DirectQuery {
    /// The schema's root fields and object fields, as ``RealmGraphQLSchema`` made them.
    struct Plan: Sendable {
        enum Root: Sendable {
            case plural(String)
            case singular(String, key: String)
        }
        enum Field: Sendable {
            case scalar(ScalarType, optional: Bool)
            case scalars(ScalarType, optional: Bool)
            case link(String)
            case links(String)
            case linking(String, property: String)
        }
        let intsAsFloats: Bool
        var roots: [String: Root] = [:]
        /// Per object type, its fields by name.
        var fields: [String: [String: Field]] = [:]

        init(intsAsFloats: Bool) { self.intsAsFloats = intsAsFloats }
    }

    /// Not a plain query, or an error: the executor answers instead.
    struct NotPlain: Error {}

    /// The answer (`{"data": …}` and a newline), or nil when the executor must answer.
    /// - Parameter text: the request's text, by which validations are remembered.
    static func answer(
        _ document: Document, text: String, _ schema: GraphQLSchemaCache.Entry, variables: [String: JSONValue],
        operation name: String?, context: GraphQLContext
    ) -> Data? {
        do {
            var fragments: [String: FragmentDefinition] = [:]
            var operations: [OperationDefinition] = []
            for definition in document.definitions {
                if let f = definition as? FragmentDefinition {
                    fragments[f.name.value] = f
                } else if let o = definition as? OperationDefinition {
                    if name == nil || o.name?.value == name { operations.append(o) }
                } else {
                    return nil
                }
            }
            guard operations.count == 1, let operation = operations.first, operation.operation != .mutation,
                operation.directives.isEmpty
            else { return nil }
            guard schema.problems(document, text: text).isEmpty else { return nil }
            var run = Run(plan: schema.plan, context: context, fragments: fragments, variables: [:])
            run.variables = try Self.variables(operation, variables)
            var data: [JSONValue.Member] = []
            let rootType = operation.operation == .subscription ? "Subscription" : "Query"
            for field in try run.collect(operation.selectionSet, on: rootType) {
                data.append(.init(field.key, try run.root(field, rootType)))
            }
            let answer = JSONValue.object([.init("data", .object(data))])
            var bytes = answer.utf8()
            bytes.append(UInt8(ascii: "\n"))
            return Data(bytes)
        } catch {
            return nil
        }
    }

    /// The operation's variables as JSON, coerced as GraphQL would for the scalar types a plain
    /// query's arguments have (anything else is not plain).
    static func variables(_ operation: OperationDefinition, _ given: [String: JSONValue]) throws -> [String: JSONValue]
    {
        var out: [String: JSONValue] = [:]
        for definition in operation.variableDefinitions {
            let name = definition.variable.name.value
            var type = definition.type
            let required = type is NonNullType
            if let nonNull = type as? NonNullType { type = nonNull.type }
            guard let named = type as? NamedType else { throw NotPlain() }
            let value: JSONValue
            if let v = given[name] {
                value = v
            } else if let d = definition.defaultValue {
                value = try literal(d, [:])
            } else {
                value = .null
            }
            if value == .null {
                if required { throw NotPlain() }
                out[name] = .null
                continue
            }
            switch (named.name.value, value) {
            case ("String", .string), ("ID", .string), ("Boolean", .bool), ("Float", .double): out[name] = value
            case ("Int", .int(let i)) where Int32(exactly: i) != nil: out[name] = value
            case ("Float", .int(let i)): out[name] = .double(Double(i))
            default: throw NotPlain()
            }
        }
        return out
    }

    /// A literal argument (or a variable's default) as JSON.
    static func literal(_ value: GraphQL.Value, _ variables: [String: JSONValue]) throws -> JSONValue {
        switch value {
        case let v as StringValue: return .string(v.value)
        case let v as BooleanValue: return .bool(v.value)
        case let v as IntValue:
            guard let i = Int64(v.value) else { throw NotPlain() }
            return .int(i)
        case let v as FloatValue:
            guard let d = Double(v.value) else { throw NotPlain() }
            return .double(d)
        case is NullValue: return .null
        case let v as Variable: return variables[v.name.value] ?? .null
        default: throw NotPlain()
        }
    }

    /// One answer in the making.
    struct Run {
        let plan: Plan
        let context: GraphQLContext
        let fragments: [String: FragmentDefinition]
        var variables: [String: JSONValue]
        /// The fields of each selection set, collected once (a page's objects share them).
        let collected = Collected()

        final class Collected: @unchecked Sendable {
            var fields: [ObjectIdentifier: [Field]] = [:]
        }

        /// The fields a selection asks of an object of `type`, in order, through fragments and
        /// `@skip`/`@include`. Two with one answer key (which GraphQL merges) are not plain.
        func collect(_ selection: SelectionSet, on type: String) throws -> [Field] {
            if let fields = collected.fields[ObjectIdentifier(selection)] { return fields }
            var out: [Field] = []
            func walk(_ set: SelectionSet, _ spread: Set<String>) throws {
                for s in set.selections {
                    switch s {
                    case let field as Field:
                        guard try included(field.directives) else { continue }
                        guard !out.contains(where: { $0.key == field.key }) else { throw NotPlain() }
                        out.append(field)
                    case let inline as InlineFragment:
                        guard inline.typeCondition == nil || inline.typeCondition?.name.value == type else {
                            throw NotPlain()
                        }
                        if try included(inline.directives) { try walk(inline.selectionSet, spread) }
                    case let named as FragmentSpread:
                        let name = named.name.value
                        guard let f = fragments[name], f.typeCondition.name.value == type, !spread.contains(name),
                            f.directives.isEmpty
                        else { throw NotPlain() }
                        if try included(named.directives) { try walk(f.selectionSet, spread.union([name])) }
                    default:
                        throw NotPlain()
                    }
                }
            }
            try walk(selection, [])
            collected.fields[ObjectIdentifier(selection)] = out
            return out
        }

        /// Whether `@skip` and `@include` let a selection in; any other directive is not plain.
        func included(_ directives: [Directive]) throws -> Bool {
            var keep = true
            for d in directives {
                guard d.arguments.count == 1, d.arguments[0].name.value == "if",
                    case .bool(let condition) = try DirectQuery.literal(d.arguments[0].value, variables)
                else { throw NotPlain() }
                switch d.name.value {
                case "skip": keep = keep && !condition
                case "include": keep = keep && condition
                default: throw NotPlain()
                }
            }
            return keep
        }

        func arguments(_ field: Field) throws -> [String: JSONValue] {
            var out: [String: JSONValue] = [:]
            for a in field.arguments { out[a.name.value] = try DirectQuery.literal(a.value, variables) }
            return out
        }

        func root(_ field: Field, _ rootType: String) throws -> JSONValue {
            let c = context
            if field.name.value == "__typename" { return .string(rootType) }
            guard let root = plan.roots[field.name.value], let selection = field.selectionSet else { throw NotPlain() }
            let args = try arguments(field)
            switch root {
            case .plural(let type):
                // The executor's own reading of the arguments (an error in them leaves it to the executor).
                let q = try RealmGraphQLSchema.page(GraphQLValues.map(.object(args.map { .init($0.key, $0.value) })))
                guard let q = try c.readable(type, q, root: true) else { return .array([]) }
                if let rows = try projected(type, q, selection) { return rows }
                let objects = try c.store.objects(of: type, in: c.path, q)
                try c.budget.spend(objects.count)
                return .array(try objects.map { try object($0, selection) })
            case .singular(let type, let key):
                guard let id = args[key], id != .null else { throw NotPlain() }
                try c.budget.spend(1)
                return try c.object(type, try RealmAdapter.Value(json: id), root: true)
                    .map { try object($0, selection) } ?? .null
            }
        }

        /// The page when the selection asks only for properties of a single value that are not
        /// links (and `__typename`): read as a projection of those columns, no object built.
        func projected(_ type: String, _ q: ObjectQuery, _ selection: SelectionSet) throws -> JSONValue? {
            guard let kinds = plan.fields[type] else { throw NotPlain() }
            let fields = try collect(selection, on: type)
            var properties: [String] = []
            var columns: [(key: String, column: Int?, type: ScalarType, optional: Bool)] = []
            for field in fields {
                let name = field.name.value
                guard field.arguments.isEmpty else { throw NotPlain() }
                if name == "__typename" {
                    columns.append((field.key, nil, .string, false))
                    continue
                }
                guard case .scalar(let s, let optional)? = kinds[name] else { return nil }
                columns.append((field.key, properties.count, s, optional))
                properties.append(name)
            }
            var rows: [JSONValue] = []
            try context.store.forEachRow(of: type, in: context.path, q, properties: properties) { values in
                try context.budget.spend(1)
                var members: [JSONValue.Member] = []
                members.reserveCapacity(columns.count)
                for c in columns {
                    guard let k = c.column else {
                        members.append(.init(c.key, .string(type)))
                        continue
                    }
                    let value = try scalar(values[k], c.type)
                    if value == .null && !c.optional { throw NotPlain() }
                    members.append(.init(c.key, value))
                }
                rows.append(.object(members))
            }
            return .array(rows)
        }

        func object(_ o: RealmObject, _ selection: SelectionSet) throws -> JSONValue {
            let c = context
            guard let fields = plan.fields[o.objectType] else { throw NotPlain() }
            var out: [JSONValue.Member] = []
            out.reserveCapacity(selection.selections.count)
            for field in try collect(selection, on: o.objectType) {
                guard field.arguments.isEmpty else { throw NotPlain() }
                let name = field.name.value
                let value: JSONValue
                if name == "__typename" {
                    value = .string(o.objectType)
                } else {
                    guard let kind = fields[name] else { throw NotPlain() }
                    switch kind {
                    case .scalar(let s, let optional):
                        value = try scalar(o.values[name] ?? .null, s)
                        if value == .null && !optional { throw NotPlain() }
                    case .scalars(let s, let optional):
                        guard case .list(let items)? = o.values[name] else {
                            value = .array([])
                            break
                        }
                        value = .array(
                            try items.map { v in
                                let j = try scalar(v, s)
                                if j == .null && !optional { throw NotPlain() }
                                return j
                            })
                    case .link(let target):
                        guard let nested = field.selectionSet else { throw NotPlain() }
                        guard let id = o.values[name], !id.isNull else {
                            value = .null
                            break
                        }
                        try c.budget.spend(1)
                        value =
                            try c.object(target, id).map { try object($0, nested) }
                            ?? .null
                    case .links(let target):
                        guard let nested = field.selectionSet else { throw NotPlain() }
                        guard case .list(let ids)? = o.values[name] else {
                            value = .array([])
                            break
                        }
                        try c.budget.spend(ids.count)
                        value = .array(
                            try ids.compactMap { try c.object(target, $0) }
                                .map { try object($0, nested) })
                    case .linking(let origin, let property):
                        guard let nested = field.selectionSet else { throw NotPlain() }
                        let q = ObjectQuery(linkingTo: .init(property: property, identity: o.identity))
                        let objects = try c.objects(origin, q)
                        try c.budget.spend(objects.count)
                        value = .array(try objects.map { try object($0, nested) })
                    }
                }
                out.append(.init(field.key, value))
            }
            return .object(out)
        }

        /// A stored value as GraphQL's scalar types write it (``GraphQLValues/output(_:)`` then
        /// `Int`'s or `Float`'s serialization).
        func scalar(_ v: RealmAdapter.Value, _ s: ScalarType) throws -> JSONValue {
            let j = v.json
            switch (s, j) {
            case (_, .null), (.bool, .bool): return j
            case (.int, .int(let i)) where plan.intsAsFloats: return .double(Double(i))
            case (.int, .int(let i)) where Int32(exactly: i) != nil: return j
            case (.float, .int(let i)), (.double, .int(let i)): return .double(Double(i))
            case (.float, .double(let d)) where d.isFinite, (.double, .double(let d)) where d.isFinite:
                return j
            case (.string, .string), (.date, .string), (.decimal, .string), (.uuid, .string), (.objectId, .string),
                (.data, .string):
                return j
            case (.string, .object), (.data, .object): return .string(j.serialized())
            default: throw NotPlain()
            }
        }
    }
}

extension Field {
    /// The key of the field in the answer: its alias, or its name.
    var key: String { alias?.value ?? name.value }
}
