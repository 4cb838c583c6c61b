import CurlHTTP
import Foundation

/// Delivers built messages. The future mail worker holds one; tests and `--dev` can hold
/// another (an `.eml` folder, not written yet).
public protocol MailTransport: Sendable {
    /// Hands `mail` to the next hop; returns once it has accepted the message.
    func send(_ mail: OutgoingMail) throws
    /// Checks the settings (reach, TLS, credentials) without sending anything.
    func probe() throws
}

/// Mail over SMTP with libcurl (`CurlSMTP`): `smtp://host:port` with STARTTLS required, or
/// `smtps://host:port`; AUTH when a username is set. Errors are `SMTPError` (curl code and
/// stage; `isConnectionFailure` is what a queue retries as is).
///
/// ```swift
/// let transport = SMTPTransport(configuration: .init(url: "smtp://mail.example.org:587",
///     username: "gatepass", password: try SMTPPassword(contentsOfFile: "/etc/gatepass/smtp-password")))
/// try transport.probe()
/// try transport.send(mail)
/// ```
public struct SMTPTransport: MailTransport {
    /// The server, credentials, CA file and timeouts, as libcurl takes them.
    public typealias Configuration = CurlSMTP.Options

    public let configuration: Configuration
    private let smtp: CurlSMTP

    public init(configuration: Configuration) {
        self.configuration = configuration
        smtp = CurlSMTP(options: configuration)
    }

    public func send(_ mail: OutgoingMail) throws(SMTPError) {
        try smtp.send(from: mail.envelopeFrom, to: mail.recipients, message: mail.bytes)
    }

    public func probe() throws(SMTPError) {
        try smtp.probe()
    }
}
