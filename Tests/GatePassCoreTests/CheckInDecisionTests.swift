import Foundation
import Testing
@testable import GatePassCore

/// api.md "Check-in decision" and "Precise rules" (decision precedence, offline replays).
@Suite("Check-in decision")
struct CheckInDecisionTests {

    // MARK: - The decision table, written out from api.md

    /// What a scan must do to the stored visitor.
    enum Effect: Sendable {
        /// Nothing: the visitor comes back equal, no event.
        case none
        /// status → CHECKED_IN, `checkedInAt` = judged time, `checkpointId`; event `visitor.arrived`.
        case checkIn
        /// status → AWAITING_APPROVAL, `approvalRequestedAt`; event `visitor.awaiting`.
        case requestApproval
    }

    struct Outcome: Sendable {
        var result: ScanResult
        var effect: Effect
        init(_ result: ScanResult, _ effect: Effect = .none) {
            self.result = result
            self.effect = effect
        }
    }

    /// One line of the table: the expected outcome before the window opens, inside it (both
    /// boundary instants included), and after it closes.
    struct Row: Sendable, CustomTestStringConvertible {
        var status: VisitorStatus
        var requiresApproval: Bool
        var confirm: Bool
        var before: Outcome
        var inside: Outcome
        var after: Outcome

        var testDescription: String {
            "\(status.rawValue) requiresApproval=\(requiresApproval) confirm=\(confirm)"
        }
    }

    static let notYetValid = Outcome(.notYetValid)
    static let expired = Outcome(.expired)
    static let checkIn = Outcome(.checkedIn, .checkIn)

    /// Every status × requiresApproval × confirmApprovalRequest (7 × 2 × 2 = 28 rows).
    static let table: [Row] = [
        // EXPECTED: admitted inside the window unless it needs approval.
        Row(status: .expected, requiresApproval: false, confirm: false,
            before: notYetValid, inside: checkIn, after: expired),
        Row(status: .expected, requiresApproval: false, confirm: true,
            before: notYetValid, inside: checkIn, after: expired),
        Row(status: .expected, requiresApproval: true, confirm: false,
            before: notYetValid, inside: Outcome(.approvalRequired), after: expired),
        Row(status: .expected, requiresApproval: true, confirm: true,
            before: notYetValid, inside: Outcome(.awaitingApproval, .requestApproval), after: expired),
        // AWAITING_APPROVAL: stays waiting inside the window, whatever the flags.
        Row(status: .awaitingApproval, requiresApproval: false, confirm: false,
            before: notYetValid, inside: Outcome(.awaitingApproval), after: expired),
        Row(status: .awaitingApproval, requiresApproval: false, confirm: true,
            before: notYetValid, inside: Outcome(.awaitingApproval), after: expired),
        Row(status: .awaitingApproval, requiresApproval: true, confirm: false,
            before: notYetValid, inside: Outcome(.awaitingApproval), after: expired),
        Row(status: .awaitingApproval, requiresApproval: true, confirm: true,
            before: notYetValid, inside: Outcome(.awaitingApproval), after: expired),
        // APPROVED: admitted inside the window.
        Row(status: .approved, requiresApproval: false, confirm: false,
            before: notYetValid, inside: checkIn, after: expired),
        Row(status: .approved, requiresApproval: false, confirm: true,
            before: notYetValid, inside: checkIn, after: expired),
        Row(status: .approved, requiresApproval: true, confirm: false,
            before: notYetValid, inside: checkIn, after: expired),
        Row(status: .approved, requiresApproval: true, confirm: true,
            before: notYetValid, inside: checkIn, after: expired),
        // REJECTED, CANCELLED, CHECKED_OUT, CHECKED_IN: the status wins over the window.
        Row(status: .rejected, requiresApproval: false, confirm: false,
            before: Outcome(.rejected), inside: Outcome(.rejected), after: Outcome(.rejected)),
        Row(status: .rejected, requiresApproval: false, confirm: true,
            before: Outcome(.rejected), inside: Outcome(.rejected), after: Outcome(.rejected)),
        Row(status: .rejected, requiresApproval: true, confirm: false,
            before: Outcome(.rejected), inside: Outcome(.rejected), after: Outcome(.rejected)),
        Row(status: .rejected, requiresApproval: true, confirm: true,
            before: Outcome(.rejected), inside: Outcome(.rejected), after: Outcome(.rejected)),
        Row(status: .checkedIn, requiresApproval: false, confirm: false,
            before: Outcome(.alreadyCheckedIn), inside: Outcome(.alreadyCheckedIn), after: Outcome(.alreadyCheckedIn)),
        Row(status: .checkedIn, requiresApproval: false, confirm: true,
            before: Outcome(.alreadyCheckedIn), inside: Outcome(.alreadyCheckedIn), after: Outcome(.alreadyCheckedIn)),
        Row(status: .checkedIn, requiresApproval: true, confirm: false,
            before: Outcome(.alreadyCheckedIn), inside: Outcome(.alreadyCheckedIn), after: Outcome(.alreadyCheckedIn)),
        Row(status: .checkedIn, requiresApproval: true, confirm: true,
            before: Outcome(.alreadyCheckedIn), inside: Outcome(.alreadyCheckedIn), after: Outcome(.alreadyCheckedIn)),
        Row(status: .checkedOut, requiresApproval: false, confirm: false,
            before: Outcome(.checkedOut), inside: Outcome(.checkedOut), after: Outcome(.checkedOut)),
        Row(status: .checkedOut, requiresApproval: false, confirm: true,
            before: Outcome(.checkedOut), inside: Outcome(.checkedOut), after: Outcome(.checkedOut)),
        Row(status: .checkedOut, requiresApproval: true, confirm: false,
            before: Outcome(.checkedOut), inside: Outcome(.checkedOut), after: Outcome(.checkedOut)),
        Row(status: .checkedOut, requiresApproval: true, confirm: true,
            before: Outcome(.checkedOut), inside: Outcome(.checkedOut), after: Outcome(.checkedOut)),
        Row(status: .cancelled, requiresApproval: false, confirm: false,
            before: Outcome(.cancelled), inside: Outcome(.cancelled), after: Outcome(.cancelled)),
        Row(status: .cancelled, requiresApproval: false, confirm: true,
            before: Outcome(.cancelled), inside: Outcome(.cancelled), after: Outcome(.cancelled)),
        Row(status: .cancelled, requiresApproval: true, confirm: false,
            before: Outcome(.cancelled), inside: Outcome(.cancelled), after: Outcome(.cancelled)),
        Row(status: .cancelled, requiresApproval: true, confirm: true,
            before: Outcome(.cancelled), inside: Outcome(.cancelled), after: Outcome(.cancelled)),
    ]

