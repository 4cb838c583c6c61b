import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassClient
@testable import GatePassServer

@Suite(.serialized) struct OutboxTests {
    /// The story of the issue: the server goes away right after login, a check-in queues,
    /// the server comes back, one drain applies it exactly once with the real scan time.
    @Test func checkInQueuedWhileServerIsDownIsAppliedOnce() throws {
        let world = try ClientWorld()
        try world.addUser("guard@acme.test", role: .admin)
        let admin = try world.token("guard@acme.test")
        let pass = try world.createVisitor(admin)
        let core = try world.core()
        let login = try world.login(core, "guard@acme.test")
        #expect(login.session.scanner?.checkpoint.name == "Main gate")

        world.stop()
        let outcome = try core.checkIn(code: "GP1:\(pass.shortId)", confirmApprovalRequest: false)
        guard case .queued(let entry, let reason) = outcome else { Issue.record("expected queued, got \(outcome)"); return }
        guard case .offline = reason else { Issue.record("expected offline, got \(reason)"); return }
        #expect(try core.store.outboxCount() == 1)
        #expect(entry.attempts == 1)
        #expect(entry.nextAttemptAt > entry.createdAt)

        // Still down: the drain keeps the entry and says so.
        let down = core.drainer.drain(ignoringBackoff: true)
        #expect(down.offline)
        #expect(down.remaining == 1)

        try world.start()
        let report = core.drainer.drain(ignoringBackoff: true)
        #expect(report.applied.count == 1)
        #expect(report.remaining == 0)
        // A second drain finds nothing to do.
        #expect(core.drainer.drain(ignoringBackoff: true).applied.isEmpty)

        let scans = try world.scans(admin)
        #expect(scans.count == 1)
        #expect(scans.first?["result"] as? String == "CHECKED_IN")
        #expect(scans.first?["offline"] as? Bool == true)
        #expect(scans.first?["scannedAt"] as? String == Timestamp(entry.scannedAt!).description)
    }

    @Test func serverErrorsAndTimeoutsAreRetriedWithBackoff() throws {
        let world = try ClientWorld()
        let (admin, pass, proxy, core) = try world.guardBehindProxy(timeout: .milliseconds(500))
        defer { proxy.stop() }

        proxy.set(.serviceUnavailable)
        guard case .queued(let entry, let reason) = try core.checkIn(code: pass.shortId, confirmApprovalRequest: false) else {
            Issue.record("a 503 must queue the check-in"); return
        }
        #expect(reason == .transient(status: 503, message: "injected failure"))
        #expect(entry.attempts == 1)
        // Full jitter: the wait is at most the ceiling for one failure (1 s).
        #expect(entry.nextAttemptAt.timeIntervalSince(entry.createdAt) <= Backoff().ceiling(afterAttempts: 1) + 0.5)

        let again = core.drainer.drain(ignoringBackoff: true)
        #expect(again.deferred.first?.attempts == 2)
        #expect(again.remaining == 1)

        proxy.set(.hold)
        let slow = core.drainer.drain(ignoringBackoff: true)
        #expect(slow.deferred.first?.attempts == 3)
        #expect(slow.deferred.first?.lastError?.contains("did not answer in time") == true)
        #expect(slow.remaining == 1)
        // A backoff that has not run out holds the entry back.
        let waiting = core.drainer.drain()
        #expect(waiting.applied.isEmpty)

        proxy.set(.pass)
        // Let the held request finish, so its proxy thread is free again.
        #expect(proxy.releaseHeld(), "the held request was answered once released")
        let recovered = core.drainer.drain(ignoringBackoff: true)
        let dead = try core.store.deadLetters()
        #expect(recovered.applied.count == 1, "\(dead.map { "\($0.status) \($0.errorCode) \($0.errorMessage)" })")
        // The slow attempt may have reached the server before the client gave up: the
        // idempotency key makes the replay harmless, so there is exactly one scan.
        let scans = try world.scans(admin)
        #expect(scans.count == 1)
        #expect(scans.first?["result"] as? String == "CHECKED_IN")
    }

