import CSQLite

/// The raw handle types, named (as GRDB does) so signatures say what they hold.
public typealias SQLiteConnectionHandle = OpaquePointer
public typealias SQLiteStatementHandle = OpaquePointer

/// One SQLite connection.
///
/// Not thread-safe by itself: a connection is used by one thread at a time. The server
/// hands connections out through `ReaderPool` and `GroupCommitWriter`, which guarantee that.
/// Prepared statements are cached per SQL text, since the server runs the same few
/// statements millions of times.
public final class Connection: @unchecked Sendable {
    public let path: String
    let handle: SQLiteConnectionHandle
    private var statementCache: [String: Statement] = [:]

    /// Opens (creating if needed) the database at `path`.
    /// The corresponding C function is `sqlite3_open_v2`; the connection is opened with
    /// `SQLITE_OPEN_NOMUTEX` because each connection is confined to one thread at a time.
    public init(path: String, readOnly: Bool = false) throws(SQLiteError) {
        self.path = path
        var raw: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE))
            | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &raw, flags, nil)
        guard code == SQLITE_OK, let raw else {
            let message = raw.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let raw { sqlite3_close_v2(raw) }
            throw SQLiteError(code: code, message: message + " (\(path))")
        }
        handle = raw
        sqlite3_extended_result_codes(raw, 1)
        // Writers wait for each other instead of failing at once (only the CLI and the
        // server may write the same file at the same time).
        sqlite3_busy_timeout(raw, 5_000)
    }

    private var isClosed = false

    deinit { close() }

    /// Finalizes cached statements and closes the connection. Closing twice is harmless
    /// (the handle is released once: a second `sqlite3_close_v2` could hit a handle
    /// SQLite has since given to another connection).
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    // MARK: - Running SQL

    /// Runs one or more statements that return no rows and take no parameters (DDL, PRAGMA).
    public func executeScript(_ sql: String) throws(SQLiteError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if code != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? lastErrorMessage
            sqlite3_free(errorMessage)
            throw SQLiteError(code: code, message: message, sql: sql)
        }
    }

    /// Runs one statement with `arguments` bound, ignoring any rows; returns the number of
    /// rows changed.
    @discardableResult
    public func execute(_ sql: String, _ arguments: [any SQLBindable] = []) throws(SQLiteError) -> Int {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        while try statement.step() {}
        return Int(sqlite3_changes(handle))
    }

    /// Runs a query and maps each row.
    public func query<T>(_ sql: String, _ arguments: [any SQLBindable] = [],
                         _ map: (Row) throws -> T) throws -> [T] {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        var results: [T] = []
        while try statement.step() {
            results.append(try map(Row(statement: statement)))
        }
        return results
    }

    /// Runs a query and maps its first row, if any.
    public func queryFirst<T>(_ sql: String, _ arguments: [any SQLBindable] = [],
                              _ map: (Row) throws -> T) throws -> T? {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        guard try statement.step() else { return nil }
        return try map(Row(statement: statement))
    }

    /// The first column of the first row as an integer (for COUNT and friends).
    public func scalarInt(_ sql: String, _ arguments: [any SQLBindable] = []) throws -> Int64? {
        try queryFirst(sql, arguments) { $0.isNull(0) ? nil : $0.int64(0) } ?? nil
    }

    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    // MARK: - Transactions

    public enum TransactionKind: String { case deferred = "DEFERRED", immediate = "IMMEDIATE" }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    public func inTransaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        try execute("BEGIN \(kind.rawValue)")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` inside a savepoint, nested in whatever transaction is open: its changes
    /// are kept when it returns and undone when it throws.
    public func inSavepoint<T>(_ body: () throws -> T) throws -> T {
        try execute("SAVEPOINT gatepass_step")
        do {
            let result = try body()
            try execute("RELEASE gatepass_step")
            return result
        } catch {
            _ = try? execute("ROLLBACK TO gatepass_step")
            _ = try? execute("RELEASE gatepass_step")
            throw error
        }
    }

    func cachedStatement(_ sql: String) throws(SQLiteError) -> Statement {
        if let statement = statementCache[sql] { return statement }
        let statement = try Statement(connection: self, sql: sql)
        statementCache[sql] = statement
        return statement
    }
}