    /// Where the scan falls relative to the validity window (08:00–18:00Z, both inclusive).
    enum WindowPoint: String, Sendable, CaseIterable {
        case longBefore, justBefore, atValidFrom, inside, atValidUntil, justAfter, longAfter

        var instant: Date {
            switch self {
            case .longBefore: Fixture.validFrom.addingTimeInterval(-3 * 86_400)
            case .justBefore: Fixture.validFrom.addingTimeInterval(-1)
            case .atValidFrom: Fixture.validFrom
            case .inside: Fixture.validFrom.addingTimeInterval(5 * 3600)
            case .atValidUntil: Fixture.validUntil
            case .justAfter: Fixture.validUntil.addingTimeInterval(1)
            case .longAfter: Fixture.validUntil.addingTimeInterval(3 * 86_400)
            }
        }

        func outcome(in row: Row) -> Outcome {
            switch self {
            case .longBefore, .justBefore: row.before
            case .atValidFrom, .inside, .atValidUntil: row.inside
            case .justAfter, .longAfter: row.after
            }
        }
    }

    @Test func tableCoversEveryStatusAndFlagCombinationOnce() {
        var seen = Set<String>()
        for row in Self.table { seen.insert(row.testDescription) }
        #expect(Self.table.count == VisitorStatus.allCases.count * 2 * 2)
        #expect(seen.count == Self.table.count)
        #expect(Set(Self.table.map(\.status)) == Set(VisitorStatus.allCases))
    }

