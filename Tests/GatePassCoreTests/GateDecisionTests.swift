import Foundation
import Testing
@testable import GatePassCore

/// What the unattended gate shows for each check-in result.
@Suite struct GateDecisionTests {
    static let expected: [(ScanResult, GateDecision.Outcome, String)] = [
        (.checkedIn, .admitted, "ADMITTED  Ana Pop (K7Q2M9XD) — welcome"),
        (.alreadyCheckedIn, .admitted, "ADMITTED  Ana Pop (K7Q2M9XD) — already inside"),
        (.approvalRequired, .approvalRequested, "APPROVAL REQUESTED  Ana Pop (K7Q2M9XD) — this pass needs an approver"),
        (.awaitingApproval, .approvalRequested, "APPROVAL REQUESTED  Ana Pop (K7Q2M9XD) — waiting for an approver"),
        (.rejected, .denied, "DENIED  Ana Pop (K7Q2M9XD) — the visit was rejected"),
        (.cancelled, .denied, "DENIED  Ana Pop (K7Q2M9XD) — the pass was cancelled"),
        (.checkedOut, .denied, "DENIED  Ana Pop (K7Q2M9XD) — the pass was already used (single entry)"),
        (.expired, .denied, "DENIED  Ana Pop (K7Q2M9XD) — the pass has expired"),
        (.notYetValid, .denied, "DENIED  Ana Pop (K7Q2M9XD) — the pass is not valid yet"),
        (.blocked, .denied, "DENIED  Ana Pop (K7Q2M9XD) — entry refused; call security"),
    ]

    @Test(arguments: 0..<expected.count)
    func eachResultHasItsOutcomeAndLine(_ index: Int) {
        let (result, outcome, line) = Self.expected[index]
        let answer = CheckInAnswer(result: result, visitor: Fixture.visitor(status: .expected, requiresApproval: false),
                                   scanId: "scan-1")
        let decision = GateDecision.from(answer, code: "GP1:K7Q2M9XD")
        #expect(decision.outcome == outcome)
        #expect(decision.line == line)
        #expect(decision.result == result.rawValue && decision.code == "GP1:K7Q2M9XD")
        #expect(decision.visitorId == "0b8a2c4e-7d1f-4a6b-9c3e-5f2d1a0b9c8d")
    }

    @Test func refusalsWithoutAVisitorNameTheCode() {
        #expect(GateDecision.refused(.notFound, code: "ZZZZZZZZ").line == "DENIED  ZZZZZZZZ — unknown pass")
        #expect(GateDecision.refused(.invalid, code: "hello").line == "DENIED  hello — not a Gate Pass code")
        #expect(GateDecision.queued(code: "K7Q2M9XD").outcome == .queuedOffline)
        #expect(GateDecision.queued(code: "K7Q2M9XD").line.hasPrefix("QUEUED OFFLINE  K7Q2M9XD — "))
        // A queued GP2 text is named by the short id it carries.
        let text = SignedPassTextTests.pass.text
        #expect(GateDecision.queued(code: text).line.hasPrefix("QUEUED OFFLINE  K7Q2M9XD — "))
        // A text that names no pass is shown as read (escaped), for there is nothing else.
        #expect(GateDecision.queued(code: String(text.dropLast())).line.hasPrefix("QUEUED OFFLINE  \(text.dropLast()) — "))
    }

    @Test func anApproversDecisionIsShownWithTheNote() {
        let approved = GateDecision.decided(Fixture.visitor(status: .approved, requiresApproval: true), code: "K7Q2M9XD")
        #expect(approved.outcome == .admitted && approved.reason == "approved")
        let rejected = GateDecision.decided(Fixture.visitor(status: .rejected, requiresApproval: true), code: "K7Q2M9XD")
        #expect(rejected.outcome == .denied)
        #expect(rejected.line == "DENIED  Ana Pop (K7Q2M9XD) — an approver rejected the visit: not today")
    }

    // MARK: - Offline (issue 13)

    @Test func anOfflineDecisionSaysSoAndHowOldTheCacheIs() {
        let ana = Fixture.visitor(status: .checkedIn, requiresApproval: false)
        let admitted = GateDecision.offline(OfflineDecision(result: .checkedIn, basis: .cachedVisitor, visitor: ana, shortId: ana.shortId),
                                            code: "K7Q2M9XD", cacheAge: 185)
        #expect(admitted.outcome == .admitted)
        #expect(admitted.line == "ADMITTED offline (cache 3 min old)  Ana Pop (K7Q2M9XD) — welcome")
        #expect(admitted.offlineBasis == .cachedVisitor && admitted.cacheAgeSeconds == 185)
        let signed = GateDecision.offline(OfflineDecision(result: .checkedIn, basis: .signature, shortId: ana.shortId),
                                          code: "GP2:K7Q2M9XD.1.2.A1.SIG", cacheAge: 42)
        // Admitted by its signature: the short id, never the pass's raw text.
        #expect(signed.line == "ADMITTED offline (cache 42 s old)  K7Q2M9XD — welcome")
        let forged = GateDecision.offline(OfflineDecision(result: .invalid, basis: .none, shortId: ana.shortId), code: "GP2:forged",
                                          cacheAge: 7200)
        #expect(forged.line == "DENIED offline (cache 2 h old)  K7Q2M9XD — the pass's signature or fields do not check out")
        let noPass = GateDecision.offline(OfflineDecision(result: .invalid, basis: .none), code: "hello", cacheAge: 1)
        #expect(noPass.line == "DENIED offline (cache 1 s old)  hello — not a Gate Pass code")
        let unknown = GateDecision.offline(OfflineDecision(result: .notFound, basis: .none, shortId: ana.shortId), code: "K7Q2M9XD",
                                           cacheAge: nil)
        #expect(unknown.line == "DENIED offline (no cache)  K7Q2M9XD — the server does not answer and this pass cannot be checked here")
        let approval = GateDecision.offline(OfflineDecision(result: .approvalRequired, basis: .signature, shortId: ana.shortId),
                                            code: "K7Q2M9XD", cacheAge: 0)
        #expect(approval.outcome == .approvalRequested)
        #expect(approval.line.hasPrefix("APPROVAL NEEDED offline (cache 0 s old)  K7Q2M9XD — "))
    }

    @Test func aConflictNamesBothDecisions() {
        let answer = CheckInAnswer(result: .alreadyCheckedIn, visitor: Fixture.visitor(status: .checkedIn, requiresApproval: false),
                                   scanId: "s", conflict: true)
        let decision = GateDecision.conflict(answer, offlineDecision: .checkedIn, code: "K7Q2M9XD")
        #expect(decision.conflict == true)
        #expect(decision.line == "CONFLICT  Ana Pop (K7Q2M9XD) — decided CHECKED_IN offline, the server says ALREADY_CHECKED_IN: "
                + "already inside (reported to the admins)")
    }

    @Test func anOnlineDecisionsJSONHasNoOfflineFields() throws {
        let answer = CheckInAnswer(result: .checkedIn, visitor: Fixture.visitor(status: .checkedIn, requiresApproval: false), scanId: "s")
        let json = String(decoding: try JSONEncoder().encode(GateDecision.from(answer, code: "K7Q2M9XD")), as: UTF8.self)
        #expect(!json.contains("offlineBasis") && !json.contains("cacheAgeSeconds") && !json.contains("conflict"))
    }
}
