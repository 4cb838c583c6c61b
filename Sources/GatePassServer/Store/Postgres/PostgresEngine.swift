import Foundation
import GatePassCore
import Postgres

/// The PostgreSQL engine under `ServerDatabase`: the database several `gatepass serve`
/// instances share. Reads run on pooled connections, each in a REPEATABLE READ snapshot (what
/// SQLite's WAL readers see). Writes go through one group-commit writer per server, as on
/// SQLite: it runs every write waiting in one transaction (each in its own savepoint), and
/// each such batch first takes one transaction-scoped advisory lock, held to its commit, so
/// batches commit one at a time across every server.
///
/// Why one writer at a time: every exactly-once rule of the store (a pass checked in once, an
/// OTP limit, an idempotency key answered once, the audit chain's next link, event ids that
/// become visible in the order they were given) was built on SQLite's single writer, and the
/// lock keeps each of them true with any number of servers, with no retry of a body that
/// may have run halfway. Group commit keeps it fast: the writes waiting on one server share
/// one lock turn and one WAL flush. Reads, which are most requests, run in parallel everywhere.
final class PostgresEngine: DatabaseEngine {
    let url: String
    private let pool: PostgresPool
    private let writer: GroupCommitWriter<PostgresWriterConnection>
    /// This server among those sharing the database: its own announcements come back to it
    /// through LISTEN and are skipped by this prefix.
    let instance = String(UUID().uuidString.prefix(8)).lowercased()
    private let listener: PostgresListener

    /// Connects, then applies the migrations this database lacks (under a session lock, so two
    /// instances starting at once do not both migrate).
    /// - Throws: `PGError`, or `StoredDataError` for a database migrated by a newer build.
    init(url: String, poolSize: Int = 8) throws {
        self.url = url
        let bootstrap = try PGConnection(url: url, applicationName: "gatepass")
        defer { bootstrap.close() }
        try PostgresMigrator.migrate(bootstrap, Schema.migrations)
        pool = PostgresPool(url: url, size: poolSize)
        writer = GroupCommitWriter(
            connection: try PostgresWriterConnection(url: url, channel: PostgresEngine.channel, instance: instance),
            threadName: "pg-writer")
        listener = PostgresListener(url: url, channel: PostgresEngine.channel, instance: instance)
    }

    /// The channel every server of one database announces on and listens to.
    static let channel = "gatepass"

    /// A read that failed because its connection was lost (PostgreSQL restarted, a failover)
    /// is run once more on a new connection: it changed nothing, so running it again is safe.
    func read<T>(_ body: (any Transaction) throws -> T) throws -> T {
        func attempt() throws -> T {
            try pool.withConnection { connection in
                try connection.inTransaction(.repeatableRead) { try body(SQLTransaction(connection)) }
            }
        }
        do {
            return try attempt()
        } catch let error as PGError where error.isConnectionFailure {
            return try attempt()
        }
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (any Transaction) throws -> T) throws -> T {
        try writer.write { writing in try body(SQLTransaction(writing.connection)) }
    }

    func writeAsync<T: Sendable>(_ body: @escaping @Sendable (any Transaction) throws -> T,
                                 completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        writer.submit({ writing in try body(SQLTransaction(writing.connection)) }, completion: completion)
    }

    /// The writer's group-commit counts so far (benchmarks report jobs per commit).
    var writerStatistics: GroupCommitStatistics { writer.statistics }

    func probeReadable() throws {
        let connection = try PGConnection(url: url, applicationName: "gatepass-probe")
        defer { connection.close() }
        _ = try connection.scalarInt("SELECT COUNT(*) FROM schema_migrations")
    }

    /// Takes the write lock and gives it back, waiting its turn like any write.
    func probeWritable() throws {
        try writer.outsideTransaction { writing in
            try writing.beginBatch()
            writing.rollbackBatch()
        }
    }

    func refuseQueuedWrites() { writer.refuseQueued() }

    /// PostgreSQL keeps an erased row's old version until VACUUM reclaims it; this runs one on
    /// the tables an erase touches, so the space is marked free soon rather than at autovacuum's
    /// leisure (VACUUM frees the space; it does not overwrite it: README "Erasure and the files").
    /// PostgreSQL has no journal file of ours to empty (README "Erasure and the files").
    func truncateJournalNow() throws -> Bool { true }
    func stopWaitingForLocks() {}

    func truncateJournal() throws {
        try pool.withConnection { connection in
            try connection.executeScript("VACUUM visitors, scans, events, mail_queue, audit_log, push_deliveries")
        }
    }

    func close() {
        writer.close()
        listener.stop()
        pool.close()
    }