    @Test("Decision table", arguments: table, WindowPoint.allCases)
    func decisionTable(row: Row, point: WindowPoint) {
        let visitor = Fixture.visitor(status: row.status, requiresApproval: row.requiresApproval)
        let receivedAt = point.instant
        let expected = point.outcome(in: row)

        let decision = CheckIn.decide(visitor: visitor, receivedAt: receivedAt,
                                      request: CheckInRequest(confirmApprovalRequest: row.confirm),
                                      checkpointId: Fixture.gate)

        #expect(decision.result == expected.result)
        #expect(decision.judgedAt == receivedAt)
        switch expected.effect {
        case .none:
            #expect(decision.visitor == visitor)
            #expect(decision.event == nil)
            #expect(decision.changesVisitor == false)
        case .checkIn:
            #expect(decision.visitor.status == .checkedIn)
            #expect(decision.visitor.checkedInAt == receivedAt)
            #expect(decision.visitor.checkpointId == Fixture.gate)
            #expect(decision.visitor.approvalRequestedAt == visitor.approvalRequestedAt)
            #expect(decision.visitor.checkedOutAt == nil)
            #expect(decision.event == .arrived)
            #expect(decision.changesVisitor)
            var rest = decision.visitor
            rest.status = visitor.status
            rest.checkedInAt = visitor.checkedInAt
            rest.checkpointId = visitor.checkpointId
            #expect(rest == visitor, "only status, checkedInAt and checkpointId change")
        case .requestApproval:
            #expect(decision.visitor.status == .awaitingApproval)
            #expect(decision.visitor.approvalRequestedAt == receivedAt)
            #expect(decision.visitor.checkedInAt == nil)
            #expect(decision.visitor.checkpointId == nil)
            #expect(decision.event == .awaiting)
            #expect(decision.changesVisitor)
            var rest = decision.visitor
            rest.status = visitor.status
            rest.approvalRequestedAt = visitor.approvalRequestedAt
            #expect(rest == visitor, "only status and approvalRequestedAt change")
        }
    }

    /// Blocks the fixture visitor by email; it never expires.
    static let blockingEntry = BlocklistEntry(id: "entry-1", name: nil, email: "ANA@example.com", phone: nil, company: nil,
                                              reason: "banned", expiresAt: nil, createdAt: Fixture.createdAt, createdBy: "owner-1")

    @Test("BLOCKED wins over every status, window position and flag", arguments: table, WindowPoint.allCases)
    func blockedWinsOverEverything(row: Row, point: WindowPoint) {
        let visitor = Fixture.visitor(status: row.status, requiresApproval: row.requiresApproval)
        let decision = CheckIn.decide(visitor: visitor, receivedAt: point.instant,
                                      request: CheckInRequest(confirmApprovalRequest: row.confirm),
                                      checkpointId: Fixture.gate, blocklist: [Self.blockingEntry])
        #expect(decision.result == .blocked)
        #expect(decision.blockingEntry == Self.blockingEntry)
        #expect(decision.visitor == visitor)
        // No visitor.* event: the `security.alert` of api.md is not a visitor state change.
        #expect(decision.event == nil)
        #expect(decision.changesVisitor == false)
    }

    @Test func notBlockedIsTheDefault() {
        let visitor = Fixture.visitor(status: .expected, requiresApproval: false)
        let decision = CheckIn.decide(visitor: visitor, receivedAt: WindowPoint.inside.instant,
                                      request: CheckInRequest(), checkpointId: Fixture.gate)
        #expect(decision.result == .checkedIn)
    }

    // MARK: - Precedence rules spelled out in api.md

    @Test func expiredPassThatNeedsApprovalAnswersExpired() {
        let visitor = Fixture.visitor(status: .expected, requiresApproval: true)
        let decision = CheckIn.decide(visitor: visitor, receivedAt: Fixture.validUntil.addingTimeInterval(1),
                                      request: CheckInRequest(confirmApprovalRequest: true),
                                      checkpointId: Fixture.gate)
        #expect(decision.result == .expired)
        #expect(decision.visitor.approvalRequestedAt == nil)
        #expect(decision.visitor.status == .expected)
        #expect(decision.event == nil)
    }

    @Test func notYetValidPassThatNeedsApprovalAnswersNotYetValid() {
        let visitor = Fixture.visitor(status: .expected, requiresApproval: true)
        let decision = CheckIn.decide(visitor: visitor, receivedAt: Fixture.validFrom.addingTimeInterval(-1),
                                      request: CheckInRequest(confirmApprovalRequest: false),
                                      checkpointId: Fixture.gate)
        #expect(decision.result == .notYetValid)
        #expect(decision.visitor == visitor)
    }

