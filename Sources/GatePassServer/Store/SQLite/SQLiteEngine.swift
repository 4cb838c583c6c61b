import Foundation
import GatePassCore
import SQLite
import Synchronization

/// The SQLite engine under `ServerDatabase`: one group-commit writer and a pool of readers
/// over one file in WAL mode, with foreign keys on and the schema migrated at open.
final class SQLiteEngine: DatabaseEngine {
    let path: String
    let writer: GroupCommitWriter<Connection>
    let readers: ReaderPool
    let busyTimeoutMilliseconds: Int32
    /// With `synchronous = FULL`: what makes the writer's commits durable after they return.
    let walSync: WALFileSync?
    /// Runs the WAL's checkpoints, so the writer does not (see `WALCheckpointer`).
    let checkpointer: WALCheckpointer
    /// Empties the WAL after an erase, retrying while readers are in the way.
    let journal: JournalTruncation
    /// Where a failed checkpoint or a file found read-only is noted (shared with `ServerDatabase`).
    let health: StorageHealth

    /// Opens or creates the database at `path` with owner-only permissions, checks it
    /// (`PRAGMA quick_check`) and migrates it.
    /// - Parameter synchronous: SQLite's `synchronous` mode for the writer (see README). FULL is
    ///   kept by the writer's sync stage rather than by SQLite: the connection commits with
    ///   NORMAL and a `WALFileSync` makes the commits durable before anyone is told of them,
    ///   while the next batch already runs. EXTRA is SQLite's own.
    /// - Parameter busyTimeoutMilliseconds: how long a statement waits for another process's
    ///   lock before the request answers 503.
    /// - Parameter serving: `gatepass serve`'s checks: the file, its WAL and shm private
    ///   (`PrivateFileMode`) and the file writable. A command reading a copy skips them.
    /// - Parameter retryTimer: what retries a journal truncation that readers were in the way of.
    /// - Throws: `SQLiteError`, also when the file is not a sound database; `ConfigurationError`
    ///   when `serving` and the files are shared or cannot be written.
    init(path: String, synchronous: String, busyTimeoutMilliseconds: Int32, serving: Bool = false,
         retryTimer: any RetryTimer = DispatchRetryTimer(), health: StorageHealth = StorageHealth()) throws {
        self.path = path
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.health = health
        if serving { try Self.refuseSharedFiles(path) }
        // Made 0600 before SQLite sees it: SQLite gives the WAL and shm files the database
        // file's mode, so all three are private from their first byte.
        try Connection.createPrivateFile(at: path)
        let connection = try Connection(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        // Asked for read-write, SQLite opens a file it cannot write read-only without a word.
        if serving, let finding = Self.writeRefusal(connection, path: path) {
            connection.close()
            throw Self.unwritableAtStart(path, finding)
        }
        let mode = SQLiteEngine.validatedSynchronous(synchronous)
        let walSync = mode == "FULL" ? WALFileSync(databasePath: path) : nil
        self.walSync = walSync
        // What SQLite itself is asked for, on the writer and the checkpointer alike.
        let connectionMode = walSync == nil ? mode : "NORMAL"
        do {
            try SQLiteEngine.checkIntegrity(connection, path: path)
            // journal_size_limit: when the WAL starts again (WALCheckpointer), a file that grew
            // past 32 MiB (a reader held old frames for long) is cut back to that.
            // secure_delete: what a change frees (an old version of a row, a deleted event) is
            // overwritten with zeros, so an anonymised visitor's name is not left in free space.
            try connection.executeScript("""
                PRAGMA journal_mode = WAL;
                PRAGMA foreign_keys = ON;
                PRAGMA synchronous = \(connectionMode);
                PRAGMA temp_store = MEMORY;
                PRAGMA cache_size = -16000;
                PRAGMA secure_delete = ON;
                PRAGMA journal_size_limit = 33554432;
                """)
            try Migrator.migrate(connection, Schema.sqliteMigrations)
            // The migrations committed without a sync of their own (NORMAL).
            try walSync?.sync()
            // The WAL and shm must take writes too (the write lock lives in the shm).
            if serving { try Self.probeWriteLock(connection, path: path) }
            checkpointer = try WALCheckpointer(path: path, synchronous: connectionMode) { [health] failure in
                health.noteUnwritable("\(failure)")
            }
        } catch {
            connection.close()
            throw error
        }
        journal = JournalTruncation(checkpointer: checkpointer, timer: retryTimer)
        checkpointer.takeCheckpoints(from: connection)
        let syncer: (@Sendable () throws -> Void)? = if let walSync { { try walSync.sync() } } else { nil }
        writer = GroupCommitWriter(connection: connection, syncer: syncer)
        readers = ReaderPool(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
    }

    /// `serve` refuses a database file, WAL or shm that its group or others may use, as it
    /// refuses such a secret. Checked before SQLite opens anything: it gives a WAL and shm it
    /// makes the database file's mode.
    private static func refuseSharedFiles(_ path: String) throws(ConfigurationError) {
        let advice = " (the database and its -wal and -shm files hold every visitor's personal data)"
        try PrivateFileMode.checkIfPresent(path: path, what: "the database", advice: advice)
        try PrivateFileMode.checkIfPresent(path: path + "-wal", what: "the database's WAL", advice: advice)
        try PrivateFileMode.checkIfPresent(path: path + "-shm", what: "the database's shm file", advice: advice)
    }

    /// Why `path` cannot be written now, or nil. Two looks, since either can miss: SQLite's own
    /// (`sqlite3_db_readonly`: it opened the file read-only) — but SQLite hands a new
    /// connection a descriptor kept open from an earlier one of this process, opened for
    /// writing before the file changed — and the kernel's (`access(2)` with the effective ids,
    /// which sees an immutable flag, a read-only mount and the permissions even for root).
    /// `access`, not `open`: closing any descriptor of the database file would drop the
    /// POSIX locks SQLite holds on it for the whole process.
    private static func writeRefusal(_ connection: Connection, path: String) -> String? {
        if connection.isReadOnly { return "SQLite could open it for reading only" }
        if faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0 {
            return "the system refuses to write it (\(String(cString: strerror(errno))))"
        }
        return nil
    }

    private static func unwritableAtStart(_ path: String, _ finding: String) -> ConfigurationError {
        ConfigurationError(message: "the database \(path) cannot be written: \(finding). Look for an immutable flag (lsattr), "
                           + "a read-only mount, or files (the database, its -wal and -shm, their folder) this user may not write")
    }

    /// Takes the write lock and gives it back: fails where the WAL or shm cannot be written.
    private static func probeWriteLock(_ connection: Connection, path: String) throws {
        do {
            try connection.execute("BEGIN IMMEDIATE")
            try connection.execute("ROLLBACK")
        } catch let error as SQLiteError where error.isUnwritable {
            throw unwritableAtStart(path, error.message)
        }
    }

    /// Refuses a database that fails `PRAGMA quick_check` (its pages and b-trees are checked,
    /// in time linear in its size): a server must not start answering from damaged data.
    private static func checkIntegrity(_ connection: Connection, path: String) throws {
        let findings: [String]
        do {
            findings = try connection.query("PRAGMA quick_check(20)") { try $0.string(0) }
        } catch let error as SQLiteError {
            throw SQLiteError(code: error.code, message: "\(path) fails PRAGMA quick_check: \(error.message); restore it from a backup",
                              sql: error.sql)
        }
        guard findings == ["ok"] else {
            throw SQLiteError(code: 11 /* SQLITE_CORRUPT */,
                              message: "\(path) fails PRAGMA quick_check: \(findings.prefix(3).joined(separator: "; ")); restore it from a backup")
        }
    }

    /// Throws unless the database can be written now (see `GroupCommitWriter.probeWritable`).
    func probeWritable() throws { try writer.probeWritable() }

    /// Throws unless a new connection can read the file's header and schema and open the file
    /// for writing. The pooled connections keep pages in their caches (SQLite trusts them
    /// while the WAL is unchanged), so a header or schema damaged on disk shows only to a
    /// connection that reads afresh; and the writer's connection, opened before, goes on
    /// writing into the WAL of a file made immutable, remounted read-only or stripped of its
    /// permission since — only a new connection is opened read-only, and only a checkpoint
    /// would fail. That finding stops the server's writes (`StorageHealth`).
    func probeReadable() throws {
        let connection = try Connection(path: path, create: false, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        defer { connection.close() }
        _ = try connection.scalarInt("SELECT COUNT(*) FROM sqlite_schema")
        if let finding = Self.writeRefusal(connection, path: path) {
            health.noteUnwritable("\(path) can no longer be written: \(finding) (an immutable flag, a read-only mount or "
                                  + "a lost permission); writes since went into its WAL only")
            try health.refuseIfUnwritable()
        }
    }

    private static func validatedSynchronous(_ mode: String) -> String {
        let upper = mode.uppercased()
        precondition(["OFF", "NORMAL", "FULL", "EXTRA"].contains(upper), "invalid synchronous mode \(mode)")
        return upper
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (any Transaction) throws -> T) throws -> T {
        try writer.write { db in try body(SQLTransaction(db)) }
    }

    func writeAsync<T: Sendable>(_ body: @escaping @Sendable (any Transaction) throws -> T,
                                 completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        writer.submit({ db in try body(SQLTransaction(db)) }, completion: completion)
    }

    /// A read returns only once everything it could have seen is durable: the writer's sync
    /// stage may be a flush behind the commits a reader sees (`GroupCommitWriter.waitUntilDurable`).
    func read<T>(_ body: (any Transaction) throws -> T) throws -> T {
        try readConnection { db in try body(SQLTransaction(db)) }
    }

    /// The SQLite connection itself, for the store's own work and for tests that must reach
    /// under the repositories (to damage a row, say). Nothing outside Store/ uses these.
    func writeConnection<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) throws -> T {
        try writer.write(body)
    }

    /// Waits for durability as `read` does (`read` is this, with the repositories on top).
    func readConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        let value = try readers.read(body)
        try writer.waitUntilDurable()
        return value
    }

    /// Moves the WAL into the database file and empties it: after an erase, the old versions
    /// of the changed pages must not stay in the WAL (the writer's `secure_delete` has already
    /// zeroed what the erase freed in the database's own pages). Never waits for a lock: a
    /// reader still on an older snapshot, or the writer, makes the attempt answer busy, and
    /// it is retried on the timer until one succeeds (`JournalTruncation`).
    /// - Throws: the checkpoint's failure (the file cannot be written: `StorageHealth` has it).
    func truncateJournal() throws {
        try journal.attempt()
    }

    func truncateJournalNow() throws -> Bool {
        switch checkpointer.truncate() {
        case .truncated: return true
        case .busy, .stopped: return false
        case .failed(let failure): throw failure
        }
    }

    func stopWaitingForLocks() {
        // busy_timeout 0: the close's TRUNCATE checkpoint answers busy at once instead of
        // blocking the server's writers while it waits for their readers.
        _ = try? writer.write { db in try db.executeScript("PRAGMA busy_timeout = 0") }
    }

    func refuseQueuedWrites() {
        writer.refuseQueued()
    }

    func close() {
        journal.close()
        checkpointer.stop()
        writer.close()
        readers.close()
    }

    var writerStatistics: GroupCommitStatistics { writer.statistics }

    /// One server per SQLite file: nobody to tell, nobody to hear.
    func announce(_ announcement: StoreAnnouncement) {}
    func startListening(_ handler: @escaping @Sendable (StoreAnnouncement) -> Void, log: @escaping @Sendable (String) -> Void) {}
    var hearsOtherServers: Bool { true }
    func runExclusively(_ job: PeriodicJob, _ body: () throws -> Void) rethrows -> Bool {
        try body()
        return true
    }
}


/// The TRUNCATE checkpoints that follow an erase: each attempt waits for no lock; one that a
/// reader or the writer was in the way of is retried on the timer, once a second, until one
/// empties the WAL. (A checkpoint that waited instead would hold every write back meanwhile:
/// 4.7 s behind one reader.) Retries are not piled up: one is pending at most, and the one
/// that runs covers every erase before it.
final class JournalTruncation: Sendable {
    static let retryInterval: Duration = .seconds(1)

