import Foundation
import Logging
import RealmAdapter

/// Mails password resets and address confirmations (`server.email`). A request is answered at
/// once and the same way whether or not the address is a user's: the lookup and the mail happen
/// after, so neither the answer nor its time tells who has an account. Logs never name the
/// address; a failed mail is logged with the SMTP server's reason.
struct AccountMail: Sendable {
    let users: UserDirectory
    let configuration: EmailConfiguration
    let client: SMTPClient
    let logger: Logger

    init(users: UserDirectory, configuration: EmailConfiguration, logger: Logger) throws {
        self.users = users
        self.configuration = configuration
        client = SMTPClient(configuration: configuration, password: try configuration.password())
        self.logger = logger
    }

    /// Sends `purpose`'s link to the password user named `address`, if there is one (in the background).
    func request(_ purpose: UserDirectory.AccountTokenPurpose, for address: String) {
        Task.detached { [self] in
            do {
                guard let user = try users.passwordUser(address: address) else { return }
                try await send(purpose, to: user)
            } catch {
                logger.warning("Could not mail a \(purpose.noun) link", metadata: ["reason": "\(error)"])
            }
        }
    }

    /// Mails `purpose`'s link to `user` (their name is their address); nothing when they were sent
    /// too many within the hour.
    func send(_ purpose: UserDirectory.AccountTokenPurpose, to user: User) async throws {
        guard user.name.contains("@") else { return }
        guard
            let token = try users.issueAccountToken(for: user, purpose, lifetime: configuration.tokenLifetime)
        else {
            logger.notice("A user asked for more \(purpose.noun) mails than allowed in an hour; none sent")
            return
        }
        try await client.send(mail(purpose, to: user.name, token: token))
        logger.info("Mailed a \(purpose.noun) link", metadata: ["user": "\(user.id)"])
    }

    func mail(_ purpose: UserDirectory.AccountTokenPurpose, to address: String, token: String) -> SMTPClient.Mail {
        let minutes = Int(configuration.tokenLifetime.seconds / 60)
        let server = configuration.publicURL
        switch purpose {
        case .passwordReset:
            return SMTPClient.Mail(
                to: address, subject: "Reset your password",
                body: """
                    Hello,

                    Someone (we hope you) asked to reset the password of your account at \(server).
                    To choose a new one, open this link within \(minutes) minutes:

                    \(server)/auth/password/reset?token=\(token)

                    If it was not you, ignore this mail: your password stays as it is.
                    """)
        case .emailConfirmation:
            return SMTPClient.Mail(
                to: address, subject: "Confirm your email address",
                body: """
                    Hello,

                    To confirm that this address is yours, for your account at \(server), open this
                    link within \(minutes) minutes:

                    \(server)/auth/confirm?token=\(token)

                    If you did not sign up there, ignore this mail.
                    """)
        }
    }
}
