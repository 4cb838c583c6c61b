import Foundation
import Synchronization

/// What a database connection must do to be the one writing connection of a
/// `GroupCommitWriter`: SQLite's (Sources/SQLite) and the PostgreSQL store's writer (which
/// takes the cross-server write lock in `beginBatch`).
public protocol GroupCommitConnection: AnyObject {
    /// Opens the batch's transaction.
    func beginBatch() throws
    /// Commits it; durable when this returns.
    func commitBatch() throws
    /// Undoes it (after a failed commit); reports nothing of its own.
    func rollbackBatch()
    /// Runs `body` in a savepoint of the open transaction: a throw undoes only `body`.
    func inSavepoint<T>(_ body: () throws -> T) throws -> T
    /// True between a BEGIN and its COMMIT or ROLLBACK.
    var isInTransaction: Bool { get }
    /// Runs `body` with the connection lent to the calling thread (SQLite checks it in debug builds).
    func lent<T>(_ body: () throws -> T) rethrows -> T
    /// After a failed batch: makes the connection usable again if it broke (a lost network
    /// connection is reconnected); a connection that cannot break does nothing.
    func recoverAfterFailure()
    /// Closes the connection once the writer has stopped (SQLite checkpoints its WAL first).
    func closeAfterWriting()
    /// What a job refused at a stop fails with.
    static var writerClosing: any Error { get }
    /// What a job fails with when it left a transaction open.
    static var jobLeftTransactionOpen: any Error { get }
}

/// The one writing connection, shared by all request threads through group commit.
///
/// Callers submit write jobs; a single writer thread takes every job waiting, runs them in
/// one transaction (each in its own savepoint, so a failing job undoes only itself), commits
/// once, and only then releases the callers. With durable commits (SQLite's `synchronous =
/// FULL`, PostgreSQL's defaults) every commit reaches the disk before anyone is told it
/// happened, and concurrent commits share one fsync — the known way to keep durable writes fast.
///
/// With a `syncer` (SQLite's server engine, issue 15) the fsync is not inside the commit: the
/// connection commits without syncing, the batch goes to a second thread, which makes every
/// commit so far durable with one `syncer()` call and only then releases its callers, while
/// the writer thread already runs the next batch. The writer never waits for the disk, and a
/// caller is still told nothing before its commit is on the disk. Readers can see a commit
/// before its sync; `waitUntilDurable` is what makes their answers wait for it too.
public final class GroupCommitWriter<Connection: GroupCommitConnection>: @unchecked Sendable {
    // @unchecked: `queue` and `stopping` are guarded by `condition`; `connection` (not
    // Sendable) is used only on the writer thread, which holds it lent for its whole life
    // (checked in debug builds), and by `close` after that thread has ended.
    private let connection: Connection
    private let condition = NSCondition()
    private var queue: [Job] = []
    private var stopping = false
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    private let maximumBatch: Int
    private let closeOnce = Mutex<Bool>(false)
    /// Tracks the callers' release of each batch (on another thread), for `refuseQueued`.
    private let callersReleased = DispatchGroup()
    /// Makes every commit returned so far durable; nil: the connection's commit already is.
    private let syncer: (@Sendable () throws -> Void)?
    /// The sync stage (with a `syncer`): batches committed and not yet synced, guarded by
    /// `syncCondition`, with the sequence number of their commit.
    private let syncCondition = NSCondition()
    private var awaitingSync: [(sequence: Int, jobs: [Job])] = []
    private var writerEnded = false
    private var syncStageEnded = false
    private var durableSequence = 0
    /// The first sync that failed, for good: after a failed fsync Linux may have dropped the
    /// pages it could not write and report the next fsync as a success, and SQLite's later WAL
    /// frames are chained to the lost ones, so no later commit can be called durable either.
    /// Every later write and every read waiting for durability fails with it until a restart
    /// (PostgreSQL stops for the same reason).
    private var syncFailure: (any Error)?
    private let syncThreadFinished = DispatchSemaphore(value: 0)
    /// Moves up by one before every COMMIT starts, so a commit a reader can see always has
    /// its number here already (see `waitUntilDurable`).
    private let startedSequence = Atomic<Int>(0)

    private final class Job: @unchecked Sendable {
        // `failure` is written by the writer thread before `finish` runs.
        let body: (Connection) throws -> Void
        /// Run on its own between transactions rather than inside the batch's transaction.
        let outsideTransaction: Bool
        var failure: (any Error)?
        let finish: @Sendable ((any Error)?) -> Void
        init(body: @escaping (Connection) throws -> Void, outsideTransaction: Bool = false,
             finish: @escaping @Sendable ((any Error)?) -> Void) {
            self.body = body
            self.outsideTransaction = outsideTransaction
            self.finish = finish
        }
    }

