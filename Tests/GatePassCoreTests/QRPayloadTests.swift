import Foundation
import Testing
@testable import GatePassCore

/// api.md: `shortId` may be a bare short id, `GP1:<shortId>`, or a URL whose last path
/// segment is the short id; `raw` is at most 256 bytes. Anything else is INVALID (400).
@Suite("QR payload")
struct QRPayloadTests {

    @Test("Accepted payloads", arguments: [
        // bare
        ("K7Q2M9XD", "K7Q2M9XD"),
        ("k7q2m9xd", "K7Q2M9XD"),
        ("K7Q2-M9XD", "K7Q2M9XD"),
        ("K7Q2M9XD--", "K7Q2M9XD"),
        ("k7q2m9xo", "K7Q2M9X0"),
        // GP1: form, prefix in any case
        ("GP1:K7Q2M9XD", "K7Q2M9XD"),
        ("gp1:K7Q2M9XD", "K7Q2M9XD"),
        ("gp1:k7q2m9xd", "K7Q2M9XD"),
        ("Gp1:K7Q2-M9XD", "K7Q2M9XD"),
        // URLs: last path segment
        ("https://gate.example.com/p/K7Q2M9XD", "K7Q2M9XD"),
        ("https://gate.example.com/K7Q2M9XD", "K7Q2M9XD"),
        ("https://gate.example.com/p/K7Q2M9XD/", "K7Q2M9XD"),
        ("https://gate.example.com/p/K7Q2M9XD?src=qr&v=1", "K7Q2M9XD"),
        ("https://gate.example.com/p/K7Q2M9XD#pass", "K7Q2M9XD"),
        ("https://gate.example.com/p/K7Q2M9XD/?src=qr#top", "K7Q2M9XD"),
        ("https://gate.example.com/p/K7Q2M9XD?next=/p/ZZZZZZZZ", "K7Q2M9XD"),
        ("https://gate.example.com/a/b/c/k7q2m9xd", "K7Q2M9XD"),
        ("http://localhost:8080/p/K7Q2-M9XD", "K7Q2M9XD"),
        ("HTTPS://GATE.EXAMPLE.COM/P/K7Q2M9XD", "K7Q2M9XD"),
        // whitespace around
        ("  K7Q2M9XD  ", "K7Q2M9XD"),
        ("\tGP1:K7Q2M9XD\n", "K7Q2M9XD"),
        ("\r\n https://gate.example.com/p/K7Q2M9XD \r\n", "K7Q2M9XD"),
        ("\u{00A0}K7Q2M9XD\u{2003}", "K7Q2M9XD"),            // no-break space, em space
    ])
    func accepted(_ raw: String, expected: String) throws {
        let id = try QRPayload.shortID(from: raw)
        #expect(id.rawValue == expected)
    }

    @Test("Empty payloads", arguments: ["", " ", "        ", "\t\n\r ", "\u{00A0}\u{3000}"])
    func empty(_ raw: String) {
        #expect(throws: QRPayloadError.empty) { try QRPayload.shortID(from: raw) }
    }

