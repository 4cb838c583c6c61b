import Foundation
import GatePassCore
import GatePassTestSupport
import LocalPostgres
import LoopbackHTTP
import Postgres
import Testing
@testable import GatePassServer

/// The database a conformance test runs on: SQLite (a file in the test's folder) or a fresh
/// database in the throw-away PostgreSQL cluster (GatePassTestSupport's PostgresCluster).
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// Points `configuration` at a new database of this kind, with the state files every
    /// instance of one site shares in `directory`.
    func configure(_ configuration: inout ServerConfiguration, directory: String, url: String?) {
        configuration.secretFile = directory + "/shared.secret"
        configuration.passKeysFile = directory + "/shared.pass-keys"
        if let url { configuration.database = url }
    }

    /// A new PostgreSQL database's URL; nil for SQLite (withTestServer's own file).
    func newDatabase() throws -> String? {
        switch self {
        case .sqlite: return nil
        case .postgres: return try PostgresCluster.shared().makeDatabase()
        }
    }

    /// The backends this machine can run: PostgreSQL only where its server binaries are installed.
    static var available: [Backend] { PostgresCluster.isAvailable ? [.sqlite, .postgres] : [.sqlite] }
}

/// The store's contract, run against both backends through the real API: what handlers rely
/// on (exactly-once check-in, the event log and its replay, idempotency, the OTP limit, the
/// audit chain) holds the same on SQLite and on PostgreSQL.
/// `withServer` on `backend`: a SQLite file in the test's folder, or a new PostgreSQL database
/// with its secret in a folder of its own (where the other state files go beside it).
func withServer<T>(on backend: Backend, _ body: (TestServer) throws -> T) throws -> T {
    let url = try backend.newDatabase()
    let folder = NSTemporaryDirectory() + "gatepass-pg-\(UUID().uuidString)"
    if url != nil { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
    defer { if url != nil { try? FileManager.default.removeItem(atPath: folder) } }
    return try withServer(configure: { configuration in
        if let url {
            configuration.database = url
            configuration.secretFile = folder + "/gatepass.secret"
        }
    }, body)
}

/// The store's contract, run against both backends through the real API: what handlers rely
/// on (exactly-once check-in, the event log and its replay, idempotency, the OTP limit, the
/// audit chain) holds the same on SQLite and on PostgreSQL. (`AuthorizationMatrixTests` runs
/// every route as every caller on both, too.)
@Suite struct StoreConformanceTests {
    func withSite<T>(_ backend: Backend, _ body: (TestServer, Site) throws -> T) throws -> T {
        try withServer(on: backend) { server in try body(server, try server.makeSite()) }
    }

    @Test(arguments: Backend.available)
    func oneCheckedInAmongTwentyFour(_ backend: Backend) throws {
        try withSite(backend) { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Racing Visitor"])
            let results = CheckInRaceTests.race(server, shortId: visitor["shortId"] as! String, tokens: [site.scanner])
            _ = try CheckInRaceTests.verify(results, server: server, site: site, visitorId: visitor["id"] as! String)
        }
    }

    @Test(arguments: Backend.available)
    func eventsReplayFromLastEventId(_ backend: Backend) throws {
        try withSite(backend) { server, site in
            let stream = try SSETestClient(port: server.port, token: site.ownerToken)
            for index in 0..<3 {
                let visitor = try server.createVisitor(site.ownerToken, ["name": "Guest \(index)"])
                let answer = try server.client().send("POST", "/api/visitor-scanner/checkin", token: site.scanner,
                                                      json: ["shortId": visitor["shortId"] as! String])
                #expect(answer.status == 200, "\(answer.text)")
            }
            let frames = stream.events(3, timeout: 30)
            try #require(frames.count == 3)
            #expect(frames.count == 3)
            let ids = frames.compactMap(\.id)
            #expect(ids == ids.sorted() && Set(ids).count == 3)
            stream.close()
            // A client that saw the first event gets exactly the next two on reconnecting.
            let again = try SSETestClient(port: server.port, token: site.ownerToken, lastEventId: String(ids[0]))
            let replayed = again.events(2, timeout: 30)
            #expect(replayed.compactMap(\.id) == Array(ids.dropFirst()))
        }
    }

    @Test(arguments: Backend.available)
    func anIdempotentRequestIsAnsweredOnce(_ backend: Backend) throws {
        try withSite(backend) { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Once Only"])
            let body: [String: Any] = ["shortId": visitor["shortId"] as! String]
            let first = try server.client().send("POST", "/api/visitor-scanner/checkin", token: site.scanner,
                                                 headers: ["Idempotency-Key": "conformance-1"], json: body)
            let second = try server.client().send("POST", "/api/visitor-scanner/checkin", token: site.scanner,
                                                  headers: ["Idempotency-Key": "conformance-1"], json: body)
            #expect(first.status == 200 && second.status == 200)
            #expect(first.json?["scanId"] as? String == second.json?["scanId"] as? String)
            #expect(first.json?["result"] as? String == "CHECKED_IN" && second.json?["result"] as? String == "CHECKED_IN")
            #expect(try server.history(site.ownerToken, "").count == 1)
        }
    }

    @Test(arguments: Backend.available)
    func theAuditChainVerifies(_ backend: Backend) throws {
        try withSite(backend) { server, site in
            _ = try server.createVisitor(site.ownerToken, ["name": "Audited"])
            server.server.application.auditLog.waitForHead()
            let configuration = server.server.application.configuration
            let verdict = try AuditVerification.verify(database: configuration.database, secretFile: configuration.secretFile)
            guard case .intact(let entries) = verdict else { Issue.record("the chain is \(verdict)"); return }
            #expect(entries > 0)
        }
    }

    /// Issue 27: a server takes the audit head over at start on either backend (on PostgreSQL
    /// the head sits beside the secret): missing on a log with entries, it stops the start
    /// until `--recreate-audit-head`.
    @Test(arguments: Backend.available)
    func aServerStartsOnlyOnAnAuditHeadThatHolds(_ backend: Backend) throws {
        let url = try backend.newDatabase()
        try withTemporaryDirectory { directory in
            var configuration = ServerConfiguration()
            configuration.database = directory + "/gatepass.db"
            backend.configure(&configuration, directory: directory, url: url)
            configuration.port = 0
            configuration.threads = 2
            configuration.sqliteSynchronous = "NORMAL"
            let start = { (recreate: Bool) in
                try GatePassServer(configuration: configuration, devMode: true, logSink: RecordingLog(),
                                   recreateAuditHead: recreate)
            }
            let first = try start(false)
            try first.store.write { tx in
                try first.application.audit(.mailTest, id: nil, .none, by: .system, organizationId: nil, at: Date(), tx)
            }
            first.application.moveAuditHead()
            first.stop(grace: .seconds(2))
            let headPath = configuration.resolvedAuditHeadFile
            #expect(try AuditHead.read(path: headPath)?.seq == 1)
            #expect(unlink(headPath) == 0)
            do {
                let started = try start(false)
                started.stop(grace: .seconds(2))
                Issue.record("a server started without the head of a log with entries")
            } catch {
                #expect("\(error)".contains("is missing, but the log has entries up to 1"), "\(error)")
            }
            try start(true).stop(grace: .seconds(2))
            #expect(try AuditVerification.verify(database: configuration.database, secretFile: configuration.secretFile)
                    == .intact(entries: 2))
        }
    }
}

