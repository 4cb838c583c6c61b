import CSQLite

/// A failure reported by SQLite: its result code, its message and the SQL it ran.
/// Bound values are never included, so a secret bound as a parameter cannot leak into a log.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    public var code: Int32
    public var message: String
    public var sql: String?

    /// The writer refused the job because the store is closing: nothing of it was applied.
    public var isWriterClosing = false

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// What a write job submitted to (or still queued in) a closing writer fails with.
    public static var writerClosing: SQLiteError {
        var error = SQLiteError(code: SQLITE_MISUSE, message: "the database is closing; the write was not applied")
        error.isWriterClosing = true
        return error
    }

    /// The primary result code (extended codes carry it in the low byte).
    public var primaryCode: Int32 { code & 0xFF }
    public var isConstraintViolation: Bool { primaryCode == SQLITE_CONSTRAINT }
    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }

    public var description: String {
        if let sql { return "SQLite error \(code): \(message) (in: \(sql))" }
        return "SQLite error \(code): \(message)"
    }
}
