import Foundation
import GatePassCore
import LoopbackHTTP
import SQLite
import Testing
@testable import GatePassServer

/// Issue 9, item 4: healthz says ok only while the database can be written; a corrupt
/// database or a secret readable by others stops the server at start.
@Suite struct HealthAndIntegrityTests {
    /// The writer connection refuses writes as a read-only database does (`PRAGMA query_only`
    /// makes every write fail with SQLITE_READONLY). Tests run as root, whom file modes do not
    /// stop, so the read-only condition is made inside SQLite, on the writer itself.
    static func makeWriterReadOnly(_ server: TestServer, _ readOnly: Bool) throws {
        try server.store.sqlite.writer.outsideTransaction { db in try db.executeScript("PRAGMA query_only = \(readOnly ? "ON" : "OFF")") }
    }

    @Test func healthzIs503WhenTheDatabaseCannotBeWrittenAndProbesAtMostOnceASecond() throws {
        try withServer { server in
            #expect(try server.get("/api/healthz").status == 200)
            try Self.makeWriterReadOnly(server, true)
            // Within the same second the cached answer stands (the probe is not run again).
            #expect(try server.get("/api/healthz").status == 200)
            server.clock.advance(by: 1.1)
            let down = try server.get("/api/healthz")
            #expect(down.isError(503, "UNAVAILABLE"), "\(down.status) \(down.text)")
            #expect(down.headers["retry-after"] == "1")
            #expect(server.log.all.contains { $0.contains("readonly") || $0.contains("read-only") }, "\(server.log.all.suffix(3))")
            try Self.makeWriterReadOnly(server, false)
            #expect(try server.get("/api/healthz").isError(503, "UNAVAILABLE"), "still cached")
            server.clock.advance(by: 1.1)
            #expect(try server.get("/api/healthz").status == 200)
        }
    }

    /// Many health checks at once run one probe; the ones that arrive while it runs wait for
    /// its outcome (there is no earlier one), and a failed probe is answered until the next second.
    @Test func concurrentHealthChecksShareOneProbe() throws {
        let clock = TestClock()
        let probes = Locked(0)
        let release = DispatchSemaphore(value: 0)
        let failing = Locked(false)
        let probe = WriteProbe(clock: clock, logSink: RecordingLog()) {
            probes.withLock { $0 += 1 }
            release.wait()
            if failing.withLock({ $0 }) { throw TestFailure("read-only") }
        }
        let started = DispatchSemaphore(value: 0)
        let results = Locked<[String?]>([])
        let done = DispatchGroup()
        for _ in 0..<24 {
            done.enter()
            Thread {
                started.signal()
                let failure = probe.failure()
                results.withLock { $0.append(failure) }
                done.leave()
            }.start()
        }
        for _ in 0..<24 { started.wait() }
        release.signal()
        #expect(done.wait(timeout: .now() + 10) == .success, "a health check hung")
        #expect(probes.withLock { $0 } == 1)
        #expect(results.withLock { $0 }.count == 24 && results.withLock { $0 }.allSatisfy { $0 == nil })
        failing.withLock { $0 = true }
        clock.advance(by: 1)
        release.signal()
        #expect(probe.failure()?.contains("read-only") == true)
        #expect(probe.failure()?.contains("read-only") == true, "cached within the second")
        #expect(probes.withLock { $0 } == 2)
    }

    /// Issue 9, item 7: another process holding the write lock past the busy timeout is 503
    /// with Retry-After (worth a retry), not 500; nothing is applied; reads go on (WAL).
    @Test func aLockedDatabaseAnswers503WithRetryAfter() throws {
        try withSite(configure: { $0.sqliteBusyTimeoutMilliseconds = 50 }) { server, site in
            let visitor = try server.createVisitor(site.ownerToken)
            let shortId = visitor["shortId"] as! String
            server.clock.advance(by: 2)
            let other = try Connection(path: server.store.path)
            defer { other.close() }
            try other.execute("BEGIN EXCLUSIVE")
            let checkIn = try server.checkIn(site.scanner, shortId, headers: ["Idempotency-Key": "busy-1"])
            #expect(checkIn.isError(503, "UNAVAILABLE"), "\(checkIn.status) \(checkIn.text)")
            #expect(checkIn.headers["retry-after"] == "1")
            let plain = try server.post("/api/visitors", token: site.ownerToken, ["name": "Busy Person"])
            #expect(plain.isError(503, "UNAVAILABLE") && plain.headers["retry-after"] == "1")
            #expect(server.log.all.contains { $0.contains("locked") || $0.contains("busy") }, "\(server.log.all.suffix(3))")
            let health = try server.get("/api/healthz")
            #expect(health.isError(503, "UNAVAILABLE") && health.headers["retry-after"] == "1")
            #expect(try server.get("/api/visitors", token: site.ownerToken).status == 200, "reads go on")
            try other.execute("ROLLBACK")
            // The same key again: the 503 was not stored, so the check-in now happens once.
            let again = try server.checkIn(site.scanner, shortId, headers: ["Idempotency-Key": "busy-1"])
            #expect(again.status == 200 && again.string("result") == "CHECKED_IN", "\(again.text)")
            #expect(again.headers["idempotent-replayed"] == nil)
            server.clock.advance(by: 1.1)
            #expect(try server.get("/api/healthz").status == 200)
        }
    }