    @Test func visitorAlreadyInsideAnswersAlreadyCheckedInAfterTheWindowClosed() {
        let visitor = Fixture.visitor(status: .checkedIn, requiresApproval: false)
        let decision = CheckIn.decide(visitor: visitor, receivedAt: Fixture.validUntil.addingTimeInterval(6 * 3600),
                                      request: CheckInRequest(), checkpointId: "another-gate")
        #expect(decision.result == .alreadyCheckedIn)
        #expect(decision.visitor == visitor)
        #expect(decision.visitor.checkpointId == "checkpoint-side-door")
    }

    @Test func secondScanOfTheSamePassIsAlreadyCheckedIn() {
        let visitor = Fixture.visitor(status: .expected, requiresApproval: false)
        let first = CheckIn.decide(visitor: visitor, receivedAt: Fixture.validFrom.addingTimeInterval(60),
                                   request: CheckInRequest(), checkpointId: "gate-a")
        #expect(first.result == .checkedIn)
        let second = CheckIn.decide(visitor: first.visitor, receivedAt: Fixture.validFrom.addingTimeInterval(61),
                                    request: CheckInRequest(), checkpointId: "gate-b")
        #expect(second.result == .alreadyCheckedIn)
        #expect(second.visitor == first.visitor)
        #expect(second.visitor.checkpointId == "gate-a")
        #expect(second.visitor.checkedInAt == Fixture.validFrom.addingTimeInterval(60))
    }

    @Test func approvalFlowFromFirstScanToAdmission() throws {
        let t0 = Fixture.validFrom.addingTimeInterval(600)
        var visitor = Fixture.visitor(status: .expected, requiresApproval: true)

        let ask = CheckIn.decide(visitor: visitor, receivedAt: t0, request: CheckInRequest(), checkpointId: Fixture.gate)
        #expect(ask.result == .approvalRequired)
        #expect(ask.visitor == visitor)

        let request = CheckIn.decide(visitor: visitor, receivedAt: t0.addingTimeInterval(5),
                                     request: CheckInRequest(confirmApprovalRequest: true), checkpointId: Fixture.gate)
        #expect(request.result == .awaitingApproval)
        #expect(request.event == .awaiting)
        visitor = request.visitor

        let rescan = CheckIn.decide(visitor: visitor, receivedAt: t0.addingTimeInterval(30),
                                    request: CheckInRequest(confirmApprovalRequest: true), checkpointId: Fixture.gate)
        #expect(rescan.result == .awaitingApproval)
        #expect(rescan.visitor == visitor, "a second request does not move approvalRequestedAt")
        #expect(rescan.visitor.approvalRequestedAt == t0.addingTimeInterval(5))

        visitor = try ApprovalDecision.approve.apply(to: visitor, by: "approver-1", note: nil, at: t0.addingTimeInterval(60))
        let admit = CheckIn.decide(visitor: visitor, receivedAt: t0.addingTimeInterval(90),
                                   request: CheckInRequest(), checkpointId: Fixture.gate)
        #expect(admit.result == .checkedIn)
        #expect(admit.visitor.checkedInAt == t0.addingTimeInterval(90))
        #expect(admit.visitor.approvalRequestedAt == t0.addingTimeInterval(5))
    }

    // MARK: - Offline replays: which instant the scan is judged at

    struct JudgementCase: Sendable, CustomTestStringConvertible {
        /// scannedAt relative to receivedAt, in seconds; nil when the client sent none.
        var scannedOffset: Double?
        var usesScannedAt: Bool
        var testDescription: String { "scannedAt = receivedAt \(scannedOffset.map { "\($0)s" } ?? "absent")" }
    }

    static let judgementCases: [JudgementCase] = [
        JudgementCase(scannedOffset: nil, usesScannedAt: false),
        JudgementCase(scannedOffset: 0, usesScannedAt: true),
        JudgementCase(scannedOffset: -1, usesScannedAt: true),
        JudgementCase(scannedOffset: -3600, usesScannedAt: true),
        JudgementCase(scannedOffset: -86_399, usesScannedAt: true),
        JudgementCase(scannedOffset: -86_400, usesScannedAt: true),        // exactly 24 h: not older
        JudgementCase(scannedOffset: -86_400.001, usesScannedAt: false),   // just older than 24 h
        JudgementCase(scannedOffset: -86_401, usesScannedAt: false),
        JudgementCase(scannedOffset: -30 * 86_400, usesScannedAt: false),
        JudgementCase(scannedOffset: 0.001, usesScannedAt: false),         // in the future
        JudgementCase(scannedOffset: 1, usesScannedAt: false),
        JudgementCase(scannedOffset: 3600, usesScannedAt: false),
    ]

