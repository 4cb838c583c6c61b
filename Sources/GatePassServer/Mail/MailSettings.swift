import CurlHTTP
import Foundation
import GatePassCore
import GatePassMail

/// How this server sends mail, decided once at start from the configuration.
struct MailSettings: Sendable {
    /// nil: mail is off (no `smtpURL`, not `--dev`); invitations and test mails answer 409.
    let transport: (any MailTransport)?
    /// What the start probe and the log call the transport (`smtp://relay:587`, `mail folder /…`).
    let transportName: String
    let from: MailAddress
    /// Pass page links start with this (no trailing slash): `publicBaseURL`, or (`--dev`
    /// without it) the address the server listens on, known once it listens.
    let publicBaseURL: Locked<String>
    /// How long a mail is retried before it is given up (api.md: 24 h).
    static let retryFor: TimeInterval = 24 * 3600

    var isEnabled: Bool { transport != nil }

    /// The server's own address becomes the links' base when none is configured.
    func listening(at baseURL: String) {
        publicBaseURL.withLock { if $0.isEmpty { $0 = baseURL } }
    }

    /// Call `listening(at:)` once the server listens, for `--dev` without `publicBaseURL`.
    static func resolve(_ configuration: ServerConfiguration, devMode: Bool) throws(ConfigurationError) -> MailSettings {
        var configured = configuration.publicBaseURL ?? ""
        while configured.hasSuffix("/") { configured.removeLast() }
        let base = Locked(configured)
        let from = configuration.mailFrom.flatMap(MailAddress.parse) ?? MailAddress("gatepass@localhost.localdomain",
                                                                                   displayName: "Gate Pass")
        if let url = configuration.smtpURL {
            var password: SMTPPassword?
            if let file = configuration.smtpPasswordFile {
                do {
                    password = try SMTPPassword(contentsOfFile: file)
                } catch {
                    throw ConfigurationError(message: "smtpPasswordFile: cannot read \(file): \(error)")
                }
            }
            var options = CurlSMTP.Options(url: url, username: configuration.smtpUsername, password: password,
                                           caFile: configuration.smtpCAFile)
            options.plainTextWithoutSTARTTLS = isLoopback(host: URLComponents(string: url)?.host ?? "")
            return MailSettings(transport: SMTPTransport(configuration: options), transportName: url, from: from,
                                publicBaseURL: base)
        }
        guard devMode else {
            return MailSettings(transport: nil, transportName: "off", from: from, publicBaseURL: base)
        }
        let directory = configuration.mailDirectory
            ?? (configuration.resolvedStateFolder + "/mail")
        return MailSettings(transport: MailDirectoryTransport(directory: directory), transportName: "mail folder \(directory)",
                            from: from, publicBaseURL: base)
    }

    /// The loopback exception of api.md: 127.0.0.0/8, ::1 and `localhost`.
    static func isLoopback(host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        if bare == "localhost" || bare == "::1" { return true }
        var address = in_addr()
        guard inet_pton(AF_INET, bare, &address) == 1 else { return false }
        return UInt32(bigEndian: address.s_addr) >> 24 == 127
    }
}
