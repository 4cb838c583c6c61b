import Foundation
import GatePassCore

/// Field rules shared by every route: the domain's text rules (`FieldRules`) as API errors,
/// and list parameters. Each failure names its field.
enum Field {
    static let bytesPerCharacter = FieldRules.bytesPerCharacter

    static func text(_ value: String?, _ name: String, maxLength: Int = 200, required: Bool = false) throws(APIError) -> String? {
        do { return try FieldRules.text(value, name, maxLength: maxLength, required: required) } catch { throw .badRequest(error.message) }
    }

    static func requiredText(_ value: String?, _ name: String, maxLength: Int = 200) throws(APIError) -> String {
        try text(value, name, maxLength: maxLength, required: true)!
    }

    static func email(_ value: String?, _ name: String = "email", required: Bool = false) throws(APIError) -> String? {
        do { return try FieldRules.email(value, name, required: required) } catch { throw .badRequest(error.message) }
    }

    static func phone(_ value: String?, _ name: String = "phone") throws(APIError) -> String? {
        do { return try FieldRules.phone(value, name) } catch { throw .badRequest(error.message) }
    }

    /// `?limit=`: default 50, above 500 clamped to 500, anything not a positive integer is 400.
    static func limit(_ query: [String: String]) throws(APIError) -> Int {
        guard let raw = query["limit"] else { return ListBounds.defaultLimit }
        guard raw.count <= 12, let value = Int(raw), value >= 1 else {
            throw .badRequest("limit must be a positive integer (at most \(ListBounds.maximumLimit) are returned)")
        }
        return min(value, ListBounds.maximumLimit)
    }

    static func cursor(_ query: [String: String]) throws(APIError) -> ListCursor? {
        try query["cursor"].map { (token: String) throws(APIError) in try ListCursor(token: token) }
    }

    /// An id given in a query (ours are UUIDs; anything longer or with spaces is no id of ours).
    static func identifier(_ raw: String, _ name: String) throws(APIError) -> String {
        do throws(FieldRuleViolation) { return try FieldRules.identifier(raw, name) } catch { throw .badRequest(error.message) }
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
