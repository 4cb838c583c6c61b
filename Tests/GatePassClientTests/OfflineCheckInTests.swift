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
}
