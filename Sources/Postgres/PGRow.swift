import CPostgres

/// One row of a query's result, with the same accessors as the SQLite wrapper's `Row`.
/// Valid only inside the mapping closure.
///
/// Results come in text format, so every accessor parses the server's text output and fails
/// closed: a NULL where a value must be, a text that is not an integer where one must be, a
/// text that is not UTF-8 or a value the caller's parser does not know is thrown as
/// `PGError.unreadable`, never turned into a default (a default could admit a pass the
/// database does not describe). The optional and parsed accessors are `SQLRow`'s, shared with
/// the SQLite wrapper.
public struct PGRow: SQLRow {
    let result: PGResult
    let row: Int32
    let sql: String

    public func unreadable(_ column: Int32, _ problem: String) -> PGError {
        let name = PQfname(result.handle, column).map { String(cString: $0) } ?? "?"
        // The table the value came from (`PQftable`: its OID, 0 for an expression), so the log
        // names a damaged column once by it, whichever query read it.
        let table = PQftable(result.handle, column)
        return PGError.unreadable(column: "\(column) (\(name))", origin: table == 0 ? name : "table \(table).\(name)",
                                  problem: problem, sql: sql)
    }

    public func columnIndex(named name: String) -> Int32? { result.columnNames.index(of: name) }

    public func missingColumn(_ name: String) -> PGError {
        PGError.unreadable(column: name, origin: name, problem: "is not one column of the result", sql: sql)
    }

    public func isNull(_ column: Int32) -> Bool { PQgetisnull(result.handle, row, column) == 1 }

    /// The value's text output, by its length (`PQgetlength`); a NULL is an error naming `what`.
    private func text(_ column: Int32, _ what: String) throws(PGError) -> String {
        precondition(column >= 0 && column < PQnfields(result.handle),
                     "column \(column) is not in the result of: \(sql)")
        guard !isNull(column) else { throw unreadable(column, "holds NULL where \(what) must be") }
        let count = Int(PQgetlength(result.handle, row, column))
        guard count > 0, let value = PQgetvalue(result.handle, row, column) else { return "" }
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), count: count)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw unreadable(column, "holds a text that is not UTF-8")
        }
        return text
    }

    public func int64(_ column: Int32) throws(PGError) -> Int64 {
        let text = try text(column, "an integer")
        guard let value = Int64(text) else { throw unreadable(column, "holds \(Self.excerpt(text)) where an integer must be") }
        return value
    }

    /// A boolean as the store writes it on SQLite (the integers 0 and 1) or as PostgreSQL's
    /// boolean type prints it (`t` and `f`); anything else is not a boolean this code wrote.
    public func bool(_ column: Int32) throws(PGError) -> Bool {
        switch try text(column, "a boolean") {
        case "0", "f": return false
        case "1", "t": return true
        case let other: throw unreadable(column, "holds \(Self.excerpt(other)) where a boolean must be")
        }
    }

    /// A number: float8's text output, which includes `Infinity`, `-Infinity` and `NaN`, or an integer's.
    public func double(_ column: Int32) throws(PGError) -> Double {
        let text = try text(column, "a number")
        guard let value = Double(text) else { throw unreadable(column, "holds \(Self.excerpt(text)) where a number must be") }
        return value
    }

    /// The value's text. A bytea is refused: its text output is hex, not the bytes (use `blob`).
    public func string(_ column: Int32) throws(PGError) -> String {
        guard PQftype(result.handle, column) != LibPQ.TypeOID.bytea else {
            throw unreadable(column, "holds a bytea where a text must be")
        }
        return try text(column, "a text")
    }

    /// A bytea, from its text output in hex form (`\x` then two hex digits a byte), the
    /// server's default `bytea_output` since PostgreSQL 9.0.
    public func blob(_ column: Int32) throws(PGError) -> [UInt8] {
        guard PQftype(result.handle, column) == LibPQ.TypeOID.bytea else {
            throw unreadable(column, "holds a value of type \(PQftype(result.handle, column)) where a bytea must be")
        }
        let hex = Array(try text(column, "a bytea").utf8)
        guard hex.count >= 2, hex[0] == UInt8(ascii: "\\"), hex[1] == UInt8(ascii: "x"), hex.count % 2 == 0 else {
            throw unreadable(column, "holds a bytea not in hex form (is bytea_output set to escape?)")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity((hex.count - 2) / 2)
        var index = 2
        while index < hex.count {
            guard let high = Self.hexDigit(hex[index]), let low = Self.hexDigit(hex[index + 1]) else {
                throw unreadable(column, "holds a bytea with a character that is not a hex digit")
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func hexDigit(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
