/// A Realm's schema as model classes an app declares (the legacy Studio's "Save model
/// definitions"): Swift (RealmSwift), Kotlin (Realm Kotlin), Java (Realm Java), TypeScript and
/// JavaScript (Realm JS). `realm schema --models` prints them; Studio's schema page offers them.
public enum ModelLanguage: String, CaseIterable, Sendable {
    case swift, kotlin, java, typescript, javascript

    /// The file name extension of a file in the language.
    public var fileExtension: String {
        switch self {
        case .swift: "swift"
        case .kotlin: "kt"
        case .java: "java"
        case .typescript: "ts"
        case .javascript: "js"
        }
    }
}

extension Schema {
    /// The classes of every type, in schema order, in `language`: one source file. The permission
    /// metadata's types are left out: apps do not declare them.
    public func modelDefinitions(_ language: ModelLanguage) -> String {
        let head: String =
            switch language {
            case .swift: "import Foundation\nimport RealmSwift\n"
            case .kotlin:
                "import io.realm.kotlin.ext.*\nimport io.realm.kotlin.types.*\n"
                    + "import io.realm.kotlin.types.annotations.*\n"
                    + "import org.mongodb.kbson.BsonObjectId\n"
            case .java: "import io.realm.*;\nimport io.realm.annotations.*;\nimport java.util.Date;\n"
            case .typescript: "import Realm, { ObjectSchema } from \"realm\";\n"
            case .javascript: "import Realm from \"realm\";\n"
            }
        let declared = types.filter { !PermissionTypes.isSystemType($0.name) }
        return ([head] + declared.map { ModelWriter(type: $0, language: language).text }).joined(separator: "\n")
    }
}

/// One type's class in one language.
struct ModelWriter {
    let type: ObjectSchema
    let language: ModelLanguage

    var text: String {
        switch language {
        case .swift:
            "class \(type.name): Object {\n" + type.properties.map { "    " + swift($0) }.joined(separator: "\n")
                + "\n}\n"
        case .kotlin:
            "class \(type.name) : RealmObject {\n" + type.properties.map { kotlin($0) }.joined(separator: "\n")
                + "\n}\n"
        case .java:
            "// \(type.name).java (Java takes one public class per file)\n"
                + "public class \(type.name) extends RealmObject {\n"
                + type.properties.map { java($0) }.joined(separator: "\n") + "\n}\n"
        case .typescript:
            "export class \(type.name) extends Realm.Object<\(type.name)> {\n"
                + type.properties.map { "  \($0.name)!: \(typescript($0));" }.joined(separator: "\n")
                + "\n\n  static schema: ObjectSchema = \(schemaLiteral(indent: "  "));\n}\n"
        case .javascript:
            "export class \(type.name) extends Realm.Object {\n  static schema = \(schemaLiteral(indent: "  "));\n}\n"
        }
    }

    var isKey: (Property) -> Bool { { [type] in $0.name == type.primaryKey } }

    func swift(_ p: Property) -> String {
        if case .linkingObjects(let target, let property) = p.type {
            return "@Persisted(originProperty: \"\(property)\") var \(p.name): LinkingObjects<\(target)>"
        }
        let wrapper =
            isKey(p) ? "@Persisted(primaryKey: true)" : p.isIndexed ? "@Persisted(indexed: true)" : "@Persisted"
        let t: String =
            switch p.type {
            case .scalar(let s): Self.swift(s) + (p.isOptional ? "?" : "")
            case .list(.scalar(let s)): "List<\(Self.swift(s))\(p.isOptional ? "?" : "")>"
            case .list(.link(let target)): "List<\(target)>"
            case .link(let target), .linkingObjects(let target, _): target + "?"
            }
        return "\(wrapper) var \(p.name): \(t)"
    }

    static func swift(_ s: ScalarType) -> String {
        switch s {
        case .bool: "Bool"
        case .int: "Int"
        case .float: "Float"
        case .double: "Double"
        case .string: "String"
        case .data: "Data"
        case .date: "Date"
        case .decimal: "Decimal128"
        case .uuid: "UUID"
        case .objectId: "ObjectId"
        }
    }

    func kotlin(_ p: Property) -> String {
        if case .linkingObjects(let target, let property) = p.type {
            return "    val \(p.name): RealmResults<\(target)> by backlinks(\(target)::\(property))"
        }
        let annotation = isKey(p) ? "    @PrimaryKey\n" : p.isIndexed ? "    @Index\n" : ""
        let (t, initial): (String, String) =
            switch p.type {
            case .scalar(let s) where p.isOptional: (Self.kotlin(s) + "?", "null")
            case .scalar(let s): (Self.kotlin(s), Self.kotlinDefault(s))
            case .list(.scalar(let s)): ("RealmList<\(Self.kotlin(s))\(p.isOptional ? "?" : "")>", "realmListOf()")
            case .list(.link(let target)): ("RealmList<\(target)>", "realmListOf()")
            case .link(let target), .linkingObjects(let target, _): (target + "?", "null")
            }
        return annotation + "    var \(p.name): \(t) = \(initial)"
    }