    @Test("Judgement time", arguments: judgementCases)
    func judgementTime(_ c: JudgementCase) {
        let receivedAt = Fixture.validUntil.addingTimeInterval(2 * 3600)
        let scannedAt = c.scannedOffset.map { receivedAt.addingTimeInterval($0) }
        let judged = CheckIn.judgementTime(receivedAt: receivedAt, scannedAt: scannedAt)
        #expect(judged == (c.usesScannedAt ? scannedAt! : receivedAt))
    }

    @Test func offlineHorizonIsTwentyFourHours() {
        #expect(CheckIn.offlineReplayHorizon == 86_400)
    }

    @Test func offlineReplayIsJudgedAtScannedAtAndCheckedInThen() {
        let scannedAt = Fixture.validUntil.addingTimeInterval(-3600)
        let receivedAt = Fixture.validUntil.addingTimeInterval(3 * 3600)   // window closed since
        let visitor = Fixture.visitor(status: .expected, requiresApproval: false)
        let decision = CheckIn.decide(visitor: visitor, receivedAt: receivedAt,
                                      request: CheckInRequest(offline: true, scannedAt: scannedAt),
                                      checkpointId: Fixture.gate)
        #expect(decision.result == .checkedIn)
        #expect(decision.judgedAt == scannedAt)
        #expect(decision.visitor.checkedInAt == scannedAt)
        #expect(decision.visitor.checkpointId == Fixture.gate)
        #expect(decision.event == .arrived)
    }

    @Test func offlineReplayExactlyTwentyFourHoursOldAtTheLastValidInstantIsAdmitted() {
        let scannedAt = Fixture.validUntil                                   // inclusive end
        let receivedAt = scannedAt.addingTimeInterval(86_400)                // exactly 24 h later
        let visitor = Fixture.visitor(status: .approved, requiresApproval: true)
        let decision = CheckIn.decide(visitor: visitor, receivedAt: receivedAt,
                                      request: CheckInRequest(offline: true, scannedAt: scannedAt),
                                      checkpointId: Fixture.gate)
        #expect(decision.result == .checkedIn)
        #expect(decision.visitor.checkedInAt == Fixture.validUntil)
    }

    @Test func offlineReplayOlderThanTwentyFourHoursIsJudgedAtReceiveTime() {
        let scannedAt = Fixture.validUntil.addingTimeInterval(-1)            // inside the window
        let receivedAt = Fixture.validUntil.addingTimeInterval(86_400)       // 24 h + 1 s after scannedAt
        let visitor = Fixture.visitor(status: .expected, requiresApproval: false)
        let decision = CheckIn.decide(visitor: visitor, receivedAt: receivedAt,
                                      request: CheckInRequest(offline: true, scannedAt: scannedAt),
                                      checkpointId: Fixture.gate)
        #expect(decision.result == .expired)
        #expect(decision.judgedAt == receivedAt)
        #expect(decision.visitor == visitor)
    }

    @Test func tooOldReplayInsideTheWindowIsCheckedInAtReceiveTime() {
        let receivedAt = Fixture.validFrom.addingTimeInterval(3600)
        let scannedAt = receivedAt.addingTimeInterval(-2 * 86_400)
        let visitor = Fixture.visitor(status: .expected, requiresApproval: false)
        let decision = CheckIn.decide(visitor: visitor, receivedAt: receivedAt,
                                      request: CheckInRequest(offline: true, scannedAt: scannedAt),
                                      checkpointId: Fixture.gate)
        #expect(decision.result == .checkedIn)
        #expect(decision.visitor.checkedInAt == receivedAt)
    }

