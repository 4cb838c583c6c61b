import Foundation
import GatePassTestSupport
import Postgres
import Testing

@Suite(needsPostgreSQL) struct ValueRoundTripTests {
    private let schema = "CREATE TABLE value_kinds (id int8 PRIMARY KEY, i int8, r float8, s text, b bytea)"

    @Test(arguments: [Int64.min, -1, 0, 1, Int64.max])
    func integersComeBackExactly(_ value: Int64) throws {
        try withTemporaryDatabase { connection, _ in
            try connection.executeScript(schema)
            try connection.execute("INSERT INTO value_kinds (id, i) VALUES (1, ?)", [value])
            #expect(try connection.scalarInt("SELECT i FROM value_kinds WHERE id = ?", [1]) == value)
            #expect(try connection.queryFirst("SELECT i FROM value_kinds") { try $0.int64(0) } == value)
        }
    }

    @Test(arguments: [0.0, -0.5, 0.1, 1e300, -2.2250738585072014e-308, Double.leastNonzeroMagnitude, Double.infinity, -Double.infinity])
    func doublesComeBackExactly(_ value: Double) throws {
        try withTemporaryDatabase { connection, _ in
            try connection.executeScript(schema)
            try connection.execute("INSERT INTO value_kinds (id, r) VALUES (1, ?)", [value])
            #expect(try connection.queryFirst("SELECT r FROM value_kinds") { try $0.double(0) } == value)
        }
    }

    @Test func notANumberComesBackAsNotANumber() throws {
        try withTemporaryDatabase { connection, _ in
            let value = try connection.queryFirst("SELECT ?::float8", [Double.nan]) { try $0.double(0) }
            #expect(value?.isNaN == true)
        }
    }

    @Test(arguments: ["it's \"quoted\"", "?", "$1", "héllo wörld — 日本語 🎟️", "", "back\\slash", "line\nbreak\ttab"])
    func textsComeBackExactly(_ value: String) throws {
        try withTemporaryDatabase { connection, _ in
            try connection.executeScript(schema)
            try connection.execute("INSERT INTO value_kinds (id, s) VALUES (1, ?)", [value])
            #expect(try connection.queryFirst("SELECT s FROM value_kinds") { try $0.string(0) } == value)
        }
    }

    @Test(arguments: [Array(0...255) as [UInt8], [], [0], [0x5C, 0x78]])
    func byteaComesBackExactly(_ value: [UInt8]) throws {
        try withTemporaryDatabase { connection, _ in
            try connection.executeScript(schema)
            try connection.execute("INSERT INTO value_kinds (id, b) VALUES (1, ?)", [value])
            #expect(try connection.queryFirst("SELECT b FROM value_kinds") { try $0.blob(0) } == value)
            #expect(try connection.scalarInt("SELECT length(b) FROM value_kinds") == Int64(value.count))
        }
    }

    @Test func nullsComeBackAsNil() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.executeScript(schema)
            let absent: String? = nil
            try connection.execute("INSERT INTO value_kinds (id, i, r, s, b) VALUES (1, ?, ?, ?, ?)",
                                   [SQLValue.null, Optional<Int64>.none, absent, Optional<[UInt8]>.none])
            let row = try connection.queryFirst("SELECT i, r, s, b FROM value_kinds") { row in
                (try row.optionalInt64(0), row.isNull(1), try row.optionalString(2), try row.optionalBlob(3))
            }
            #expect(row?.0 == nil)
            #expect(row?.1 == true)
            #expect(row?.2 == nil)
            #expect(row?.3 == nil)
            #expect(try connection.scalarInt("SELECT i FROM value_kinds") == nil)
            #expect(try connection.scalarInt("SELECT i FROM value_kinds WHERE id = ?", [2]) == nil)
        }
    }

    @Test func booleansReadFromIntegersAndFromBooleanColumns() throws {
        try withTemporaryDatabase { connection, _ in
            let values = try connection.queryFirst("SELECT ?::int8, ?::int8, true, false", [true, false]) {
                [try $0.bool(0), try $0.bool(1), try $0.bool(2), try $0.bool(3)]
            }
            #expect(values == [true, false, true, false])
            #expect(throws: PGError.self) { try connection.queryFirst("SELECT 2") { try $0.bool(0) } }
        }
    }

    @Test func parsedValuesAreCheckedByTheirParser() throws {
        enum Status: String { case active, revoked }
        try withTemporaryDatabase { connection, _ in
            let known = try connection.queryFirst("SELECT 'active'") { try $0.parsed(0, as: "status", Status.init(rawValue:)) }
            let absent = try connection.queryFirst("SELECT NULL::text") { try $0.optionalParsed(0, as: "status", Status.init(rawValue:)) }
            #expect(known == .active)
            #expect(absent == .some(nil))
            expectPGError({ _ = try connection.queryFirst("SELECT 'paused'") { try $0.parsed(0, as: "status", Status.init(rawValue:)) } }) {
                #expect($0.isUnreadableValue)
                #expect($0.message.contains("status"))
            }
        }
    }

    /// The checked decoder on PostgreSQL's text output: times outside years 0000…9999,
    /// booleans other than 0/1/t/f, integers outside their range and names the result does not
    /// have (or has twice) are refused, naming the column.
    @Test func namedReadsAreCheckedAgainstTheirRange() throws {
        try withTemporaryDatabase { connection, _ in
            func refused<T>(_ sql: String, _ arguments: [any SQLBindable] = [], _ read: (PGRow) throws -> T) -> String? {
                do {
                    let value = try connection.queryFirst(sql, arguments, read)
                    Issue.record("\(sql) \(arguments) read \(String(describing: value))")
                    return nil
                } catch let error as PGError {
                    #expect(error.isUnreadableValue && error.unreadableColumn != nil, "\(error)")
                    return error.description
                } catch {
                    Issue.record("\(sql): \(error)")
                    return nil
                }
            }
            for value in [Int64.max, Int64.min, StoredTime.range.upperBound + 1, StoredTime.range.lowerBound - 1] {
                #expect(refused("SELECT ?::int8 AS expires_at", [value]) { try $0.date(named: "expires_at") }?
                    .contains("expires_at") == true, "\(value)")
            }
            let last = try connection.queryFirst("SELECT ?::int8 AS last", [StoredTime.range.upperBound]) {
                try $0.date(named: "last")
            }
            #expect(last == Date(timeIntervalSince1970: Double(StoredTime.range.upperBound) / 1000))
            for value: Int64 in [2, -1] {
                #expect(refused("SELECT ?::int8 AS disabled", [value]) { try $0.bool(named: "disabled") }?.contains("disabled") == true)
            }
            #expect(try connection.queryFirst("SELECT true AS a, 0::int8 AS b") {
                [try $0.bool(named: "a"), try $0.bool(named: "b")]
            } == [true, false])
            #expect(refused("SELECT ?::int8 AS wrong_tries", [Int64(-1)]) { try $0.int(named: "wrong_tries", in: 0...1000) } != nil)
            #expect(refused("SELECT 1 AS a") { try $0.int64(named: "b") } != nil)
            #expect(refused("SELECT 1 AS a, 2 AS a") { try $0.int64(named: "a") } != nil)
            #expect(try connection.queryFirst("SELECT 'x' AS name, 7::int8 AS n") { try $0.int64(named: "n") } == 7)
        }
    }
}
