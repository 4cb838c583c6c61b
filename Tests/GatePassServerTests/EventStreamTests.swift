import Foundation
import GatePassCore
import LoopbackHTTP
import SQLite
import Testing
@testable import GatePassServer

extension TestServer {
    func stream(_ token: String?, lastEventId: Int64? = nil, deviceToken: String? = nil) throws -> SSETestClient {
        let client = try SSETestClient(port: port, token: token, lastEventId: lastEventId.map(String.init),
                                       deviceToken: deviceToken)
        guard client.answer.status == 200 else { throw TestFailure("stream: \(client.answer.status) \(client.answer.text)") }
        return client
    }

    /// A visitor who needs approval, asked for at the site's gate: `visitor.awaiting`.
    @discardableResult
    func awaitingVisitor(_ site: Site, _ fields: [String: Any] = [:]) throws -> [String: Any] {
        var body: [String: Any] = ["name": "Waiting Guest", "requiresApproval": true]
        body.merge(fields) { $1 }
        let visitor = try createVisitor(site.ownerToken, body)
        let answer = try checkIn(site.scanner, visitor["shortId"] as! String, ["confirmApprovalRequest": true])
        guard answer.string("result") == "AWAITING_APPROVAL" else { throw TestFailure("check-in: \(answer.text)") }
        return visitor
    }

    func registerDevice(_ token: String, _ device: String, approver: Bool = false) throws {
        let path = approver ? "/api/approver/devices/register" : "/api/visitors/devices/register"
        let answer = try post(path, token: token, ["token": device, "platform": "console"])
        guard answer.status == 200 else { throw TestFailure("register: \(answer.text)") }
    }
}

func kinds(_ frames: [SSEFrame]) -> [String] { frames.compactMap(\.event) }

/// api.md "Events (server-sent events)": kinds, ids, replay and the audience rules.
@Suite struct EventStreamTests {
    @Test func theStreamIsAnEventStreamThatStartsAtNow() throws {
        try withSite { server, site in
            try server.awaitingVisitor(site)   // before the stream: not replayed
            let stream = try server.stream(site.ownerToken)
            #expect(stream.answer.headers["content-type"]?.hasPrefix("text/event-stream") == true)
            #expect(stream.answer.headers["cache-control"] == "no-store")
            #expect(stream.drain(for: 0.3).isEmpty)
            try server.awaitingVisitor(site, ["name": "After"])
            let events = stream.events(2)
            #expect(kinds(events) == ["visitor.awaiting", "notification.new"])
            #expect((events.first?.json?["visitor"] as? [String: Any])?["name"] as? String == "After")
        }
    }

