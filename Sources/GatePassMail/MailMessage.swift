import Foundation

/// An e-mail address with an optional display name, e.g. `"Zoë Müller" <zoe@example.org>`.
public struct MailAddress: Sendable, Equatable {
    /// Shown by mail programs; any text (visitor data): it is encoded (RFC 2047) when needed.
    public var displayName: String?
    /// The addr-spec, `local@domain`; see `isValid`.
    public var address: String

    public init(_ address: String, displayName: String? = nil) {
        self.address = address
        self.displayName = displayName
    }

    /// Printable ASCII with exactly one @ and something on both sides, nothing that could end
    /// a header or an SMTP command (no space, control character, `<`, `>`, `,`, `"`, `(`, `)`,
    /// `;`, `\`). Internationalised addresses (SMTPUTF8) are not supported.
    public var isValid: Bool {
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, address.utf8.count <= 254 else { return false }
        return address.utf8.allSatisfy { byte in
            byte > 0x20 && byte < 0x7F && !"<>,\"();\\[]:".utf8.contains(byte)
        }
    }

    var domain: String { String(address[address.index(after: address.lastIndex(of: "@")!)...]) }
}

/// A file carried by a message: an attachment, or an image the HTML shows inline by its
/// Content-ID (`<img src="cid:pass">`).
public struct MailPart: Sendable, Equatable {
    /// The media type with its parameters, e.g. `image/png`; from code, never from visitor data.
    public var contentType: String
    /// Shown by mail programs as the file's name; reduced to letters, digits, `.`, `-`, `_`.
    public var filename: String
    public var data: [UInt8]

    public init(contentType: String, filename: String, data: [UInt8]) {
        // A programmer error: media types are constants in the code.
        precondition(contentType.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") },
                     "a media type is printable ASCII without quotes")
        self.contentType = contentType
        self.filename = filename
        self.data = data
    }

    public static func png(_ data: [UInt8], filename: String) -> MailPart {
        MailPart(contentType: "image/png", filename: filename, data: data)
    }

    /// An entry for calendar programs to add (RFC 5545 text with METHOD:PUBLISH, as RFC 6047
    /// asks the content type to repeat): the visitor is told of a visit, not asked to a meeting
    /// with an organizer to answer (REQUEST).
    public static func calendarEvent(_ ics: String, filename: String = "invitation.ics") -> MailPart {
        MailPart(contentType: "text/calendar; charset=utf-8; method=PUBLISH", filename: filename,
                 data: Array(MIMEBuilder.crlfLines(ics).utf8))
    }
}

/// An image shown inside the HTML body, referenced there as `cid:<contentID>`.
public struct InlinePart: Sendable, Equatable {
    /// Letters, digits, `.`, `-`, `_` (from code); the message's header gets `<contentID>`.
    public var contentID: String
    public var part: MailPart

    public init(contentID: String, part: MailPart) {
        precondition(!contentID.isEmpty && contentID.utf8.allSatisfy(MIMEBuilder.isFilenameByte),
                     "a Content-ID is made of letters, digits, '.', '-' and '_'")
        self.contentID = contentID
        self.part = part
    }
}

/// What a message says, before it is put in MIME form by `MIMEBuilder`.
public struct MailMessage: Sendable, Equatable {
    public var from: MailAddress
    public var to: [MailAddress]
    public var subject: String
    /// The plain-text body (always sent).
    public var text: String
    /// The HTML body; with it, the text and HTML are alternatives of each other.
    public var html: String?
    public var inline: [InlinePart]
    public var attachments: [MailPart]

    public init(from: MailAddress, to: [MailAddress], subject: String, text: String, html: String? = nil,
                inline: [InlinePart] = [], attachments: [MailPart] = []) {
        self.from = from
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
        self.inline = inline
        self.attachments = attachments
    }
}

/// A message ready for a transport: the envelope and the RFC 5322 bytes.
public struct OutgoingMail: Sendable, Equatable {
    /// MAIL FROM.
    public var envelopeFrom: String
    /// RCPT TO, one per address.
    public var recipients: [String]
    /// The Message-ID header's value, `<…@domain>`, for logs and the queue.
    public var messageID: String
    /// The whole message, CRLF line ends, 7-bit ASCII.
    public var bytes: [UInt8]
    /// Not sent: what an `.eml` folder names the file by (`invitation-ana@example.com`).
    public var label: String?

    public init(envelopeFrom: String, recipients: [String], messageID: String, bytes: [UInt8]) {
        self.envelopeFrom = envelopeFrom
        self.recipients = recipients
        self.messageID = messageID
        self.bytes = bytes
    }
}

public enum MailBuildError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An address cannot be carried in a header or an SMTP command (see `MailAddress.isValid`).
    case invalidAddress(String)
    case noRecipient

    public var description: String {
        switch self {
        case .invalidAddress(let address): "\(address.debugDescription) is not an e-mail address this server can send to"
        case .noRecipient: "a message needs at least one recipient"
        }
    }
}

extension MailAddress {
    /// `gate@example.com` or `Gate Pass <gate@example.com>` (a configuration's sender), nil
    /// when the address is not one `isValid` accepts.
    public static func parse(_ text: String) -> MailAddress? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasSuffix(">"), let open = trimmed.lastIndex(of: "<") {
            let address = MailAddress(String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)]),
                                      displayName: nil)
            let name = trimmed[..<open].trimmingCharacters(in: .whitespaces)
                .trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            guard address.isValid, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return nil }
            return MailAddress(address.address, displayName: name.isEmpty ? nil : name)
        }
        let address = MailAddress(trimmed)
        return address.isValid ? address : nil
    }
}