    /// A pooled connection, outside any transaction, for the store's own work that the
    /// repositories do not cover (`DatabaseCopy`). Nothing outside Store/ uses it.
    func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        try pool.withConnection(body)
    }

    /// A commit is announced inside its own transaction (see `write`); the others are sent
    /// after their commit, on their own.
    func announce(_ announcement: StoreAnnouncement) {
        guard announcement != .committed else { return }
        do {
            try pool.withConnection { connection in
                for payload in announcement.payloads {
                    _ = try connection.execute("SELECT pg_notify(?, ?)", [PostgresEngine.channel, instance + " " + payload])
                }
            }
        } catch {
            // The other servers still learn of it: they revalidate their streams every 30 s.
            listener.logFailure("announcing \(announcement): \(error)")
        }
    }

    func startListening(_ handler: @escaping @Sendable (StoreAnnouncement) -> Void, log: @escaping @Sendable (String) -> Void) {
        listener.start(handler, log: log)
    }

    var hearsOtherServers: Bool { listener.isListening }

    /// A session advisory lock per job, tried, never waited for: the server holding it runs
    /// the job, the others skip this turn. A server that dies loses its locks with its
    /// connections, so another takes the job over at its next turn. A database that cannot
    /// be reached runs nothing (the job's own writes would fail too).
    func runExclusively(_ job: PeriodicJob, _ body: () throws -> Void) rethrows -> Bool {
        let key = PostgresLocks.jobs + job.rawValue
        guard let connection = try? pool.borrow() else { return false }
        defer { pool.giveBack(connection) }
        guard (try? connection.queryFirst("SELECT pg_try_advisory_lock(?)", [key], { try $0.bool(0) })) == true else {
            return false
        }
        defer { _ = try? connection.execute("SELECT pg_advisory_unlock(?)", [key]) }
        try body()
        return true
    }
}

/// The LISTEN side of `StoreAnnouncement`: one connection of its own, on one thread. When the
/// connection is lost it reconnects (every second while it cannot), and after each connect it
/// reports a commit and ended sessions, since announcements sent meanwhile were missed.
final class PostgresListener: Sendable {
    private let url: String
    private let channel: String
    private let instance: String
    private let listening = Locked<Bool>(false)
    private let stopping = Locked<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let started = Locked<Bool>(false)
    private let log = Locked<@Sendable (String) -> Void>({ _ in })

    init(url: String, channel: String, instance: String) {
        self.url = url
        self.channel = channel
        self.instance = instance
    }

    var isListening: Bool { listening.withLock { $0 } }

    /// What went wrong, for the server's log (PGError never holds a password or a bound value).
    func logFailure(_ text: String) { log.withLock { $0 }(text) }

    func start(_ handler: @escaping @Sendable (StoreAnnouncement) -> Void, log: @escaping @Sendable (String) -> Void) {
        self.log.withLock { $0 = log }
        started.withLock { $0 = true }
        let thread = Thread { [self] in
            run(handler)
            finished.signal()
        }
        thread.name = "pg-listener"
        thread.start()
    }

    func stop() {
        stopping.withLock { $0 = true }
        if started.withLock({ $0 }) { finished.wait() }
    }

    private var isStopping: Bool { stopping.withLock { $0 } }

    private func run(_ handler: @escaping @Sendable (StoreAnnouncement) -> Void) {
        while !isStopping {
            do {
                let connection = try PGConnection(url: url, applicationName: "gatepass-listener")
                defer { connection.close() }
                try connection.listen(channel)
                listening.withLock { $0 = true }
                handler(.committed)
                handler(.sessionsEnded)
                while !isStopping {
                    // A short wait, so a stop is seen within a fifth of a second.
                    for notification in try connection.waitForNotifications(timeoutMilliseconds: 200) {
                        let parts = notification.payload.split(separator: " ", maxSplits: 1).map(String.init)
                        guard parts.count == 2, parts[0] != instance, let announcement = StoreAnnouncement(payload: parts[1])
                        else { continue }
                        handler(announcement)
                    }
                }
            } catch {
                logFailure("listening for other servers: \(error)")
            }
            listening.withLock { $0 = false }
            // Wait a second before connecting again, seeing a stop at once.
            for _ in 0..<5 where !isStopping { Thread.sleep(forTimeInterval: 0.2) }
        }
    }
}

/// The advisory lock keys of the store (one 64-bit space per database, shared with any other
/// user of advisory locks there; these are unlikely to collide: "GPW", "GPE", "GPM", "GPJ").
enum PostgresLocks {
    static let writer: Int64 = 0x4750_5700_0000_0001
    static let eventOrder: Int64 = 0x4750_4500_0000_0001
    static let migration: Int64 = 0x4750_4D00_0000_0001
    /// A periodic job's lock is this plus the job's number.
    static let jobs: Int64 = 0x4750_4A00_0000_0000
}

enum PostgresEngineError: Error, CustomStringConvertible, DatabaseFailure {
    case closing
    case jobLeftTransactionOpen

    var description: String {
        switch self {
        case .closing: "the database is closing; the change was not made"
        case .jobLeftTransactionOpen: "a write left a transaction open"
        }
    }
    var isClosing: Bool { self == .closing }
    var isBusy: Bool { false }
    var isUnwritable: Bool { false }
    var unreadableColumn: String? { nil }
}