    static func kotlin(_ s: ScalarType) -> String {
        switch s {
        case .bool: "Boolean"
        case .int: "Long"
        case .float: "Float"
        case .double: "Double"
        case .string: "String"
        case .data: "ByteArray"
        case .date: "RealmInstant"
        case .decimal: "Decimal128"
        case .uuid: "RealmUUID"
        case .objectId: "BsonObjectId"
        }
    }

    static func kotlinDefault(_ s: ScalarType) -> String {
        switch s {
        case .bool: "false"
        case .int: "0"
        case .float: "0f"
        case .double: "0.0"
        case .string: "\"\""
        case .data: "byteArrayOf()"
        case .date: "RealmInstant.now()"
        case .decimal: "Decimal128(\"0\")"
        case .uuid: "RealmUUID.random()"
        case .objectId: "BsonObjectId()"
        }
    }

    func java(_ p: Property) -> String {
        var annotations: [String] = []
        if isKey(p) { annotations.append("@PrimaryKey") } else if p.isIndexed { annotations.append("@Index") }
        let t: String
        switch p.type {
        case .scalar(let s):
            if p.isOptional {
                t = Self.javaBoxed(s)
            } else if let primitive = s.javaPrimitive {
                t = primitive
            } else {
                t = Self.javaBoxed(s)
                if !isKey(p) { annotations.append("@Required") }
            }
        case .link(let target): t = target
        case .list(.scalar(let s)):
            if !p.isOptional { annotations.append("@Required") }
            t = "RealmList<\(Self.javaBoxed(s))>"
        case .list(.link(let target)): t = "RealmList<\(target)>"
        case .linkingObjects(let target, let property):
            annotations.append("@LinkingObjects(\"\(property)\")")
            t = "final RealmResults<\(target)>"
        }
        let field =
            annotations.map { "    \($0)\n" }.joined() + "    private \(t) \(p.name)"
            + (t.hasPrefix("final") ? " = null;" : ";")
        let bare = t.replacingOccurrences(of: "final ", with: "")
        let cap = p.name.prefix(1).uppercased() + p.name.dropFirst()
        var accessors = "    public \(bare) get\(cap)() { return \(p.name); }"
        if !t.hasPrefix("final") {
            accessors += "\n    public void set\(cap)(\(bare) \(p.name)) { this.\(p.name) = \(p.name); }"
        }
        return field + "\n" + accessors
    }

    static func javaBoxed(_ s: ScalarType) -> String {
        switch s {
        case .bool: "Boolean"
        case .int: "Long"
        case .float: "Float"
        case .double: "Double"
        case .string: "String"
        case .data: "byte[]"
        case .date: "Date"
        case .decimal: "org.bson.types.Decimal128"
        case .uuid: "java.util.UUID"
        case .objectId: "org.bson.types.ObjectId"
        }
    }

    func typescript(_ p: Property) -> String {
        switch p.type {
        case .scalar(let s): Self.typescript(s) + (p.isOptional ? " | null" : "")
        case .link(let target): target + " | null"
        case .list(.scalar(let s)): "Realm.List<\(Self.typescript(s))\(p.isOptional ? " | null" : "")>"
        case .list(.link(let target)): "Realm.List<\(target)>"
        case .linkingObjects(let target, _): "Realm.Results<\(target)>"
        }
    }

    static func typescript(_ s: ScalarType) -> String {
        switch s {
        case .bool: "boolean"
        case .int, .float, .double: "number"
        case .string: "string"
        case .data: "ArrayBuffer"
        case .date: "Date"
        case .decimal: "Realm.Types.Decimal128"
        case .uuid: "Realm.BSON.UUID"
        case .objectId: "Realm.BSON.ObjectId"
        }
    }

    /// The Realm JS object schema: `{ name, primaryKey, properties: { id: "int", … } }`.
    func schemaLiteral(indent: String) -> String {
        var lines = ["{", "\(indent)  name: \(Self.quoted(type.name)),"]
        if let pk = type.primaryKey { lines.append("\(indent)  primaryKey: \(Self.quoted(pk)),") }
        lines.append("\(indent)  properties: {")
        for p in type.properties {
            let value: String =
                switch p.type {
                case .linkingObjects(let target, let property):
                    "{ type: \"linkingObjects\", objectType: \(Self.quoted(target)), "
                        + "property: \(Self.quoted(property)) }"
                default:
                    p.isIndexed ? "{ type: \(Self.quoted(p.typeString)), indexed: true }" : Self.quoted(p.typeString)
                }
            lines.append("\(indent)    \(Self.quoted(p.name)): \(value),")
        }
        lines += ["\(indent)  },", "\(indent)}"]
        return lines.joined(separator: "\n")
    }

    static func quoted(_ s: String) -> String { JSONValue.string(s).serialized() }
}

extension ScalarType {
    /// Realm Java's primitive field type, for a required value that has one.
    fileprivate var javaPrimitive: String? {
        switch self {
        case .bool: "boolean"
        case .int: "long"
        case .float: "float"
        case .double: "double"
        default: nil
        }
    }
}
