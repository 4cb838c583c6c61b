import Foundation
import SQLite
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
