import CPostgres
import SQLBinding
import Glibc

/// The libpq calls that need more than a line of Swift around them.
enum LibPQ {
    /// `resultFormat` / `paramFormats` values: 0 is text, 1 is binary (libpq documentation of
    /// `PQexecParams`).
    static let textFormat: Int32 = 0
    static let binaryFormat: Int32 = 1

    /// The type OIDs parameters are declared with (`pg_type`; fixed since PostgreSQL 7).
    enum TypeOID {
        static let unknown: Oid = 0
        static let bytea: Oid = 17
        static let int8: Oid = 20
        static let text: Oid = 25
        static let float8: Oid = 701
    }

    /// `PQconnectdbParams` over two NULL-terminated arrays, with `expand_dbname` set.
    static func connect(keywords: [String], values: [String]) -> PGConnectionHandle? {
        let cKeywords = keywords.map { strdup($0) }
        let cValues = values.map { strdup($0) }
        defer {
            cKeywords.forEach { free($0) }
            cValues.forEach { free($0) }
        }
        let keywordPointers: [UnsafePointer<CChar>?] = cKeywords.map { $0.map { UnsafePointer($0) } } + [nil]
        let valuePointers: [UnsafePointer<CChar>?] = cValues.map { $0.map { UnsafePointer($0) } } + [nil]
        return PQconnectdbParams(keywordPointers, valuePointers, 1)
    }

    /// `PQerrorMessage`, without its trailing newline.
    static func errorMessage(_ connection: PGConnectionHandle) -> String {
        guard let text = PQerrorMessage(connection) else { return "unknown libpq error" }
        let message = String(cString: text)
        return message.hasSuffix("\n") ? String(message.dropLast()) : message
    }
}

/// A `PGresult`, freed (`PQclear`) when the last reference goes; rows read from it stay
/// valid as long as it lives.
final class PGResult {
    let handle: PGResultHandle

    init(_ handle: PGResultHandle) { self.handle = handle }

    deinit { PQclear(handle) }

    var rowCount: Int32 { PQntuples(handle) }

    /// The result's column names (`PQfname`), read once for all its rows: `PQfnumber` would
    /// scan and case-fold the names on every read.
    private(set) lazy var columnNames = ColumnNames(count: PQnfields(handle)) { [handle] column in
        PQfname(handle, column).map { String(cString: $0) }
    }

    /// `PQcmdTuples`: the count as text, empty for a command that affects no rows.
    var affectedRowCount: Int {
        guard let text = PQcmdTuples(handle) else { return 0 }
        return Int(String(cString: text)) ?? 0
    }

    /// The error this result reports: SQLSTATE and primary message only. The detail is left
    /// out because it quotes values (a unique violation's detail names the duplicate key), and
    /// a text argument the primary message quotes (an invalid input) is masked.
    func error(sql: String, arguments: [SQLValue], connectionWasBad: Bool) -> PGError {
        let sqlState = field(LibPQ.diagnosticSQLState)
        var message = field(LibPQ.diagnosticPrimaryMessage)
            ?? PQresultErrorMessage(handle).map { String(cString: $0) } ?? "unknown error"
        for case .text(let value) in arguments where !value.isEmpty {
            message = message.replacing("\"\(value)\"", with: "\"…\"")
        }
        return PGError(sqlState: sqlState, message: message, sql: sql, connectionWasBad: connectionWasBad)
    }

    private func field(_ code: Int32) -> String? {
        PQresultErrorField(handle, code).map { String(cString: $0) }
    }
}

extension LibPQ {
    /// The `PG_DIAG_*` field codes are character constants in libpq-fe.h ('C', 'M').
    static let diagnosticSQLState = Int32(UInt8(ascii: "C"))
    static let diagnosticPrimaryMessage = Int32(UInt8(ascii: "M"))
}

/// Statement arguments in libpq's form: a value, length, format and type per parameter.
/// Integers, reals and texts go as text; blobs as binary bytea, which needs no escaping.
struct PGParameters {
    let arguments: [SQLValue]
    let types: [Oid]
    private let encoded: [[UInt8]?]
    private let formats: [Int32]