/// The group-commit writer's connection on PostgreSQL. A batch begins by taking the write
/// lock every server of the database shares, and announces its commit (NOTIFY, delivered only
/// if it commits). A connection found broken after a failed batch is replaced, so a restart
/// of PostgreSQL fails the writes in flight (503) and the next ones succeed.
final class PostgresWriterConnection: GroupCommitConnection {
    private(set) var connection: PGConnection
    private let url: String
    private let channel: String
    private let instance: String

    init(url: String, channel: String, instance: String) throws {
        self.url = url
        self.channel = channel
        self.instance = instance
        connection = try PGConnection(url: url, applicationName: "gatepass-writer")
    }

    func beginBatch() throws {
        try connection.executeScript("BEGIN ISOLATION LEVEL READ COMMITTED")
        _ = try connection.execute("SELECT pg_advisory_xact_lock(?)", [PostgresLocks.writer])
    }

    func commitBatch() throws {
        // The other servers read the log and drop cached answers (ids only; see StoreAnnouncement).
        _ = try connection.execute("SELECT pg_notify(?, ?)", [channel, instance + " c"])
        try connection.executeScript("COMMIT")
    }

    func rollbackBatch() { try? connection.executeScript("ROLLBACK") }
    func inSavepoint<T>(_ body: () throws -> T) throws -> T { try connection.inSavepoint(body) }
    var isInTransaction: Bool { connection.isInTransaction }
    func lent<T>(_ body: () throws -> T) rethrows -> T { try body() }

    func recoverAfterFailure() {
        guard !connection.isHealthy, let fresh = try? PGConnection(url: url, applicationName: "gatepass-writer") else { return }
        connection.close()
        connection = fresh
    }

    func closeAfterWriting() { connection.close() }
    static var writerClosing: any Error { PostgresEngineError.closing }
    static var jobLeftTransactionOpen: any Error { PostgresEngineError.jobLeftTransactionOpen }
}

/// Connections handed to one thread at a time; a connection found broken is closed rather
/// than returned, so the next request opens a new one (PostgreSQL restarted, say).
final class PostgresPool: @unchecked Sendable {
    // @unchecked: `idle` and `closed` are guarded by `lock`; a borrowed connection is touched
    // only by the thread that borrowed it.
    private let url: String
    private let size: Int
    private var idle: [PGConnection] = []
    private var closed = false
    private let lock = NSLock()

    init(url: String, size: Int) {
        self.url = url
        self.size = size
    }

    /// A lost connection empties the pool: what lost one (a restart of PostgreSQL, a failover)
    /// most likely lost the idle ones too, and each would fail a request before it is found out.
    func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        let connection = try borrow()
        defer { giveBack(connection) }
        do {
            return try body(connection)
        } catch let error as PGError where error.isConnectionFailure {
            closeIdle()
            throw error
        }
    }

    private func closeIdle() {
        lock.lock()
        let all = idle
        idle.removeAll()
        lock.unlock()
        for connection in all { connection.close() }
    }

    /// A connection for the caller alone until `giveBack`.
    func borrow() throws -> PGConnection {
        lock.lock()
        let borrowed = idle.popLast()
        lock.unlock()
        return try borrowed ?? PGConnection(url: url, applicationName: "gatepass")
    }

    func giveBack(_ connection: PGConnection) {
        lock.lock()
        let keep = !closed && connection.isHealthy && !connection.isInTransaction && idle.count < size
        if keep { idle.append(connection) }
        lock.unlock()
        if !keep { connection.close() }
    }

    func close() {
        lock.lock()
        closed = true
        let all = idle
        idle.removeAll()
        lock.unlock()
        for connection in all { connection.close() }
    }
}

/// Applies the numbered migrations (`Schema.migrations`, in PostgreSQL's words) in order, each
/// in its own transaction, under a session advisory lock; refuses a database that has applied
/// a migration this build does not know (a newer build migrated it).
enum PostgresMigrator {
    @discardableResult
    static func migrate(_ connection: PGConnection, _ migrations: [SchemaMigration]) throws -> [String] {
        _ = try connection.execute("SELECT pg_advisory_lock(?)", [PostgresLocks.migration])
        defer { _ = try? connection.execute("SELECT pg_advisory_unlock(?)", [PostgresLocks.migration]) }
        try connection.executeScript(
            "CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")
        let applied = Set(try connection.query("SELECT id FROM schema_migrations") { try $0.string(0) })
        let known = Set(migrations.map(\.id))
        if let unknown = applied.subtracting(known).sorted().first {
            throw StoredDataError("the database has migration \(unknown), which this build does not know: a newer gatepass migrated it")
        }
        var appliedNow: [String] = []
        for migration in migrations where !applied.contains(migration.id) {
            try connection.inTransaction(.readCommitted) {
                try connection.executeScript(migration.postgres)
                _ = try connection.execute("INSERT INTO schema_migrations (id) VALUES (?)", [migration.id])
            }
            appliedNow.append(migration.id)
        }
        return appliedNow
    }
}
