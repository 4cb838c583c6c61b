import Foundation

/// Puts a `MailMessage` in MIME form (RFC 5322, 2045–2047, 2046, 2387): a pure function of
/// the message, the time and the random source, so tests pin its output.
///
/// Structure, from the outside in (each level only when it has something to add):
/// ```
/// multipart/mixed            the message and its attachments (the .ics)
///   multipart/related        the body and the images it shows (the pass PNG, by Content-ID)
///     multipart/alternative  text/plain and text/html
/// ```
/// Every body is base64, lines of 76 characters, so the message is 7-bit ASCII whatever the
/// text. Header text (subject, display names) has control characters turned to a space, so
/// a CR or LF in visitor data can never start a header, and is sent as RFC 2047 encoded-words
/// when it is not plain ASCII words; header lines are folded at 78 characters.
///
/// ```swift
/// var random = SystemRandomNumberGenerator()
/// let mail = try MIMEBuilder.build(message, date: Date(), random: &random)
/// try transport.send(mail)
/// ```
public enum MIMEBuilder {
    public static func build(_ message: MailMessage, date: Date,
                             random: inout some RandomNumberGenerator) throws(MailBuildError) -> OutgoingMail {
        guard !message.to.isEmpty else { throw .noRecipient }
        for address in [message.from] + message.to where !address.isValid {
            throw .invalidAddress(address.address)
        }
        let messageID = "<\(hex(16, &random))@\(message.from.domain)>"
        var headers = [
            "Date: " + rfc5322Date(date),
            "Message-ID: " + messageID,
            addressHeader("From", [message.from]),
            addressHeader("To", message.to),
            unstructuredHeader("Subject", message.subject),
            "MIME-Version: 1.0",
        ]
        let root = entity(for: message, random: &random)
        headers += root.headers
        let text = headers.joined(separator: "\r\n") + "\r\n\r\n" + root.body
        return OutgoingMail(envelopeFrom: message.from.address, recipients: message.to.map(\.address),
                            messageID: messageID, bytes: Array(text.utf8))
    }

    // MARK: - Body structure

    struct Entity {
        var headers: [String]
        var body: String

        var rendered: String { headers.joined(separator: "\r\n") + "\r\n\r\n" + body }
    }

    static func entity(for message: MailMessage, random: inout some RandomNumberGenerator) -> Entity {
        let plain = base64Entity(contentType: "text/plain; charset=utf-8", data: Array(crlfLines(message.text).utf8))
        var body = plain
        if let html = message.html {
            body = multipart("alternative", [plain, base64Entity(contentType: "text/html; charset=utf-8",
                                                                 data: Array(crlfLines(html).utf8))], random: &random)
        }
        if !message.inline.isEmpty {
            let images = message.inline.map { image in
                base64Entity(contentType: image.part.contentType, data: image.part.data, extraHeaders: [
                    "Content-ID: <\(image.contentID)>",
                    "Content-Disposition: inline;\r\n filename=\"\(safeFilename(image.part.filename))\"",
                ])
            }
            body = multipart("related", [body] + images, random: &random)
        }
        if !message.attachments.isEmpty {
            let files = message.attachments.map { file in
                let name = safeFilename(file.filename)
                return base64Entity(contentType: file.contentType + ";\r\n name=\"\(name)\"", data: file.data,
                                    extraHeaders: ["Content-Disposition: attachment;\r\n filename=\"\(name)\""])
            }
            body = multipart("mixed", [body] + files, random: &random)
        }
        return body
    }

    static func base64Entity(contentType: String, data: [UInt8], extraHeaders: [String] = []) -> Entity {
        Entity(headers: ["Content-Type: " + contentType, "Content-Transfer-Encoding: base64"] + extraHeaders,
               body: base64Lines(data))
    }

    /// Parameters go on a folded line of their own, so each line stays within 78 characters.
    /// The boundary starts with "=_", which base64 (the only body encoding used) never
    /// contains, so no body line can be mistaken for it.
    static func multipart(_ subtype: String, _ parts: [Entity], random: inout some RandomNumberGenerator) -> Entity {
        let boundary = "=_gatepass_" + hex(12, &random)
        var body = ""
        for part in parts { body += "--\(boundary)\r\n" + part.rendered + "\r\n" }
        body += "--\(boundary)--\r\n"
        return Entity(headers: ["Content-Type: multipart/\(subtype);\r\n boundary=\"\(boundary)\""], body: body)
    }

    /// Base64 (RFC 2045 §6.8) in lines of 76 characters, each ended by CRLF.
    static func base64Lines(_ data: [UInt8]) -> String {
        let encoded = Data(data).base64EncodedString()
        var lines = ""
        var start = encoded.startIndex
        while start < encoded.endIndex {
            let end = encoded.index(start, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex
            lines += encoded[start..<end] + "\r\n"
            start = end
        }
        return lines
    }

    /// Text with every line end as CRLF, the canonical form text has before base64.
    static func crlfLines(_ text: String) -> String {
        text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
            .replacingOccurrences(of: "\n", with: "\r\n")
    }

    static func isFilenameByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || "._-".utf8.contains(byte)
    }

    /// A filename that needs no quoting or encoding: other characters become "_" (file names
    /// may be built from a visitor's name; RFC 2231 names are not worth their parsers' bugs).
    static func safeFilename(_ name: String) -> String {
        let bytes = name.utf8.prefix(64).map { isFilenameByte($0) ? $0 : UInt8(ascii: "_") }
        return bytes.isEmpty ? "attachment" : String(decoding: bytes, as: UTF8.self)
    }

    static func hex(_ count: Int, _ random: inout some RandomNumberGenerator) -> String {
        (0..<count).map { _ in
            let byte = UInt8.random(in: 0...255, using: &random)
            return String(byte >> 4, radix: 16) + String(byte & 0xF, radix: 16)
        }.joined()
    }

    // MARK: - Date

    /// RFC 5322 §3.3, in UTC: `Tue, 01 Dec 2026 15:27:19 +0000`.
    static func rfc5322Date(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int?) -> String { let text = String(value ?? 0); return text.count < 2 ? "0" + text : text }
        return "\(days[parts.weekday! - 1]), \(two(parts.day)) \(months[parts.month! - 1]) \(parts.year!) "
            + "\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) +0000"
    }
}
