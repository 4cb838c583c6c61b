import CSQLite

/// A prepared statement, owned by one `Connection` and used on its thread.
final class Statement {
    let handle: SQLiteStatementHandle
    let sql: String
    unowned let connection: Connection

    /// Prepares exactly one statement. Text after it must be only whitespace or comments:
    /// `sqlite3_prepare_v3` compiles the first statement and points at the rest, which would
    /// otherwise be dropped without a word (a second statement smuggled into `sql` is refused,
    /// never half-run).
    init(connection: Connection, sql: String) throws(SQLiteError) {
        // SQLite reads SQL text only up to a NUL: anything after one would go unseen.
        guard !sql.utf8.contains(0) else {
            throw SQLiteError(code: SQLITE_MISUSE, message: "a NUL character in SQL text", sql: sql)
        }
        var raw: OpaquePointer?
        var trailing: SQLiteStatementHandle?
        let code: Int32 = sql.utf8CString.withUnsafeBufferPointer { text in
            let start = text.baseAddress!
            let end = start + (text.count - 1) // the terminating NUL
            var tail: UnsafePointer<CChar>?
            // The length includes the terminator, which spares SQLite a copy (C documentation).
            let code = sqlite3_prepare_v3(connection.handle, start, Int32(text.count), UInt32(SQLITE_PREPARE_PERSISTENT),
                                          &raw, &tail)
            guard code == SQLITE_OK, var rest = tail else { return code }
            // Preparing the rest yields no statement exactly when it holds no SQL (only
            // whitespace, comments and empty statements), as the C documentation of
            // sqlite3_prepare says; go on until the text is used up.
            while rest < end {
                var next: UnsafePointer<CChar>?
                let restCode = sqlite3_prepare_v3(connection.handle, rest, Int32(end - rest), 0, &trailing, &next)
                guard restCode == SQLITE_OK else { return restCode }
                guard trailing == nil, let next, next > rest else { break }
                rest = next
            }
            return code
        }
        if let trailing {
            sqlite3_finalize(trailing)
            if let raw { sqlite3_finalize(raw) }
            throw SQLiteError(code: SQLITE_MISUSE, message: "more than one statement in one SQL text", sql: sql)
        }
        guard code == SQLITE_OK, let raw else {
            if let raw { sqlite3_finalize(raw) }
            throw SQLiteError(code: code, message: connection.lastErrorMessage, sql: sql)
        }
        handle = raw
        self.sql = sql
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// The result's column names, read once for the statement's life (a cached statement is
    /// prepared once): rows read by name look them up here, not in SQLite each row.
    private(set) lazy var columnNames = ColumnNames(count: sqlite3_column_count(handle)) { column in
        sqlite3_column_name(handle, column).map { String(cString: $0) }
    }

    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func bind(_ arguments: [any SQLBindable]) throws(SQLiteError) {
        let expected = Int(sqlite3_bind_parameter_count(handle))
        // A wrong argument count can only be a bug in our SQL: trap, as GRDB does.
        precondition(arguments.count == expected,
                     "statement expects \(expected) arguments, got \(arguments.count): \(sql)")
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch argument.sqlValue {
            case .null: code = sqlite3_bind_null(handle, index)
            case .integer(let value): code = sqlite3_bind_int64(handle, index, value)
            case .real(let value): code = sqlite3_bind_double(handle, index, value)
            case .text(let value):
                // Bound by its byte length, so an embedded NUL is stored rather than ending the text.
                let bytes = Array(value.utf8)
                precondition(bytes.count <= Int(Int32.max), "a text of \(bytes.count) bytes cannot be bound")
                code = bytes.withUnsafeBufferPointer { buffer in
                    // A null pointer would bind NULL, not the empty text.
                    guard let base = buffer.baseAddress, !buffer.isEmpty else {
                        return gatepass_sqlite3_bind_text_transient(handle, index, "", 0)
                    }
                    return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                        gatepass_sqlite3_bind_text_transient(handle, index, $0, Int32(buffer.count))
                    }
                }
            case .blob(let bytes):
                precondition(bytes.count <= Int(Int32.max), "a blob of \(bytes.count) bytes cannot be bound")
                // A null pointer would bind NULL: an empty blob is bound as a zero-length blob.
                code = bytes.isEmpty ? sqlite3_bind_zeroblob(handle, index, 0) : bytes.withUnsafeBytes {
                    gatepass_sqlite3_bind_blob_transient(handle, index, $0.baseAddress, Int32($0.count))
                }
            }
            guard code == SQLITE_OK else {
                throw SQLiteError(code: code, message: connection.lastErrorMessage, sql: sql)
            }
        }
    }

    /// Advances to the next row; false when done.
    func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw SQLiteError(code: code, message: connection.lastErrorMessage, sql: sql)
        }
    }
}