    @Test("Unrecognized payloads", arguments: [
        // GP1: with garbage
        "GP1:", "GP1: ", "GP1:garbage", "GP1:K7Q2M9X", "GP1:K7Q2M9XDD", "GP1:K7Q2M9XU",
        "GP1:GP1:K7Q2M9XD", "GP2:K7Q2M9XD", "GP1K7Q2M9XD", "GP1：K7Q2M9XD",
        // not an id
        "K7Q2M9XU", "K7Q2M9X", "K7Q2M9XDD", "K7Q2 M9XD", "hello", "🎫", "😀😀😀😀😀😀😀😀",
        // SQL and script metacharacters
        "'; DROP TABLE visitors;--", "K7Q2M9XD'; DROP TABLE visitors;--", "' OR '1'='1",
        "K7Q2M9XD' --", "\"K7Q2M9XD\"", "<script>alert(1)</script>", "javascript:alert(1)",
        "../../etc/passwd", "%4B7Q2M9XD", "${jndi:ldap://x/a}",
        // NUL bytes
        "\u{0}", "K7Q2M9XD\u{0}", "\u{0}K7Q2M9XD", "K7Q2\u{0}M9XD", "GP1:\u{0}K7Q2M9XD",
        // URLs that do not end in a short id
        "https://gate.example.com", "https://gate.example.com/", "https://K7Q2M9XD",
        "https://gate.example.com?K7Q2M9XD", "https://gate.example.com/?id=K7Q2M9XD",
        "https://gate.example.com/#K7Q2M9XD", "https://gate.example.com/p/K7Q2M9XD/extra",
        "https://gate.example.com/p/%4B7Q2M9XD", "https://", "://", "https:///",
        // Unicode look-alikes
        "К7Q2М9ХD", "ＫＱ２Ｍ９ＸＤ７", "K7Q2M9XD\u{200B}", "\u{200B}K7Q2M9XD", "K7Q2M9XÐ",
        "GР1:K7Q2M9XD",                                      // Cyrillic Р in the prefix
    ])
    func unrecognized(_ raw: String) {
        #expect(throws: QRPayloadError.unrecognized) { try QRPayload.shortID(from: raw) }
    }

    // MARK: - Size limit (256 bytes of raw text)

    @Test func exactly256BytesAreAccepted() throws {
        let raw = String(repeating: " ", count: 248) + "K7Q2M9XD"
        #expect(raw.utf8.count == 256)
        #expect(try QRPayload.shortID(from: raw).rawValue == "K7Q2M9XD")
    }

    @Test func a256ByteUrlIsAccepted() throws {
        let prefix = "https://gate.example.com/"
        let padding = String(repeating: "a", count: 256 - prefix.utf8.count - "/K7Q2M9XD".utf8.count)
        let raw = prefix + padding + "/K7Q2M9XD"
        #expect(raw.utf8.count == 256)
        #expect(try QRPayload.shortID(from: raw).rawValue == "K7Q2M9XD")
    }

    @Test(arguments: [
        String(repeating: "A", count: 257),
        String(repeating: " ", count: 249) + "K7Q2M9XD",              // a valid id, but 257 bytes
        "https://gate.example.com/" + String(repeating: "x", count: 223) + "/K7Q2M9XD",
        String(repeating: "-", count: 300),
        String(repeating: "\u{0}", count: 257),
    ])
    func over256BytesIsTooLong(raw: String) {
        #expect(throws: QRPayloadError.tooLong(bytes: raw.utf8.count)) { try QRPayload.shortID(from: raw) }
    }

    @Test func sizeIsCountedInUTF8Bytes() {
        let raw = String(repeating: "é", count: 129)      // 129 characters, 258 bytes
        #expect(throws: QRPayloadError.tooLong(bytes: 258)) { try QRPayload.shortID(from: raw) }
        let emoji = String(repeating: "😀", count: 65)    // 65 characters, 260 bytes
        #expect(throws: QRPayloadError.tooLong(bytes: 260)) { try QRPayload.shortID(from: emoji) }
    }

    @Test func veryLongInputIsTooLong() {
        let raw = String(repeating: "K7Q2M9XD", count: 125_000)   // 1 MB
        #expect(throws: QRPayloadError.tooLong(bytes: 1_000_000)) { try QRPayload.shortID(from: raw) }
    }

    @Test func maximumIs256Bytes() {
        #expect(QRPayload.maximumRawBytes == 256)
    }

    // MARK: - Messages (the API answers them as BAD_REQUEST naming the field)

    @Test func errorMessagesNameTheField() {
        #expect(QRPayloadError.empty.description.contains("shortId"))
        #expect(QRPayloadError.unrecognized.description.contains("shortId"))
        let tooLong = QRPayloadError.tooLong(bytes: 300).description
        #expect(tooLong.contains("shortId"))
        #expect(tooLong.contains("300"))
        #expect(tooLong.contains("256"))
    }
}
