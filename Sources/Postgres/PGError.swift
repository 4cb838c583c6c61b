/// A failure reported by libpq or the server: the SQLSTATE, the message and the SQL it ran.
/// Bound values and passwords are never included, so a secret bound as a parameter or written
/// in a connection URL cannot leak into a log.
public struct PGError: Error, Sendable, CustomStringConvertible {
    /// The five-character SQLSTATE (`PG_DIAG_SQLSTATE`); nil when libpq failed before the
    /// server answered (no connection, a lost connection, a value this wrapper could not read).
    public var sqlState: String?
    public var message: String
    public var sql: String?
    /// The connection was not (or no longer) `CONNECTION_OK` when the failure was seen, or
    /// libpq returned no result at all: libpq reports these without a SQLSTATE.
    public var connectionWasBad: Bool

    public init(sqlState: String? = nil, message: String, sql: String? = nil, connectionWasBad: Bool = false) {
        self.sqlState = sqlState
        self.message = message
        self.sql = sql
        self.connectionWasBad = connectionWasBad
    }

    /// The transaction lost a race with another and may succeed if run again:
    /// serialization_failure (40001) or deadlock_detected (40P01).
    public var isSerializationFailure: Bool { sqlState == "40001" || sqlState == "40P01" }
    /// unique_violation (23505).
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// The server could not be reached or went away: class 08 (connection exception), or a
    /// connection libpq no longer holds as usable.
    public var isConnectionFailure: Bool { connectionWasBad || sqlState?.hasPrefix("08") == true }
    /// A value read back that the code does not understand (see `PGRow`).
    public internal(set) var isUnreadableValue = false

    /// A value read back that the code does not understand. PostgreSQL has no SQLSTATE for a
    /// client that cannot read a value, so none is invented: the flag tells it apart.
    static func unreadable(column: String, origin: String, problem: String, sql: String) -> PGError {
        var error = PGError(message: "column \(column) \(problem)", sql: sql)
        error.isUnreadableValue = true
        error.unreadableColumn = origin
        return error
    }

    /// For a value that could not be understood: the table (by OID) and column it was read
    /// from, or the result column's name where it is an expression.
    public internal(set) var unreadableColumn: String?

    public var description: String {
        let state = sqlState.map { "PostgreSQL error \($0)" } ?? "PostgreSQL error"
        if let sql { return "\(state): \(message) (in: \(sql))" }
        return "\(state): \(message)"
    }
}