/// The current row of a running query. Valid only inside the mapping closure.
///
/// Every accessor checks the value's storage class and fails closed: a NULL where a value
/// must be, a text where a number must be, text that is not UTF-8, an integer out of range
/// or a value the caller's parser does not know is thrown as `SQLiteError.unreadable`, never
/// turned into a default (a default could admit a pass the database does not describe).
/// The optional and parsed accessors are `SQLRow`'s, shared with the PostgreSQL wrapper.
public struct Row: SQLRow {
    let statement: Statement

    private func storageClass(_ column: Int32) -> Int32 { sqlite3_column_type(statement.handle, column) }

    private static func storageClassName(_ type: Int32) -> String {
        switch type {
        case SQLITE_INTEGER: "an integer"
        case SQLITE_FLOAT: "a real"
        case SQLITE_TEXT: "a text"
        case SQLITE_BLOB: "a blob"
        default: "NULL"
        }
    }

    public func unreadable(_ column: Int32, _ problem: String) -> SQLiteError {
        let name = sqlite3_column_name(statement.handle, column).map { String(cString: $0) } ?? "?"
        // The table and column the value came from, where it is one (not an expression):
        // the log names a damaged column once by this, whichever query read it.
        let table = sqlite3_column_table_name(statement.handle, column).map { String(cString: $0) }
        let origin = sqlite3_column_origin_name(statement.handle, column).map { String(cString: $0) } ?? name
        return SQLiteError.unreadable(column: "\(column) (\(name))", origin: table.map { "\($0).\(origin)" } ?? origin,
                                      problem: problem, sql: statement.sql)
    }

    public func columnIndex(named name: String) -> Int32? { statement.columnNames.index(of: name) }

    public func missingColumn(_ name: String) -> SQLiteError {
        SQLiteError.unreadable(column: name, origin: name, problem: "is not one column of the result", sql: statement.sql)
    }

    private func require(_ column: Int32, _ wanted: Int32, _ what: String) throws(SQLiteError) {
        let found = storageClass(column)
        guard found == wanted else {
            throw unreadable(column, "holds \(Self.storageClassName(found)) where \(what) must be")
        }
    }

    public func isNull(_ column: Int32) -> Bool { storageClass(column) == SQLITE_NULL }

    public func int64(_ column: Int32) throws(SQLiteError) -> Int64 {
        try require(column, SQLITE_INTEGER, "an integer")
        return sqlite3_column_int64(statement.handle, column)
    }

    /// 0 or 1; any other integer is not a boolean this code wrote.
    public func bool(_ column: Int32) throws(SQLiteError) -> Bool {
        switch try int64(column) {
        case 0: return false
        case 1: return true
        default: throw unreadable(column, "holds an integer that is neither 0 nor 1 where a boolean must be")
        }
    }

    /// A real, or an integer (SQLite stores whole reals of some expressions as integers).
    public func double(_ column: Int32) throws(SQLiteError) -> Double {
        let found = storageClass(column)
        guard found == SQLITE_FLOAT || found == SQLITE_INTEGER else {
            throw unreadable(column, "holds \(Self.storageClassName(found)) where a number must be")
        }
        return sqlite3_column_double(statement.handle, column)
    }

    /// The text, read by its byte length (`sqlite3_column_bytes`), so an embedded NUL is kept.
    public func string(_ column: Int32) throws(SQLiteError) -> String {
        try require(column, SQLITE_TEXT, "a text")
        // sqlite3_column_text first, then sqlite3_column_bytes: the order the C documentation asks for.
        let text = sqlite3_column_text(statement.handle, column)
        let count = Int(sqlite3_column_bytes(statement.handle, column))
        guard count > 0, let text else { return "" }
        guard let value = String(validating: UnsafeBufferPointer(start: text, count: count), as: UTF8.self) else {
            throw unreadable(column, "holds a text that is not UTF-8")
        }
        return value
    }

    public func blob(_ column: Int32) throws(SQLiteError) -> [UInt8] {
        try require(column, SQLITE_BLOB, "a blob")
        let bytes = sqlite3_column_blob(statement.handle, column)
        let count = Int(sqlite3_column_bytes(statement.handle, column))
        guard count > 0, let bytes else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }
}
