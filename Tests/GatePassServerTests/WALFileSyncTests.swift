import Foundation
import GatePassCore
@testable import GatePassServer
import SQLite
import Testing

/// `synchronous = FULL` kept by the writer's sync stage (issue 15): the writer connection
/// commits with NORMAL and `WALFileSync` flushes the WAL before any caller is told.
@Suite struct WALFileSyncTests {
    @Test func aDurableStoreSyncsTheWALBeforeAWriteReturns() throws {
        try withTemporaryDirectory { directory in
            let store = try ServerDatabase(path: directory + "/d.db", synchronous: "FULL")
            defer { store.close() }
            let engine = try #require(store.engine as? SQLiteEngine)
            let walSync = try #require(engine.walSync)
            #expect(walSync.walPath == directory + "/d.db-wal")
            let before = walSync.completedSyncs
            let mode = try store.writeConnection { db in
                try db.execute("CREATE TABLE IF NOT EXISTS probe (n INTEGER)")
                try db.execute("INSERT INTO probe VALUES (1)")
                return try db.scalarInt("PRAGMA synchronous")
            }
            #expect(mode == 1) // NORMAL: SQLite does not sync the commit itself
            #expect(walSync.completedSyncs > before)
        }
    }

    @Test func otherModesAreSQLitesOwn() throws {
        for mode in ["NORMAL", "EXTRA"] {
            try withTemporaryDirectory { directory in
                let store = try ServerDatabase(path: directory + "/d.db", synchronous: mode)
                defer { store.close() }
                let engine = try #require(store.engine as? SQLiteEngine)
                #expect(engine.walSync == nil)
                let level = try store.writeConnection { db in try db.scalarInt("PRAGMA synchronous") }
                #expect(level == (mode == "NORMAL" ? 1 : 3))
            }
        }
    }

    /// A WAL that is not there (nothing committed in WAL mode, or a folder that went away) is a
    /// clear I/O error, never a silent success.
    @Test func aMissingWALIsAnError() throws {
        try withTemporaryDirectory { directory in
            let sync = WALFileSync(databasePath: directory + "/none.db")
            #expect { try sync.sync() } throws: { error in
                guard let error = error as? SQLiteError else { return false }
                return error.code == 10 && error.message.contains("none.db-wal")
            }
            #expect(sync.completedSyncs == 0)
        }
    }

    /// When every connection closed, SQLite deletes the WAL and the next one makes a new
    /// file: the sync follows the new file (checked by its inode), not the deleted one.
    @Test func aReplacedWALIsFollowed() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/r.db"
            let sync = WALFileSync(databasePath: path)
            func commitOnce(_ value: Int) throws {
                let connection = try Connection(path: path)
                try connection.executeScript("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; CREATE TABLE IF NOT EXISTS t (n INTEGER);")
                try connection.execute("INSERT INTO t VALUES (?)", [value])
                try sync.sync()
                let inode = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.systemFileNumber] as? NSNumber)
                #expect(sync.syncedInode == inode.uintValue)
                connection.close()
            }
            try commitOnce(1)
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
            try commitOnce(2)
            #expect(sync.completedSyncs == 2)
        }
    }
}

/// Checkpoints off the writer (issue 15): the writer's commit hook wakes the checkpointing
/// thread, and copies what that thread left itself only when the WAL must start again.
@Suite struct WALCheckpointerTests {
    /// A writer in WAL mode with `synchronous = NORMAL` (as the server's writer commits) and
    /// the table `writePages` fills; `pragmas` are run before the table is made.
    private func walWriter(at path: String, pragmas: String = "") throws -> Connection {
        let writer = try Connection(path: path)
        try writer.executeScript("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \(pragmas) CREATE TABLE t (n INTEGER, b BLOB);")
        return writer
    }

    private func writePages(_ connection: Connection, rows: Int, from first: Int = 0) throws {
        for index in first..<(first + rows) {
            try connection.execute("INSERT INTO t VALUES (?, randomblob(8000))", [index])
        }
    }

