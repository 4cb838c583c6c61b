import CSQLite

/// A prepared statement, owned by one `Connection` and used on its thread.
final class Statement {
    let handle: SQLiteStatementHandle
    let sql: String
    unowned let connection: Connection

    init(connection: Connection, sql: String) throws(SQLiteError) {
        var raw: OpaquePointer?
        let code = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard code == SQLITE_OK, let raw else {
            throw SQLiteError(code: code, message: connection.lastErrorMessage, sql: sql)
        }
        handle = raw
        self.sql = sql
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

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
                code = value.withCString { gatepass_sqlite3_bind_text_transient(handle, index, $0, -1) }
            case .blob(let bytes):
                code = bytes.withUnsafeBytes {
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
public struct Row {
    let statement: Statement

    public func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(statement.handle, column) == SQLITE_NULL
    }

    public func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement.handle, column) }
    public func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(statement.handle, column)) }
    public func bool(_ column: Int32) -> Bool { sqlite3_column_int64(statement.handle, column) != 0 }
    public func double(_ column: Int32) -> Double { sqlite3_column_double(statement.handle, column) }

    public func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(statement.handle, column) else { return "" }
        return String(cString: text)
    }

    public func optionalString(_ column: Int32) -> String? { isNull(column) ? nil : string(column) }
    public func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }

    public func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(statement.handle, column))
        guard count > 0, let bytes = sqlite3_column_blob(statement.handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }
}
