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

    /// A value read back that the code does not understand (a NULL where a value must be,
    /// the wrong storage class, an unknown code). It carries `SQLITE_MISMATCH`, SQLite's own
    /// code for a datatype mismatch, so callers treat it like any other failed read.
    static func unreadable(column: String, origin: String, problem: String, sql: String) -> SQLiteError {
        var error = SQLiteError(code: SQLITE_MISMATCH, message: "column \(column) \(problem)", sql: sql)
        error.unreadableColumn = origin
        return error
    }

    /// For a value that could not be understood: the table and column it was read from
    /// (`visitors.valid_until`), or the result column's name where it is an expression.
    public internal(set) var unreadableColumn: String?

    /// The primary result code (extended codes carry it in the low byte).
    public var primaryCode: Int32 { code & 0xFF }
    public var isConstraintViolation: Bool { primaryCode == SQLITE_CONSTRAINT }
    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }
    /// The database cannot take writes: read-only (asked for read-write, SQLite opens an
    /// immutable file, one on a read-only mount or one without permission read-only without a
    /// word), an I/O error, or a damaged file (`SQLITE_CORRUPT`, `SQLITE_NOTADB`; SQLite's
    /// documentation warns that writing on can spread the damage). Not `SQLITE_CANTOPEN`: a
    /// process out of file descriptors gets it too, and that passes.
    public var isUnwritable: Bool {
        [SQLITE_READONLY, SQLITE_IOERR, SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_PERM].contains(primaryCode)
    }
    /// A stored value that could not be understood (see `Row`).
    public var isUnreadableValue: Bool { primaryCode == SQLITE_MISMATCH }

    public var description: String {
        if let sql { return "SQLite error \(code): \(message) (in: \(sql))" }
        return "SQLite error \(code): \(message)"
    }
}