    @Test func theCheckpointerCheckpointsWhenTheWALPassesItsThreshold() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/c.db"
            let writer = try walWriter(at: path)
            let checkpointer = try WALCheckpointer(path: path, synchronous: "NORMAL", threshold: 100)
            checkpointer.takeCheckpoints(from: writer)
            let before = checkpointer.completedCheckpoints
            try writePages(writer, rows: 60) // two pages a row: past 100 pages
            #expect(checkpointer.waitForCheckpoint(after: before, timeout: 60))
            // The checkpoint copied the rows into the database file itself.
            let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)
            #expect(size.intValue > 40 * 4096) // an empty table is two pages
            checkpointer.stop()
            writer.close()
        }
    }

    /// The hook replaces SQLite's automatic checkpoint: with the checkpointer stopped, the WAL
    /// grows past SQLite's 1,000 pages and the writer has not checkpointed it.
    @Test func theWriterNoLongerCheckpointsByItself() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/n.db"
            let writer = try walWriter(at: path)
            let checkpointer = try WALCheckpointer(path: path, synchronous: "NORMAL")
            checkpointer.takeCheckpoints(from: writer)
            checkpointer.stop()
            try writePages(writer, rows: 700) // 1,400 pages
            let wal = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber)
            #expect(wal.intValue > 1_300 * 4096)
            let database = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)
            #expect(database.intValue < 100 * 4096)
            writer.close()
        }
    }

    private func walPages(_ path: String) throws -> Int {
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber)
        return (size.intValue - 32) / (4096 + 24)
    }

    /// A WAL starts again only after a checkpoint copied every frame, which a checkpoint
    /// thread racing a writer that never pauses cannot do: the WAL grew without bound (295 MB
    /// under the bench's check-ins). Here the thread never runs (its threshold is never
    /// reached), the worst case: the writer's own catch-up at the limit keeps the WAL near it.
    @Test func theWALStaysBoundedWhenTheCheckpointThreadNeverCatchesUp() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/b.db"
            let writer = try walWriter(at: path)
            let checkpointer = try WALCheckpointer(path: path, synchronous: "NORMAL", threshold: .max, restartLimit: 200)
            checkpointer.takeCheckpoints(from: writer)
            try writePages(writer, rows: 700) // 1,400 pages of rows, one commit a row
            #expect(checkpointer.completedCheckpoints == 0)
            #expect(checkpointer.writerCatchUps >= 6)
            #expect(try walPages(path) <= 200 + 4)
            #expect(try writer.scalarInt("SELECT count(*) FROM t") == 700)
            checkpointer.stop()
            writer.close()
        }
    }

    /// A reader on old frames holds the WAL's start back while it reads, and only then: the
    /// writer's catch-up cannot copy past the reader's snapshot, so the WAL grows past the
    /// limit; once the reader ends, the next commits copy the rest and start the WAL again
    /// (with `journal_size_limit` 0 the restarted file is cut back, which shows the restart).
    @Test func aReaderHoldsTheWALBackOnlyWhileItReads() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/r.db"
            let writer = try walWriter(at: path, pragmas: "PRAGMA journal_size_limit = 0;")
            let checkpointer = try WALCheckpointer(path: path, synchronous: "NORMAL", threshold: .max, restartLimit: 200)
            checkpointer.takeCheckpoints(from: writer)
            try writePages(writer, rows: 20)
            let reader = try Connection(path: path)
            try reader.executeScript("BEGIN")
            #expect(try reader.scalarInt("SELECT count(*) FROM t") == 20) // its snapshot is now fixed
            try writePages(writer, rows: 300, from: 20) // 600 pages past the reader's snapshot
            #expect(try walPages(path) > 500)
            try reader.executeScript("COMMIT")
            try writePages(writer, rows: 5, from: 320)
            #expect(try walPages(path) <= 200)
            #expect(try writer.scalarInt("SELECT count(*) FROM t") == 325)
            #expect(try reader.scalarInt("SELECT count(*) FROM t") == 325)
            reader.close()
            checkpointer.stop()
            writer.close()
        }
    }

    /// After an erase the WAL is emptied by a TRUNCATE checkpoint that never waits: with a
    /// reader on an older snapshot it answers busy at once (the writer is not held back
    /// meanwhile); once the reader ends, it copies everything and empties the file.
    @Test func aTruncationNeverWaitsForAReader() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/t.db"
            let writer = try walWriter(at: path)
            let checkpointer = try WALCheckpointer(path: path, synchronous: "NORMAL", threshold: .max, restartLimit: .max)
            checkpointer.takeCheckpoints(from: writer)
            try writePages(writer, rows: 10)
            let reader = try Connection(path: path, readOnly: true)
            try reader.executeScript("BEGIN")
            #expect(try reader.scalarInt("SELECT count(*) FROM t") == 10)
            try writePages(writer, rows: 10, from: 10)
            guard case .busy = checkpointer.truncate() else {
                Issue.record("a truncation past a reader's snapshot must answer busy")
                return
            }
            try writePages(writer, rows: 1, from: 20) // the writer is not held back
            #expect(try walPages(path) > 20)
            try reader.executeScript("COMMIT")
            reader.close()
            guard case .truncated = checkpointer.truncate() else {
                Issue.record("with no reader the truncation must succeed")
                return
            }
            #expect(try walPages(path) == 0)
            #expect(try writer.scalarInt("SELECT count(*) FROM t") == 21)
            checkpointer.stop()
            guard case .stopped = checkpointer.truncate() else {
                Issue.record("a stopped checkpointer answers stopped")
                return
            }
            writer.close()
        }
    }

    /// A database file made immutable while in use still takes the writer's commits into the
    /// WAL; the checkpoint that cannot copy them into the file is reported, not swallowed.
    @Test func aCheckpointThatCannotWriteTheFileIsReported() throws {
        try withTemporaryDirectory { directory in
            try #require(HealthAndIntegrityTests.immutableFlagWorks(in: directory), "chattr +i must work here (root on ext4)")
            let path = directory + "/i.db"
            let writer = try walWriter(at: path)
            let failures = Locked<[SQLiteError]>([])
            let reported = ChangeSignal()
            let checkpointer = try WALCheckpointer(path: path, synchronous: "NORMAL", threshold: 100) { failure in
                failures.withLock { $0.append(failure) }
                reported.signal()
            }
            checkpointer.takeCheckpoints(from: writer)
            #expect(HealthAndIntegrityTests.chattr("+i", path))
            defer { HealthAndIntegrityTests.chattr("-i", path) }
            try writePages(writer, rows: 60) // past 100 pages, all into the WAL
            #expect(reported.wait(timeout: 60, until: { !failures.withLock { $0 }.isEmpty }))
            let first = try #require(failures.withLock { $0 }.first)
            #expect(first.isUnwritable && first.message.contains(path), "\(first)")
            HealthAndIntegrityTests.chattr("-i", path)
            checkpointer.stop()
            writer.close()
        }
    }

    @Test func aServerStoreHasItsCheckpointer() throws {
        try withTemporaryDirectory { directory in
            let store = try ServerDatabase(path: directory + "/s.db", synchronous: "FULL")
            let engine = try #require(store.engine as? SQLiteEngine)
            let before = engine.checkpointer.completedCheckpoints
            for index in 0..<8 {
                _ = try store.writeConnection { db in
                    try db.execute("CREATE TABLE IF NOT EXISTS filler (n INTEGER, b BLOB)")
                    for row in 0..<100 { try db.execute("INSERT INTO filler VALUES (?, randomblob(8000))", [index * 100 + row]) }
                }
            }
            #expect(engine.checkpointer.waitForCheckpoint(after: before, timeout: 60))
            store.close()
        }
    }
}
