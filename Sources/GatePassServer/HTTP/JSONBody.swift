import Foundation
import GatePassCore
import HTTPServer

/// Reading request bodies and writing JSON responses.
enum JSONBody {
    /// Decodes the body as `T`, with errors that name the field at fault.
    static func decode<T: Decodable>(_ type: T.Type, from body: [UInt8]) throws(APIError) -> T {
        guard !body.isEmpty else { throw .badRequest("the body must be a JSON object") }
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch {
            throw .badRequest(describe(error))
        }
    }

    /// A one-sentence description of a decoding failure that names the field.
    static func describe(_ error: any Error) -> String {
        func path(_ codingPath: [any CodingKey], _ key: (any CodingKey)? = nil) -> String {
            let keys = codingPath + (key.map { [$0] } ?? [])
            if keys.isEmpty { return "the body" }
            return keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        guard let error = error as? DecodingError else { return "the body is not valid JSON" }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath, key)) is required"
        case .typeMismatch(let type, let context):
            let where_ = path(context.codingPath)
            if context.codingPath.isEmpty { return "the body must be a JSON object" }
            return "\(where_) must be \(typeName(type))"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)) must be \(typeName(type)), not null"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                let detail = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
                return "the body is not valid JSON" + (detail.map { ": \($0)" } ?? "")
            }
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "the body is not valid JSON"
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type: "an integer"
        case is Double.Type: "a number"
        default: "a JSON \(type is [Any].Type ? "array" : "object")"
        }
    }

    static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        // Encoding our own value types cannot fail; a failure is a bug.
        return Array(try! encoder.encode(value))
    }

    static func response<T: Encodable>(status: Int = 200, _ value: T, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status,
                     headers: [("Content-Type", "application/json; charset=utf-8")] + headers.map { (name: $0.0, value: $0.1) },
                     body: encode(value))
    }
}

/// `{"items": [...], "nextCursor": ... | null}` (api.md "Lists").
struct Page<Item: Encodable & Sendable>: Encodable, Sendable {
    var items: [Item]
    var nextCursor: String?

    enum CodingKeys: String, CodingKey { case items, nextCursor }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(items, forKey: .items)
        try c.encode(nextCursor, forKey: .nextCursor)
    }
}

/// A keyset position in a list ordered by (time DESC, seq DESC), opaque to clients.
struct ListCursor: Equatable {
    var time: Int64
    var seq: Int64

    var token: String { Base64URLText.encode("v1:\(time):\(seq)") }

    init(time: Int64, seq: Int64) {
        self.time = time
        self.seq = seq
    }

    init(token: String) throws(APIError) {
        guard token.utf8.count <= 128, let text = Base64URLText.decode(token) else {
            throw .badRequest("cursor is not a cursor this server gave out")
        }
        let parts = text.split(separator: ":")
        guard parts.count == 3, parts[0] == "v1", let time = Int64(parts[1]), let seq = Int64(parts[2]) else {
            throw .badRequest("cursor is not a cursor this server gave out")
        }
        self.time = time
        self.seq = seq
    }
}