    @Test func scannedAtInTheFutureIsIgnored() {
        let receivedAt = Fixture.validFrom.addingTimeInterval(-300)          // before the window
        let scannedAt = Fixture.validFrom.addingTimeInterval(300)            // "inside", but in the future
        let visitor = Fixture.visitor(status: .expected, requiresApproval: false)
        let decision = CheckIn.decide(visitor: visitor, receivedAt: receivedAt,
                                      request: CheckInRequest(offline: true, scannedAt: scannedAt),
                                      checkpointId: Fixture.gate)
        #expect(decision.result == .notYetValid)
        #expect(decision.judgedAt == receivedAt)
        #expect(decision.visitor == visitor)
    }

    @Test func offlineScanBeforeTheWindowOpenedIsNotYetValidEvenIfReceivedInside() {
        let scannedAt = Fixture.validFrom.addingTimeInterval(-1)
        let receivedAt = Fixture.validFrom.addingTimeInterval(3600)
        let visitor = Fixture.visitor(status: .approved, requiresApproval: true)
        let decision = CheckIn.decide(visitor: visitor, receivedAt: receivedAt,
                                      request: CheckInRequest(offline: true, scannedAt: scannedAt),
                                      checkpointId: Fixture.gate)
        #expect(decision.result == .notYetValid)
        #expect(decision.visitor == visitor)
    }

    /// api.md only fixes `checkedInAt` for replays; the approval request reaches approvers when
    /// the server receives it, so `approvalRequestedAt` is the receive time.
    @Test func offlineApprovalRequestIsJudgedAtScannedAtButStampedAtReceiveTime() {
        let scannedAt = Fixture.validUntil.addingTimeInterval(-600)
        let receivedAt = Fixture.validUntil.addingTimeInterval(600)
        let visitor = Fixture.visitor(status: .expected, requiresApproval: true)
        let decision = CheckIn.decide(visitor: visitor, receivedAt: receivedAt,
                                      request: CheckInRequest(confirmApprovalRequest: true, offline: true,
                                                              scannedAt: scannedAt),
                                      checkpointId: Fixture.gate)
        #expect(decision.result == .awaitingApproval)
        #expect(decision.judgedAt == scannedAt)
        #expect(decision.visitor.approvalRequestedAt == receivedAt)
        #expect(decision.visitor.checkedInAt == nil)
    }

    // MARK: - Wire names

    @Test func scanResultsUseTheNamesOfApiMd() {
        let expected: [ScanResult: String] = [
            .checkedIn: "CHECKED_IN", .alreadyCheckedIn: "ALREADY_CHECKED_IN",
            .approvalRequired: "APPROVAL_REQUIRED", .awaitingApproval: "AWAITING_APPROVAL",
            .rejected: "REJECTED", .cancelled: "CANCELLED", .checkedOut: "CHECKED_OUT",
            .expired: "EXPIRED", .notYetValid: "NOT_YET_VALID", .blocked: "BLOCKED",
            .notFound: "NOT_FOUND", .invalid: "INVALID",
        ]
        #expect(ScanResult.allCases.count == expected.count)
        for result in ScanResult.allCases { #expect(result.rawValue == expected[result]) }
    }

    @Test func eventKindsUseTheNamesOfApiMd() {
        #expect(VisitorEventKind.awaiting.rawValue == "visitor.awaiting")
        #expect(VisitorEventKind.decided.rawValue == "visitor.decided")
        #expect(VisitorEventKind.arrived.rawValue == "visitor.arrived")
        #expect(VisitorEventKind.departed.rawValue == "visitor.departed")
    }

    @Test func requestDefaultsAreAnOnlineScanWithoutConfirmation() {
        let request = CheckInRequest()
        #expect(request.confirmApprovalRequest == false)
        #expect(request.offline == false)
        #expect(request.scannedAt == nil)
    }

    /// The CLI's exit 3: the results where the gate judged the pass and kept the visitor out.
    @Test func theDecidedRefusalsAreTheResultsThatKeepAKnownPassOut() {
        let refusals = Set(ScanResult.allCases.filter(\.isDecidedRefusal))
        #expect(refusals == [.approvalRequired, .rejected, .cancelled, .checkedOut, .expired, .notYetValid, .blocked])
        #expect(WalkInResult.allCases.filter(\.scanResult.isDecidedRefusal) == [.blocked])
        #expect(WalkInResult.allCases.allSatisfy { $0.scanResult.rawValue == $0.rawValue })
    }
}
