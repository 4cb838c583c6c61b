import Foundation
import GatePassCore
import SQLite
import Testing

/// The SQLite wrapper's statements and rows: one statement per SQL text, text by its byte
/// length, and values read back strictly (a value not understood is an error, never a default).
@Suite struct StatementTests {
    func withDatabase<T>(_ body: (Connection) throws -> T) throws -> T {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory + "/s.db")
            defer { connection.close() }
            return try body(connection)
        }
    }

    @Test func aTrailingSecondStatementIsRefusedAndNothingRuns() throws {
        try withDatabase { db in
            try db.executeScript("CREATE TABLE t (n INTEGER)")
            for sql in ["INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)",
                        "INSERT INTO t VALUES (1);DELETE FROM t",
                        "INSERT INTO t VALUES (1); -- a comment\nDROP TABLE t",
                        "INSERT INTO t VALUES (1); /* c */ SELECT 1",
                        "INSERT INTO t VALUES (1); ; DELETE FROM t", "INSERT INTO t VALUES (1);;;\nDELETE FROM t",
                        "INSERT INTO t VALUES (1)\u{0}; DROP TABLE t"] {
                #expect(throws: SQLiteError.self, "\(sql.debugDescription)") { try db.execute(sql) }
                #expect(throws: SQLiteError.self, "\(sql.debugDescription)") { try db.query(sql) { _ in 0 } }
            }
            #expect(try db.scalarInt("SELECT COUNT(*) FROM t") == 0, "a refused text runs no part of itself")
        }
    }

    @Test func whitespaceAndCommentsAfterTheStatementAreFine() throws {
        try withDatabase { db in
            try db.executeScript("CREATE TABLE t (n INTEGER)")
            for sql in ["INSERT INTO t VALUES (1);", "INSERT INTO t VALUES (1);  \n\t", "INSERT INTO t VALUES (1); -- done",
                        "INSERT INTO t VALUES (1) /* one */ ; /* two */ -- three\n", "INSERT INTO t VALUES (1) ; ; "] {
                try db.execute(sql)
            }
            #expect(try db.scalarInt("SELECT COUNT(*) FROM t") == 5)
        }
    }

    @Test func textWithAnEmbeddedNULRoundTripsWhole() throws {
        try withDatabase { db in
            try db.executeScript("CREATE TABLE t (s TEXT NOT NULL)")
            let values = ["a\u{0}b", "\u{0}", "tail\u{0}", "", "plain", "ünïcødé\u{0}✓"]
            for value in values { try db.execute("INSERT INTO t (s) VALUES (?)", [value]) }
            let read = try db.query("SELECT s FROM t ORDER BY rowid") { try $0.string(0) }
            #expect(read == values)
            #expect(try db.query("SELECT length(CAST(s AS BLOB)) FROM t ORDER BY rowid") { try $0.int(0) }
                    == values.map { $0.utf8.count }, "SQLite stores every byte")
            // Matching by a bound NUL-containing value compares the whole value.
            #expect(try db.scalarInt("SELECT COUNT(*) FROM t WHERE s = ?", ["a"]) == 0)
            #expect(try db.scalarInt("SELECT COUNT(*) FROM t WHERE s = ?", ["a\u{0}b"]) == 1)
        }
    }

    @Test func anEmptyBlobIsStoredAsABlobNotNull() throws {
        try withDatabase { db in
            try db.executeScript("CREATE TABLE t (b BLOB NOT NULL)")
            try db.execute("INSERT INTO t (b) VALUES (?)", [[UInt8]()])
            #expect(try db.query("SELECT b, typeof(b) FROM t") { [try $0.blob(0).count.description, try $0.string(1)] } == [["0", "blob"]])
        }
    }

    /// Every accessor refuses what it does not understand, naming the column.
    @Test func rowsFailClosed() throws {
        try withDatabase { db in
            func refused<T>(_ sql: String, _ read: (Row) throws -> T) -> String? {
                do {
                    let value = try db.queryFirst(sql, [], read)
                    Issue.record("\(sql) read \(String(describing: value))")
                    return nil
                } catch let error as SQLiteError {
                    return error.description
                } catch {
                    Issue.record("\(sql): \(error)")
                    return nil
                }
            }
            #expect(refused("SELECT NULL AS status") { try $0.string(0) }?.contains("status") == true)
            #expect(refused("SELECT 12") { try $0.string(0) } != nil)
            #expect(refused("SELECT NULL") { try $0.int64(0) } != nil)
            #expect(refused("SELECT 'tomorrow' AS valid_from") { try $0.int64(0) }?.contains("valid_from") == true)
            #expect(refused("SELECT '12'") { try $0.int64(0) } != nil)
            #expect(refused("SELECT 1.5") { try $0.int64(0) } != nil)
            #expect(refused("SELECT 2") { try $0.bool(0) } != nil)
            #expect(refused("SELECT -1") { try $0.bool(0) } != nil)
            #expect(refused("SELECT NULL") { try $0.bool(0) } != nil)
            #expect(refused("SELECT 'x'") { try $0.blob(0) } != nil)
            #expect(refused("SELECT NULL") { try $0.blob(0) } != nil)
            #expect(refused("SELECT 'x'") { try $0.double(0) } != nil)
            #expect(refused("SELECT CAST(x'ff41' AS TEXT)") { try $0.string(0) } != nil, "not UTF-8")
            #expect(refused("SELECT 'x'") { try $0.optionalInt64(0) } != nil)
            let unknown = refused("SELECT 'BOGUS' AS status") { row in
                try row.parsed(0, as: "status", { ["EXPECTED", "APPROVED"].contains($0) ? $0 : nil })
            }
            #expect(unknown?.contains("BOGUS") == true && unknown?.contains("status") == true)
            // What is understood reads as before.
            let understood = try db.queryFirst("SELECT 1, 0, 'a', NULL, 2.5, 3") { row in
                [try row.bool(0), try row.bool(1), try row.string(2) == "a", try row.optionalString(3) == nil,
                 try row.double(4) == 2.5, try row.double(5) == 3]
            }
            #expect(understood == [true, false, true, true, true, true])
        }
    }

    /// The checked decoder reads columns by name: a time outside years 0000…9999, a boolean
    /// that is not 0 or 1, an integer outside the range asked for, a name the result does not
    /// have or has twice — each is refused, naming the column; what is in range reads exactly.
    @Test func namedReadsAreCheckedAgainstTheirRange() throws {
        try withDatabase { db in
            func refused<T>(_ sql: String, _ arguments: [any SQLBindable] = [], _ read: (Row) throws -> T) -> String? {
                do {
                    let value = try db.queryFirst(sql, arguments, read)
                    Issue.record("\(sql) \(arguments) read \(String(describing: value))")
                    return nil
                } catch let error as SQLiteError {
                    #expect(error.isUnreadableValue, "\(error)")
                    return error.description
                } catch {
                    Issue.record("\(sql): \(error)")
                    return nil
                }
            }
            let outside = [Int64.max, Int64.min, StoredTime.range.upperBound + 1, StoredTime.range.lowerBound - 1]
            for value in outside {
                #expect(refused("SELECT ? AS valid_until", [value]) { try $0.date(named: "valid_until") }?
                    .contains("valid_until") == true, "\(value)")
                #expect(refused("SELECT ? AS checked_in_at", [value]) { try $0.optionalDate(named: "checked_in_at") } != nil)
                #expect(refused("SELECT ? AS created_at", [value]) { try $0.milliseconds(named: "created_at") } != nil)
            }
            let ends = try db.queryFirst("SELECT ? AS first, ? AS last, NULL AS never",
                                         [StoredTime.range.lowerBound, StoredTime.range.upperBound]) { row in
                (try row.date(named: "first"), try row.date(named: "last"), try row.optionalDate(named: "never"))
            }
            #expect(ends.map { Timestamp.format($0.0) } == "0000-01-01T00:00:00Z")
            #expect(ends.map { Timestamp.format($0.1) } == "9999-12-31T23:59:59Z")
            #expect(ends?.2 == nil)
            for value: Int64 in [2, -1, Int64.max] {
                #expect(refused("SELECT ? AS disabled", [value]) { try $0.bool(named: "disabled") }?.contains("disabled") == true)
            }
            #expect(refused("SELECT 't' AS disabled") { try $0.bool(named: "disabled") } != nil)
            #expect(try db.queryFirst("SELECT 0 AS a, 1 AS b") { [try $0.bool(named: "a"), try $0.bool(named: "b")] } == [false, true])
            for value: Int64 in [0, 3651, Int64.max, Int64.min] {
                #expect(refused("SELECT ? AS retention_days", [value]) { try $0.int(named: "retention_days", in: 1...3650) }?
                    .contains("outside 1...3650") == true)
            }
            #expect(try db.queryFirst("SELECT 3650 AS days") { try $0.int(named: "days", in: 1...3650) } == 3650)
            #expect(try db.queryFirst("SELECT NULL AS days") { try $0.optionalInt(named: "days", in: 1...3650) } == .some(nil))
            #expect(refused("SELECT 0 AS days") { try $0.optionalInt(named: "days", in: 1...3650) } != nil)
            // A name the SQL does not select, or selects twice, is an error, not a guess.
            #expect(refused("SELECT 1 AS a") { try $0.int64(named: "b") }?.contains("b") == true)
            #expect(refused("SELECT 1 AS a, 2 AS a") { try $0.int64(named: "a") } != nil)
            // A column read by name keeps its meaning when the SELECT list is reordered.
            #expect(try db.queryFirst("SELECT 'x' AS name, 7 AS n") { try $0.int64(named: "n") } == 7)
            #expect(try db.queryFirst("SELECT 7 AS n, 'x' AS name") { try $0.int64(named: "n") } == 7)
        }
    }

    /// A statement's names are read once and serve every row of every later run of the
    /// cached statement.
    @Test func namedReadsServeEveryRowAndRun() throws {
        try withDatabase { db in
            try db.executeScript("CREATE TABLE t (id INTEGER PRIMARY KEY, label TEXT NOT NULL)")
            for index in 0..<3 { try db.execute("INSERT INTO t (label) VALUES (?)", ["row \(index)"]) }
            for _ in 0..<2 {
                #expect(try db.query("SELECT label, id FROM t ORDER BY id") { try $0.string(named: "label") }
                    == ["row 0", "row 1", "row 2"])
            }
        }
    }
}