    private let committedBatches = Atomic<Int>(0)
    private let committedJobs = Atomic<Int>(0)

    /// How many transactions the writer has committed and how many jobs they held, so far:
    /// what benchmarks report as the group-commit batch size. Safe from any thread.
    public var statistics: GroupCommitStatistics {
        GroupCommitStatistics(commits: committedBatches.load(ordering: .relaxed), jobs: committedJobs.load(ordering: .relaxed))
    }

    /// - Parameter syncer: when given, `connection`'s commits are not durable by themselves and
    ///   `syncer` makes every commit returned so far durable (SQLite's WAL `fdatasync`); it runs
    ///   on a thread of its own, overlapping the next batch. A throw fails every job of the
    ///   batches it was to make durable (their changes may or may not survive a power cut).
    public init(connection: Connection, maximumBatch: Int = 256, threadName: String = "sqlite-writer",
                syncer: (@Sendable () throws -> Void)? = nil) {
        self.connection = connection
        self.maximumBatch = maximumBatch
        self.syncer = syncer
        let thread = Thread { [unowned self] in self.run() }
        thread.name = threadName // Linux keeps at most 15 characters
        self.thread = thread
        thread.start()
        if let syncer {
            let syncThread = Thread { [unowned self] in self.runSyncs(syncer) }
            syncThread.name = "sqlite-sync"
            syncThread.start()
        } else {
            syncThreadFinished.signal()
        }
    }

