import CSQLite

/// A failure reported by SQLite: its result code, its message and the SQL it ran.
/// Bound values are never included, so a secret bound as a parameter cannot leak into a log.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    public var code: Int32
    public var message: String
    public var sql: String?

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
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
