import GatePassTestSupport
import LocalPostgres
import Postgres
import Testing

@Suite(needsPostgreSQL) struct StatementTests {
    @Test func executeReportsTheRowsAffectedAndScriptsRunSeveralStatements() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.executeScript("CREATE TABLE counters (id int8 PRIMARY KEY, n int8); INSERT INTO counters VALUES (1, 0), (2, 0)")
            #expect(try connection.execute("UPDATE counters SET n = n + ?", [1]) == 2)
            #expect(try connection.execute("UPDATE counters SET n = n + 1 WHERE id = ?", [3]) == 0)
            #expect(try connection.execute("CREATE INDEX counters_n ON counters (n)") == 0)
            #expect(try connection.query("SELECT id FROM counters ORDER BY id") { try $0.int(0) } == [1, 2])
        }
    }

    @Test func theSameSQLIsPreparedOnceAndRunsAgainWithOtherArguments() throws {
        try withTemporaryDatabase { connection, _ in
            let sql = "SELECT ?::int8 + 1 AS marker"
            let first = try connection.scalarInt(sql, [1])
            let second = try connection.scalarInt(sql, [41])
            #expect(first == 2)
            #expect(second == 42)
            // The text as the server holds it: the ? became $1. This query has no parameters,
            // so it is not prepared itself.
            let prepared = try connection.scalarInt(
                "SELECT count(*) FROM pg_prepared_statements WHERE statement = 'SELECT $1::int8 + 1 AS marker'")
            #expect(prepared == 1)
        }
    }

    @Test func aStatementInvalidatedOnTheServerIsPreparedAgain() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.executeScript("CREATE TABLE shapes (id int8 PRIMARY KEY); INSERT INTO shapes VALUES (1)")
            let sql = "SELECT * FROM shapes WHERE id = ?"
            #expect(try connection.query(sql, [1]) { try $0.int64(0) } == [1])
            // The result gains a column: the cached plan no longer fits (0A000).
            try connection.executeScript("ALTER TABLE shapes ADD COLUMN label text")
            #expect(try connection.query(sql, [1]) { try $0.optionalString(1) } == [nil])
            // The statement is gone from the server (26000).
            try connection.executeScript("DEALLOCATE ALL")
            #expect(try connection.query(sql, [1]) { try $0.int64(0) } == [1])
        }
    }

    @Test func malformedSQLFailsWithSyntaxError() throws {
        try withTemporaryDatabase { connection, _ in
            expectPGError({ try connection.execute("SELEC 1") }) {
                #expect($0.sqlState == "42601")
                #expect($0.sql == "SELEC 1")
            }
            expectPGError({ try connection.execute("SELEC ?", [1]) }) { #expect($0.sqlState == "42601") }
            // The connection is still usable after a failed statement.
            let stillUsable = try connection.scalarInt("SELECT 1")
            #expect(stillUsable == 1)
        }
    }

    @Test func aDuplicateKeyIsAUniqueViolationThatDoesNotQuoteTheKey() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.executeScript("CREATE TABLE people (email text PRIMARY KEY)")
            try connection.execute("INSERT INTO people VALUES (?)", ["carol@example.org"])
            expectPGError({ try connection.execute("INSERT INTO people VALUES (?)", ["carol@example.org"]) }) {
                #expect($0.isUniqueViolation)
                #expect(!$0.isSerializationFailure)
                #expect(!$0.description.contains("carol@example.org"))
            }
        }
    }

    @Test func aTextArgumentTheServerCannotReadIsNotQuotedInTheError() throws {
        try withTemporaryDatabase { connection, _ in
            expectPGError({ _ = try connection.scalarInt("SELECT ?::int8", ["hunter2-token"]) }) {
                #expect($0.sqlState == "22P02")
                #expect(!$0.description.contains("hunter2-token"))
            }
        }
    }

    @Test func aValueThatDoesNotParseIsAnErrorNamingTheColumnAndTheSQL() throws {
        try withTemporaryDatabase { connection, _ in
            expectPGError({ _ = try connection.queryFirst("SELECT 'abc' AS code") { try $0.int64(0) } }) {
                #expect($0.isUnreadableValue)
                #expect($0.message.contains("code"))
                #expect($0.sql == "SELECT 'abc' AS code")
            }
            expectPGError({ _ = try connection.queryFirst("SELECT NULL::text AS name") { try $0.string(0) } }) {
                #expect($0.isUnreadableValue)
                #expect($0.message.contains("NULL"))
            }
            expectPGError({ _ = try connection.queryFirst("SELECT 'abc'::text") { try $0.blob(0) } }) {
                #expect($0.isUnreadableValue)
            }
            expectPGError({ _ = try connection.queryFirst("SELECT 1.5") { try $0.int(0) } }) {
                #expect($0.isUnreadableValue)
            }
        }
    }
}

