import Foundation
import Testing
@testable import GatePassCore

/// api.md: approve/reject apply only to AWAITING_APPROVAL (or EXPECTED with `requiresApproval`);
/// otherwise 409 CONFLICT with the current status in the message.
@Suite("Approval decision")
struct ApprovalDecisionTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var status: VisitorStatus
        var requiresApproval: Bool
        var decidable: Bool
        var testDescription: String { "\(status.rawValue) requiresApproval=\(requiresApproval)" }
    }

    /// Every status × requiresApproval, written out from api.md.
    static let cases: [Case] = [
        Case(status: .expected, requiresApproval: false, decidable: false),
        Case(status: .expected, requiresApproval: true, decidable: true),
        Case(status: .awaitingApproval, requiresApproval: false, decidable: true),
        Case(status: .awaitingApproval, requiresApproval: true, decidable: true),
        Case(status: .approved, requiresApproval: false, decidable: false),
        Case(status: .approved, requiresApproval: true, decidable: false),
        Case(status: .rejected, requiresApproval: false, decidable: false),
        Case(status: .rejected, requiresApproval: true, decidable: false),
        Case(status: .checkedIn, requiresApproval: false, decidable: false),
        Case(status: .checkedIn, requiresApproval: true, decidable: false),
        Case(status: .checkedOut, requiresApproval: false, decidable: false),
        Case(status: .checkedOut, requiresApproval: true, decidable: false),
        Case(status: .cancelled, requiresApproval: false, decidable: false),
        Case(status: .cancelled, requiresApproval: true, decidable: false),
    ]

    static let now = Fixture.validFrom.addingTimeInterval(-1800)

    @Test("Approve and reject", arguments: cases, [ApprovalDecision.approve, .reject])
    func decide(_ c: Case, action: ApprovalDecision) throws {
        let visitor = Fixture.visitor(status: c.status, requiresApproval: c.requiresApproval)
        if c.decidable {
            let updated = try action.apply(to: visitor, by: "approver-7", note: "looks fine", at: Self.now)
            #expect(updated.status == (action == .approve ? .approved : .rejected))
            #expect(updated.decidedAt == Self.now)
            #expect(updated.decidedBy == "approver-7")
            #expect(updated.decisionNote == "looks fine")
            var rest = updated
            rest.status = visitor.status
            rest.decidedAt = visitor.decidedAt
            rest.decidedBy = visitor.decidedBy
            rest.decisionNote = visitor.decisionNote
            #expect(rest == visitor, "only the status and the decision fields change")
        } else {
            let error = #expect(throws: DecisionConflict.self) {
                try action.apply(to: visitor, by: "approver-7", note: "looks fine", at: Self.now)
            }
            #expect(error?.status == c.status)
            #expect(error?.action == action.rawValue)
            #expect(error?.description.contains(c.status.rawValue) == true,
                    "the 409 message names the current status")
        }
    }

    @Test(arguments: [ApprovalDecision.approve, .reject])
    func absentNoteIsStoredAsNil(action: ApprovalDecision) throws {
        var visitor = Fixture.visitor(status: .awaitingApproval, requiresApproval: true)
        visitor.decisionNote = "stale"
        let updated = try action.apply(to: visitor, by: "u1", note: nil, at: Self.now)
        #expect(updated.decisionNote == nil)
    }

    @Test func conflictDescriptionNamesActionAndStatus() {
        let conflict = DecisionConflict(status: .checkedOut, action: "approve")
        #expect(conflict.description == "cannot approve: the visitor is CHECKED_OUT")
    }

    @Test func aDecidedVisitorCannotBeDecidedAgain() throws {
        let visitor = Fixture.visitor(status: .awaitingApproval, requiresApproval: true)
        let approved = try ApprovalDecision.approve.apply(to: visitor, by: "a", note: nil, at: Self.now)
        let error = #expect(throws: DecisionConflict.self) {
            try ApprovalDecision.reject.apply(to: approved, by: "b", note: nil, at: Self.now)
        }
        #expect(error == DecisionConflict(status: .approved, action: "reject"))
    }
}