    private struct State {
        var retryPending = false
        var closed = false
    }

    private let checkpointer: WALCheckpointer
    private let timer: any RetryTimer
    private let state = Locked(State())

    init(checkpointer: WALCheckpointer, timer: any RetryTimer) {
        self.checkpointer = checkpointer
        self.timer = timer
    }

    /// Whether a retry waits on the timer (for tests and diagnostics).
    var retryPending: Bool { state.withLock { $0.retryPending } }

    /// Attempts a truncation now; schedules a retry if it was in someone's way.
    /// - Throws: the checkpoint's failure (also told to the checkpointer's `onFailure`).
    func attempt() throws {
        switch checkpointer.truncate() {
        case .truncated, .stopped: return
        case .busy: scheduleRetry()
        case .failed(let failure): throw failure
        }
    }

    private func scheduleRetry() {
        let schedule = state.withLock { state -> Bool in
            guard !state.closed, !state.retryPending else { return false }
            state.retryPending = true
            return true
        }
        guard schedule else { return }
        timer.schedule(after: Self.retryInterval) { [weak self] in
            guard let self else { return }
            let proceed = state.withLock { state -> Bool in
                state.retryPending = false
                return !state.closed
            }
            // A failure here has been told to the checkpointer's `onFailure` already.
            if proceed { try? attempt() }
        }
    }

    /// No retry runs after this (the writer's close empties the WAL itself).
    func close() {
        state.withLock { $0.closed = true }
    }
}
