import Foundation

// Header text from visitor data (RFC 5322 §2.2, §3.2.5; RFC 2047).
extension MIMEBuilder {
    static let maximumLineLength = 78
    /// UTF-8 bytes per encoded-word: 39 bytes are 52 base64 characters, 64 with `=?utf-8?B?…?=`,
    /// so even after `Subject: ` a line stays within 78.
    static let bytesPerEncodedWord = 39

    /// Control characters (C0, DEL, C1, and the Unicode line and paragraph separators) and
    /// runs of them become one space: nothing in visitor data can end a header line.
    static func sanitized(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        var inControlRun = false
        for scalar in text.unicodeScalars {
            let isControl = scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                || scalar.value == 0x2028 || scalar.value == 0x2029
            if isControl {
                if !inControlRun { result.append(" ") }
                inControlRun = true
            } else {
                result.append(scalar)
                inControlRun = false
            }
        }
        return String(result)
    }

    /// `Subject: …`: plain words when the text is printable ASCII words of a sane length with
    /// single spaces, otherwise encoded-words for the whole text.
    static func unstructuredHeader(_ name: String, _ value: String) -> String {
        let text = sanitized(value)
        let words = text.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        let plain = !text.isEmpty && words.allSatisfy { word in
            !word.isEmpty && word.count <= 60 && word.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F }
        } && !text.contains("=?")
        return folded(name, plain ? words : encodedWords(text))
    }

    /// `To: Name <a@b>, "…" <c@d>`: a display name stays as is when it is atoms with single
    /// spaces, otherwise it is encoded-words (never a quoted-string, whose escaping parsers
    /// get wrong). Addresses were checked by `MailAddress.isValid`.
    static func addressHeader(_ name: String, _ addresses: [MailAddress]) -> String {
        var tokens: [String] = []
        for (index, address) in addresses.enumerated() {
            let comma = index < addresses.count - 1 ? "," : ""
            let display = sanitized(address.displayName ?? "")
            if display.isEmpty {
                tokens.append(address.address + comma)
                continue
            }
            let words = display.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            let atoms = words.allSatisfy { word in
                !word.isEmpty && word.count <= 60 && word.utf8.allSatisfy(isAtomByte)
            } && !display.contains("=?")
            tokens += atoms ? words : encodedWords(display)
            tokens.append("<\(address.address)>" + comma)
        }
        return folded(name, tokens)
    }

    static func isAtomByte(_ byte: UInt8) -> Bool {
        isFilenameByte(byte) && byte != UInt8(ascii: ".") || "!#$%&'*+/=?^`{|}~".utf8.contains(byte)
    }

    /// `=?utf-8?B?…?=` words of whole characters (a grapheme is split only when it alone is
    /// longer than one word's bytes), so every word decodes on its own.
    static func encodedWords(_ text: String) -> [String] {
        var chunks: [[UInt8]] = []
        var current: [UInt8] = []
        func add(_ bytes: [UInt8]) {
            if current.count + bytes.count > bytesPerEncodedWord, !current.isEmpty {
                chunks.append(current)
                current = []
            }
            current += bytes
        }
        for character in text {
            let bytes = Array(String(character).utf8)
            if bytes.count <= bytesPerEncodedWord {
                add(bytes)
            } else {
                for scalar in character.unicodeScalars { add(Array(String(scalar).utf8)) }
            }
        }
        if !current.isEmpty { chunks.append(current) }
        return chunks.map { "=?utf-8?B?" + Data($0).base64EncodedString() + "?=" }
    }

    /// Joins tokens with spaces and folds (CRLF + space) before a token that would pass 78.
    static func folded(_ name: String, _ tokens: [String]) -> String {
        var result = name + ":"
        var lineLength = result.count
        for token in tokens {
            if lineLength + 1 + token.count > maximumLineLength, lineLength > name.count + 1 {
                result += "\r\n"
                lineLength = 0
            }
            result += " " + token
            lineLength += 1 + token.count
        }
        return result
    }
}
