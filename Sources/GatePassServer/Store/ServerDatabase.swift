import SQLBinding
import Foundation
import GatePassCore
import Synchronization

/// The server's database: transactions of repositories (`Transaction`) over an engine,
/// SQLite today. Everything above the store (handlers, auth, the event hub) sees only this.
public final class ServerDatabase: Sendable {
    let engine: any DatabaseEngine
    /// Bumped after every committed write, so derived answers (stats) can be cached safely.
    let writeGeneration = Atomic<UInt64>(0)
    /// Bumped after every committed write that changed a session or a user row (here, or
    /// announced by another server), so cached sessions can be used safely (`SessionCache`).
    let principalGeneration = Atomic<UInt64>(0)
    /// Signalled after `principalGeneration` moves (what tests wait on).
    let principalChanges = ChangeSignal()
    /// Whether the database has been found unable to take writes (then every write is refused).
    let health: StorageHealth

    init(engine: any DatabaseEngine, health: StorageHealth = StorageHealth()) {
        self.engine = engine
        self.health = health
    }

    /// Opens or creates the SQLite database at `path` with owner-only permissions, checks it
    /// (`PRAGMA quick_check`) and migrates it.
    /// - Parameter synchronous: SQLite's `synchronous` mode for the writer (see README).
    /// - Parameter busyTimeoutMilliseconds: how long a statement waits for another process's
    ///   lock before the request answers 503.
    /// - Parameter serving: `gatepass serve`'s checks (see `SQLiteEngine.init`).
    /// - Parameter retryTimer: what retries a journal truncation that readers were in the way of.
    /// - Throws: `SQLiteError`, also when the file is not a sound database; `ConfigurationError`
    ///   when `serving` and the files are shared or cannot be written.
    public convenience init(path: String, synchronous: String = "FULL", busyTimeoutMilliseconds: Int32 = 5_000,
                            serving: Bool = false, retryTimer: any RetryTimer = DispatchRetryTimer()) throws {
        let health = StorageHealth()
        self.init(engine: try SQLiteEngine(path: path, synchronous: synchronous, busyTimeoutMilliseconds: busyTimeoutMilliseconds,
                                           serving: serving, retryTimer: retryTimer, health: health),
                  health: health)
    }

    /// Runs `body` in a durable write transaction and returns after its commit.
    /// - Throws: `UnwritableDatabase` without running it once the database was found unable
    ///   to take writes; what `body` or the commit threw.
    func write<T: Sendable>(_ body: @escaping @Sendable (any Transaction) throws -> T) throws -> T {
        try health.refuseIfUnwritable()
        let notes = TransactionNotes()
        defer { committed(notes) }
        do {
            return try engine.write { tx in try Self.run(body, in: tx, carryingNotesTo: notes) }
        } catch {
            health.note(error)
            throw error
        }
    }

    /// Queues `body` for the writer and returns at once; `completion` runs after the commit
    /// (at once, with `UnwritableDatabase`, once the database was found unable to take writes).
    func writeAsync<T: Sendable>(_ body: @escaping @Sendable (any Transaction) throws -> T,
                                 completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        if let reason = health.unwritable {
            completion(.failure(UnwritableDatabase(reason: reason)))
            return
        }
        let notes = TransactionNotes()
        engine.writeAsync({ tx in try Self.run(body, in: tx, carryingNotesTo: notes) }) { [self] result in
            committed(notes)
            if case .failure(let error) = result { health.note(error) }
            completion(result)
        }
    }

    /// A request failed with `error`, which its handler may have caught inside the write (an
    /// idempotent request's savepoint): if it says the database cannot take writes, the
    /// server stops taking them.
    func noteFailure(_ error: any Error) { health.note(error) }

    /// After a write's commit (or its failure) and before anyone hears of it: the caches'
    /// generations move, and the other servers are told of changed principals.
    private func committed(_ notes: TransactionNotes) {
        writeGeneration.add(1, ordering: .releasing)
        if notes.changedPrincipals {
            principalGeneration.add(1, ordering: .releasing)
            principalChanges.signal()
            engine.announce(.principalsChanged)
        }
    }

    /// Runs a write's body and copies what its transaction noted into `notes`, which outlive
    /// the transaction, for `committed`.
    private static func run<T>(_ body: (any Transaction) throws -> T, in tx: any Transaction,
                               carryingNotesTo notes: TransactionNotes) throws -> T {
        // Noted even when `body` throws: a change inside a savepoint that then failed is
        // rolled back, and a needless bump costs one query per cached session.
        defer { if tx.changedPrincipals { notes.notePrincipalsChanged() } }
        return try body(tx)
    }

    /// Runs `body` in one read transaction.
    func read<T>(_ body: (any Transaction) throws -> T) throws -> T {
        try engine.read(body)
    }

    func probeReadable() throws { try engine.probeReadable() }
    func probeWritable() throws {
        try health.refuseIfUnwritable()
        try engine.probeWritable()
    }

    /// The end of a stop's grace period: writes still queued are refused (503, not applied),
    /// and so is every later one.
    func refuseQueuedWrites() { engine.refuseQueuedWrites() }

    /// After an erase: no older copy of what it removed stays in the journal (SQLite's WAL).
    func truncateJournal() throws { try engine.truncateJournal() }
    func truncateJournalNow() throws -> Bool { try engine.truncateJournalNow() }
    func stopWaitingForLocks() { engine.stopWaitingForLocks() }

    /// Finishes queued writes and closes every connection.
    public func close() { engine.close() }

    /// The writer's group-commit counts so far (benchmarks report jobs per commit).
    public var writerStatistics: GroupCommitStatistics { engine.writerStatistics }

    /// Tells the other servers sharing this database, after a commit (see `StoreAnnouncement`).
    func announce(_ announcement: StoreAnnouncement) { engine.announce(announcement) }

    /// Hears the other servers' announcements; a commit of theirs moves `writeGeneration`
    /// (so a cached answer is not reused) before `handler` hears of it.
    func startListening(_ handler: @escaping @Sendable (StoreAnnouncement) -> Void, log: @escaping @Sendable (String) -> Void) {
        engine.startListening({ [self] announcement in
            switch announcement {
            case .committed: writeGeneration.add(1, ordering: .releasing)
            // Ended sessions and changed rights are changed principals too; the listener
            // also says both when it (re)connects, having perhaps missed announcements.
            case .principalsChanged, .sessionsEnded, .rightsChanged:
                principalGeneration.add(1, ordering: .releasing)
                principalChanges.signal()
            }
            handler(announcement)
        }, log: log)
    }

    /// The generation a cached answer may be keyed on, or nil when none may be reused: another
    /// server's commits cannot be heard right now.
    var cacheGeneration: UInt64? {
        engine.hearsOtherServers ? writeGeneration.load(ordering: .acquiring) : nil
    }

    /// The generation a cached session may be keyed on, or nil when none may be used (see
    /// `cacheGeneration`). Read it before the transaction that reads the session begins.
    var sessionCacheGeneration: UInt64? {
        engine.hearsOtherServers ? principalGeneration.load(ordering: .acquiring) : nil
    }
}
