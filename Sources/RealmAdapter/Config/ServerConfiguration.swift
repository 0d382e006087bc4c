import Foundation

/// `server`: where `realm-adapter serve` listens, how it signs tokens, and how long they last.
///
/// The signing key is never in the file: `signingKeyEnv` names the environment variable that
/// holds it, read by `serve` when it starts (other commands do not need it).
public struct ServerConfiguration: Sendable {
    /// The address `serve` listens on (default `127.0.0.1`).
    public var host = "127.0.0.1"
    /// Its port (default 9080, the legacy Realm Object Server's).
    public var port = 9080
    /// The environment variable holding the key tokens are signed with (HMAC-SHA256; default
    /// `REALM_ADAPTER_SIGNING_KEY`).
    public var signingKeyEnv = "REALM_ADAPTER_SIGNING_KEY"
    /// How long an access token (one Realm path) is good for (default 10 minutes).
    public var accessTokenLifetime: Duration = .seconds(600)
    /// How long a refresh token (a user's login) is good for (default 30 days).
    public var refreshTokenLifetime: Duration = .seconds(30 * 86_400)
    /// Every request acts as an admin, without a token: for development only (warned about at start).
    public var disableAuthentication = false
    /// GraphQL shows `int` properties as `Float`s, exact up to 2^53, instead of `Int`s, which
    /// GraphQL limits to 32 bits (the legacy setting of the same name; default false).
    public var presentIntsAsFloatsInSchema = false
    /// Whether `POST /auth` with `user_info.register: true` may create users (default true).
    /// When false, only `realm-adapter user add` (an operator) creates password users.
    public var allowSignUp = true
    /// Provider `jwt`: tokens of the app's own auth service, checked with its public key.
    public var jwt: JWTProviderConfiguration?
    /// TLS: `serve` speaks HTTPS (and WSS) with this certificate chain and key.
    public var tls: ServerTLSConfiguration?
    /// How long a new connection may take to send its first request's header section before it
    /// is closed (default 10 seconds): a client that connects and says nothing holds a socket.
    public var requestHeaderTimeout: Duration = .seconds(10)
    /// Provider `anonymous`: each login makes a new user, who owns `/~/` and nothing else (default false).
    public var allowAnonymous = false
    /// Provider `nickname`: a name is enough to log in, as anyone, admins included. For
    /// development only (warned about at start; default false).
    public var allowNickname = false
    /// `server.email`: how the server mails password resets and address confirmations.
    public var email: EmailConfiguration?
    /// Password users who signed up log in only once they confirmed their address (default false).
    public var requireEmailConfirmation = false
    /// How many wrong passwords for one user name, within ``failedLoginWindow``, hold that name's
    /// logins back until the oldest leaves the window (default 10; per `serve` process).
    public var failedLoginLimit = 10
    /// The window ``failedLoginLimit`` counts in (default 300 seconds).
    public var failedLoginWindow: Duration = .seconds(300)

    public init() {}

    init(_ r: inout JSONObjectReader) throws {
        host = try r.string("host") ?? host
        port = try r.int("port", in: 1...65535) ?? port
        if let variable = try r.string("signingKeyEnv") {
            guard !variable.isEmpty else { throw r.error("signingKeyEnv", "must name an environment variable.") }
            signingKeyEnv = variable
        }
        accessTokenLifetime = .seconds(try r.int("accessTokenLifetime", in: 1...31_536_000) ?? 600)
        refreshTokenLifetime = .seconds(try r.int("refreshTokenLifetime", in: 1...3_153_600_000) ?? 30 * 86_400)
        disableAuthentication = try r.bool("disableAuthentication") ?? false
        presentIntsAsFloatsInSchema = try r.bool("presentIntsAsFloatsInSchema") ?? false
        allowSignUp = try r.bool("allowSignUp") ?? true
        requestHeaderTimeout = .seconds(try r.int("requestHeaderTimeout", in: 1...3600) ?? 10)
        allowAnonymous = try r.bool("allowAnonymous") ?? false
        allowNickname = try r.bool("allowNickname") ?? false
        if var e = try r.object("email") {
            email = try EmailConfiguration(&e)
            try e.finish()
        }
        requireEmailConfirmation = try r.bool("requireEmailConfirmation") ?? false
        failedLoginLimit = try r.int("failedLoginLimit", in: 1...1_000_000) ?? failedLoginLimit
        failedLoginWindow = .seconds(try r.int("failedLoginWindow", in: 1...86_400) ?? 300)
        if requireEmailConfirmation && email == nil {
            throw r.error(
                "requireEmailConfirmation", "needs server.email: confirmations are mailed (host, from, publicURL).")
        }
        if var j = try r.object("jwt") {
            jwt = try JWTProviderConfiguration(&j)
            try j.finish()
        }
        if var t = try r.object("tls") {
            tls = ServerTLSConfiguration(
                certificateFile: try t.requiredString("certificateFile"), keyFile: try t.requiredString("keyFile"))
            try t.finish()
        }
    }

