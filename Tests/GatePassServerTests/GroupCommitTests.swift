import Foundation
import GatePassCore
import SQLite
import Synchronization
import Testing

@Suite struct GroupCommitTests {
    struct Refused: Error {}

    /// Jobs batched into one transaction stay independent: a job that throws undoes only its
    /// own changes, every other job's changes commit, and each caller learns its own outcome.
    @Test func failingJobUndoesOnlyItself() throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory + "/g.db")
            try connection.executeScript("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER PRIMARY KEY);")
            let writer = GroupCommitWriter(connection: connection)
            let outcomes = DispatchQueue(label: "outcomes")
            nonisolated(unsafe) var succeeded: [Int] = []
            nonisolated(unsafe) var refused: [Int] = []
            DispatchQueue.concurrentPerform(iterations: 60) { index in
                do {
                    let stored: Int = try writer.write { db in
                        try db.execute("INSERT INTO t (n) VALUES (?)", [index])
                        if index % 10 == 3 { throw Refused() }
                        return index
                    }
                    outcomes.sync { succeeded.append(stored) }
                } catch is Refused {
                    outcomes.sync { refused.append(index) }
                } catch {
                    Issue.record("unexpected \(error)")
                }
            }
            #expect(succeeded.sorted() == (0..<60).filter { $0 % 10 != 3 })
            #expect(refused.sorted() == (0..<60).filter { $0 % 10 == 3 })
            #expect(writer.statistics.jobs == 60)
            #expect(writer.statistics.commits >= 1 && writer.statistics.commits <= 60)
            writer.close()
            let reader = try Connection(path: directory + "/g.db")
            let rows = try reader.query("SELECT n FROM t ORDER BY n") { try $0.int(0) }
            #expect(rows == (0..<60).filter { $0 % 10 != 3 })
        }
    }

    /// After close, the WAL has been checkpointed into the database file and new writes are refused.
    @Test func closeCheckpointsAndRefusesNewWrites() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/g.db"
            let connection = try Connection(path: path)
            try connection.executeScript("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER);")
            let writer = GroupCommitWriter(connection: connection)
            _ = try writer.write { db in try db.execute("INSERT INTO t VALUES (1)") }
            writer.close()
            let walSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
            #expect(walSize == 0)
            #expect(throws: SQLiteError.self) { try writer.write { db in try db.execute("INSERT INTO t VALUES (2)") } }
        }
    }

    @Test func migrationsRunOnceInOrder() throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory + "/m.db")
            let migrations = [Migration("0001-a", "CREATE TABLE a (x INTEGER);"),
                              Migration("0002-b", "CREATE TABLE b (y INTEGER);")]
            #expect(try Migrator.migrate(connection, migrations) == ["0001-a", "0002-b"])
            #expect(try Migrator.migrate(connection, migrations) == [])
            let more = migrations + [Migration("0003-c", "ALTER TABLE a ADD COLUMN z TEXT;")]
            #expect(try Migrator.migrate(connection, more) == ["0003-c"])
            // A failing migration leaves nothing behind and is not recorded.
            let broken = more + [Migration("0004-broken", "CREATE TABLE c (q INTEGER); THIS IS NOT SQL;")]
            #expect(throws: SQLiteError.self) { try Migrator.migrate(connection, broken) }
            #expect(try connection.scalarInt("SELECT COUNT(*) FROM sqlite_master WHERE name = 'c'") == 0)
            #expect(try connection.scalarInt("SELECT COUNT(*) FROM schema_migrations") == 3)
        }
    }
}

/// The sync stage (issue 15): with a `syncer`, commits are made durable on a thread of their
/// own, and nobody is told of a commit before the sync that covers it has returned.
@Suite struct GroupCommitSyncStageTests {
    struct DiskFailed: Error {}

