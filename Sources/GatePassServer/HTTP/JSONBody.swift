import Foundation
import GatePassCore
import HTTPServer

/// Reading request bodies and writing JSON responses.
enum JSONBody {
    /// Decodes the body as `T`, with errors that name the field at fault.
    static func decode<T: Decodable>(_ type: T.Type, from body: [UInt8]) throws(APIError) -> T {
        guard !body.isEmpty else { throw .badRequest("the body must be a JSON object") }
        // Foundation's decoder is lenient where the contract is not (trailing commas, and
        // values of keys nobody reads are never looked at): check the syntax first.
        if let problem = StrictJSON.problem(in: body) { throw .badRequest("the body is not valid JSON: \(problem)") }
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

    static func encode<T: Encodable>(_ value: T) -> [UInt8] { ServerJSON.encode(value) }

    static func response<T: Encodable>(status: Int = 200, _ value: T, headers: [(String, String)] = []) -> HTTPResponse {
        response(status: status, json: encode(value), headers: headers)
    }

    /// An answer already written as JSON (the check-in's `jsonText`, equal to `encode`'s bytes).
    static func response(status: Int = 200, json: [UInt8], headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status,
                     headers: [("Content-Type", "application/json; charset=utf-8")] + headers.map { (name: $0.0, value: $0.1) },
                     body: json)
    }
}

/// A strict RFC 8259 syntax check of a whole body (UTF-8, no trailing commas, valid
/// escapes and numbers, nothing after the value), nesting at most `maximumDepth` deep.
enum StrictJSON {
    static let maximumDepth = 64

    private struct Problem: Error { var message: String }

    /// nil when `bytes` is one valid JSON text; otherwise what is wrong and where.
    static func problem(in bytes: [UInt8]) -> String? {
        guard String(validating: bytes, as: UTF8.self) != nil else { return "it is not UTF-8 text" }
        var reader = Reader(bytes: bytes)
        do throws(Problem) {
            try reader.value(depth: 0)
            reader.skipWhitespace()
            guard reader.index == bytes.count else { throw reader.problem("unexpected text after the value") }
            return nil
        } catch {
            return error.message
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }
        func problem(_ what: String) -> Problem { Problem(message: "\(what) at byte \(index)") }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func expect(_ byte: UInt8, _ what: String) throws(Problem) {
            guard current == byte else { throw problem("expected \(what)") }
            index += 1
        }

        mutating func value(depth: Int) throws(Problem) {
            skipWhitespace()
            guard let byte = current else { throw problem("unexpected end") }
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard depth < StrictJSON.maximumDepth else { throw problem("nested too deeply") }
                let isObject = byte == UInt8(ascii: "{")
                let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                index += 1
                skipWhitespace()
                if current == close { index += 1; return }
                while true {
                    if isObject {
                        skipWhitespace()
                        guard current == UInt8(ascii: "\"") else { throw problem("expected a quoted key") }
                        try string()
                        skipWhitespace()
                        try expect(UInt8(ascii: ":"), "':'")
                    }
                    try value(depth: depth + 1)
                    skipWhitespace()
                    if current == UInt8(ascii: ",") { index += 1; continue }
                    try expect(close, isObject ? "',' or '}'" : "',' or ']'")
                    return
                }
            case UInt8(ascii: "\""): try string()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
            default: throw problem("unexpected character")
            }
        }

        mutating func literal(_ word: String) throws(Problem) {
            for byte in word.utf8 { try expect(byte, word) }
        }

        mutating func digits() throws(Problem) {
            guard let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { throw problem("expected a digit") }
            while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
        }

        mutating func number() throws(Problem) {
            if current == UInt8(ascii: "-") { index += 1 }
            if current == UInt8(ascii: "0") { index += 1 } else { try digits() }
            if current == UInt8(ascii: ".") { index += 1; try digits() }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                try digits()
            }
        }

        mutating func hexQuad() throws(Problem) -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let byte = current, let digit = Int(String(UnicodeScalar(byte)), radix: 16) else {
                    throw problem("expected four hex digits after \\u")
                }
                value = value * 16 + UInt32(digit)
                index += 1
            }
            return value
        }

        mutating func string() throws(Problem) {
            index += 1 // the opening quote
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return
                case 0..<0x20:
                    throw problem("a control character must be escaped in a string")
                case UInt8(ascii: "\\"):
                    index += 1
                    guard let escaped = current else { throw problem("unexpected end") }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                         UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        break
                    case UInt8(ascii: "u"):
                        let unit = try hexQuad()
                        if (0xD800...0xDBFF).contains(unit) {
                            try expect(UInt8(ascii: "\\"), "a low surrogate")
                            try expect(UInt8(ascii: "u"), "a low surrogate")
                            guard (0xDC00...0xDFFF).contains(try hexQuad()) else { throw problem("expected a low surrogate") }
                        } else if (0xDC00...0xDFFF).contains(unit) {
                            throw problem("a lone low surrogate")
                        }
                    default:
                        throw problem("an invalid escape")
                    }
                default:
                    index += 1
                }
            }
            throw problem("an unterminated string")
        }
    }
}

/// The cursor as clients see it: an opaque token.
extension ListCursor {
    var token: String { Base64URLText.encode("v1:\(time):\(seq)") }

    init(token: String) throws(APIError) {
        guard token.utf8.count <= 128, let text = Base64URLText.decode(token) else {
            throw .badRequest("cursor is not a cursor this server gave out")
        }
        let parts = text.split(separator: ":")
        guard parts.count == 3, parts[0] == "v1", let time = Int64(parts[1]), let seq = Int64(parts[2]) else {
            throw .badRequest("cursor is not a cursor this server gave out")
        }
        self.init(time: time, seq: seq)
    }
}
