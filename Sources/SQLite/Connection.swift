import CSQLite
import Glibc
import Synchronization

/// The raw handle types, named (as GRDB does) so signatures say what they hold.
public typealias SQLiteConnectionHandle = OpaquePointer
public typealias SQLiteStatementHandle = OpaquePointer

/// One SQLite connection.
///
/// Not `Sendable`, on purpose: a connection is used by one thread at a time, and the compiler
/// keeps it from crossing threads. The server shares connections only through `ReaderPool`
/// and `GroupCommitWriter`, which carry the unchecked part: they lend a connection to one
/// thread at a time (`lent(_:)`), and in debug builds every entry point asserts that it is
/// called on the thread it is lent to. Prepared statements are cached per SQL text, since
/// the server runs the same few statements millions of times.
public final class Connection {
    public let path: String
    let handle: SQLiteConnectionHandle
    private var statementCache: [String: Statement] = [:]
    #if DEBUG
    /// The thread the connection is lent to (`pthread_self`), 0 while it is not lent.
    /// Atomic because a misuse, the very thing it catches, reads it from another thread.
    private let leaseHolder = Atomic<UInt>(0)
    #endif

    /// Opens (creating if needed) the database at `path`.
    /// The corresponding C function is `sqlite3_open_v2`; the connection is opened with
    /// `SQLITE_OPEN_NOMUTEX` because each connection is confined to one thread at a time.
    /// - Parameter busyTimeoutMilliseconds: how long a statement waits for another
    ///   connection's lock before failing with `SQLITE_BUSY`.
    /// - Parameter create: whether a missing file is created (read-write connections only).
    public init(path: String, readOnly: Bool = false, create: Bool = true,
                busyTimeoutMilliseconds: Int32 = 5_000) throws(SQLiteError) {
        self.path = path
        var raw: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)))
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
        sqlite3_busy_timeout(raw, busyTimeoutMilliseconds)
    }

    /// How a private database file is created; tests pass a recording stand-in for `open`.
    public typealias FileOpener = @Sendable (_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32

    /// Creates `path` as an empty file readable and writable by its owner only, unless it
    /// exists; returns whether it was created. SQLite takes an empty file for an empty
    /// database and gives the WAL and shared-memory files it creates later the database
    /// file's mode, so the data is private from its first byte — no chmod afterwards, and no
    /// process-wide umask change. The corresponding C call is `open(O_CREAT | O_EXCL, 0600)`.
    @discardableResult
    public static func createPrivateFile(at path: String, open opener: FileOpener = { path, flags, mode in
        Glibc.open(path, flags, mode)
    }) throws(SQLiteError) -> Bool {
        while true {
            let descriptor = opener(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if descriptor >= 0 {
                Glibc.close(descriptor)
                return true
            }
            switch errno {
            case EINTR: continue
            case EEXIST: return false
            default:
                throw SQLiteError(code: SQLITE_CANTOPEN,
                                  message: "cannot create \(path): \(String(cString: strerror(errno)))")
            }
        }
    }

    private var isClosed = false

    deinit { close() }

    // MARK: - Thread confinement

    /// Runs `body` with this connection lent to the calling thread: until `body` returns,
    /// debug builds assert that every use of the connection happens on this thread. Pools
    /// call it when they hand a connection to a body; a connection never lent (one owner,
    /// one thread, as in the client's state file) is not checked.
    public func lent<T>(_ body: () throws -> T) rethrows -> T {
        #if DEBUG
        let me = Self.currentThread
        let previous = leaseHolder.exchange(me, ordering: .acquiringAndReleasing)
        assert(previous == 0 || previous == me, "SQLite connection to \(path) lent to a second thread while lent to another")
        defer { leaseHolder.store(previous, ordering: .releasing) }
        #endif
        return try body()
    }

    /// Traps in debug builds when the connection is lent to another thread than the caller's.
    @inline(__always)
    func assertOnLeaseHolder(_ function: StaticString = #function) {
        #if DEBUG
        let holder = leaseHolder.load(ordering: .acquiring)
        assert(holder == 0 || holder == Self.currentThread,
               "SQLite connection to \(path) used by \(function) off the thread it is lent to")
        #endif
    }

    private static var currentThread: UInt { UInt(pthread_self()) }

    /// Finalizes cached statements and closes the connection. Closing twice is harmless
    /// (the handle is released once: a second `sqlite3_close_v2` could hit a handle
    /// SQLite has since given to another connection).
    public func close() {
        assertOnLeaseHolder()
        guard !isClosed else { return }
        isClosed = true
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    /// True when SQLite could open the database file for reading only. Asked for read-write,
    /// SQLite falls back to read-only without a word when the file cannot be opened for
    /// writing (immutable, a read-only mount, no permission); every write then fails.
    /// The corresponding C function is `sqlite3_db_readonly`.
    public var isReadOnly: Bool {
        assertOnLeaseHolder()
        return sqlite3_db_readonly(handle, "main") == 1
    }

    /// False while a transaction is open (`sqlite3_get_autocommit`).
    public var isAutocommit: Bool {
        assertOnLeaseHolder()
        return sqlite3_get_autocommit(handle) != 0
    }

    // MARK: - Running SQL

    /// Runs one or more statements that return no rows and take no parameters (DDL, PRAGMA).
    public func executeScript(_ sql: String) throws(SQLiteError) {
        assertOnLeaseHolder()
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
        try queryFirst(sql, arguments) { try $0.optionalInt64(0) } ?? nil
    }

    public var lastInsertRowID: Int64 {
        assertOnLeaseHolder()
        return sqlite3_last_insert_rowid(handle)
    }

    // MARK: - Transactions

    public enum TransactionKind: String { case deferred = "DEFERRED", immediate = "IMMEDIATE" }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    public func inTransaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        try TransactionScope.inTransaction(begin: "BEGIN \(kind.rawValue)", execute: { try execute($0) }, body)
    }

    /// Runs `body` inside a savepoint, nested in whatever transaction is open: its changes
    /// are kept when it returns and undone when it throws.
    public func inSavepoint<T>(_ body: () throws -> T) throws -> T {
        try TransactionScope.inSavepoint("gatepass_step", execute: { try execute($0) }, body)
    }

    /// Every statement-running entry point (execute, query, queryFirst, transactions) comes here.
    func cachedStatement(_ sql: String) throws(SQLiteError) -> Statement {
        assertOnLeaseHolder()
        if let statement = statementCache[sql] { return statement }
        let statement = try Statement(connection: self, sql: sql)
        statementCache[sql] = statement
        return statement
    }
}