@Suite(needsPostgreSQL) struct TransactionTests {
    private struct Abandon: Error {}

    @Test func aTransactionCommitsWhenItsBodyReturnsAndRollsBackWhenItThrows() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.executeScript("CREATE TABLE entries (id int8 PRIMARY KEY)")
            #expect(!connection.isInTransaction)
            try connection.inTransaction {
                #expect(connection.isInTransaction)
                try connection.execute("INSERT INTO entries VALUES (?)", [1])
            }
            #expect(throws: Abandon.self) {
                try connection.inTransaction(.repeatableRead) {
                    try connection.execute("INSERT INTO entries VALUES (?)", [2])
                    throw Abandon()
                }
            }
            #expect(!connection.isInTransaction)
            #expect(try connection.query("SELECT id FROM entries ORDER BY id") { try $0.int64(0) } == [1])
        }
    }

    @Test func aSavepointUndoesOnlyItsOwnChanges() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.executeScript("CREATE TABLE entries (id int8 PRIMARY KEY)")
            try connection.inTransaction {
                try connection.execute("INSERT INTO entries VALUES (?)", [1])
                // A failed statement inside the savepoint aborts only the savepoint.
                #expect(throws: PGError.self) {
                    try connection.inSavepoint {
                        try connection.execute("INSERT INTO entries VALUES (?)", [2])
                        try connection.execute("INSERT INTO entries VALUES (?)", [1])
                    }
                }
                _ = try connection.inSavepoint { try connection.execute("INSERT INTO entries VALUES (?)", [3]) }
            }
            #expect(try connection.query("SELECT id FROM entries ORDER BY id") { try $0.int64(0) } == [1, 3])
        }
    }

    @Test func twoSerializableTransactionsUpdatingOneRowGiveOneSerializationFailure() throws {
        try withTemporaryDatabase { first, url in
            let second = try PGConnection(url: url)
            defer { second.close() }
            try first.executeScript("CREATE TABLE seats (id int8 PRIMARY KEY, taken int8); INSERT INTO seats VALUES (1, 0)")
            var failures: [PGError] = []
            do {
                try first.inTransaction(.serializable) {
                    // The snapshot is taken here, before the second transaction commits.
                    _ = try first.scalarInt("SELECT taken FROM seats WHERE id = ?", [1])
                    _ = try second.inTransaction(.serializable) {
                        try second.execute("UPDATE seats SET taken = taken + 1 WHERE id = ?", [1])
                    }
                    try first.execute("UPDATE seats SET taken = taken + 1 WHERE id = ?", [1])
                }
            } catch let error as PGError {
                failures.append(error)
            }
            #expect(failures.count == 1)
            #expect(failures.first?.isSerializationFailure == true)
            #expect(!first.isInTransaction)
            #expect(try first.scalarInt("SELECT taken FROM seats WHERE id = ?", [1]) == 1)
        }
    }
}

@Suite(needsPostgreSQL) struct NotificationTests {
    @Test func aNotificationReachesTheListenerWithItsPayload() throws {
        try withTemporaryDatabase { listener, url in
            let sender = try PGConnection(url: url)
            defer { sender.close() }
            try listener.listen("gate_events")
            #expect(try listener.notifications().isEmpty)
            #expect(listener.socket >= 0)
            _ = try sender.query("SELECT pg_notify(?, ?)", ["gate_events", "pass 42 revoked"]) { _ in () }
            // The timeout only catches a hang; the notification normally arrives at once.
            let arrived = try listener.waitForNotifications(timeoutMilliseconds: 30_000)
            #expect(arrived.map(\.channel) == ["gate_events"])
            #expect(arrived.map(\.payload) == ["pass 42 revoked"])
            #expect(arrived.first?.pid != listener.serverProcessID)
        }
    }
}

@Suite(needsPostgreSQL) struct ConnectionFailureTests {
    @Test func aRefusedConnectionIsAConnectionFailureWithoutThePassword() throws {
        let port = try PostgresCluster.unusedLoopbackPort()
        expectPGError({ _ = try PGConnection(url: "postgres://gatepass:secret@127.0.0.1:\(port)/nowhere") }) {
            #expect($0.isConnectionFailure)
            #expect(!$0.description.contains("secret"))
            #expect(!$0.message.isEmpty)
        }
    }

    @Test func aHealthyConnectionReportsItsServerAndClosesOnce() throws {
        try withTemporaryDatabase { connection, _ in
            #expect(connection.isHealthy)
            #expect(connection.serverVersion >= 100_000)
            let name = try connection.queryFirst("SELECT current_setting('application_name')") { try $0.string(0) }
            #expect(name == "gatepass-postgres-tests")
            connection.close()
            connection.close()
            #expect(!connection.isHealthy)
        }
    }
}
