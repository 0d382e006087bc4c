import GraphQL
import RealmAdapter

extension GraphQLInputCheck {
    /// A value as a request gives it: a literal of the document, or JSON (a variable's value).
    indirect enum Given {
        case null
        case bool
        /// Nil past 64 bits.
        case int(Int64?)
        case float(Double)
        /// A literal a double reads as 0 though it is not (`1e-400`): no number fits it.
        case tooSmall
        case string(String)
        case enumName(String)
        case list([Given])
        case object([(key: String, value: Given)])
        /// A variable inside a literal: checked with the variables.
        case variable

        init(_ literal: GraphQL.Value) {
            switch literal {
            case is NullValue: self = .null
            case is BooleanValue: self = .bool
            case let v as IntValue: self = .int(Int64(v.value))
            case let v as FloatValue:
                let d = Double(v.value) ?? .nan
                self =
                    d == 0 && v.value.prefix { $0 != "e" && $0 != "E" }.contains(where: { "123456789".contains($0) })
                    ? .tooSmall : .float(d)
            case let v as StringValue: self = .string(v.value)
            case let v as EnumValue: self = .enumName(v.value)
            case let v as ListValue: self = .list(v.values.map(Given.init))
            case let v as ObjectValue: self = .object(v.fields.map { ($0.name.value, Given($0.value)) })
            default: self = .variable
            }
        }

        init(_ json: JSONValue) {
            switch json {
            case .null: self = .null
            case .bool: self = .bool
            case .int(let i): self = .int(i)
            case .double(let d): self = .float(d)
            case .number(let text): self = .float(Double(text) ?? .nan)
            case .string(let s): self = .string(s)
            case .array(let a): self = .list(a.map(Given.init))
            case .object(let o): self = .object(o.map { ($0.key, Given($0.value)) })
            }
        }

        var kind: String {
            switch self {
            case .null: "null"
            case .bool: "a boolean"
            case .int: "an integer"
            case .float: "a number"
            case .tooSmall: "a number a double would hold as 0"
            case .string: "a string"
            case .enumName(let n): "the enum value \(n)"
            case .list: "a list"
            case .object: "an object"
            case .variable: "a variable"
            }
        }
    }

    /// What went wrong, and where below the argument or variable (`input.tags[1]`).
    struct Problem {
        let path: String
        let text: String
    }

    /// An input type, from the schema's arguments or from a variable's declaration.
    indirect enum Expected {
        case nonNull(Expected)
        case list(Expected)
        case scalar(String)
        case enumeration(GraphQLEnumType)
        case object(GraphQLInputObjectType)
        /// A type the schema does not have: GraphQL's validation says so.
        case unknown

        init(_ type: any GraphQLType) {
            switch type {
            case let t as GraphQLNonNull: self = .nonNull(Expected(t.ofType))
            case let t as GraphQLList: self = .list(Expected(t.ofType))
            case let t as GraphQLScalarType: self = .scalar(t.name)
            case let t as GraphQLEnumType: self = .enumeration(t)
            case let t as GraphQLInputObjectType: self = .object(t)
            default: self = .unknown
            }
        }

        init(_ declared: any GraphQL.`Type`, _ schema: GraphQLSchema) {
            switch declared {
            case let t as NonNullType: self = .nonNull(Expected(t.type, schema))
            case let t as ListType: self = .list(Expected(t.type, schema))
            case let t as NamedType: self = schema.getType(name: t.name.value).map { Expected($0) } ?? .unknown
            default: self = .unknown
            }
        }

        var name: String {
            switch self {
            case .nonNull(let t): t.name + "!"
            case .list(let t): "[\(t.name)]"
            case .scalar(let n): n
            case .enumeration(let t): t.name
            case .object(let t): t.name
            case .unknown: "?"
            }
        }

        /// What a client should give instead.
        var hint: String {
            switch self {
            case .nonNull(let t): t.hint
            case .list(let t): "a list of \(t.name)"
            case .scalar("Boolean"): "true or false"
            case .scalar("Int"): "an integer from \(Int32.min) to \(Int32.max)"
            case .scalar("Float"): "a number"
            case .scalar("ID"): "a string or an integer"
            case .scalar: "a string"
            case .enumeration(let t): "one of " + t.values.map(\.name).joined(separator: ", ")
            case .object(let t): "an object of \(t.name)'s fields"
            case .unknown: "a value of the declared type"
            }
        }

        /// The first problem with `given` as a value of this type, at `path`.
        func problem(with given: Given, at path: String) -> Problem? {
            let mismatch = Problem(path: path, text: "expected \(name), found \(given.kind): give \(hint).")
            switch (self, given) {
            case (_, .variable), (.unknown, _): return nil
            case (.nonNull, .null): return mismatch
            case (.nonNull(let t), _): return t.problem(with: given, at: path)
            case (_, .null): return nil
            case (.list(let t), .list(let items)):
                for (i, item) in items.enumerated() {
                    if let p = t.problem(with: item, at: "\(path)[\(i)]") { return p }
                }
                return nil
            case (.list(let t), _): return t.problem(with: given, at: path)  // one value for a list of one
            case (.object(let t), .object(let fields)): return Self.problem(t, fields, at: path)
            case (.enumeration(let t), .enumName(let n)), (.enumeration(let t), .string(let n)):
                return t.nameLookup[n] == nil ? mismatch : nil
            case (.scalar(let s), _): return Self.fits(s, given) ? nil : mismatch
            default: return mismatch
            }
        }

        static func fits(_ scalar: String, _ given: Given) -> Bool {
            switch (scalar, given) {
            case ("Boolean", .bool), ("String", .string), ("ID", .string), ("Float", .int), ("Float", .float): true
            case ("Int", .int(let i?)), ("ID", .int(let i?)): scalar == "ID" || Int32(exactly: i) != nil
            case ("Int", .float(let d)): Int32(exactly: d) != nil
            case ("Boolean", _), ("Int", _), ("Float", _), ("String", _), ("ID", _): false
            default: true  // a scalar of its own parses its values itself
            }
        }

        static func problem(
            _ type: GraphQLInputObjectType, _ fields: [(key: String, value: Given)], at path: String
        ) -> Problem? {
            guard let known = try? type.fields() else { return nil }
            for (key, value) in fields {
                guard let field = known[key] else {
                    return Problem(
                        path: path + "." + key,
                        text: "\(type.name) has no field \(key): the Realm's schema (GET /graphql/schema/…) lists them."
                    )
                }
                if let p = Expected(field.type).problem(with: value, at: path + "." + key) { return p }
            }
            for (key, field) in known where field.defaultValue == nil && !fields.contains(where: { $0.key == key }) {
                if case .nonNull(let t) = Expected(field.type) {
                    return Problem(path: path + "." + key, text: "expected \(t.name)!, found nothing: give \(t.hint).")
                }
            }
            return nil
        }
    }
}
