import Foundation
import NIOCore
import NIOExtras
import NIOPosix
import NIOSSL
import NIOTLS
import RealmAdapter

/// Sends a mail through the SMTP server of `server.email` (RFC 5321): `EHLO`, `STARTTLS` when
/// the configuration asks for it (refused if the server does not offer it), `AUTH PLAIN` with a
/// user, then `MAIL FROM`, `RCPT TO` and `DATA`. One connection per mail: the server mails only
/// password resets and confirmations, rarely and never in bulk.
struct SMTPClient: Sendable {
    let configuration: EmailConfiguration
    let password: Secret?
    /// How long one mail may take, connection included.
    static let timeout = Duration.seconds(30)

    /// A mail: one recipient, a subject, a plain-text body.
    struct Mail: Sendable {
        var to: String
        var subject: String
        var body: String
    }

    func send(_ mail: Mail) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.deliver(mail) }
            group.addTask {
                try await Task.sleep(for: Self.timeout)
                throw MailError("no answer from \(configuration.host):\(configuration.port) within 30 s")
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    private func deliver(_ mail: Mail) async throws {
        let c = configuration
        let tls = try c.security == .none ? nil : NIOSSLContext(configuration: tlsConfiguration())
        let handshake = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: Void.self)
        defer { handshake.fail(MailError("no TLS handshake")) }  // without TLS, or on the way out: a no-op
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .connect(host: c.host, port: c.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if c.security == .tls, let tls {
                        try channel.pipeline.syncOperations.addHandlers(
                            try NIOSSLClientHandler(context: tls, serverHostname: Self.sniName(c.host)),
                            HandshakeWaiter(promise: handshake))
                    }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineBasedFrameDecoder()))
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        // Closing the connection ends every wait on it: how a timeout stops a stalled conversation.
        let connection = channel.channel
        try await withTaskCancellationHandler {
            if c.security == .tls { try await Self.finish(handshake, with: c.host) }
            try await converse(channel, mail, tls: tls)
        } onCancel: {
            connection.close(promise: nil)
        }
    }

    /// Waits for a TLS handshake; its failure said as a mail error that tells what to check.
    static func finish(_ handshake: EventLoopPromise<Void>, with host: String) async throws {
        do { try await handshake.futureResult.get() } catch {
            throw MailError(
                "TLS with \(host) failed (\(error)); if its certificate is from a private authority, "
                    + "server.email.caFile names it")
        }
    }

    private func converse(
        _ channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>, _ mail: Mail, tls: NIOSSLContext?
    ) async throws {
        let c = configuration
        try await channel.executeThenClose { inbound, outbound in
            var replies = inbound.makeAsyncIterator()
            func expect(_ codes: ClosedRange<Int>, after command: String?) async throws -> [String] {
                if let command { try await outbound.write(ByteBuffer(string: command + "\r\n")) }
                let (code, lines) = try await Self.reply(&replies)
                guard codes.contains(code) else {
                    // Only the command's verb, and the reply without the recipient: logs never hold an address.
                    let said = command.map(Self.verb) ?? "connecting"
                    let reply = lines.joined(separator: " ").replacingOccurrences(
                        of: mail.to, with: "recipient", options: .caseInsensitive)
                    throw MailError("\(c.host) answered \(code) to \(said): \(reply)")
                }
                return lines
            }
            _ = try await expect(200...299, after: nil)
            var offered = try await expect(200...299, after: "EHLO \(Self.localName)")
            if c.security == .starttls {
                guard offered.contains(where: { $0.uppercased().hasPrefix("STARTTLS") }) else {
                    throw MailError(
                        "\(c.host) does not offer STARTTLS; set server.email.security to tls (port 465) or, for a "
                            + "relay on a trusted network only, none.")
                }
                _ = try await expect(200...299, after: "STARTTLS")
                guard let tls else { throw MailError("no TLS context") }
                let connection = channel.channel
                let handshake = connection.eventLoop.makePromise(of: Void.self)
                try await connection.eventLoop.submit {
                    try connection.pipeline.syncOperations.addHandlers(
                        [
                            try NIOSSLClientHandler(context: tls, serverHostname: Self.sniName(c.host)),
                            HandshakeWaiter(promise: handshake),
                        ], position: .first)
                }.get()
                try await Self.finish(handshake, with: c.host)
                offered = try await expect(200...299, after: "EHLO \(Self.localName)")
            }
            if let user = c.user, let password {
                let plain = Data(([0] + Array(user.utf8) + [0] + Array(password.value.utf8))).base64EncodedString()
                _ = try await expect(200...299, after: "AUTH PLAIN " + plain)
            }
            _ = try await expect(200...299, after: "MAIL FROM:<\(c.fromAddress)>")
            _ = try await expect(200...299, after: "RCPT TO:<\(mail.to)>")
            _ = try await expect(300...399, after: "DATA")
            _ = try await expect(200...299, after: message(mail) + "\r\n.")
            _ = try? await expect(200...299, after: "QUIT")
        }
    }

    /// What a log may say of a command: `MAIL FROM`, `RCPT TO`, `AUTH`, `DATA`… without its argument.
    static func verb(_ command: String) -> String {
        for verb in ["MAIL FROM", "RCPT TO"] where command.hasPrefix(verb) { return verb }
        return command.hasPrefix("From:") ? "the message" : String(command.prefix { $0 != " " })
    }

    /// The message: headers and the body, dot-stuffed, lines ending in CRLF.
    func message(_ mail: Mail) -> String {
        let ascii = mail.body.unicodeScalars.allSatisfy(\.isASCII)
        let date = Self.dateFormatter().string(from: Date())
        var lines = [
            "From: \(configuration.from)", "To: <\(mail.to)>", "Subject: \(mail.subject)", "Date: \(date)",
            "Message-ID: <\(UserDirectory.newId())@\(Self.localName)>", "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: \(ascii ? "7bit" : "base64")", "",
        ]
        if ascii {
            let body = mail.body.replacingOccurrences(of: "\r\n", with: "\n").split(
                separator: "\n", omittingEmptySubsequences: false)
            lines += body.map { $0.hasPrefix(".") ? "." + $0 : String($0) }
        } else {
            let encoded = Data(mail.body.utf8).base64EncodedString()
            lines += stride(from: 0, to: encoded.count, by: 76).map {
                let start = encoded.index(encoded.startIndex, offsetBy: $0)
                return String(
                    encoded[
                        start..<(encoded.index(start, offsetBy: 76, limitedBy: encoded.endIndex)
                            ?? encoded.endIndex)])
            }
        }
        return lines.joined(separator: "\r\n")
    }

    /// One reply, of one line or several (`250-…` then `250 …`): its code and its texts.
    static func reply(
        _ replies: inout NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    ) async throws -> (Int, [String]) {
        var lines: [String] = []
        while true {
            guard var buffer = try await replies.next() else {
                throw MailError("the SMTP server closed the connection")
            }
            let line = buffer.readString(length: buffer.readableBytes) ?? ""
            guard line.count >= 3, let code = Int(line.prefix(3)) else {
                throw MailError("the SMTP server's answer is not SMTP: \(line.prefix(60))")
            }
            lines.append(String(line.dropFirst(4)))
            if line.count == 3 || line[line.index(line.startIndex, offsetBy: 3)] != "-" { return (code, lines) }
        }
    }

    func tlsConfiguration() throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let file = configuration.caFile {
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
        }
        return tls
    }

    /// The host name sent for SNI: none for an IP address (TLS forbids it there).
    static func sniName(_ host: String) -> String? {
        host.allSatisfy { $0.isNumber || $0 == "." || $0 == ":" } ? nil : host
    }

    static let localName = ProcessInfo.processInfo.hostName.isEmpty ? "localhost" : ProcessInfo.processInfo.hostName

    /// RFC 5322's date (`Fri, 27 Nov 2026 21:16:46 +0000`).
    static func dateFormatter() -> DateFormatter {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        return f
    }
}

/// A mail that could not be sent, and why (never the recipient: it is an address).
struct MailError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Tells when the TLS handshake of STARTTLS is over: done, failed, or the connection gone.
final class HandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    let promise: EventLoopPromise<Void>

    init(promise: EventLoopPromise<Void>) { self.promise = promise }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent { promise.succeed() }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(MailError("the connection closed during the TLS handshake"))
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        promise.fail(MailError("the TLS handshake did not finish"))
    }
}