    /// 429 `RATE_LIMITED` is the server asking to wait, not refusing: the entry stays queued
    /// at least `Retry-After` and is applied once the server takes it (never dead-lettered).
    @Test func rateLimitedWritesWaitForRetryAfterAndAreRetried() throws {
        let world = try ClientWorld()
        let (admin, pass, proxy, core) = try world.guardBehindProxy(timeout: .seconds(5))
        defer { proxy.stop() }

        proxy.set(.rateLimited)
        guard case .queued(let entry, let reason) = try core.checkIn(code: pass.shortId, confirmApprovalRequest: false) else {
            Issue.record("a 429 must queue the check-in"); return
        }
        #expect(reason == .rateLimited(retryAfterSeconds: 30, message: "too many check-ins"))
        #expect(entry.nextAttemptAt.timeIntervalSince(entry.createdAt) >= 30)
        let again = core.drainer.drain(ignoringBackoff: true)
        #expect(again.deadLettered.isEmpty && again.remaining == 1)
        #expect(try core.store.deadLetters().isEmpty)
        #expect(try #require(again.deferred.first).nextAttemptAt.timeIntervalSince(entry.createdAt) >= 30)
        // Before Retry-After has passed, a drain leaves it alone.
        #expect(core.drainer.drain().applied.isEmpty)

        proxy.set(.pass)
        #expect(core.drainer.drain(ignoringBackoff: true).applied.count == 1)
        #expect(try world.scans(admin).count == 1)
    }

    @Test func refusedReplaysAreDeadLetteredAndListed() throws {
        let world = try ClientWorld()
        try world.addUser("guard@acme.test", role: .admin)
        let core = try world.core()
        try world.login(core, "guard@acme.test")
        world.stop()
        guard case .queued = try core.checkIn(code: "ZZZZZZZZ", confirmApprovalRequest: false) else {
            Issue.record("expected queued"); return
        }
        try world.start()
        let report = core.drainer.drain(ignoringBackoff: true)
        #expect(report.deadLettered.count == 1)
        #expect(report.remaining == 0)
        let dead = try core.store.deadLetters()
        #expect(dead.count == 1)
        #expect(dead.first?.status == 404)
        #expect(dead.first?.errorCode == "NOT_FOUND")
        #expect(dead.first?.entry.kind == "checkin")
        // Retry puts it back; refused again, it returns to the dead letters (never dropped).
        #expect(try core.store.retry(id: dead[0].entry.id, now: Date()))
        #expect(try core.store.outboxCount() == 1)
        _ = core.drainer.drain(ignoringBackoff: true)
        #expect(try core.store.deadLetters().count == 1)
        #expect(try core.store.retry(id: 999_999, now: Date()) == false)
    }

    @Test func unauthorizedPausesTheDrainUntilTheNextLogin() throws {
        let world = try ClientWorld()
        let approver = try world.addUser("ap@acme.test", role: .approver)
        try world.addUser("owner@acme.test", role: .owner)
        let owner = try world.token("owner@acme.test")
        let visitor = try world.createVisitor(owner)
        let waiting = try LoopbackHTTPClient(port: world.port).send(
            "POST", "/api/visitors", token: owner, json: ["name": "Mihai", "requiresApproval": true, "approverId": approver.id])
        let waitingId = try #require(waiting.json?["id"] as? String)
        let core = try world.core()
        let session = try world.login(core, "ap@acme.test").session
        world.stop()
        guard case .queued = try core.decide(.approve, visitorId: waitingId, note: "known visitor") else {
            Issue.record("expected queued"); return
        }
        try world.start()
        // The session ends on the server (say, logged out from another terminal).
        _ = try LoopbackHTTPClient(port: world.port).send("POST", "/api/auth/logout", token: session.token, json: [String: String]())
        let paused = core.drainer.drain(ignoringBackoff: true)
        #expect(paused.pausedForLogin != nil)
        #expect(paused.remaining == 1)
        #expect(try core.store.isDrainPaused())
        // While paused, nothing is sent, even on a later drain.
        #expect(core.drainer.drain(ignoringBackoff: true).applied.isEmpty)
        #expect(try core.store.outboxCount() == 1)

        try world.login(core, "ap@acme.test")
        #expect(try core.store.isDrainPaused() == false)
        let resumed = core.drainer.drain(ignoringBackoff: true)
        #expect(resumed.applied.count == 1)
        let decided = try LoopbackHTTPClient(port: world.port).get("/api/visitors/\(waitingId)", token: owner).json
        #expect(decided?["status"] as? String == "APPROVED")
        #expect(decided?["decisionNote"] as? String == "known visitor")
        _ = visitor
    }

    @Test func expiredScannerTokenIsRenewedByTheDrain() throws {
        let world = try ClientWorld()
        try world.addUser("guard@acme.test", role: .admin)
        let admin = try world.token("guard@acme.test")
        let pass = try world.createVisitor(admin)
        let core = try world.core()
        try world.login(core, "guard@acme.test")
        // The stored scanner token stops working (say an admin revoked it): forge one the
        // server does not know, as a revoked token looks to the client.
        var session = try #require(try core.session())
        session.scanner?.scannerToken = "gp1.revoked.token"
        try core.store.saveSession(session)
        guard case .applied = try core.checkIn(code: pass.shortId, confirmApprovalRequest: false) else {
            Issue.record("the check-in should go through with a renewed scanner token"); return
        }
        #expect(try core.session()?.scanner?.scannerToken != "gp1.revoked.token")
    }
}
