/// How a person names a visitor: by its id (a UUID) or by its short id in any spelling the
/// Crockford rules allow (`k7q2-m9xd`, `K7Q2M9XD`, `O` for `0`, `I`/`L` for `1`; api.md "Short ids").
///
///     VisitorReference("k7q2-m9xd")?.pathValue   // "K7Q2M9XD"
///     VisitorReference("0190e5c2-…")?.pathValue  // the id, lower case
///
/// The two cannot be confused: a UUID without its hyphens is 32 characters, a short id 8.
public enum VisitorReference: Sendable, Equatable, CustomStringConvertible {
    case id(String)
    case shortId(ShortID)

    /// What the message of a refused reference says it must be.
    public static let expected = "a visitor's id (a UUID like 0190e5c2-7b1a-7c3d-8e4f-5a6b7c8d9e0f) or short id (8 characters like K7Q2M9XD)"

    /// Nil when `text` is neither a short id nor a UUID (surrounding whitespace is ignored).
    public init?(_ text: String) {
        guard text.utf8.count <= 64 else { return nil }
        let trimmed = text.trimmingWhitespace()
        if let shortId = ShortID(trimmed) {
            self = .shortId(shortId)
        } else if Self.isUUID(trimmed) {
            self = .id(trimmed.lowercased())
        } else {
            return nil
        }
    }

    /// What a path's `:id` takes: the id, or the canonical short id (the server accepts both).
    public var pathValue: String {
        switch self {
        case .id(let id): id
        case .shortId(let shortId): shortId.rawValue
        }
    }

    public var description: String { pathValue }

    /// Whether `visitor` is the one named.
    public func names(_ visitor: Visitor) -> Bool {
        switch self {
        case .id(let id): visitor.id.lowercased() == id
        case .shortId(let shortId): visitor.shortId == shortId
        }
    }

    /// `8-4-4-4-12` hexadecimal digits, either case.
    static func isUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                let isHex = (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
                guard isHex else { return false }
            }
        }
        return true
    }
}
