import Foundation
import JWTKit
import RealmAdapter

/// Provider `jwt` (`server.jwt`): tokens signed by the app's own auth service, checked with its
/// public key. Kept apart from the server's own keys (``Tokens``): a token of one is never
/// taken for the other, and the signature is checked with the configured algorithm whatever
/// the token's header says (so `none` or an HMAC keyed with the public key do not pass).
public struct ExternalTokens: Sendable {
    let keys: JWTKeyCollection
    let configuration: JWTProviderConfiguration

    /// Reads the public key; a missing or unreadable file is an error naming the setting.
    public init(_ configuration: JWTProviderConfiguration) async throws {
        self.configuration = configuration
        let file = configuration.publicKeyFile
        guard let pem = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw RealmAdapterError(
                .invalidConfiguration,
                "server.jwt.publicKeyFile: cannot read '\(file)'. Point it at the PEM file of your auth "
                    + "service's public key (-----BEGIN PUBLIC KEY-----).")
        }
        keys = JWTKeyCollection()
        do {
            switch configuration.algorithm {
            case "RS384": await keys.add(rsa: try Insecure.RSA.PublicKey(pem: pem), digestAlgorithm: .sha384)
            case "RS512": await keys.add(rsa: try Insecure.RSA.PublicKey(pem: pem), digestAlgorithm: .sha512)
            case "ES256": await keys.add(ecdsa: try ES256PublicKey(pem: pem))
            case "ES384": await keys.add(ecdsa: try ES384PublicKey(pem: pem))
            case "ES512": await keys.add(ecdsa: try ES512PublicKey(pem: pem))
            default: await keys.add(rsa: try Insecure.RSA.PublicKey(pem: pem), digestAlgorithm: .sha256)
            }
        } catch {
            throw RealmAdapterError(
                .invalidConfiguration,
                "server.jwt.publicKeyFile: '\(file)' is not a \(configuration.algorithm) public key in PEM "
                    + "(\(error)). RS* takes an RSA key of at least 2048 bits, ES256/384/512 an EC key "
                    + "on P-256/384/521."
            )
        }
    }

    /// Who a token says the user is, once its signature, expiry, issuer and audience check out.
    func identity(_ token: String) async throws -> (userId: String, isAdmin: Bool) {
        let claims: ExternalClaims
        do {
            claims = try await keys.verify(token, as: ExternalClaims.self)
        } catch let e as ServerError {
            throw e
        } catch let e as JWTError where e.errorType == .claimVerificationFailure {
            throw ServerError(
                401, "The jwt token has expired (or is not valid yet): get a new one from your auth service.")
        } catch {
            throw ServerError(
                401, "The jwt token is not valid: it is not signed with server.jwt's key (\(configuration.algorithm)).")
        }
        let c = configuration
        if let issuer = c.issuer, claims.values["iss"]?.string != issuer {
            throw ServerError(401, "The jwt token's issuer (iss) is not \(issuer), as server.jwt.issuer wants.")
        }
        if let audience = c.audience, !(claims.values["aud"]?.strings.contains(audience) ?? false) {
            throw ServerError(401, "The jwt token's audience (aud) does not include \(audience) (server.jwt.audience).")
        }
        guard let id = claims.values[c.userIdFieldName]?.string, !id.isEmpty else {
            throw ServerError(
                401, "The jwt token has no \(c.userIdFieldName) claim (server.jwt.userIdFieldName): it names the user.")
        }
        return (id, claims.values[c.isAdminFieldName]?.equals(c.isAdminValue) ?? false)
    }
}

/// Every claim of an external token, whatever their names; `exp` is required.
struct ExternalClaims: JWTPayload {
    enum Claim: Decodable, Sendable {
        case string(String)
        case bool(Bool)
        case number(Double)
        case strings([String])
        case other

        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let s = try? c.decode(String.self) {
                self = .string(s)
            } else if let b = try? c.decode(Bool.self) {
                self = .bool(b)
            } else if let n = try? c.decode(Double.self) {
                self = .number(n)
            } else if let a = try? c.decode([String].self) {
                self = .strings(a)
            } else {
                self = .other
            }
        }

        var string: String? { if case .string(let s) = self { s } else { nil } }
        /// Whether the claim is `value` (`server.jwt.isAdminValue`: a boolean, a string or a
        /// number), or an array of strings that holds it (`roles: ["admin", …]`).
        func equals(_ value: JSONValue) -> Bool {
            switch (self, value) {
            case (.bool(let a), .bool(let b)): a == b
            case (.string(let a), .string(let b)): a == b
            case (.strings(let a), .string(let b)): a.contains(b)
            case (.number(let a), _): value.numberValue == a
            default: false
            }
        }
        var bool: Bool? { if case .bool(let b) = self { b } else { nil } }
        var number: Double? { if case .number(let n) = self { n } else { nil } }
        /// A string, or an array of them (`aud` may be either).
        var strings: [String] {
            switch self {
            case .string(let s): [s]
            case .strings(let a): a
            default: []
            }
        }
    }

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    let values: [String: Claim]

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        var values: [String: Claim] = [:]
        for k in c.allKeys { values[k.stringValue] = try c.decode(Claim.self, forKey: k) }
        self.values = values
    }

    func encode(to encoder: any Encoder) throws {}

    /// A token without an expiry would be good for ever: it is refused.
    func verify(using algorithm: some JWTAlgorithm) async throws {
        let now = Date().timeIntervalSince1970
        guard let exp = values["exp"]?.number else {
            throw ServerError(401, "The jwt token has no expiry (exp): tokens good for ever are refused.")
        }
        guard exp > now else { throw JWTError.claimVerificationFailure(failedClaim: nil, reason: "expired") }
        if let nbf = values["nbf"]?.number, nbf > now + 60 {
            throw JWTError.claimVerificationFailure(failedClaim: nil, reason: "not before")
        }
    }
}
