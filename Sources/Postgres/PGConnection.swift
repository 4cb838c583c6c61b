import CPostgres

/// The raw handle types, named so signatures say what they hold (libpq's `PGconn *` and
/// `PGresult *` are opaque structs, imported as `OpaquePointer`).
public typealias PGConnectionHandle = OpaquePointer
typealias PGResultHandle = OpaquePointer

/// One PostgreSQL connection through libpq, with the same shape as the SQLite wrapper's
/// `Connection` (`execute`, `query`, `queryFirst`, `scalarInt`, `inTransaction`,
/// `inSavepoint`) so the store's repositories run the same SQL text on either.
///
/// Used by one thread at a time: libpq allows a `PGconn` on any thread but not on two at
/// once, and this class keeps no lock. It is `@unchecked Sendable` so a pool can hand it from
/// thread to thread; whoever shares it must make sure one thread holds it at a time.
///
/// Statements with parameters are prepared once per connection (`PQprepare`) and run with
/// `PQexecPrepared`, since the store runs the same few statements again and again.
public final class PGConnection: @unchecked Sendable {
    let handle: PGConnectionHandle
    private(set) var isClosed = false
    /// The `$n` form of each SQL text seen, so the text is scanned once.
    private var rewrittenSQL: [String: PlaceholderRewriter.Rewritten] = [:]
    /// The server-side name of each SQL text prepared on this connection.
    private var preparedStatements: [String: String] = [:]
    private var preparedStatementCounter = 0

    /// Connects to the server `url` names (`postgres://user@host:port/database` or
    /// `postgresql://…`). A password, if the server asks for one, comes from libpq itself
    /// (`PGPASSWORD`, `~/.pgpass` or `PGPASSFILE`): this wrapper adds none.
    ///
    /// The corresponding C function is `PQconnectdbParams` with `expand_dbname`, which reads
    /// the URL as `dbname` and lets the application name and client encoding follow it as
    /// separate keywords (appending them to the URL would need the URL's own escaping).
    /// - Throws: `PGError` with libpq's message, any password in the URL scrubbed from it.
    public init(url: String, applicationName: String? = nil) throws(PGError) {
        var keywords = ["dbname", "client_encoding"]
        // Every text this wrapper sends and reads is UTF-8, whatever the server's default.
        var values = [url, "UTF8"]
        if let applicationName {
            keywords.append("application_name")
            values.append(applicationName)
        }
        let raw = LibPQ.connect(keywords: keywords, values: values)
        guard let raw else {
            throw PGError(message: "libpq could not allocate a connection", connectionWasBad: true)
        }
        guard PQstatus(raw) == CONNECTION_OK else {
            let message = ConnectionURL.scrubbingPassword(of: url, from: LibPQ.errorMessage(raw))
            PQfinish(raw)
            throw PGError(message: message, connectionWasBad: true)
        }
        handle = raw
        // libpq prints server notices (such as "there is no transaction in progress") on
        // stderr by default; a library must not write there.
        PQsetNoticeProcessor(raw, { _, _ in }, nil)
    }

    deinit { close() }

