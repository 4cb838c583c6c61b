import Foundation
import Testing
@testable import GatePassCore

/// POST /api/visitors/:id/cancel → Visitor (CANCELLED). api.md does not list the statuses
/// that can be cancelled; the domain allows a pass not yet used or decided against, and
/// answers a conflict naming the status otherwise.
@Suite("Cancellation")
struct CancellationTests {
    static let cancellable: [VisitorStatus] = [.expected, .awaitingApproval, .approved]
    static let notCancellable: [VisitorStatus] = [.rejected, .checkedIn, .checkedOut, .cancelled]

    @Test func everyStatusIsClassified() {
        #expect(Set(Self.cancellable + Self.notCancellable) == Set(VisitorStatus.allCases))
        #expect(Self.cancellable.count + Self.notCancellable.count == VisitorStatus.allCases.count)
    }

    @Test(arguments: cancellable, [false, true])
    func cancellableStatusBecomesCancelled(status: VisitorStatus, requiresApproval: Bool) throws {
        let visitor = Fixture.visitor(status: status, requiresApproval: requiresApproval)
        let updated = try Cancellation.apply(to: visitor)
        #expect(updated.status == .cancelled)
        var rest = updated
        rest.status = visitor.status
        #expect(rest == visitor, "only the status changes")
    }

    @Test(arguments: notCancellable, [false, true])
    func otherStatusesConflict(status: VisitorStatus, requiresApproval: Bool) {
        let visitor = Fixture.visitor(status: status, requiresApproval: requiresApproval)
        let error = #expect(throws: DecisionConflict.self) { try Cancellation.apply(to: visitor) }
        #expect(error?.status == status)
        #expect(error?.action == "cancel")
        #expect(error?.description.contains(status.rawValue) == true)
    }

    @Test func cancelledPassIsRefusedAtTheGate() throws {
        let visitor = try Cancellation.apply(to: Fixture.visitor(status: .approved, requiresApproval: true))
        let decision = CheckIn.decide(visitor: visitor, receivedAt: Fixture.validFrom.addingTimeInterval(60),
                                      request: CheckInRequest(), checkpointId: Fixture.gate)
        #expect(decision.result == .cancelled)
        #expect(decision.visitor == visitor)
    }
}