    @Test func everyKindOfEventArrivesWithItsData() throws {
        try withSite { server, site in
            try server.registerDevice(site.ownerToken, "owner-console")
            let stream = try server.stream(site.ownerToken, deviceToken: "owner-console")
            // visitor.awaiting, with the scan that asked
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Every Kind", "requiresApproval": true])
            let id = visitor["id"] as! String
            let shortId = visitor["shortId"] as! String
            let asked = try server.checkIn(site.scanner, shortId, ["confirmApprovalRequest": true])
            var events = stream.events(2)
            #expect(kinds(events) == ["visitor.awaiting", "notification.new"])
            let awaiting = try #require(events.first?.json)
            #expect(Set((awaiting["visitor"] as? [String: Any])?.keys.map { $0 } ?? []) == Shape.visitor)
            #expect(awaiting["scanId"] as? String == asked.string("scanId"))
            #expect(awaiting["checkpointId"] as? String == site.mainGate)
            let notification = try #require(events.last?.json?["notification"] as? [String: Any])
            #expect(Set(notification.keys) == ["id", "kind", "title", "visitorId", "createdAt", "readAt"])
            #expect(notification["id"] as? String == events.first?.id.map(String.init))
            #expect(notification["kind"] as? String == "visitor.awaiting" && notification["visitorId"] as? String == id)
            #expect(notification["readAt"] is NSNull)
            // visitor.decided
            #expect(try server.post("/api/approver/visitors/\(id)/approve", token: site.approverToken).status == 200)
            events = stream.events(2)
            #expect(kinds(events) == ["visitor.decided", "notification.new"])
            #expect((events.first?.json?["visitor"] as? [String: Any])?["status"] as? String == "APPROVED")
            // visitor.arrived
            let arrived = try server.checkIn(site.scanner, shortId)
            events = stream.events(2)
            #expect(kinds(events) == ["visitor.arrived", "notification.new"])
            #expect(events.first?.json?["scanId"] as? String == arrived.string("scanId"))
            // visitor.departed
            #expect(try server.checkOut(site.scanner, shortId).string("result") == "CHECKED_OUT")
            events = stream.events(2)
            #expect(kinds(events) == ["visitor.departed", "notification.new"])
            #expect((events.first?.json?["visitor"] as? [String: Any])?["status"] as? String == "CHECKED_OUT")
            // request.created (walk-in)
            let walkIn = try server.post("/api/visitor-scanner/walk-in-arrived", token: site.scanner, ["name": "Walk Inn"])
            #expect(walkIn.status == 201)
            events = stream.events(2)
            #expect(kinds(events) == ["request.created", "notification.new"])
            #expect((events.first?.json?["visitor"] as? [String: Any])?["walkIn"] as? Bool == true)
            // notification.read and notification.deleted
            let newest = try #require(events.first?.id)
            #expect(try server.post("/api/notifications/\(newest)/read", token: site.ownerToken).status == 200)
            events = stream.events(1)
            #expect(kinds(events) == ["notification.read"])
            #expect((events.first?.json?["notification"] as? [String: Any])?["readAt"] is String)
            let deleted = try server.client().send("DELETE", "/api/notifications/\(newest)",
                                                  headers: ["Authorization": "Bearer \(site.ownerToken)"])
            #expect(deleted.status == 204)
            events = stream.events(1)
            #expect(kinds(events) == ["notification.deleted"])
            #expect(events.first?.json?["id"] as? String == String(newest))
            // push.test to this device
            let test = try server.post("/api/admin/push-test", token: site.ownerToken, ["token": "owner-console"])
            #expect(test.status == 200)
            events = stream.events(2)
            #expect(kinds(events) == ["push.test", "notification.new"])
            #expect(events.first?.json?["message"] is String)
            // Ids are one increasing sequence.
            #expect(stream.drain(for: 0.2).isEmpty)
        }
    }

    @Test func idsIncreaseAcrossTheWholeStream() throws {
        try withSite { server, site in
            let stream = try server.stream(site.ownerToken)
            for index in 0..<5 { try server.awaitingVisitor(site, ["name": "Guest \(index)"]) }
            let ids = stream.events(10).compactMap(\.id)
            #expect(ids.count == 10 && ids == ids.sorted() && Set(ids).count == 10)
        }
    }

