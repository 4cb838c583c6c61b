import CurlHTTP
import Foundation
import GatePassCore
import Testing
@testable import GatePassClient
@testable import GatePassServer

/// An offline scan in the outbox (issue 13): a first try that timed out keeps its entry and its
/// idempotency key, gains the offline decision, and is recognised by the server on replay.
@Suite(.serialized) struct OfflineCheckInTests {
    @Test func aTimedOutTryKeepsItsKeyAndGainsTheOfflineDecision() throws {
        let world = try ClientWorld()
        let (admin, pass, proxy, core) = try world.guardBehindProxy()
        defer { proxy.stop() }
        try core.syncPassCache(timeZone: .current)

        // The kiosk's check-in handle: it gives up after offlineAfterMs while the server holds the answer.
        let quick = CurlSession(options: .init(connectTimeout: .milliseconds(500), requestTimeout: .milliseconds(500)))
        proxy.set(.hold)
        guard case .queued(let entry, let reason) = try core.checkIn(code: pass.shortId, confirmApprovalRequest: false, over: quick) else {
            Issue.record("a try that times out must queue the check-in"); return
        }
        guard case .transient = reason else { Issue.record("expected a timeout, got \(reason)"); return }
        let decision = try core.decideOffline(code: pass.shortId, scannedAt: try #require(entry.scannedAt), policy: .signed)
        #expect(decision.result == .checkedIn)
        try core.attachOfflineDecision(decision.result, to: entry)
        let stored = try #require(try core.store.outboxEntries().first)
        #expect(try core.store.outboxCount() == 1)
        #expect(stored.idempotencyKey == entry.idempotencyKey)
        #expect(stored.scannedAt?.millisecondsSince1970 == entry.scannedAt?.millisecondsSince1970)
        let body = try JSONDecoder().decode(CheckInBody.self, from: Data(try #require(stored.body).utf8))
        #expect(body == CheckInBody(shortId: pass.shortId, confirmApprovalRequest: false, offlineDecision: .checkedIn))

        // The held try reaches the server after all; the replay is recognised as that try.
        proxy.set(.pass)
        #expect(proxy.releaseHeld())
        let report = core.drainer.drain(ignoringBackoff: true)
        #expect(report.applied.count == 1 && report.remaining == 0)
        #expect(try core.store.deadLetters().isEmpty)
        let answer = try APIClient.decode(CheckInAnswer.self, from: try #require(report.answers[entry.id]))
        #expect(answer.result == .checkedIn)
        #expect(answer.conflict != true, "both decided CHECKED_IN")
        let scans = try world.scans(admin)
        #expect(scans.count == 1)
        #expect(scans.first?["result"] as? String == "CHECKED_IN")
    }

    @Test func anAttachToADeliveredEntryChangesNothing() throws {
        let world = try ClientWorld()
        try world.addUser("guard@acme.test", role: .admin)
        let core = try world.core()
        try world.login(core, "guard@acme.test")
        world.stop()
        let entry = try core.queueOfflineCheckIn(code: "K7Q2M9XD", decision: .notFound, scannedAt: Date())
        try core.store.withConnection { _ = try $0.execute("DELETE FROM outbox") }
        try core.attachOfflineDecision(.checkedIn, to: entry)
        #expect(try core.store.outboxCount() == 0)
    }

    /// api.md "Which offline claims count" is judged per device: a login of the same user after
    /// a logout continues the device's scanner token, so a scan admitted offline before still
    /// counts when it is replayed after the new login; another device's token does not.
    @Test func aReloginOfTheSameUserContinuesTheDeviceItsOfflineClaimsAreJudgedBy() throws {
        let world = try ClientWorld()
        try world.addUser("guard@acme.test", role: .admin)
        let admin = try world.token("guard@acme.test")
        let pass = try world.createVisitor(admin, name: "Cora Cached")
        let core = try world.core()
        try world.login(core, "guard@acme.test")
        try core.syncPassCache(timeZone: .current)
        let first = try #require(try core.session()?.scanner?.scannerToken)
        let decision = try core.decideOffline(code: pass.shortId, scannedAt: Date(), policy: .cachedOnly)
        #expect(decision.result == .checkedIn)
        try core.queueOfflineCheckIn(code: pass.shortId, decision: decision.result, scannedAt: Date())
        _ = try core.logout()
        try world.login(core, "guard@acme.test")
        let second = try #require(try core.session()?.scanner?.scannerToken)
        #expect(second != first)
        let report = core.drainer.drain(ignoringBackoff: true)
        #expect(report.applied.count == 1 && report.remaining == 0)
        let answer = try APIClient.decode(CheckInAnswer.self, from: try #require(report.answers.values.first))
        #expect(answer.result == .checkedIn && answer.conflict != true, "the claim counts: \(answer)")

        // A device that never loaded the pass: its bare short id does not count.
        let other = try world.createVisitor(admin, name: "Una Unknown")
        let stranger = try world.core(directory: StateDirectory(path: world.directory + "/stranger"))
        try world.login(stranger, "guard@acme.test")
        try stranger.queueOfflineCheckIn(code: other.shortId, decision: .checkedIn, scannedAt: Date())
        let refused = stranger.drainer.drain(ignoringBackoff: true)
        let refusal = try APIClient.decode(CheckInAnswer.self, from: try #require(refused.answers.values.first))
        #expect(refusal.conflict == true && refusal.visitor.status == .expected, "\(refusal)")
    }
}