/// The database file is created by us, private, before SQLite opens it (issue 9, item 4).
@Suite struct PrivateFileTests {
    final class OpenCalls: Sendable {
        let calls = Locked<[(path: String, flags: Int32, mode: mode_t)]>([])
    }

    @Test func theFileIsCreatedExclusivelyWithMode0600() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/new.db"
            let recorded = OpenCalls()
            let created = try Connection.createPrivateFile(at: path) { path, flags, mode in
                recorded.calls.withLock { $0.append((path, flags, mode)) }
                return open(path, flags, mode)
            }
            #expect(created)
            let calls = recorded.calls.withLock { $0 }
            #expect(calls.count == 1)
            #expect(calls.first?.path == path && calls.first?.mode == 0o600)
            #expect(calls.first.map { $0.flags & (O_CREAT | O_EXCL) == (O_CREAT | O_EXCL) } == true)
            var status = stat()
            #expect(stat(path, &status) == 0 && status.st_size == 0 && status.st_mode & 0o7777 == 0o600)
            // An existing file is left as it is (and not truncated).
            #expect(FileManager.default.createFile(atPath: directory + "/kept.db", contents: Data([1, 2, 3])))
            #expect(try Connection.createPrivateFile(at: directory + "/kept.db") == false)
            #expect(FileManager.default.contents(atPath: directory + "/kept.db") == Data([1, 2, 3]))
            // A folder that does not exist is an error, not a silent success.
            #expect(throws: SQLiteError.self) { try Connection.createPrivateFile(at: directory + "/missing/x.db") }
        }
    }
}