    /// Closes the connection (`PQfinish`). Closing twice is harmless: the handle is freed once.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        PQfinish(handle)
    }

    /// True while libpq holds the connection as usable (`PQstatus` is `CONNECTION_OK`).
    public var isHealthy: Bool { !isClosed && PQstatus(handle) == CONNECTION_OK }

    /// The server's version as an integer, 150004 for 15.4 (`PQserverVersion`); 0 when closed.
    public var serverVersion: Int32 { isClosed ? 0 : PQserverVersion(handle) }

    /// The process id of the server backend serving this connection (`PQbackendPID`), as
    /// `PGNotification.pid` names the sender's.
    public var serverProcessID: Int32 { isClosed ? 0 : PQbackendPID(handle) }

    /// True while a transaction is open, including one that failed and awaits its ROLLBACK
    /// (`PQtransactionStatus` is `PQTRANS_INTRANS`, `PQTRANS_INERROR` or `PQTRANS_ACTIVE`).
    public var isInTransaction: Bool {
        guard !isClosed else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    // MARK: - Running SQL

    /// Runs one or more statements that take no parameters (DDL, for instance), in one
    /// round trip (`PQexec`); the rows of any query among them are dropped.
    public func executeScript(_ sql: String) throws(PGError) {
        precondition(!isClosed, "PGConnection used after close()")
        let result = try checked(PQexec(handle, sql), sql: sql, arguments: [])
        _ = result
    }

    /// Runs one statement with `arguments` bound to its `?` placeholders, ignoring any rows;
    /// returns the number of rows it affected (`PQcmdTuples`; 0 for a command that reports none).
    @discardableResult
    public func execute(_ sql: String, _ arguments: [any SQLBindable] = []) throws(PGError) -> Int {
        try run(sql, arguments).affectedRowCount
    }

    /// Runs a query and maps each row.
    public func query<T>(_ sql: String, _ arguments: [any SQLBindable] = [],
                         _ map: (PGRow) throws -> T) throws -> [T] {
        let result = try run(sql, arguments)
        var rows: [T] = []
        let count = result.rowCount
        rows.reserveCapacity(Int(count))
        for row in 0..<count {
            rows.append(try map(PGRow(result: result, row: row, sql: sql)))
        }
        return rows
    }

    /// Runs a query and maps its first row, if any.
    public func queryFirst<T>(_ sql: String, _ arguments: [any SQLBindable] = [],
                              _ map: (PGRow) throws -> T) throws -> T? {
        let result = try run(sql, arguments)
        guard result.rowCount > 0 else { return nil }
        return try map(PGRow(result: result, row: 0, sql: sql))
    }

    /// The first column of the first row as an integer (for COUNT and friends); nil when
    /// there is no row or the value is NULL.
    public func scalarInt(_ sql: String, _ arguments: [any SQLBindable] = []) throws -> Int64? {
        try queryFirst(sql, arguments) { try $0.optionalInt64(0) } ?? nil
    }

    /// Every statement-running entry point comes here. A statement without parameters runs
    /// with `PQexecParams` (one statement only, as SQLite's wrapper insists too); one with
    /// parameters is prepared once and run with `PQexecPrepared`.
    func run(_ sql: String, _ arguments: [any SQLBindable]) throws(PGError) -> PGResult {
        precondition(!isClosed, "PGConnection used after close()")
        let rewritten = rewrite(sql)
        // A wrong argument count can only be a bug in our SQL: trap, as the SQLite wrapper does.
        precondition(arguments.count == rewritten.parameterCount,
                     "statement expects \(rewritten.parameterCount) arguments, got \(arguments.count): \(sql)")
        guard !arguments.isEmpty else {
            return try checked(PQexecParams(handle, sql, 0, nil, nil, nil, nil, LibPQ.textFormat),
                               sql: sql, arguments: [])
        }
        let parameters = try PGParameters(arguments, sql: sql)
        do {
            return try runPrepared(sql, rewritten, parameters)
        } catch let error where isStalePreparedStatement(error) && !isInTransaction {
            // The server dropped the statement (DEALLOCATE, a pooler) or a table it reads
            // changed shape under it. Prepare it again, once; inside a transaction the failure
            // has already aborted the transaction, so there it is the caller's to retry.
            if let stale = preparedStatements.removeValue(forKey: sql), error.sqlState == "0A000" {
                // Still held by the server, under a name nothing will use again.
                _ = try? executeScript("DEALLOCATE \(stale)")
            }
            return try runPrepared(sql, rewritten, parameters)
        }
    }

    private func runPrepared(_ sql: String, _ rewritten: PlaceholderRewriter.Rewritten,
                             _ parameters: PGParameters) throws(PGError) -> PGResult {
        let name = try preparedName(for: sql, rewritten, parameters)
        let raw = parameters.withCArrays { count, values, lengths, formats in
            PQexecPrepared(handle, name, count, values, lengths, formats, LibPQ.textFormat)
        }
        return try checked(raw, sql: sql, arguments: parameters.arguments)
    }

    private func preparedName(for sql: String, _ rewritten: PlaceholderRewriter.Rewritten,
                              _ parameters: PGParameters) throws(PGError) -> String {
        if let name = preparedStatements[sql] { return name }
        preparedStatementCounter += 1
        let name = "gatepass_\(preparedStatementCounter)"
        // The types come from the first arguments bound. A later NULL in a slot first seen
        // as, say, an integer still binds (NULL fits any type), and a slot first bound as
        // NULL takes the type the server infers from the SQL. A slot bound later with another
        // kind of value than it was prepared for fails on the server: the store binds one
        // kind per placeholder. The integer type is int8, which PostgreSQL does not assign to
        // a boolean column: a Bool binds as 0 or 1, for an integer column, as on SQLite.
        let raw = parameters.types.withUnsafeBufferPointer {
            PQprepare(handle, name, rewritten.sql, Int32($0.count), $0.baseAddress)
        }
        _ = try checked(raw, sql: sql, arguments: parameters.arguments)
        preparedStatements[sql] = name
        return name
    }

    private func rewrite(_ sql: String) -> PlaceholderRewriter.Rewritten {
        if let cached = rewrittenSQL[sql] { return cached }
        let rewritten = PlaceholderRewriter.rewrite(sql)
        rewrittenSQL[sql] = rewritten
        return rewritten
    }

    /// invalid_sql_statement_name (26000), or feature_not_supported (0A000) with the message
    /// PostgreSQL gives when a table changed under a prepared statement.
    private func isStalePreparedStatement(_ error: PGError) -> Bool {
        error.sqlState == "26000"
            || (error.sqlState == "0A000" && error.message.contains("cached plan must not change result type"))
    }

    /// Takes ownership of `raw` and throws unless it reports success.
    private func checked(_ raw: PGResultHandle?, sql: String, arguments: [SQLValue]) throws(PGError) -> PGResult {
        guard let raw else {
            // libpq returns no result when it ran out of memory or could not send the query.
            throw PGError(message: LibPQ.errorMessage(handle), sql: sql, connectionWasBad: true)
        }
        let result = PGResult(raw)
        switch PQresultStatus(raw) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return result
        default:
            throw result.error(sql: sql, arguments: arguments,
                               connectionWasBad: PQstatus(handle) != CONNECTION_OK)
        }
    }
}
