import Foundation

/// Crockford base32 as api.md's GP2 signature uses it ("Offline passes"): the bytes read as a
/// bit stream, most significant bit first, 5 bits per character, the last character filled
/// with zero bits — 103 characters for 64 bytes. Strict: upper case only, no `O I L` aliases,
/// no separators, zero fill bits (a text has exactly one spelling, so a pass has one text).
public enum CrockfordBits {
    public static func encode(_ bytes: [UInt8]) -> String {
        var out = ""
        out.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0, bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(ShortID.alphabet[Int(buffer >> UInt32(bits) & 31)])
            }
            buffer &= (1 << UInt32(bits)) - 1
        }
        if bits > 0 { out.append(ShortID.alphabet[Int(buffer << UInt32(5 - bits) & 31)]) }
        return out
    }

    /// The bytes of a strict text of `byteCount` bytes, or nil (wrong length, a character
    /// outside the alphabet, lower case, or fill bits that are not zero).
    public static func decode(_ text: some StringProtocol, byteCount: Int) -> [UInt8]? {
        guard text.utf8.count == (byteCount * 8 + 4) / 5 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount)
        var buffer: UInt32 = 0, bits = 0
        for unit in text.utf8 {
            guard let value = values[Int(unit)] else { return nil }
            buffer = buffer << 5 | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(buffer >> UInt32(bits) & 0xFF))
                buffer &= (1 << UInt32(bits)) - 1
            }
        }
        guard buffer == 0, bytes.count == byteCount else { return nil }
        return bytes
    }

    /// The value of each ASCII code in the alphabet; nil for anything else.
    private static let values: [UInt8?] = {
        var table = [UInt8?](repeating: nil, count: 256)
        for (index, character) in ShortID.alphabet.enumerated() { table[Int(character.asciiValue!)] = UInt8(index) }
        return table
    }()
}

/// A signed pass text (api.md "Offline passes"):
/// `GP2:<shortId>.<validFrom>.<validUntil>.<keyId>.<signature>`. Parsing checks the form only;
/// whether the signature verifies, and under which key, is the caller's (it holds the keys).
public struct SignedPassText: Sendable, Equatable {
    public var shortId: ShortID
    /// Unix seconds.
    public var validFrom: Int64
    public var validUntil: Int64
    public var keyId: String
    public var signature: [UInt8]

    public static let prefix = "GP2:"
    /// Long enough for any well-formed text (4 + 8 + 2 × 20 + 4 + 103 + 4 dots), short enough
    /// that a hostile scan is refused before it is split.
    public static let maximumLength = 170

    public init(shortId: ShortID, validFrom: Int64, validUntil: Int64, keyId: String, signature: [UInt8]) {
        self.shortId = shortId; self.validFrom = validFrom; self.validUntil = validUntil
        self.keyId = keyId; self.signature = signature
    }

    /// The bytes the signature covers: everything before the last `.`, `GP2:` included.
    public static func signedBytes(shortId: ShortID, validFrom: Int64, validUntil: Int64, keyId: String) -> [UInt8] {
        Array("\(prefix)\(shortId.rawValue).\(validFrom).\(validUntil).\(keyId)".utf8)
    }

    public var signedBytes: [UInt8] {
        Self.signedBytes(shortId: shortId, validFrom: validFrom, validUntil: validUntil, keyId: keyId)
    }

    /// The text drawn in the QR code (all upper case: QR alphanumeric mode).
    public var text: String { String(decoding: signedBytes, as: UTF8.self) + "." + CrockfordBits.encode(signature) }

    /// Whether `keyId` is 1–4 characters of `0-9A-Z`.
    public static func isKeyId(_ text: some StringProtocol) -> Bool {
        (1...4).contains(text.utf8.count) && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }
    }

    /// A well-formed GP2 text, or nil: canonical decimal times (no sign, no leading zeros), a
    /// canonical short id, a key id of api.md's form, and a strict 103-character signature.
    public init?(parsing raw: String) {
        guard raw.utf8.count <= Self.maximumLength, raw.hasPrefix(Self.prefix) else { return nil }
        let fields = raw.dropFirst(Self.prefix.count).split(separator: ".", omittingEmptySubsequences: false)
        guard fields.count == 5, let shortId = ShortID(String(fields[0])), shortId.rawValue == fields[0],
              let from = Self.canonicalSeconds(fields[1]), let until = Self.canonicalSeconds(fields[2]),
              Self.isKeyId(fields[3]), let signature = CrockfordBits.decode(fields[4], byteCount: 64)
        else { return nil }
        self.init(shortId: shortId, validFrom: from, validUntil: until, keyId: String(fields[3]), signature: signature)
    }

    private static func canonicalSeconds(_ text: Substring) -> Int64? {
        guard (1...19).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              text == "0" || text.first != "0"
        else { return nil }
        return Int64(text)
    }
}