    /// The file's header damaged while the server runs: healthz stops saying ok.
    @Test func healthzIs503WhenTheFileIsDamagedWhileRunning() throws {
        try withServer { server in
            #expect(try server.get("/api/healthz").status == 200)
            // Everything into the main file, so that new readers read page 1 from it.
            _ = try server.store.sqlite.writer.outsideTransaction { db in try db.executeScript("PRAGMA wal_checkpoint(TRUNCATE)") }
            let handle = try #require(FileHandle(forUpdatingAtPath: server.store.path))
            handle.write(Data(repeating: 0x5A, count: 100))
            try handle.close()
            server.clock.advance(by: 1.1)
            let answer = try server.get("/api/healthz")
            #expect(answer.isError(503, "UNAVAILABLE"), "\(answer.status) \(answer.text)")
            #expect(server.log.all.contains { $0.contains("not a database") }, "\(server.log.all.suffix(3))")
        }
    }

    /// A page of a real database overwritten with garbage: the server does not start on it.
    @Test func theServerRefusesToStartOnADatabaseThatFailsQuickCheck() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/gatepass.db"
            var configuration = ServerConfiguration()
            configuration.database = path
            configuration.port = 0
            let first = try GatePassServer(configuration: configuration, logSink: RecordingLog())
            for index in 0..<300 {
                _ = try Administration.addUser(store: first.store, email: "user\(index)@acme.test", name: "User \(index)",
                                               role: .approver, organization: "Acme", canScan: false, now: Date())
            }
            first.stop()
            let (pageSize, page) = try {
                let connection = try Connection(path: path)
                defer { connection.close() }
                let pageSize = try connection.scalarInt("PRAGMA page_size")!
                let root = try connection.scalarInt("SELECT rootpage FROM sqlite_schema WHERE name = 'users'")!
                return (pageSize, root)
            }()
            let handle = try #require(FileHandle(forUpdatingAtPath: path))
            try handle.seek(toOffset: UInt64((page - 1) * pageSize))
            handle.write(Data((0..<Int(pageSize)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 13) }))
            try handle.close()
            do {
                let server = try GatePassServer(configuration: configuration, logSink: RecordingLog())
                server.stop()
                Issue.record("the server started on a corrupt database")
            } catch {
                #expect("\(error)".contains("quick_check"), "\(error)")
            }
        }
    }

    @Test func aSecretReadableByOthersIsRefusedAtStart() throws {
        try withTemporaryDirectory { directory in
            var configuration = ServerConfiguration()
            configuration.database = directory + "/gatepass.db"
            configuration.port = 0
            let first = try GatePassServer(configuration: configuration, logSink: RecordingLog())
            first.stop()
            let secret = configuration.resolvedSecretFile
            var status = stat()
            #expect(stat(secret, &status) == 0 && status.st_mode & 0o777 == 0o600)
            for mode: mode_t in [0o644, 0o640, 0o604, 0o660] {
                #expect(chmod(secret, mode) == 0)
                do {
                    let server = try GatePassServer(configuration: configuration, logSink: RecordingLog())
                    server.stop()
                    Issue.record("started with a secret of mode \(String(mode, radix: 8))")
                } catch {
                    #expect("\(error)".contains(secret) && "\(error)".contains("chmod 600"), "\(error)")
                }
            }
            #expect(chmod(secret, 0o600) == 0)
            let again = try GatePassServer(configuration: configuration, logSink: RecordingLog())
            again.stop()
        }
    }
}
