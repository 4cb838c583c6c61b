/// A visitor's short id: 8 characters of Crockford base32 (`0-9A-Z` without `I L O U`).
///
/// Always stored in canonical form (upper case, no hyphens). Parsing is the Crockford way:
/// case-insensitive, `O`→`0`, `I`/`L`→`1`, hyphens ignored (api.md "Short ids").
public struct ShortID: Hashable, Sendable, Codable, CustomStringConvertible {
    public static let length = 8
    /// The 32 symbols, in value order.
    public static let alphabet: [Character] = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    public let rawValue: String

    /// Accepts any spelling of a short id; nil when it is not one.
    public init?(_ text: String) {
        guard let canonical = ShortID.canonicalize(text) else { return nil }
        rawValue = canonical
    }

    /// A fresh id from `generator`, which must be a CSPRNG in production
    /// (`SystemRandomNumberGenerator` reads the kernel's getrandom).
    public static func random(using generator: inout some RandomNumberGenerator) -> ShortID {
        var symbols = ""
        for _ in 0..<length {
            symbols.append(alphabet[Int(generator.next(upperBound: UInt8(32)))])
        }
        return ShortID(canonical: symbols)
    }

    private init(canonical: String) { rawValue = canonical }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let id = ShortID(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a short id: 8 Crockford base32 characters")
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    static func canonicalize(_ text: String) -> String? {
        guard text.utf8.count <= 64 else { return nil }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "-": continue
            case "0"..."9": out.unicodeScalars.append(scalar)
            case "a"..."z", "A"..."Z":
                let upper = Character(String(scalar).uppercased())
                switch upper {
                case "O": out.append("0")
                case "I", "L": out.append("1")
                case "U": return nil
                default: out.append(upper)
                }
            default: return nil
            }
            if out.count > length { return nil }
        }
        return out.count == length ? out : nil
    }
}

/// Turns the text a camera or a person gave into a short id (api.md "Check-in decision").
///
/// Accepted: a bare short id, `GP1:<shortId>` (prefix in any case), or a URL whose last
/// path segment is the short id. Surrounding whitespace is ignored. Anything else is
/// `QRPayloadError`, which the API answers as BAD_REQUEST.
public enum QRPayload {
    /// The most raw text the scan history keeps (api.md: `raw`, at most 256 bytes).
    public static let maximumRawBytes = 256

    /// The unsigned form of a pass text (`GP1:<shortId>`), still accepted online.
    public static func passText(for id: ShortID) -> String { "GP1:" + id.rawValue }

    /// What a scanned text names: a short id (bare, `GP1:` or a URL ending in one), or a
    /// signed GP2 pass whose signature the caller checks.
    public enum Reference: Sendable, Equatable {
        case plain(ShortID)
        case signed(SignedPassText)

        public var shortId: ShortID {
            switch self {
            case .plain(let id): id
            case .signed(let text): text.shortId
            }
        }
    }

    public static func shortID(from raw: String) throws(QRPayloadError) -> ShortID { try reference(from: raw).shortId }

    /// The reference of a scanned text; a text that starts `GP2:` but is not a well-formed
    /// GP2 text is unrecognized (it is never read as a short id some other way).
    public static func reference(from raw: String) throws(QRPayloadError) -> Reference {
        guard raw.utf8.count <= maximumRawBytes else { throw .tooLong(bytes: raw.utf8.count) }
        let text = raw.trimmingWhitespace()
        guard !text.isEmpty else { throw .empty }
        if text.utf8.count > 4, text.prefix(4).uppercased() == SignedPassText.prefix {
            guard let signed = SignedPassText(parsing: text) else { throw .unrecognized }
            return .signed(signed)
        }
        return .plain(try plainShortID(text))
    }

    private static func plainShortID(_ text: String) throws(QRPayloadError) -> ShortID {
        if let id = ShortID(text) { return id }
        if text.count > 4, text.prefix(4).uppercased() == "GP1:" {
            if let id = ShortID(String(text.dropFirst(4))) { return id }
            throw .unrecognized
        }
        if let schemeEnd = text.range(of: "://") {
            var rest = text[schemeEnd.upperBound...]
            if let cut = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<cut] }
            guard let slash = rest.firstIndex(of: "/") else { throw .unrecognized }
            let segments = rest[slash...].split(separator: "/", omittingEmptySubsequences: true)
            if let last = segments.last, let id = ShortID(String(last)) { return id }
        }
        throw .unrecognized
    }
}

public enum QRPayloadError: Error, Sendable, Equatable, CustomStringConvertible {
    case empty
    case tooLong(bytes: Int)
    case unrecognized

    public var description: String {
        switch self {
        case .empty: "shortId is empty"
        case .tooLong(let bytes): "shortId is \(bytes) bytes; at most \(QRPayload.maximumRawBytes) are accepted"
        case .unrecognized: "shortId is not a short id, a GP1: or GP2: code or a URL ending in one"
        }
    }
}

extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
