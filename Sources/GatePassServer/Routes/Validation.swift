import Foundation
import GatePassCore

/// Field rules shared by every route: trimmed text with a length limit and no control
/// characters, emails, phones, list parameters. Each failure names its field.
enum Field {
    /// Every character limit is also a byte limit of this many UTF-8 bytes per character.
    static let bytesPerCharacter = 4

    static func text(_ value: String?, _ name: String, maxLength: Int = 200, required: Bool = false) throws(APIError) -> String? {
        let trimmed = value?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if trimmed.isEmpty {
            if required { throw .badRequest("\(name) is required and must not be empty") }
            return nil
        }
        guard trimmed.count <= maxLength else { throw .badRequest("\(name) must be at most \(maxLength) characters") }
        // Characters are grapheme clusters: one can hold any number of combining marks. Four
        // bytes per character is room for any script (李 is 3), never for a stack of marks.
        let maxBytes = maxLength * Self.bytesPerCharacter
        guard trimmed.utf8.count <= maxBytes else {
            throw .badRequest("\(name) must be at most \(maxBytes) bytes of UTF-8 (\(maxLength) characters of up to 4 bytes)")
        }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .badRequest("\(name) must not contain control characters")
        }
        return trimmed
    }

    static func requiredText(_ value: String?, _ name: String, maxLength: Int = 200) throws(APIError) -> String {
        try text(value, name, maxLength: maxLength, required: true)!
    }

    static func email(_ value: String?, _ name: String = "email", required: Bool = false) throws(APIError) -> String? {
        guard let email = try text(value, name, maxLength: 254, required: required) else { return nil }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."),
              !parts[1].hasSuffix("."), !email.contains(where: { $0.isWhitespace }), parts[0].count <= 64,
              parts[0].utf8.count <= 64 * bytesPerCharacter
        else { throw .badRequest("\(name) must be an email address like ana@example.com") }
        return email.lowercased()
    }

    static func phone(_ value: String?, _ name: String = "phone") throws(APIError) -> String? {
        guard let phone = try text(value, name, maxLength: 32) else { return nil }
        let allowed = Set("0123456789+-() .")
        guard phone.allSatisfy({ allowed.contains($0) }), phone.filter(\.isNumber).count >= 3 else {
            throw .badRequest("\(name) must be a phone number: digits, spaces and + - ( ) . only")
        }
        return phone
    }

    /// `?limit=`: default 50, above 500 clamped to 500, anything not a positive integer is 400.
    static func limit(_ query: [String: String]) throws(APIError) -> Int {
        guard let raw = query["limit"] else { return 50 }
        guard raw.count <= 12, let value = Int(raw), value >= 1 else {
            throw .badRequest("limit must be a positive integer (at most 500 are returned)")
        }
        return min(value, 500)
    }

    static func cursor(_ query: [String: String]) throws(APIError) -> ListCursor? {
        try query["cursor"].map { (token: String) throws(APIError) in try ListCursor(token: token) }
    }

    static func time(_ query: [String: String], _ name: String) throws(APIError) -> Date? {
        guard let raw = query[name] else { return nil }
        guard let date = Timestamp.parse(raw) else {
            throw .badRequest("\(name) must be an RFC 3339 time like 2026-11-29T16:08:43Z")
        }
        return date
    }

    static func visitorStatus(_ raw: String?) throws(APIError) -> VisitorStatus? {
        guard let raw else { return nil }
        guard let status = VisitorStatus(rawValue: raw) else {
            throw .badRequest("status must be one of \(VisitorStatus.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return status
    }

    static func scanResult(_ raw: String?) throws(APIError) -> ScanResult? {
        guard let raw else { return nil }
        guard let result = ScanResult(rawValue: raw) else {
            throw .badRequest("result must be one of \(ScanResult.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return result
    }

    /// A search text (`q`, lookup), lowercased for matching.
    static func search(_ raw: String?, _ name: String) throws(APIError) -> String? {
        try text(raw, name, maxLength: 100)?.lowercased()
    }
}

/// `{note?}` bodies; an empty body counts as `{}`.
struct NoteBody: Decodable { var note: String? }

extension JSONBody {
    /// For routes whose fields are all optional: an empty body means `{}`.
    static func decodeOptional<T: Decodable>(_ type: T.Type, from body: [UInt8]) throws(APIError) -> T {
        try decode(T.self, from: body.isEmpty ? Array("{}".utf8) : body)
    }
}
