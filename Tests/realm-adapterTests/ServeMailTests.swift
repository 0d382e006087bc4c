import Foundation
import RealmAdapter
import TestSupport
import Testing

@testable import RealmServer

/// Password resets and address confirmations by mail (`server.email`), through a real SMTP
/// server the test starts (aiosmtpd, `Tests/Support/smtp-server/sink.py`): the links are read
/// from the received messages and followed, as a person would, with curl.
@Suite(.serialized) struct ServeMailTests {
    typealias Server = ServeTests.Server

    /// The SMTP server: every message it accepts lands in `dir` as `<n>.eml`.
    final class Sink {
        let port = freePort()
        let dir: String
        let process: ChildProcess

        init(in parent: String, tls: (cert: String, key: String)? = nil) async throws {
            dir = parent + "/mail"
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Support/smtp-server/sink.py").path
            let out = parent + "/sink.out"
            process = try ChildProcess(
                "/usr/bin/env", ["python3", script, "\(port)", dir] + (tls.map { [$0.cert, $0.key] } ?? []),
                stdout: out, stderr: parent + "/sink.err")
            for _ in 0..<500 {
                if ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").contains("ready") { return }
                try await Task.sleep(for: .milliseconds(20))
            }
            let reason = (try? String(contentsOfFile: parent + "/sink.err", encoding: .utf8)) ?? ""
            Issue.record("the SMTP server did not start: \(reason)")
        }

        deinit {
            process.signal(SIGKILL)
            process.reap()
        }

        /// The `n`th message (from 1), once it arrived (within 10 s).
        func message(_ n: Int) async throws -> String {
            for _ in 0..<500 {
                if let text = try? String(contentsOfFile: "\(dir)/\(n).eml", encoding: .utf8) { return text }
                try await Task.sleep(for: .milliseconds(20))
            }
            Issue.record("message \(n) did not arrive")
            return ""
        }