/// Two `gatepass serve` instances on one PostgreSQL database, as behind a load balancer: each
/// rule holds whichever instance a request reaches.
@Suite(.enabled(if: PostgresCluster.isAvailable, Comment(rawValue: PostgresCluster.unavailableReason)))
struct TwoInstanceTests {
    /// Starts two servers on one new database, sharing one clock and one set of state files.
    func withTwoInstances<T>(configure: (inout ServerConfiguration) -> Void = { _ in },
                             _ body: (TestServer, TestServer) throws -> T) throws -> T {
        let url = try PostgresCluster.shared().makeDatabase()
        return try withTemporaryDirectory { directory in
            var configuration = ServerConfiguration()
            Backend.postgres.configure(&configuration, directory: directory, url: url)
            configuration.port = 0
            configuration.threads = 8
            configure(&configuration)
            let clock = TestClock(Timestamp.parse("2026-11-29T12:00:00Z")!)
            let (logA, logB) = (RecordingLog(), RecordingLog())
            let a = try GatePassServer(configuration: configuration, devMode: true, clock: clock, logSink: logA)
            defer { a.stop(grace: .seconds(2)) }
            let b = try GatePassServer(configuration: configuration, devMode: true, clock: clock, logSink: logB)
            defer { b.stop(grace: .seconds(2)) }
            return try body(TestServer(server: a, clock: clock, log: logA, directory: directory),
                            TestServer(server: b, clock: clock, log: logB, directory: directory))
        }
    }