    /// The signing key from the environment, at least 32 bytes long.
    public func signingKey(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Secret {
        guard let key = environment[signingKeyEnv], !key.isEmpty else {
            throw RealmAdapterError.signingKeyMissing(signingKeyEnv)
        }
        guard key.utf8.count >= 32 else {
            throw RealmAdapterError.signingKeyShort(signingKeyEnv, bytes: key.utf8.count)
        }
        return Secret(key)
    }
}

/// `server.jwt`: the legacy JWT provider. An app's own auth service signs tokens with its
/// private key; `POST /auth` with `{"provider": "jwt", "data": "<token>"}` checks them with the
/// public key and logs the user in (creating them at first sight).
public struct JWTProviderConfiguration: Sendable {
    /// A PEM file with the auth service's public key (RSA or EC).
    public var publicKeyFile: String
    /// `RS256` (default), `RS384`, `RS512`, `ES256`, `ES384` or `ES512`.
    public var algorithm = "RS256"
    /// The claim naming the user (default `userId`, as in the legacy provider).
    public var userIdFieldName = "userId"
    /// The claim that, when it equals ``isAdminValue``, makes the user an admin (default `isAdmin`).
    public var isAdminFieldName = "isAdmin"
    /// The value of that claim that makes an admin (default `true`; a string or a number also works,
    /// as in the legacy provider: `"role": "admin"`).
    public var isAdminValue: JSONValue = .bool(true)
    /// When set, a token's `iss` must be this.
    public var issuer: String?
    /// When set, a token's `aud` must be (or contain) this.
    public var audience: String?

    public static let algorithms = ["RS256", "RS384", "RS512", "ES256", "ES384", "ES512"]

    public init(publicKeyFile: String) { self.publicKeyFile = publicKeyFile }

    init(_ r: inout JSONObjectReader) throws {
        publicKeyFile = try r.requiredString("publicKeyFile")
        if let a = try r.string("algorithm") {
            guard Self.algorithms.contains(a) else {
                throw r.error(
                    "algorithm", "'\(a)' is not supported: use one of \(Self.algorithms.joined(separator: ", ")).")
            }
            algorithm = a
        }
        userIdFieldName = try r.string("userIdFieldName") ?? userIdFieldName
        isAdminFieldName = try r.string("isAdminFieldName") ?? isAdminFieldName
        if let v = r.value("isAdminValue") {
            switch v {
            case .bool, .string, .int, .number, .double: isAdminValue = v
            default: throw r.error("isAdminValue", "expected true, a string or a number, found \(v.kindName).")
            }
        }
        issuer = try r.string("issuer")
        audience = try r.string("audience")
    }
}

/// `server.tls`: PEM files of the certificate (chain) and its private key.
public struct ServerTLSConfiguration: Sendable {
    public var certificateFile: String
    public var keyFile: String
    public init(certificateFile: String, keyFile: String) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }
}

extension RealmAdapterError {
    static func signingKeyMissing(_ variable: String) -> RealmAdapterError {
        RealmAdapterError(
            .invalidConfiguration,
            "The token signing key is not set: put a random key of at least 32 characters in the environment "
                + "variable \(variable) (server.signingKeyEnv), e.g. `export \(variable)=$(openssl rand -hex 32)`. "
                + "Tokens signed with it stay valid until it changes.")
    }

    static func signingKeyShort(_ variable: String, bytes: Int) -> RealmAdapterError {
        RealmAdapterError(
            .invalidConfiguration,
            "The token signing key in \(variable) is \(bytes) bytes long; use at least 32 "
                + "(e.g. `openssl rand -hex 32`).")
    }
}
