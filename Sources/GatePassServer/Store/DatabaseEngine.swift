import SQLBinding
/// A database under `ServerDatabase`: how transactions are run on it. SQLite is one
/// (Store/SQLite); another database is another conformance, and nothing above the store
/// changes.
protocol DatabaseEngine: Sendable {
    /// Runs `body` in a read transaction.
    func read<T>(_ body: (any Transaction) throws -> T) throws -> T
    /// Runs `body` in a durable write transaction and returns after its commit.
    func write<T: Sendable>(_ body: @escaping @Sendable (any Transaction) throws -> T) throws -> T
    /// Queues `body` for a durable write transaction and returns at once; `completion` runs
    /// after the commit (or the failure).
    func writeAsync<T: Sendable>(_ body: @escaping @Sendable (any Transaction) throws -> T,
                                 completion: @escaping @Sendable (Result<T, any Error>) -> Void)
    /// Throws unless a fresh connection can read the database's schema.
    func probeReadable() throws
    /// Throws unless the database can be written now.
    func probeWritable() throws
    /// Refuses the writes still queued and every later one (a stop's grace period is over).
    func refuseQueuedWrites()
    /// Leaves no older copy of changed data in the engine's journal (after an erase).
    func truncateJournal() throws
    /// One attempt to empty the journal that waits for no lock and schedules no retry: true
    /// when it is empty (a command that is about to exit retries it itself).
    func truncateJournalNow() throws -> Bool
    /// From now on the writer waits for no other connection's lock, its close's checkpoint
    /// included: a command beside a running server must not hold the server's writes up.
    func stopWaitingForLocks()
    /// Finishes work in progress and closes every connection.
    func close()
    /// The group-commit writer's counts so far.
    var writerStatistics: GroupCommitStatistics { get }

    /// Tells the other servers sharing this database (see `StoreAnnouncement`).
    func announce(_ announcement: StoreAnnouncement)
    /// Hears the other servers' announcements until `close`; `handler` runs on a thread of
    /// the engine's. Where there are no other servers (SQLite) it is never called.
    func startListening(_ handler: @escaping @Sendable (StoreAnnouncement) -> Void, log: @escaping @Sendable (String) -> Void)
    /// False while announcements that other servers may be sending cannot be heard (the
    /// listener's connection is down): then nothing may be answered from a cache.
    var hearsOtherServers: Bool { get }
    /// Runs `body` unless another server is running `job` now (see `PeriodicJob`); whether it ran.
    func runExclusively(_ job: PeriodicJob, _ body: () throws -> Void) rethrows -> Bool
}