    @Test func twentyFourCheckInsAcrossBothGiveOneCheckedIn() throws {
        try withTwoInstances { a, b in
            let site = try a.makeSite()
            let visitor = try a.createVisitor(site.ownerToken, ["name": "Racing Visitor"])
            let shortId = visitor["shortId"] as! String
            let ports = [a.port, b.port]
            let results = runConcurrently(CheckInRaceTests.threads) { index, startGate in
                let client = LoopbackHTTPClient(port: ports[index % 2])
                _ = try client.get("/api/healthz")
                startGate()
                let answer = try client.send("POST", "/api/visitor-scanner/checkin", token: site.scanner, json: ["shortId": shortId])
                guard answer.status == 200, let result = answer.json?["result"] as? String else {
                    throw TestFailure("check-in answered \(answer.status): \(answer.text)")
                }
                return result
            }
            let answers = try results.map { try $0.get() }
            #expect(answers.filter { $0 == "CHECKED_IN" }.count == 1)
            #expect(answers.filter { $0 == "ALREADY_CHECKED_IN" }.count == CheckInRaceTests.threads - 1)
            #expect(try b.history(site.ownerToken, "result=CHECKED_IN").count == 1)
        }
    }

    @Test func aLoginOnOneWorksOnTheOther() throws {
        try withTwoInstances { a, b in
            let owner = try a.addUser("owner@acme.test", role: .owner)
            let token = try a.login(owner.email)
            let me = try b.client().get("/api/auth/me", token: token)
            #expect(me.status == 200, "\(me.text)")
            let heardBefore = b.store.principalGeneration.load(ordering: .acquiring)
            let out = try a.client().send("POST", "/api/auth/logout", token: token, json: [String: Any]())
            #expect(out.status == 200 || out.status == 204, "\(out.text)")
            // B used its cached session for `me`; it drops it when A's NOTIFY arrives.
            #expect(b.store.principalChanges.wait(timeout: 20) { b.store.principalGeneration.load(ordering: .acquiring) > heardBefore })
            #expect(try b.client().get("/api/auth/me", token: token).status == 401)
        }
    }

