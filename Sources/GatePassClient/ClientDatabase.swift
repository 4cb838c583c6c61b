import Foundation
import SQLite
import Synchronization

/// The client's SQLite state file: outbox, dead letters, cache and key/value metadata
/// (session, device token). WAL mode with `synchronous = FULL`, so an entry is on disk
/// before `enqueue` returns.
///
/// Thread-safe: one connection behind a lock (the console's drain thread and its UI share it);
/// other processes on the same file are coordinated by SQLite's own locking.
public final class ClientDatabase: @unchecked Sendable {
    // @unchecked: `connection` is only used while `lock` is held.
    private let connection: Connection
    private let lock = NSLock()
    public let path: String

    static let migrations = [
        Migration("0001-client-state", """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            method TEXT NOT NULL,
            url TEXT NOT NULL,
            body BLOB,
            created_at INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            idempotency_key TEXT NOT NULL UNIQUE,
            next_attempt_at INTEGER NOT NULL,
            scanned_at INTEGER,
            credential TEXT NOT NULL CHECK (credential IN ('login', 'scanner'))
        );
        CREATE INDEX outbox_due ON outbox(next_attempt_at, id);
        CREATE TABLE dead_letters (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            method TEXT NOT NULL,
            url TEXT NOT NULL,
            body BLOB,
            created_at INTEGER NOT NULL,
            attempts INTEGER NOT NULL,
            last_error TEXT,
            idempotency_key TEXT NOT NULL,
            scanned_at INTEGER,
            credential TEXT NOT NULL,
            status INTEGER NOT NULL,
            error_code TEXT NOT NULL,
            error_message TEXT NOT NULL,
            dead_at INTEGER NOT NULL
        );
        CREATE TABLE cache (key TEXT PRIMARY KEY, value BLOB NOT NULL, updated_at INTEGER NOT NULL);
        """),
        passCacheMigration,
        passKeysMigration,
        onSiteRollMigration,
    ]

    public init(directory: StateDirectory) throws(ClientError) {
        try directory.prepare()
        path = directory.databasePath
        do {
            // Created 0600 before SQLite opens it; SQLite gives the WAL and shm the same mode.
            // (No umask change: that is process-wide, and the console has other threads.)
            try Connection.createPrivateFile(at: path)
            connection = try Connection(path: path)
            try connection.executeScript("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
            try Migrator.migrate(connection, Self.migrations)
        } catch {
            throw .local("cannot open the state file \(path): \(error)")
        }
    }

    /// Runs `body` with the connection, under the lock; SQLite errors become `.local`.
    func withConnection<T>(_ body: (Connection) throws -> T) throws(ClientError) -> T {
        lock.lock()
        defer { lock.unlock() }
        do {
            return try body(connection)
        } catch let error as ClientError {
            throw error
        } catch {
            throw .local("state file error: \(error)")
        }
    }

    /// Runs `body` with `synchronous = NORMAL`: the change is crash-consistent but reaches
    /// the disk with the next durable commit rather than now. Right for bookkeeping that a
    /// crash may undo safely (an outbox entry forgotten as sent is replayed, and the server
    /// answers the replay from its idempotency store without applying it twice).
    func lazily<T>(_ body: (Connection) throws -> T) throws(ClientError) -> T {
        try withConnection { connection in
            try connection.executeScript("PRAGMA synchronous = NORMAL")
            defer { _ = try? connection.executeScript("PRAGMA synchronous = FULL") }
            return try body(connection)
        }
    }

    /// Runs `body` in one transaction.
    func transaction<T>(_ body: (Connection) throws -> T) throws(ClientError) -> T {
        try withConnection { connection in try connection.inTransaction { try body(connection) } }
    }

    public func close() {
        lock.lock()
        defer { lock.unlock() }
        connection.close()
    }

    // MARK: - Metadata

    public func meta(_ key: String) throws(ClientError) -> String? {
        try withConnection { try $0.queryFirst("SELECT value FROM meta WHERE key = ?", [key]) { try $0.string(0) } }
    }

    public func setMeta(_ key: String, _ value: String?) throws(ClientError) {
        try withConnection { connection in
            if let value {
                try connection.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                                       [key, value])
            } else {
                try connection.execute("DELETE FROM meta WHERE key = ?", [key])
            }
        }
    }

    // MARK: - Cache

    public struct CachedValue: Sendable {
        public var value: [UInt8]
        public var updatedAt: Date
    }

    public func cached(_ key: String) throws(ClientError) -> CachedValue? {
        try withConnection {
            try $0.queryFirst("SELECT value, updated_at FROM cache WHERE key = ?", [key]) {
                CachedValue(value: try $0.blob(0), updatedAt: try $0.date(1))
            }
        }
    }

    public func cache(_ key: String, value: [UInt8], at now: Date) throws(ClientError) {
        try withConnection {
            try $0.execute("""
                INSERT INTO cache (key, value, updated_at) VALUES (?, ?, ?)
                ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
                """, [key, value, Int64(now.timeIntervalSince1970 * 1000)])
        }
    }
}