        var count: Int {
            ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".eml") }.count
        }

        /// The link in a message that starts with `prefix`.
        static func link(_ message: String, _ prefix: String) -> String? {
            message.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .first { $0.hasPrefix(prefix) }
        }
    }

    /// A form posted as a browser would (`application/x-www-form-urlencoded`), with curl.
    static func post(_ url: String, _ fields: [(String, String)]) async throws -> (status: Int, body: String) {
        var args = ["-s", "-o", "-", "-w", "\n%{http_code}", "-X", "POST", url]
        for (k, v) in fields { args += ["--data-urlencode", "\(k)=\(v)"] }
        let r = try await ChildProcess.run("/usr/bin/curl", args)
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    static func get(_ url: String) async throws -> (headers: String, body: String) {
        let r = try await ChildProcess.run("/usr/bin/curl", ["-s", "-i", url])
        let parts = r.stdout.components(separatedBy: "\r\n\r\n")
        return (parts.first ?? "", parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    /// A server that mails through `sink`; `settings` go into `server.email`.
    static func server(_ sink: Sink?, _ settings: String, extra: String = "") async throws -> Server {
        let s = try await Server(
            server:
                #", "email": {"host": "127.0.0.1", "port": \#(sink?.port ?? 1), "from": "Shop <no-reply@shop.test>", "#
                + #""publicURL": "http://public.invalid"\#(settings)}\#(extra)"#)
        let config = try String(contentsOfFile: s.config, encoding: .utf8).replacingOccurrences(
            of: "http://public.invalid", with: s.url)
        try config.write(toFile: s.config, atomically: true, encoding: .utf8)
        return s
    }

    @Test func confirmationsAndResetsGoByMailAndWorkOnce() async throws {
        let parent = NSTemporaryDirectory() + "realm-adapter-mail-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let sink = try await Sink(in: parent)
        let s = try await Self.server(sink, #", "security": "none""#, extra: #", "requireEmailConfirmation": true"#)
        try await s.start()

        // Signing up: refused until the address is confirmed, and a confirmation is mailed.
        let signUp = try await s.curl(
            "POST", "/auth",
            #"{"provider": "password", "data": "dave@example.com", "#
                + #""user_info": {"password": "dave-password", "register": true}}"#
        )
        #expect(signUp.status == 403 && signUp.body.contains("Confirm your email address"), "\(signUp.body)")
        let confirmation = try await sink.message(1)
        #expect(confirmation.contains("To: <dave@example.com>") && confirmation.contains("Subject: Confirm"))
        let rcpt = try String(contentsOfFile: sink.dir + "/1.rcpt", encoding: .utf8)
        #expect(rcpt == "dave@example.com\n")
        let confirmLink = try #require(Sink.link(confirmation, s.url + "/auth/confirm?token="))
        let confirmToken = String(confirmLink.split(separator: "=").last ?? "")
        let login = #"{"provider": "password", "data": "dave@example.com", "user_info": {"password": "dave-password"}}"#
        #expect(try await s.curl("POST", "/auth", login).status == 403)

        // Opening the link changes nothing (mail scanners open links); its form's button confirms.
        let page = try await Self.get(confirmLink)
        #expect(page.headers.contains("Content-Security-Policy: default-src 'none'"), "\(page.headers)")
        // A relative action: the form works behind a proxy that serves the server under a path.
        #expect(page.body.contains(#"<form method="post" action="confirm">"#), "\(page.body)")
        #expect(try await s.curl("POST", "/auth", login).status == 403)
        let confirmed = try await Self.post(s.url + "/auth/confirm", [("token", confirmToken)])
        #expect(confirmed.status == 200 && confirmed.body.contains("Address confirmed"), "\(confirmed.body)")
        let dave = try await s.curl("POST", "/auth", login)
        #expect(dave.status == 200, "\(dave.body)")
        let daveRefresh = try Server.field(dave.body, "refresh_token", "token")
        let twice = try await Self.post(s.url + "/auth/confirm", [("token", confirmToken)])
        #expect(twice.status == 400 && twice.body.contains("used already"), "\(twice.body)")

        // Under requireEmailConfirmation, a sign-up's name is the address a link goes to.
        let noAddress = try await s.curl(
            "POST", "/auth",
            #"{"provider": "password", "data": "nomail", "#
                + #""user_info": {"password": "nomail-password", "register": true}}"#)
        #expect(noAddress.status == 400 && noAddress.body.contains("email address as the name"), "\(noAddress.body)")

        // A reset: the same answer, byte for byte and in about the same time, for a known and an
        // unknown address; a mail only for the known one.
        let erin = try await s.cli(["user", "add", "erin@example.com", "--config", s.config], stdin: "erin-password\n")
        #expect(erin.status == 0)
        func ask(_ address: String) async throws -> (Int, String, Duration) {
            let clock = ContinuousClock()
            let start = clock.now
            let r = try await s.curl(
                "POST", "/auth/password/updateAccount",
                #"{"provider_id": "\#(address)", "data": {"action": "reset_password"}}"#)
            return (r.status, r.body, clock.now - start)
        }
        let known = try await ask("dave@example.com")
        for _ in 0..<4 {
            let u = try await ask("nobody@example.com")
            #expect(u.0 == known.0 && u.1 == known.1, "\(u.1) vs \(known.1)")
            _ = try await ask("Dave@Example.com")
        }
        let reset = try await sink.message(2)
        #expect(reset.contains("To: <dave@example.com>") && reset.contains("Subject: Reset your password"))
        let resetLink = try #require(Sink.link(reset, s.url + "/auth/password/reset?token="))
        let resetToken = String(resetLink.split(separator: "=").last ?? "")
        let laterReset = try await sink.message(3)
        let otherResetToken = String(
            try #require(Sink.link(laterReset, s.url + "/auth/password/reset?token=")).split(separator: "=").last ?? "")

        // A confirmation token is not a reset token; a password too short changes nothing.
        let wrongKind = try await Self.post(
            s.url + "/auth/password/reset", [("token", confirmToken), ("new_password", "dave-new-password")])
        #expect(wrongKind.status == 400 && wrongKind.body.contains("not valid"), "\(wrongKind.body)")
        #expect(try await Self.get(resetLink).body.contains(#"name="new_password""#))
        let none = try await Self.post(s.url + "/auth/password/reset", [("token", resetToken)])
        #expect(none.status == 400 && none.body.contains("No password given"), "\(none.body)")
        let short = try await Self.post(s.url + "/auth/password/reset", [("token", resetToken), ("new_password", "x")])
        #expect(short.status == 400 && short.body.contains("at least 8"), "\(short.body)")
        let done = try await Self.post(
            s.url + "/auth/password/reset", [("token", resetToken), ("new_password", "dave-new-password")])
        #expect(done.status == 200 && done.body.contains("Password changed"), "\(done.body)")
        let again = try await Self.post(
            s.url + "/auth/password/reset", [("token", resetToken), ("new_password", "dave-other-password")])
        #expect(again.status == 400 && again.body.contains("used already"), "\(again.body)")
        // A reset ends the user's other reset links (a probe changed the password again with one).
        let other = try await Self.post(
            s.url + "/auth/password/reset", [("token", otherResetToken), ("new_password", "dave-third-password")])
        #expect(other.status == 400 && other.body.contains("used already"), "\(other.body)")
        _ = try await s.login("dave@example.com", password: "dave-new-password")
        guard case .failure(let stale) = try await s.access(daveRefresh, "/~/x") else {
            Issue.record("a token from before the reset still works")
            return
        }
        #expect(stale.status == 401, "\(stale.body)")
        _ = try await s.login("erin@example.com", password: "erin-password")

        // The app's own way (the legacy JSON actions), with a further mail.
        _ = try await ask("erin@example.com")
        var erinMail = ""
        for n in 3...20 where !erinMail.contains("erin@example.com") { erinMail = try await sink.message(n) }
        let erinToken = String(
            try #require(Sink.link(erinMail, s.url + "/auth/password/reset?token="))
                .split(separator: "=").last ?? "")
        let complete = try await s.curl(
            "POST", "/auth/password/updateAccount",
            #"{"data": {"action": "complete_reset", "token": "\#(erinToken)", "new_password": "erin-new-password"}}"#)
        #expect(complete.status == 200, "\(complete.body)")
        _ = try await s.login("erin@example.com", password: "erin-new-password")

        // The time: the SMTP server takes 1.5 s over a mail to slow-kim, so an answer that waited for
        // the mail would show it; the answers for her and for an unknown address are alike within
        // the noise of a busy machine (a full test run spreads single requests by 300 ms).
        let kim = try await s.cli(
            ["user", "add", "slow-kim@example.com", "--config", s.config], stdin: "kim-password\n")
        #expect(kim.status == 0)
        var times: (known: [Duration], unknown: [Duration]) = ([], [])
        for _ in 0..<4 {
            times.known.append(try await ask("slow-kim@example.com").2)
            times.unknown.append(try await ask("nobody@example.com").2)
        }
        let median = { (d: [Duration]) in d.sorted()[d.count / 2] }
        let gap = median(times.known) - median(times.unknown)
        #expect(median(times.known) < .seconds(1), "known \(times.known), unknown \(times.unknown)")
        #expect(gap < .milliseconds(500) && gap > .milliseconds(-500), "known \(times.known), unknown \(times.unknown)")

        // A mailbox the SMTP server refuses: logged with its reason, not its address (a probe found
        // the server's answer, naming it, in the log).
        #expect(
            try await s.cli(["user", "add", "refused-ivy@example.com", "--config", s.config], stdin: "ivy-password\n")
                .status == 0)
        _ = try await ask("refused-ivy@example.com")
        var logged = ""
        for _ in 0..<250 where !logged.contains("Could not mail") {
            try await Task.sleep(for: .milliseconds(20))
            logged = (try? String(contentsOfFile: s.dir + "/serve.log", encoding: .utf8)) ?? ""
        }
        #expect(logged.contains("answered 550 to RCPT TO: 5.1.1 <recipient>"), "\(logged)")

        // Nobody mailed the unknown address; dave got no more than the hourly limit; and no
        // address, password or token is in the server's log.
        let recipients = try (1...sink.count).map {
            try String(contentsOfFile: "\(sink.dir)/\($0).rcpt", encoding: .utf8)
        }
        #expect(!recipients.contains { $0.contains("nobody") })
        #expect(recipients.filter { $0.contains("dave") }.count == 1 + UserDirectory.tokensPerHour, "\(recipients)")
        let log = try String(contentsOfFile: s.dir + "/serve.log", encoding: .utf8)
        for secret in [
            "@example.com", "refused-ivy", "slow-kim", "dave-password", "dave-new-password", confirmToken, resetToken,
            daveRefresh,
        ] {
            #expect(!log.contains(secret), "the log has \(secret.prefix(12))")
        }
        #expect(log.contains("Mailed a password reset link"), "\(log)")
    }

    /// STARTTLS against a server with a private certificate authority, then AUTH PLAIN with the
    /// password from the environment; and a mail server that is down is logged, not a crash.
    @Test func startTLSAndAuthentication() async throws {
        let parent = NSTemporaryDirectory() + "realm-adapter-mail-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let (certificate, key) = try await selfSignedCertificate(in: parent)
        let sink = try await Sink(in: parent, tls: (certificate, key))
        let configuration = EmailConfiguration(
            host: "localhost", port: sink.port, security: .starttls, from: "no-reply@shop.test",
            publicURL: "https://shop.test")
        var withCA = configuration
        withCA.caFile = certificate
        withCA.user = "realm"
        let mail = SMTPClient.Mail(to: "frank@example.com", subject: "Hello", body: ".a line with a dot\nünïcode")
        try await SMTPClient(configuration: withCA, password: .init("smtp-secret")).send(mail)
        let received = try await sink.message(1)
        #expect(received.contains("Content-Transfer-Encoding: base64"), "\(received)")
        let encoded =
            received.components(separatedBy: "\r\n\r\n").last ?? received.components(separatedBy: "\n\n").last!
        let body = String(decoding: Data(base64Encoded: encoded.filter { !$0.isWhitespace }) ?? Data(), as: UTF8.self)
        #expect(body == ".a line with a dot\nünïcode", "\(body)")

        // A wrong SMTP password, a certificate not trusted, a server that is down: each an error
        // that says what went wrong.
        await #expect(throws: MailError.self) {
            try await SMTPClient(configuration: withCA, password: .init("wrong")).send(mail)
        }
        await #expect(throws: (any Error).self) {
            try await SMTPClient(configuration: configuration, password: nil).send(mail)
        }
        var down = configuration
        down.port = freePort()
        await #expect(throws: (any Error).self) { try await SMTPClient(configuration: down, password: nil).send(mail) }
        #expect(sink.count == 1)
    }

    /// Tokens expire, and a user gets at most a few an hour.
    @Test func mailedTokensExpireAndAreRateLimited() throws {
        let dir = NSTemporaryDirectory() + "realm-adapter-tokens-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let users = try UserDirectory(storeDirectory: dir)
        let gina = try users.add(name: "gina@example.com", password: "gina-password", confirmed: false)
        let old = try #require(
            try users.issueAccountToken(
                for: gina, .emailConfirmation, lifetime: .seconds(60), now: Date().addingTimeInterval(-7200)))
        #expect(throws: ServerError.self) { try users.confirmEmail(token: old) }
        #expect((try? users.confirmEmail(token: old)) == nil)
        for _ in 0..<UserDirectory.tokensPerHour {
            #expect(try users.issueAccountToken(for: gina, .passwordReset, lifetime: .seconds(60)) != nil)
        }
        #expect(try users.issueAccountToken(for: gina, .passwordReset, lifetime: .seconds(60)) == nil)
        let confirm = try #require(try users.issueAccountToken(for: gina, .emailConfirmation, lifetime: .seconds(60)))
        #expect(try users.confirmEmail(token: confirm).id == gina.id)
        #expect(try users.user(id: gina.id)?.emailConfirmed == true)
    }
}