    /// A batch waits for its sync, the writer does not: while the first sync is held, a second
    /// job runs and commits; the first job's caller is told only after the held sync returns,
    /// and a reader's `waitUntilDurable` returns only once the commit it could see is synced.
    @Test func callersAreToldAfterTheirSyncWhileTheWriterGoesOn() throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory + "/s.db")
            try connection.executeScript("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; CREATE TABLE t (n INTEGER);")
            let syncEntered = DispatchSemaphore(value: 0)
            let syncMayReturn = DispatchSemaphore(value: 0)
            let syncsReturned = Atomic<Int>(0)
            let writer = GroupCommitWriter(connection: connection, syncer: {
                syncEntered.signal()
                syncMayReturn.wait()
                syncsReturned.add(1, ordering: .sequentiallyConsistent)
            })
            let firstTold = DispatchSemaphore(value: 0)
            let syncsBeforeFirstWasTold = Atomic<Int>(-1)
            writer.submit({ db in try db.execute("INSERT INTO t VALUES (1)") }) { result in
                #expect((try? result.get()) != nil)
                syncsBeforeFirstWasTold.store(syncsReturned.load(ordering: .sequentiallyConsistent), ordering: .sequentiallyConsistent)
                firstTold.signal()
            }
            #expect(syncEntered.wait(timeout: .now() + 60) == .success)
            // The first sync is held; the writer still runs and commits the next batch.
            let secondRan = DispatchSemaphore(value: 0)
            let secondTold = DispatchSemaphore(value: 0)
            writer.submit({ db in
                try db.execute("INSERT INTO t VALUES (2)")
                secondRan.signal()
            }) { result in
                #expect((try? result.get()) != nil)
                secondTold.signal()
            }
            #expect(secondRan.wait(timeout: .now() + 60) == .success)
            #expect(syncsBeforeFirstWasTold.load(ordering: .sequentiallyConsistent) == -1)
            syncMayReturn.signal()
            #expect(firstTold.wait(timeout: .now() + 60) == .success)
            #expect(syncsBeforeFirstWasTold.load(ordering: .sequentiallyConsistent) >= 1)
            // The second commit needs a sync of its own, begun after the first returned; a
            // reader arriving while it is held waits for it.
            #expect(syncEntered.wait(timeout: .now() + 60) == .success)
            let readerDone = DispatchSemaphore(value: 0)
            let syncsWhenReaderReturned = Atomic<Int>(-1)
            Thread.detachNewThread {
                #expect((try? writer.waitUntilDurable()) != nil)
                syncsWhenReaderReturned.store(syncsReturned.load(ordering: .sequentiallyConsistent), ordering: .sequentiallyConsistent)
                readerDone.signal()
            }
            syncMayReturn.signal()
            #expect(secondTold.wait(timeout: .now() + 60) == .success)
            #expect(readerDone.wait(timeout: .now() + 60) == .success)
            #expect(syncsWhenReaderReturned.load(ordering: .sequentiallyConsistent) == 2)
            writer.close()
            let reader = try Connection(path: directory + "/s.db")
            #expect(try reader.query("SELECT n FROM t ORDER BY n") { try $0.int(0) } == [1, 2])
        }
    }

    /// A sync that fails fails the jobs it was to make durable (their callers must not be told
    /// they are safe), and everything after it: a failed fsync may have dropped the pages it
    /// could not write while the next one reports success, and the WAL's later frames are
    /// chained to the lost ones. So a later write fails before it runs, even when the disk
    /// answers again, and a reader waiting for durability fails instead of answering with
    /// what it saw (it used to go on as if the failed sync had made it durable).
    @Test func aFailedSyncFailsItsJobsAndEverythingAfter() throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory + "/f.db")
            try connection.executeScript("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; CREATE TABLE t (n INTEGER);")
            let failNext = Atomic<Bool>(true)
            let syncs = Atomic<Int>(0)
            let writer = GroupCommitWriter(connection: connection, syncer: {
                syncs.add(1, ordering: .sequentiallyConsistent)
                if failNext.exchange(false, ordering: .sequentiallyConsistent) { throw DiskFailed() }
            })
            #expect(throws: DiskFailed.self) { try writer.write { db in try db.execute("INSERT INTO t VALUES (1)") } }
            #expect(throws: DiskFailed.self) { try writer.waitUntilDurable() }
            let secondRan = Atomic<Bool>(false)
            #expect(throws: DiskFailed.self) {
                try writer.write { db in
                    secondRan.store(true, ordering: .sequentiallyConsistent)
                    try db.execute("INSERT INTO t VALUES (2)")
                }
            }
            let (ran, syncCount) = (secondRan.load(ordering: .sequentiallyConsistent), syncs.load(ordering: .sequentiallyConsistent))
            #expect(!ran)
            #expect(syncCount == 1)
            writer.close()
        }
    }

    /// A job queued before a sync failed, and taken after, never runs: it fails with the
    /// sync's error and writes nothing. A batch already running when the sync failed is
    /// rolled back instead of committed. Before, both committed (their callers were then told
    /// the sync's error, so a request answered 500 could still be in the file after a restart).
    @Test func jobsQueuedWhenASyncFailsNeverRunAndNothingCommitsAfterIt() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/q.db"
            let connection = try Connection(path: path)
            try connection.executeScript("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; CREATE TABLE t (n INTEGER);")
            let syncStarted = DispatchSemaphore(value: 0)
            let failTheSync = DispatchSemaphore(value: 0)
            let writer = GroupCommitWriter(connection: connection, syncer: {
                syncStarted.signal()
                failTheSync.wait()
                throw DiskFailed()
            })
            let outcomes = Locked<[Int: String]>([:])
            let told = DispatchGroup()
            func submit(_ value: Int, _ body: @escaping @Sendable (Connection) throws -> Void) {
                told.enter()
                writer.submit({ db in try body(db) }) { result in
                    let outcome = switch result {
                    case .success: "committed"
                    case .failure(let error): "\(type(of: error))"
                    }
                    outcomes.withLock { $0[value] = outcome }
                    told.leave()
                }
            }
            // 1 commits; its sync is held, then fails.
            submit(1) { db in try db.execute("INSERT INTO t VALUES (1)") }
            #expect(syncStarted.wait(timeout: .now() + 60) == .success)
            // 2 is running on the writer while the sync fails; 3 waits in the queue behind it.
            let secondRunning = DispatchSemaphore(value: 0)
            let finishSecond = DispatchSemaphore(value: 0)
            let thirdRan = Atomic<Bool>(false)
            submit(2) { db in
                secondRunning.signal()
                finishSecond.wait()
                try db.execute("INSERT INTO t VALUES (2)")
            }
            #expect(secondRunning.wait(timeout: .now() + 60) == .success)
            submit(3) { db in
                thirdRan.store(true, ordering: .sequentiallyConsistent)
                try db.execute("INSERT INTO t VALUES (3)")
            }
            failTheSync.signal()
            #expect(throws: DiskFailed.self) { try writer.waitUntilDurable() }
            finishSecond.signal()
            #expect(told.wait(timeout: .now() + 60) == .success)
            writer.close()
            let thirdDidRun = thirdRan.load(ordering: .sequentiallyConsistent)
            #expect(!thirdDidRun)
            #expect(outcomes.withLock { $0 } == [1: "DiskFailed", 2: "DiskFailed", 3: "DiskFailed"])
            let reader = try Connection(path: path, readOnly: true)
            defer { reader.close() }
            #expect(try reader.scalarInt("SELECT COUNT(*) FROM t WHERE n != 1") == 0)
        }
    }

    /// Readers waiting for durability share the stage's condition with the sync thread: a
    /// new batch must wake the sync thread, not only a reader (a lost wake-up once hung the
    /// bench's seeding, with readers, writer and sync thread all waiting).
    @Test func readersWaitingNeverStallTheSyncStage() throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory + "/w.db")
            try connection.executeScript("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; CREATE TABLE t (n INTEGER);")
            let writer = GroupCommitWriter(connection: connection, syncer: {})
            let readersDone = DispatchGroup()
            let stop = Atomic<Bool>(false)
            for _ in 0..<8 {
                readersDone.enter()
                Thread.detachNewThread {
                    while !stop.load(ordering: .sequentiallyConsistent) { try? writer.waitUntilDurable() }
                    readersDone.leave()
                }
            }
            // One write at a time, each waiting for its answer (as a seeding client does): a
            // wake-up taken by a reader would leave the write's batch unsynced for ever.
            let written = DispatchGroup()
            written.enter()
            Thread.detachNewThread {
                for index in 0..<500 {
                    _ = try? writer.write { db in try db.execute("INSERT INTO t VALUES (?)", [index]) }
                }
                written.leave()
            }
            #expect(written.wait(timeout: .now() + 120) == .success)
            stop.store(true, ordering: .sequentiallyConsistent)
            #expect(readersDone.wait(timeout: .now() + 120) == .success)
            writer.close()
        }
    }

    /// Close and refuse wait for the sync stage: every caller is told before they return.
    @Test func closeWaitsForTheSyncStage() throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory + "/c.db")
            try connection.executeScript("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; CREATE TABLE t (n INTEGER);")
            let syncs = Atomic<Int>(0)
            let writer = GroupCommitWriter(connection: connection, syncer: { syncs.add(1, ordering: .sequentiallyConsistent) })
            let told = Atomic<Int>(0)
            for index in 0..<50 {
                writer.submit({ db in try db.execute("INSERT INTO t VALUES (?)", [index]) }) { result in
                    if (try? result.get()) != nil { told.add(1, ordering: .sequentiallyConsistent) }
                }
            }
            writer.refuseQueued()
            let committed = try #require(try Connection(path: directory + "/c.db").scalarInt("SELECT COUNT(*) FROM t"))
            #expect(Int64(told.load(ordering: .sequentiallyConsistent)) == committed)
            #expect(committed == 0 || syncs.load(ordering: .sequentiallyConsistent) >= 1)
            writer.close()
        }
    }
}