    @Test func anEventCausedOnOneArrivesOnAStreamHeldOnTheOther() throws {
        try withTwoInstances { a, b in
            let site = try a.makeSite()
            let stream = try SSETestClient(port: b.port, token: site.ownerToken)
            let visitor = try a.createVisitor(site.ownerToken, ["name": "Crossing Over"])
            let answer = try a.client().send("POST", "/api/visitor-scanner/checkin", token: site.scanner,
                                             json: ["shortId": visitor["shortId"] as! String])
            #expect(answer.status == 200)
            let frame = stream.nextEvent(timeout: 30)
            #expect(frame?.event == "visitor.arrived")
            // Reconnecting to the first instance from that id replays nothing twice.
            let replay = try SSETestClient(port: a.port, token: site.ownerToken, lastEventId: frame?.id.map(String.init))
            let more = try a.client().send("POST", "/api/visitor-scanner/checkin", token: site.scanner,
                                           json: ["shortId": try a.createVisitor(site.ownerToken, ["name": "Second"])["shortId"] as! String])
            #expect(more.status == 200)
            // Every event after the one B delivered, in order, none twice, up to the second arrival.
            var seen: [Int64] = []
            while let next = replay.nextEvent(timeout: 30), let id = next.id {
                seen.append(id)
                if next.event == "visitor.arrived" { break }
            }
            let first = try #require(frame?.id)
            #expect(!seen.isEmpty && seen == seen.sorted() && Set(seen).count == seen.count && seen.allSatisfy { $0 > first },
                    "\(seen) after \(first)")
        }
    }

    @Test func anIdempotentReplaySentToTheOtherInstanceIsRecognised() throws {
        try withTwoInstances { a, b in
            let site = try a.makeSite()
            let visitor = try a.createVisitor(site.ownerToken, ["name": "Once Only"])
            let body: [String: Any] = ["shortId": visitor["shortId"] as! String]
            let first = try a.client().send("POST", "/api/visitor-scanner/checkin", token: site.scanner,
                                            headers: ["Idempotency-Key": "two-instances-1"], json: body)
            let second = try b.client().send("POST", "/api/visitor-scanner/checkin", token: site.scanner,
                                             headers: ["Idempotency-Key": "two-instances-1"], json: body)
            #expect(first.status == 200 && second.status == 200)
            #expect(first.json?["scanId"] as? String == second.json?["scanId"] as? String)
            #expect(second.json?["result"] as? String == "CHECKED_IN")
            #expect(try b.history(site.ownerToken, "").count == 1)
        }
    }

    @Test func theOTPLimitHoldsAcrossBoth() throws {
        try withTwoInstances(configure: { $0.otpSendsPerHour = 4 }) { a, b in
            let user = try a.addUser("limited@acme.test", role: .owner)
            var statuses: [Int] = []
            for index in 0..<6 {
                let server = index % 2 == 0 ? a : b
                statuses.append(try server.client().send("POST", "/api/auth/send-otp", json: ["email": user.email]).status)
                a.clock.advance(by: 31)
            }
            #expect(statuses == [202, 202, 202, 202, 429, 429], "\(statuses)")
        }
    }

    @Test func aLogoutOnOneEndsTheStreamsOfThatSessionOnTheOtherAtOnce() throws {
        try withTwoInstances { a, b in
            let owner = try a.addUser("owner@acme.test", role: .owner)
            let token = try a.login(owner.email)
            let stream = try SSETestClient(port: b.port, token: token)
            let out = try a.client().send("POST", "/api/auth/logout", token: token, json: [String: Any]())
            #expect(out.status == 200 || out.status == 204, "\(out.text)")
            // B hears of it by NOTIFY; without it B would end the stream only at its 30-second
            // revalidation, after this bound (which otherwise only catches a hang).
            let deadline = Date().addingTimeInterval(20)
            while !stream.ended, Date() < deadline { _ = stream.nextFrame(timeout: deadline.timeIntervalSinceNow) }
            #expect(stream.ended)
        }
    }

    @Test func statsOnOneCountACheckInOnTheOther() throws {
        try withTwoInstances { a, b in
            let site = try a.makeSite()
            func onSite() throws -> Int? {
                try b.client().get("/api/visitor-scanner/stats", token: site.scanner).json?["onSite"] as? Int
            }
            #expect(try onSite() == 0)
            let visitor = try a.createVisitor(site.ownerToken, ["name": "Counted"])
            let answer = try a.client().send("POST", "/api/visitor-scanner/checkin", token: site.scanner,
                                             json: ["shortId": visitor["shortId"] as! String])
            #expect(answer.status == 200)
            // B's cached answer is dropped when A's commit is announced (another server's state: polled).
            #expect(try eventually { try onSite() == 1 })
        }
    }

    @Test func aPeriodicJobRunsOnOneServerAtATime() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let (a, b) = (try ServerDatabase.open(.postgres(url: url)), try ServerDatabase.open(.postgres(url: url)))
        defer { a.close(); b.close() }
        for job in PeriodicJob.allCases {
            var ranOnB: [Bool] = []
            let ranOnA = a.runExclusively(job) {
                ranOnB.append(b.runExclusively(job) { Issue.record("\(job) ran on both servers at once") })
            }
            #expect(ranOnA && ranOnB == [false])
            // Once A is done, B takes its turn.
            #expect(b.runExclusively(job) {})
        }
    }

    @Test func theLimitOnWrongEnrolmentCodesHoldsAcrossBoth() throws {
        try withTwoInstances { a, b in
            let site = try a.makeSite()
            // At the start of a minute, so the ten wrong codes fall in one window.
            a.clock.set(Date(timeIntervalSince1970: (a.clock.now().timeIntervalSince1970 / 60).rounded(.down) * 60 + 60))
            for index in 0..<10 {
                let server = index % 2 == 0 ? a : b
                let answer = try server.post("/api/visitor-scanner/enrol", ["enrolmentCode": "AAAA-AAAA-AAA\(index % 10)"])
                #expect(answer.isError(401, "UNAUTHORIZED"), "\(index): \(answer.text)")
            }
            let fresh = try a.enrolmentCode(site.mainGate, token: site.ownerToken)
            for server in [a, b] {
                let throttled = try server.post("/api/visitor-scanner/enrol", ["enrolmentCode": fresh])
                #expect(throttled.isError(429, "RATE_LIMITED"), "\(throttled.text)")
            }
            a.clock.advance(by: 60)
            #expect(try b.enrol(fresh).hasPrefix("gp1."), "the next minute takes codes again")
        }
    }

    /// PostgreSQL ends every connection of the servers (a restart, a failover): a request in
    /// flight may get 503, never 500, and the next ones succeed on new connections.
    @Test func theServersReconnectAfterPostgresDropsTheirConnections() throws {
        try withTwoInstances { a, b in
            let site = try a.makeSite()
            let admin = try PGConnection(url: a.server.application.configuration.database)
            defer { admin.close() }
            _ = try admin.query("""
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE application_name LIKE 'gatepass%' AND datname = current_database() AND pid <> pg_backend_pid()
                """) { _ in () }
            for server in [a, b] {
                var statuses: [Int] = []
                for index in 0..<3 {
                    let visitor = try? server.createVisitor(site.ownerToken, ["name": "After the restart \(index)"])
                    statuses.append(visitor == nil ? 503 : 201)
                    if visitor != nil { break }
                }
                #expect(statuses.last == 201, "\(statuses)")
                let stats = try server.client().get("/api/visitor-scanner/stats", token: site.scanner)
                #expect(stats.status == 200 || stats.status == 503, "\(stats.text)")
            }
            // Both hear each other again: a check-in on A reaches a stream on B.
            let stream = try SSETestClient(port: b.port, token: site.ownerToken)
            let visitor = try a.createVisitor(site.ownerToken, ["name": "Heard"])
            let answer = try a.client().send("POST", "/api/visitor-scanner/checkin", token: site.scanner,
                                             json: ["shortId": visitor["shortId"] as! String])
            #expect(answer.status == 200, "\(answer.text)")
            #expect(stream.nextEvent(timeout: 30)?.event == "visitor.arrived")
        }
    }

    /// A duplicate that reaches the other instance while the first is still in progress: both
    /// wait on the database's write lock (held here by the test, as a long write would), and
    /// the one that runs second finds the stored answer and replays it.
    @Test func aDuplicateInProgressOnTheOtherInstanceIsReplayedNotAppliedTwice() throws {
        try withTwoInstances { a, b in
            let site = try a.makeSite()
            let shortId = try a.createVisitor(site.ownerToken, ["name": "In Progress"])["shortId"] as! String
            let scanner = site.scanner
            let holder = try PGConnection(url: a.server.application.configuration.database)
            defer { holder.close() }
            try holder.executeScript("BEGIN")
            _ = try holder.execute("SELECT pg_advisory_xact_lock(?)", [PostgresLocks.writer])
            let answers = Locked<[Int: (status: Int, scanId: String?, replayed: Bool)]>([:])
            let done = DispatchGroup()
            for (index, port) in [a.port, b.port].enumerated() {
                done.enter()
                Thread {
                    defer { done.leave() }
                    let answer = try? LoopbackHTTPClient(port: port).send(
                        "POST", "/api/visitor-scanner/checkin", token: scanner,
                        headers: ["Idempotency-Key": "in-progress-1"], json: ["shortId": shortId])
                    answers.withLock {
                        $0[index] = (answer?.status ?? 0, answer?.json?["scanId"] as? String,
                                     answer?.headers["idempotent-replayed"] == "true")
                    }
                }.start()
            }
            // Both writers queue behind the lock (PostgreSQL's state: polled).
            #expect(try eventually {
                try holder.scalarInt("""
                    SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
                    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    """) == 2
            })
            try holder.executeScript("COMMIT")
            done.wait()
            let both = answers.withLock { $0 }
            #expect(both[0]?.status == 200 && both[1]?.status == 200, "\(both)")
            #expect(both[0]?.scanId != nil && both[0]?.scanId == both[1]?.scanId, "\(both)")
            #expect([both[0]?.replayed, both[1]?.replayed].filter { $0 == true }.count == 1, "\(both)")
            #expect(try b.history(site.ownerToken, "").count == 1)
        }
    }
}