    init(_ bindables: [any SQLBindable], sql: String) throws(PGError) {
        arguments = bindables.map(\.sqlValue)
        var types: [Oid] = []
        var encoded: [[UInt8]?] = []
        var formats: [Int32] = []
        for (offset, value) in arguments.enumerated() {
            switch value {
            case .null:
                types.append(LibPQ.TypeOID.unknown); encoded.append(nil); formats.append(LibPQ.textFormat)
            case .integer(let integer):
                types.append(LibPQ.TypeOID.int8); encoded.append(Array(String(integer).utf8)); formats.append(LibPQ.textFormat)
            case .real(let real):
                types.append(LibPQ.TypeOID.float8); encoded.append(Array(Self.text(of: real).utf8))
                formats.append(LibPQ.textFormat)
            case .text(let text):
                // A text parameter is a C string, and PostgreSQL's text type cannot hold a NUL.
                guard !text.utf8.contains(0) else {
                    throw PGError(message: "parameter \(offset + 1) is a text holding a NUL character, which PostgreSQL cannot store",
                                  sql: sql)
                }
                types.append(LibPQ.TypeOID.text); encoded.append(Array(text.utf8)); formats.append(LibPQ.textFormat)
            case .blob(let bytes):
                types.append(LibPQ.TypeOID.bytea); encoded.append(bytes); formats.append(LibPQ.binaryFormat)
            }
        }
        self.types = types
        self.encoded = encoded
        self.formats = formats
    }

    /// float8's input reads Swift's shortest round-trip digits, but spells the specials its way.
    private static func text(of real: Double) -> String {
        if real.isNaN { return "NaN" }
        if real == .infinity { return "Infinity" }
        if real == -.infinity { return "-Infinity" }
        return "\(real)"
    }

    /// Calls `body` with C arrays valid for the call only. Text values are NUL-terminated
    /// (libpq reads text-format values as C strings); binary ones are read by their length.
    func withCArrays<R>(_ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<Int32>,
                                 UnsafePointer<Int32>) -> R) -> R {
        let buffers = encoded.map { (bytes) -> UnsafeMutablePointer<CChar>? in
            guard let bytes else { return nil }
            // One byte more than the value, so an empty value is still a valid pointer.
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            bytes.withUnsafeBytes { source in
                UnsafeMutableRawBufferPointer(start: buffer, count: bytes.count).copyMemory(from: source)
            }
            buffer[bytes.count] = 0
            return buffer
        }
        defer { buffers.forEach { $0?.deallocate() } }
        let values: [UnsafePointer<CChar>?] = buffers.map { $0.map { UnsafePointer($0) } }
        let lengths = encoded.map { Int32($0?.count ?? 0) }
        return values.withUnsafeBufferPointer { valuePointers in
            lengths.withUnsafeBufferPointer { lengthPointers in
                formats.withUnsafeBufferPointer { formatPointers in
                    body(Int32(values.count), valuePointers.baseAddress!, lengthPointers.baseAddress!, formatPointers.baseAddress!)
                }
            }
        }
    }
}

/// What the wrapper needs to know of a connection URL: its password, to keep it out of messages.
enum ConnectionURL {
    /// `message` with the URL's password (as written and percent-decoded) replaced by `***`.
    /// The password may sit in the user info (`user:secret@host`) or the query (`?password=secret`).
    static func scrubbingPassword(of url: String, from message: String) -> String {
        var scrubbed = message
        for password in passwords(in: url) where !password.isEmpty {
            scrubbed = scrubbed.replacing(password, with: "***")
            if let decoded = percentDecoded(password), !decoded.isEmpty {
                scrubbed = scrubbed.replacing(decoded, with: "***")
            }
        }
        return scrubbed
    }

    static func passwords(in url: String) -> [String] {
        guard let schemeEnd = url.firstRange(of: "://") else { return [] }
        let afterScheme = url[schemeEnd.upperBound...]
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        var found: [String] = []
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            if let colon = userInfo.firstIndex(of: ":") {
                found.append(String(userInfo[userInfo.index(after: colon)...]))
            }
        }
        if let queryStart = afterScheme.firstIndex(of: "?") {
            for pair in afterScheme[afterScheme.index(after: queryStart)...].split(separator: "&") {
                if pair.hasPrefix("password=") { found.append(String(pair.dropFirst("password=".count))) }
            }
        }
        return found
    }

    private static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next(), let low = iterator.next(),
                  let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