    /// Runs `body` in a write transaction and returns after its commit is durable.
    /// Throws what `body` threw (its changes undone), or the commit's error.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<T, any Error>?>(nil)
        submit(body) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }

    /// Queues `body` and returns at once; `completion` runs on the writer thread after the
    /// commit (or the failure), with what `body` returned or threw.
    public func submit<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T,
                                    completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        submit(body, outsideTransaction: false, completion: completion)
    }

    /// Runs `body` on the writer thread between two transactions, and returns what it returned.
    /// For what cannot run inside a transaction (some PRAGMAs) and for probes of the lock.
    public func outsideTransaction<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<T, any Error>?>(nil)
        submit(body, outsideTransaction: true) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }

    private func submit<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T, outsideTransaction: Bool,
                                     completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        let value = Mutex<T?>(nil)
        let job = Job(body: { connection in
            let result = try body(connection)
            value.withLock { $0 = result }
        }, outsideTransaction: outsideTransaction, finish: { failure in
            if let failure { completion(.failure(failure)) } else { completion(.success(value.withLock { $0! })) }
        })
        if let failure = knownSyncFailure {
            completion(.failure(failure))
            return
        }
        condition.lock()
        guard !stopping else {
            condition.unlock()
            completion(.failure(Connection.writerClosing))
            return
        }
        queue.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        connection.lent { runBatches() }
        syncCondition.lock()
        writerEnded = true
        syncCondition.broadcast()
        syncCondition.unlock()
        finished.signal()
    }

    /// The sync stage: takes every batch committed since the last sync, makes them durable
    /// with one `syncer()` and releases their callers; ends after the writer thread, once
    /// nothing is left to sync.
    private func runSyncs(_ syncer: @Sendable () throws -> Void) {
        while true {
            syncCondition.lock()
            while awaitingSync.isEmpty && !writerEnded { syncCondition.wait() }
            if awaitingSync.isEmpty {
                syncStageEnded = true
                syncCondition.broadcast()
                syncCondition.unlock()
                syncThreadFinished.signal()
                return
            }
            let batches = awaitingSync
            awaitingSync.removeAll()
            var failure = syncFailure
            syncCondition.unlock()
            let jobs = batches.flatMap(\.jobs)
            if failure == nil {
                do { try syncer() } catch { failure = error }
            }
            if let failure {
                for job in jobs where job.failure == nil { job.failure = failure }
            }
            syncCondition.lock()
            if syncFailure == nil { syncFailure = failure }
            durableSequence = batches.last!.sequence
            syncCondition.broadcast()
            syncCondition.unlock()
            release(jobs)
        }
    }

    /// Returns once every commit that had started when it was called is durable: a reader
    /// calls it after its read, so nothing it saw can be lost to a power cut after it answered.
    /// Without a `syncer` commits are durable before they can be seen, and it returns at once.
    /// - Throws: the failure of a sync, once one has failed (see `syncFailure`): what the
    ///   reader saw may not be on the disk.
    public func waitUntilDurable() throws {
        guard syncer != nil else { return }
        let target = startedSequence.load(ordering: .sequentiallyConsistent)
        syncCondition.lock()
        defer { syncCondition.unlock() }
        while durableSequence < target && !syncStageEnded && syncFailure == nil { syncCondition.wait() }
        if let syncFailure { throw syncFailure }
    }

    /// The failure of a sync, once one has failed; nil before (and always without a `syncer`).
    private var knownSyncFailure: (any Error)? {
        syncCondition.withLock { syncFailure }
    }

    /// Callers are released on another thread: what they do next (encode, log, resume their
    /// connection) must not hold up the next batch or sync, as every write waits for those.
    private func release(_ jobs: [Job]) {
        DispatchQueue.global(qos: .userInitiated).async(group: callersReleased) {
            for job in jobs { job.finish(job.failure) }
        }
    }

    private func runBatches() {
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            if queue.isEmpty && stopping {
                condition.unlock()
                return
            }
            let batch = Array(queue.prefix(maximumBatch))
            queue.removeFirst(batch.count)
            condition.unlock()
            commit(batch)
        }
    }

    private func commit(_ all: [Job]) {
        // After a failed sync nothing may commit (see `syncFailure`): jobs queued before the
        // failure was known fail here without running.
        if let failure = knownSyncFailure {
            for job in all { job.failure = failure }
            release(all)
            return
        }
        for job in all where job.outsideTransaction {
            do {
                try job.body(connection)
            } catch {
                job.failure = error
            }
            // Whatever the job did (a probe that failed after its BEGIN, say), the batch's own
            // transaction must start from a closed one.
            if connection.isInTransaction {
                connection.rollbackBatch()
                if job.failure == nil { job.failure = Connection.jobLeftTransactionOpen }
            }
        }
        let alone = all.filter(\.outsideTransaction)
        if !alone.isEmpty {
            DispatchQueue.global(qos: .userInitiated).async {
                for job in alone { job.finish(job.failure) }
            }
        }
        let batch = all.filter { !$0.outsideTransaction }
        guard !batch.isEmpty else { return }
        do {
            try connection.beginBatch()
        } catch {
            connection.rollbackBatch()
            connection.recoverAfterFailure()
            for job in batch { job.finish(error) }
            return
        }
        for job in batch {
            do {
                try connection.inSavepoint { try job.body(connection) }
            } catch {
                job.failure = error
            }
        }
        // A sync that failed while this batch ran: the batch is undone, not committed.
        if let failure = knownSyncFailure {
            connection.rollbackBatch()
            for job in batch { job.failure = failure }
            release(batch)
            return
        }
        let sequence = startedSequence.add(1, ordering: .sequentiallyConsistent).newValue
        do {
            try connection.commitBatch()
            committedBatches.add(1, ordering: .relaxed)
            committedJobs.add(batch.count, ordering: .relaxed)
        } catch {
            connection.rollbackBatch()
            connection.recoverAfterFailure()
            for job in batch where job.failure == nil { job.failure = error }
        }
        guard syncer != nil else {
            release(batch)
            return
        }
        // A failed batch goes through the sync stage too, so sequences become durable in order.
        // Broadcast, not signal: readers in `waitUntilDurable` wait on this condition too, and a
        // signal taken by one of them would leave the sync thread asleep with work to do.
        syncCondition.lock()
        awaitingSync.append((sequence, batch))
        syncCondition.broadcast()
        syncCondition.unlock()
    }

    /// Refuses every job still queued (they fail with `Connection.writerClosing`, nothing of
    /// them applied) and every later one, and returns once the batch being committed — if
    /// any — is committed and its callers have been told. Used when a stop's grace period is
    /// over: what was committed gets its real answer, what was not is refused.
    public func refuseQueued() {
        condition.lock()
        let refused = queue
        queue.removeAll()
        stopping = true
        condition.signal()
        condition.unlock()
        for job in refused { job.finish(Connection.writerClosing) }
        waitForWriterThread()
        callersReleased.wait()
    }

    /// Finishes the queued jobs, then closes the connection (SQLite checkpoints its WAL first).
    public func close() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
        waitForWriterThread()
        closeOnce.withLock { closed in
            guard !closed else { return }
            closed = true
            connection.closeAfterWriting()
        }
    }

    private func waitForWriterThread() {
        // Each thread signals its semaphore once; whoever waits passes the signal on.
        finished.wait()
        finished.signal()
        syncThreadFinished.wait()
        syncThreadFinished.signal()
    }
}

/// What `GroupCommitWriter.statistics` reports; `jobs / commits` is the mean batch size.
public struct GroupCommitStatistics: Sendable, Equatable {
    /// Transactions committed.
    public var commits: Int
    /// Jobs in those transactions (failed jobs included: they ran in a committed batch).
    public var jobs: Int
}
