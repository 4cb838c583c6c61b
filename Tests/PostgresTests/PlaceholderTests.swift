@testable import Postgres
import GatePassTestSupport
import Testing

@Suite struct PlaceholderRewriterTests {
    @Test func numbersEachPlaceholderInOrder() {
        let rewritten = PlaceholderRewriter.rewrite("SELECT a FROM t WHERE b = ? AND c IN (?, ?)")
        #expect(rewritten == .init(sql: "SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)", parameterCount: 3))
    }

    @Test func leavesQuestionMarksInStringsIdentifiersAndCommentsAlone() {
        let sql = "SELECT '?', 'it''s ?', \"odd?\"\"name\" FROM t -- why?\nWHERE x = ? /* ? */ AND y = ?"
        let rewritten = PlaceholderRewriter.rewrite(sql)
        #expect(rewritten.sql == "SELECT '?', 'it''s ?', \"odd?\"\"name\" FROM t -- why?\nWHERE x = $1 /* ? */ AND y = $2")
        #expect(rewritten.parameterCount == 2)
    }

    @Test func textWithoutPlaceholdersIsUnchanged() {
        #expect(PlaceholderRewriter.rewrite("SELECT $1").sql == "SELECT $1")
        #expect(PlaceholderRewriter.rewrite("").parameterCount == 0)
    }
}

@Suite(needsPostgreSQL) struct PlaceholderOnServerTests {
    @Test func questionMarksInQuotesAndCommentsReachTheServerAsWritten() throws {
        try withTemporaryDatabase { connection, _ in
            let row = try connection.queryFirst("SELECT '?' AS \"what?\", 'a''?', ? -- is this a ?\n", ["bound"]) {
                [try $0.string(0), try $0.string(1), try $0.string(2)]
            }
            #expect(row == ["?", "a'?", "bound"])
        }
    }
}

@Suite struct ConnectionURLTests {
    @Test func aPasswordInTheUserInfoOrTheQueryIsScrubbedAsWrittenAndDecoded() {
        let url = "postgresql://gate:p%40ss@db.example:5432/gatepass?sslmode=require&password=other"
        #expect(ConnectionURL.passwords(in: url) == ["p%40ss", "other"])
        let message = ConnectionURL.scrubbingPassword(of: url, from: "failed for p%40ss, p@ss and other")
        #expect(message == "failed for ***, *** and ***")
    }

    @Test func aURLWithoutPasswordLeavesTheMessageAlone() {
        #expect(ConnectionURL.passwords(in: "postgres://gate@127.0.0.1/db").isEmpty)
        #expect(ConnectionURL.scrubbingPassword(of: "postgres://gate@127.0.0.1/db", from: "refused") == "refused")
    }
}
