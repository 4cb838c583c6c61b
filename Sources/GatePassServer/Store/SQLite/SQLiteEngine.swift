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

    /// Opens or creates the database at `path` with owner-only permissions, checks it
    /// (`PRAGMA quick_check`) and migrates it.
    /// - Parameter synchronous: SQLite's `synchronous` mode for the writer (see README). FULL is
    ///   kept by the writer's sync stage rather than by SQLite: the connection commits with
    ///   NORMAL and a `WALFileSync` makes the commits durable before anyone is told of them,
    ///   while the next batch already runs. EXTRA is SQLite's own.
    /// - Parameter busyTimeoutMilliseconds: how long a statement waits for another process's
    ///   lock before the request answers 503.
    /// - Throws: `SQLiteError`, also when the file is not a sound database.
    init(path: String, synchronous: String, busyTimeoutMilliseconds: Int32) throws {
        self.path = path
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        // Made 0600 before SQLite sees it: SQLite gives the WAL and shm files the database
        // file's mode, so all three are private from their first byte.
        try Connection.createPrivateFile(at: path)
        let connection = try Connection(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
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
            checkpointer = try WALCheckpointer(path: path, synchronous: connectionMode)
        } catch {
            connection.close()
            throw error
        }
        checkpointer.takeCheckpoints(from: connection)
        let syncer: (@Sendable () throws -> Void)? = if let walSync { { try walSync.sync() } } else { nil }
        writer = GroupCommitWriter(connection: connection, syncer: syncer)
        readers = ReaderPool(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
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

    /// Throws unless a new connection can read the file's header and schema. The pooled
    /// connections keep pages in their caches (SQLite trusts them while the WAL is unchanged),
    /// so a header or schema damaged on disk shows only to a connection that reads afresh.
    func probeReadable() throws {
        let connection = try Connection(path: path, readOnly: true, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        defer { connection.close() }
        _ = try connection.scalarInt("SELECT COUNT(*) FROM sqlite_schema")
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

    /// Moves the WAL into the database file and truncates it: after an erase, the old versions
    /// of the changed pages must not stay in the WAL (the writer's `secure_delete` has already
    /// zeroed what the erase freed in the database's own pages). A reader still on an older
    /// snapshot makes this a partial checkpoint; the next one finishes it.
    func truncateJournal() throws {
        try writer.outsideTransaction { connection in try connection.executeScript("PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    func refuseQueuedWrites() {
        writer.refuseQueued()
    }

    func close() {
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

