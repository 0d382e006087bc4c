import Foundation
import Hummingbird
import RealmAdapter

/// A Realm's schema: its model classes to download, and new types and properties (additive, as
/// the store allows), each one transaction with the checks of `POST /realms/<path>`.
extension Studio {
    /// `GET /studio/models?path=…&language=swift`: the model classes, as a file to save.
    func models(_ session: StudioSession, _ query: [String: String]) throws -> Response {
        let path = try Self.required("path", query)
        let schema = try access(session, path).schema
        guard let language = ModelLanguage(rawValue: try Self.required("language", query)) else {
            throw ServerError.badRequest(
                "The language is one of " + ModelLanguage.allCases.map(\.rawValue).joined(separator: ", ") + ".")
        }
        let name = (path.split(separator: "/").last.map(String.init) ?? "Models").filter {
            $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-"
        }
        var headers = StudioAssets.headers
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.contentDisposition] =
            "attachment; filename=\"\(name.isEmpty ? "Models" : name).\(language.fileExtension)\""
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(string: schema.modelDefinitions(language))))
    }

    /// `POST /studio/add-type` (path, name, primaryKey, keyType, csrf) and `POST /studio/add-property`
    /// (path, type, name, propertyType — `int`, `string?`, `Item[]`, … —, indexed, csrf).
    func changeSchema(_ adding: String, _ session: StudioSession, _ form: [String: String]) async throws -> Response {
        let path = try Self.required("path", form)
        let level = try access(session, path).level
        guard level == .manage else { throw ServerError.forbidden(path, need: .manage, have: level) }
        let name = (form["name"] ?? "").trimmingCharacters(in: .whitespaces)
        let instruction: Instruction
        do {
            if adding == "type" {
                let key = (form["primaryKey"] ?? "").trimmingCharacters(in: .whitespaces)
                let properties = try key.isEmpty ? [] : [Self.property(key, form["keyType"] ?? "int", indexed: false)]
                instruction = .addType(
                    ObjectSchema(name: name, primaryKey: key.isEmpty ? nil : key, properties: properties))
            } else {
                let type = try Self.required("type", form)
                let p = try Self.property(name, form["propertyType"] ?? "", indexed: form["indexed"] == "1")
                instruction = .addProperties(objectType: type, properties: [p])
            }
            _ = try await RealmsEndpoint.apply(
                [instruction], to: path, by: session.user, origin: session.origin, in: server.store)
        } catch let e as RealmAdapterError {
            return try realm(session, ["path": path], error: e.message)
        } catch let e as ServerError {
            return try realm(session, ["path": path], error: e.message)
        }
        let what = adding == "type" ? "type \(name)" : "property \(form["type"] ?? "").\(name)"
        return try realm(session, ["path": path], notice: "Added the \(what).")
    }

    static func property(_ name: String, _ type: String, indexed: Bool) throws -> Property {
        guard !name.isEmpty else { throw ServerError.badRequest("Give the property a name.") }
        var p = try Property(name: name, json: .string(type.trimmingCharacters(in: .whitespaces)), path: name)
        p.isIndexed = indexed
        return p
    }
}
