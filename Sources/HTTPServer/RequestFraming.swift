/// The rules a request's head must follow before our handler reads any of its body.
///
/// libmicrohttpd parses the request line and headers; what it lets through and we refuse is
/// decided here, from the raw values, so that the answer is ours (the JSON error shape with
/// `Connection: close`, so that left-over bytes are never read as a second request).
public enum RequestFraming {
    /// Why a request's head is refused, in one sentence for the client.
    public struct Violation: Error, Sendable, Equatable, CustomStringConvertible {
        public var reason: String
        public init(_ reason: String) { self.reason = reason }
        public var description: String { reason }
    }

    /// Checks the framing headers of one request.
    ///
    /// What libmicrohttpd 0.9.75 hands us decides the rules (measured, and pinned by
    /// `LibraryHeaderParsingTests`): white space before a colon stays in the name
    /// (`Content-Length : 5` arrives named `"Content-Length "`, which the library does not take
    /// as the length), a folded line is glued onto the name (`Content-Length:` then ` 35`
    /// arrives as `Content-Length35` with an empty value), and trailing white space stays in
    /// the value (`chunked `, which the library does not take as chunked). Each of these would
    /// let the library and a proxy in front of us frame the body differently, so a name that
    /// is not a token, a name that begins with a framing header's name without being it, and
    /// a framing value that is not exact are refused.
    /// - Parameters:
    ///   - headers: every header line in order, repeated names included, names as sent.
    ///   - version: the request line's version (`HTTP/1.1`).
    public static func check(headers: [(name: String, value: String)], version: String) -> Violation? {
        var contentLengths: [String] = []
        var transferEncodings: [String] = []
        var hosts = 0
        for (name, value) in headers {
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenCharacter) else {
                // Not echoed: it may hold anything but a NUL.
                return Violation("a header name must be a token (letters, digits and !#$%&'*+-.^_`|~) right before its colon")
            }
            // The name is a token now, so it is safe to quote.
            if let bad = value.unicodeScalars.first(where: isControl) {
                return Violation("the header \(name.prefix(64)) contains the control character U+\(hex(bad.value)); headers must be printable text")
            }
            let lowercased = name.lowercased()
            switch lowercased {
            case "content-length": contentLengths.append(value)
            case "transfer-encoding": transferEncodings.append(value)
            case "host": hosts += 1
            default:
                if let framing = framingNames.first(where: { lowercased.hasPrefix($0.lowercased()) }) {
                    return Violation("the header name \(name.prefix(64)) begins with \(framing) but is not it (a folded line arrives so); send \(framing) on one line")
                }
            }
        }
        if contentLengths.count > 1 {
            return Violation("Content-Length is given \(contentLengths.count) times; send it once")
        }
        if let length = contentLengths.first {
            // libmicrohttpd drops the white space before a value, and refuses one after it itself.
            guard !length.isEmpty, length.utf8.count <= 18, length.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
                return Violation("Content-Length must be a number of bytes")
            }
        }
        if !transferEncodings.isEmpty {
            // Exactly the coding's name (any case, as libmicrohttpd compares it): `chunked `
            // is not chunked to libmicrohttpd, which would then wait for a body it never reads.
            guard transferEncodings.count == 1, transferEncodings[0].lowercased() == "chunked" else {
                return Violation("the only Transfer-Encoding accepted is chunked, alone and without white space around it")
            }
            if !contentLengths.isEmpty {
                return Violation("a request may not carry both Transfer-Encoding and Content-Length")
            }
        }
        if version == "HTTP/1.1" && hosts == 0 { return Violation("an HTTP/1.1 request must carry a Host header") }
        if hosts > 1 { return Violation("Host is given \(hosts) times; send it once") }
        return nil
    }

    /// The headers that frame a body, as they are spelled in messages.
    private static let framingNames = ["Content-Length", "Transfer-Encoding"]

    /// A request target split into its path segments and query arguments, each percent-decoded
    /// exactly once: an encoded `/` or NUL inside a segment stays part of that segment.
    public struct Target: Sendable, Equatable {
        /// The path as sent, without the query string (not decoded).
        public var rawPath: String
        /// The query string as sent, without `?` (not decoded); empty when there is none.
        public var rawQuery: String
        /// The path's segments after the leading `/`, decoded.
        public var segments: [String]
        /// Query arguments, decoded (`+` is a space). A repeated key keeps its first value.
        public var query: [String: String]

        /// Stands for a target that could not be parsed (the request is refused anyway).
        static let unparsed = Target(rawPath: "/", rawQuery: "", segments: [""], query: [:])
    }

    /// Parses an origin-form request target (`/api/visitors/a%2Fb?x=1`).
    public static func parseTarget(_ raw: String) -> Result<Target, Violation> {
        guard raw.hasPrefix("/") else { return .failure(Violation("the request target must be a path starting with /")) }
        let rawPath: Substring
        let rawQuery: Substring
        if let question = raw.firstIndex(of: "?") {
            rawPath = raw[..<question]
            rawQuery = raw[raw.index(after: question)...]
        } else {
            rawPath = raw[...]
            rawQuery = ""
        }
        var segments: [String] = []
        for segment in rawPath.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            guard let decoded = percentDecoded(segment, plusIsSpace: false) else {
                return .failure(Violation("the path has a malformed percent escape"))
            }
            segments.append(decoded)
        }
        var query: [String: String] = [:]
        for pair in rawQuery.split(separator: "&", omittingEmptySubsequences: true) {
            let key: Substring
            let value: Substring
            if let equals = pair.firstIndex(of: "=") {
                key = pair[..<equals]
                value = pair[pair.index(after: equals)...]
            } else {
                key = pair
                value = ""
            }
            guard let decodedKey = percentDecoded(key, plusIsSpace: true),
                  let decodedValue = percentDecoded(value, plusIsSpace: true) else {
                return .failure(Violation("the query string has a malformed percent escape"))
            }
            if query[decodedKey] == nil { query[decodedKey] = decodedValue }
        }
        return .success(Target(rawPath: String(rawPath), rawQuery: String(rawQuery), segments: segments, query: query))
    }

    /// `%HH` escapes decoded once; nil for a malformed escape or bytes that are not UTF-8.
    static func percentDecoded(_ text: Substring, plusIsSpace: Bool) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// RFC 9110's `tchar`: what a header name is made of.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// C0 controls but tab, DEL, and C1 controls.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar.value != 0x09) || (0x7F...0x9F).contains(scalar.value)
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