    /// api.md: OWNER/ADMIN every event of the organization; an APPROVER those of visitors
    /// assigned to it or unassigned; a scanner token those of its checkpoint (plus decisions
    /// of what it asked for); PLATFORM_ADMIN and other organizations nothing.
    @Test func eachStreamGetsExactlyItsAudience() throws {
        try withServer { server in
            let site = try server.makeSite("Acme", domain: "acme.test")
            let other = try server.makeSite("Globex", domain: "globex.test")
            try server.addUser("platform@gatepass.test", role: .platformAdmin, organization: "Platform")
            let platform = try server.login("platform@gatepass.test")
            let north = try server.post("/api/checkpoints", token: site.ownerToken, ["name": "North gate"])
            let northScanner = try server.scannerToken(site.ownerToken, checkpointId: north.string("id"))

            let owner = try server.stream(site.ownerToken)
            let admin = try server.stream(site.adminToken)
            let approver = try server.stream(site.approverToken)
            let desk = try server.stream(site.deskToken)
            let mainGate = try server.stream(site.scanner)
            let northGate = try server.stream(northScanner)
            let platformStream = try server.stream(platform)
            let otherOwner = try server.stream(other.ownerToken)
            let otherScanner = try server.stream(other.scanner)

            // Assigned to the desk approver, asked for at the main gate, then decided by the desk.
            let assigned = try server.awaitingVisitor(site, ["name": "Desk's Guest", "approverId": site.desk.id])
            #expect(try server.post("/api/approver/visitors/\(assigned["id"] as! String)/reject", token: site.deskToken).status == 200)
            // Unassigned, at the main gate.
            try server.awaitingVisitor(site, ["name": "Anyone's Guest"])

            let everything = ["visitor.awaiting", "notification.new", "visitor.decided", "notification.new",
                              "visitor.awaiting", "notification.new"]
            #expect(kinds(owner.events(6)) == everything)
            #expect(kinds(admin.events(6)) == everything)
            #expect(kinds(desk.events(6)) == everything)
            // Not the desk's visitor: only the unassigned one.
            let approverSaw = approver.events(2)
            #expect(kinds(approverSaw) == ["visitor.awaiting", "notification.new"])
            #expect((approverSaw.first?.json?["visitor"] as? [String: Any])?["name"] as? String == "Anyone's Guest")
            // The main gate asked for both and gets the decision; no notifications for scanners.
            #expect(kinds(mainGate.events(3)) == ["visitor.awaiting", "visitor.decided", "visitor.awaiting"])
            for stream in [approver, mainGate, owner, admin, desk] { #expect(stream.drain(for: 0.2).isEmpty) }
            for stream in [northGate, platformStream, otherOwner, otherScanner] {
                #expect(stream.drain(for: 0.3).isEmpty)
            }
        }
    }

    @Test func aDroppedConnectionResumesWithoutAGap() throws {
        try withSite { server, site in
            var stream = try server.stream(site.ownerToken)
            try server.awaitingVisitor(site, ["name": "One"])
            let first = stream.events(2)
            let lastSeen = try #require(first.last?.id)
            stream.close()
            // Missed while disconnected.
            try server.awaitingVisitor(site, ["name": "Two"])
            try server.awaitingVisitor(site, ["name": "Three"])
            stream = try server.stream(site.ownerToken, lastEventId: lastSeen)
            let replayed = stream.events(4)
            #expect(kinds(replayed) == ["visitor.awaiting", "notification.new", "visitor.awaiting", "notification.new"])
            #expect(replayed.compactMap(\.id) == Array((lastSeen + 1)...(lastSeen + 4)))
            #expect(replayed.compactMap { ($0.json?["visitor"] as? [String: Any])?["name"] as? String } == ["Two", "Three"])
            // Then live, without repeating anything.
            try server.awaitingVisitor(site, ["name": "Four"])
            #expect(stream.events(2).first?.id == lastSeen + 5)
            #expect(stream.drain(for: 0.2).isEmpty)
        }
    }

    @Test func aRestartedServerResumesFromTheLog() throws {
        try withTemporaryDirectory { directory in
            var configuration = ServerConfiguration()
            configuration.database = directory + "/gatepass.db"
            configuration.port = 0
            configuration.threads = 4
            configuration.sqliteSynchronous = "NORMAL"
            configuration.timeZone = "UTC"
            let clock = TestClock(Timestamp.parse("2026-11-29T12:00:00Z")!)
            var first: GatePassServer? = try GatePassServer(configuration: configuration, devMode: true, clock: clock,
                                                            logSink: RecordingLog())
            defer { first?.stop(grace: .seconds(1)) }
            let before = TestServer(server: first!, clock: clock, log: RecordingLog(), directory: directory)
            let site = try before.makeSite()
            let stream = try before.stream(site.ownerToken)
            try before.awaitingVisitor(site, ["name": "Before"])
            let lastSeen = try #require(stream.events(2).last?.id)
            first?.stop(grace: .seconds(1))
            first = nil
            #expect(stream.nextFrame(timeout: 2) == nil && stream.ended, "a stopping server ends its streams")

            let second = try GatePassServer(configuration: configuration, devMode: true, clock: clock, logSink: RecordingLog())
            defer { second.stop(grace: .seconds(1)) }
            let after = TestServer(server: second, clock: clock, log: RecordingLog(), directory: directory)
            // Written while no stream was connected.
            try after.awaitingVisitor(site, ["name": "While Away"])
            let resumed = try after.stream(site.ownerToken, lastEventId: lastSeen)
            let replayed = resumed.events(2)
            #expect(replayed.first?.id == lastSeen + 1)
            #expect((replayed.first?.json?["visitor"] as? [String: Any])?["name"] as? String == "While Away")
            #expect(resumed.drain(for: 0.2).isEmpty)
        }
    }

    @Test func aPurgedResumePointGetsStreamGapThenEverythingKept() throws {
        try withSite { server, site in
            try server.awaitingVisitor(site, ["name": "Old"])            // events 1, 2
            server.clock.advance(by: 31 * 24 * 3600)                      // past the 720 h retention
            var site = site                                               // logins of a month ago have expired
            site.ownerToken = try server.login(site.owner.email)
            site.scanner = try server.scannerToken(site.ownerToken)
            try server.awaitingVisitor(site, ["name": "Kept"])           // events 3, 4
            server.server.application.purgeExpiredRecords()
            let stream = try server.stream(site.ownerToken, lastEventId: 1)
            let frames = stream.events(3)
            #expect(kinds(frames) == ["stream.gap", "visitor.awaiting", "notification.new"])
            #expect(frames.first?.id == nil && frames.first?.json?["oldestKeptId"] as? Int == 3)
            #expect(frames.dropFirst().compactMap(\.id) == [3, 4])
            // A resume point that is still kept gets no gap.
            let fine = try server.stream(site.ownerToken, lastEventId: 3)
            #expect(kinds(fine.events(1)) == ["notification.new"])
            // An id from the future (a restored database): gap, then live from now.
            let future = try server.stream(site.ownerToken, lastEventId: 999)
            #expect(kinds(future.events(1)) == ["stream.gap"])
            try server.awaitingVisitor(site, ["name": "Later"])
            #expect(future.events(2).first?.id == 5)
        }
    }

    @Test func idleStreamsArePinged() throws {
        try withSite(configure: { $0.eventPingSeconds = 1 }) { server, site in
            let stream = try server.stream(site.ownerToken)
            // The default interval is 15 s: a ping within 10 s comes from the 1 s setting.
            let frame = stream.nextFrame(timeout: 10)
            #expect(frame?.comment == "ping")
        }
    }

    @Test(arguments: ["abc", "-1", "1.5", "99999999999999999999999", "1 2", "0x10"])
    func aMalformedLastEventIdIs400(_ value: String) throws {
        try withSite { server, site in
            let answer = try SSETestClient(port: server.port, headers: ["Authorization": "Bearer \(site.ownerToken)",
                                                                        "Last-Event-ID": value]).answer
            #expect(answer.isError(400, "BAD_REQUEST") && answer.errorMessage.contains("Last-Event-ID"), "\(value): \(answer.text)")
        }
    }

    /// api.md: after logout "the token (and scanner tokens it made) stop working at once" —
    /// open streams included.
    @Test func logoutEndsTheSessionsOpenStreams() throws {
        try withSite { server, site in
            let owner = try server.stream(site.ownerToken)
            let gate = try server.stream(site.scanner)      // made by the owner's session
            let admin = try server.stream(site.adminToken)
            #expect(try server.post("/api/auth/logout", token: site.ownerToken).status == 204)
            #expect(owner.nextFrame(timeout: 3) == nil && owner.ended)
            #expect(gate.nextFrame(timeout: 3) == nil && gate.ended)
            try server.awaitingVisitor(Site(organization: site.organization, domain: site.domain, owner: site.owner,
                                            ownerToken: site.adminToken, admin: site.admin, adminToken: site.adminToken,
                                            approver: site.approver, approverToken: site.approverToken, desk: site.desk,
                                            deskToken: site.deskToken, scanner: try server.scannerToken(site.adminToken),
                                            mainGate: site.mainGate))
            #expect(kinds(admin.events(1)) == ["visitor.awaiting"], "other sessions are untouched")
        }
    }

    @Test func withoutATokenTheStreamIs401() throws {
        try withSite { server, _ in
            let anonymous = try SSETestClient(port: server.port, token: nil).answer
            let garbage = try SSETestClient(port: server.port, token: "gp1.bad.token").answer
            #expect(anonymous.isError(401, "UNAUTHORIZED") && garbage.isError(401, "UNAUTHORIZED"))
        }
    }

    /// Streams must not pin a thread each: 500 idle streams on an 8-thread server, and the
    /// API still answers, and every stream still gets the next event.
    @Test func fiveHundredIdleStreamsAndTheAPIStillAnswers() throws {
        raiseOpenFileLimit()
        // All 500 come from one address, far over the default per-address cap of 64.
        try withSite(configure: { $0.maxConnectionsPerIP = 1_000 }) { server, site in
            var streams: [SSETestClient] = []
            for index in 0..<500 {
                streams.append(try server.stream(index % 2 == 0 ? site.ownerToken : site.adminToken))
            }
            #expect(server.server.application.eventHub.streamCount == 500)
            for _ in 0..<20 {
                #expect(try server.get("/api/healthz").status == 200)
            }
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Busy Day"])
            #expect(try server.checkIn(site.scanner, visitor["shortId"] as! String).string("result") == "CHECKED_IN")
            var received = 0
            for stream in streams where stream.nextEvent(timeout: 10)?.event == "visitor.arrived" { received += 1 }
            #expect(received == 500)
            for stream in streams { stream.close() }
        }
    }
}

func raiseOpenFileLimit() {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

/// The event log is a transactional outbox: a change and its event commit together or not at all.
@Suite struct TransactionalEventTests {
    /// Makes the next statement of `table` fail inside the writer's transaction.
    func injectFailure(on table: String, _ server: TestServer) throws {
        let connection = try Connection(path: server.store.path)
        try connection.executeScript("""
            CREATE TRIGGER injected_failure BEFORE INSERT ON \(table) BEGIN SELECT RAISE(ABORT, 'injected failure'); END;
            """)
        connection.close()
    }

    func removeFailure(_ server: TestServer) throws {
        let connection = try Connection(path: server.store.path)
        try connection.executeScript("DROP TRIGGER injected_failure;")
        connection.close()
    }

    func count(_ sql: String, _ server: TestServer) throws -> Int {
        try server.store.readConnection { db in try db.queryFirst(sql) { try $0.int(0) } ?? -1 }
    }

    @Test func aFailedEventWriteUndoesTheCheckIn() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Atomic Guest"])
            let scansBefore = try count("SELECT COUNT(*) FROM scans", server)
            try injectFailure(on: "events", server)
            let failed = try server.checkIn(site.scanner, visitor["shortId"] as! String)
            #expect(failed.status == 500)
            #expect(try server.visitor(visitor["id"], site.ownerToken)["status"] as? String == "EXPECTED")
            #expect(try count("SELECT COUNT(*) FROM scans", server) == scansBefore)
            #expect(try count("SELECT COUNT(*) FROM events", server) == 0)
            try removeFailure(server)
            #expect(try server.checkIn(site.scanner, visitor["shortId"] as! String).string("result") == "CHECKED_IN")
            #expect(try count("SELECT COUNT(*) FROM events WHERE kind = 'visitor.arrived'", server) == 1)
        }
    }

    /// A failure after the event was written (here: storing the idempotent answer, the last
    /// statement of the transaction) takes the event back with the change.
    @Test func aFailureAfterTheEventTakesBothBack() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Atomic Guest", "requiresApproval": true])
            let stream = try server.stream(site.ownerToken)
            try injectFailure(on: "idempotency_keys", server)
            let failed = try server.checkIn(site.scanner, visitor["shortId"] as! String, ["confirmApprovalRequest": true],
                                            headers: ["Idempotency-Key": "atomic-1"])
            #expect(failed.status == 500)
            #expect(try count("SELECT COUNT(*) FROM events", server) == 0)
            #expect(try server.visitor(visitor["id"], site.ownerToken)["status"] as? String == "EXPECTED")
            #expect(stream.drain(for: 0.3).isEmpty)
            try removeFailure(server)
            let retried = try server.checkIn(site.scanner, visitor["shortId"] as! String, ["confirmApprovalRequest": true],
                                             headers: ["Idempotency-Key": "atomic-1"])
            #expect(retried.string("result") == "AWAITING_APPROVAL")
            #expect(kinds(stream.events(2)) == ["visitor.awaiting", "notification.new"])
        }
    }
}
