import Foundation

/// A certificate for `localhost` and 127.0.0.1, good for a day, made by openssl in `directory`:
/// `cert.pem` (also the CA a client trusts) and `key.pem`. For servers a test starts with TLS.
public func selfSignedCertificate(in directory: String) async throws -> (certificate: String, key: String) {
    let (certificate, key) = (directory + "/cert.pem", directory + "/key.pem")
    let made = try await ChildProcess.run(
        "/usr/bin/openssl",
        [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ])
    guard made.status == 0 else {
        throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "openssl: \(made.stderr)"])
    }
    return (certificate, key)
}
