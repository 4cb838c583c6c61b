import Foundation
import Testing
@testable import GatePassCore

/// POST /api/visitor-scanner/checkout → `CHECKED_OUT` | `NOT_CHECKED_IN`.
@Suite("Check-out")
struct CheckOutTests {
    static let now = Fixture.validFrom.addingTimeInterval(4 * 3600)

    @Test func checkedInVisitorIsCheckedOut() {
        let visitor = Fixture.visitor(status: .checkedIn, requiresApproval: false)
        let (result, updated) = CheckOut.decide(visitor: visitor, at: Self.now)
        #expect(result == .checkedOut)
        #expect(updated.status == .checkedOut)
        #expect(updated.checkedOutAt == Self.now)
        #expect(updated.checkedInAt == visitor.checkedInAt)
        #expect(updated.checkpointId == visitor.checkpointId)
        var rest = updated
        rest.status = visitor.status
        rest.checkedOutAt = visitor.checkedOutAt
        #expect(rest == visitor, "only status and checkedOutAt change")
    }

    @Test(arguments: VisitorStatus.allCases.filter { $0 != .checkedIn }, [false, true])
    func anyOtherStatusIsNotCheckedInAndUnchanged(status: VisitorStatus, requiresApproval: Bool) {
        let visitor = Fixture.visitor(status: status, requiresApproval: requiresApproval)
        let (result, updated) = CheckOut.decide(visitor: visitor, at: Self.now)
        #expect(result == .notCheckedIn)
        #expect(updated == visitor)
    }

    @Test func checkingOutTwiceIsNotCheckedInTheSecondTime() {
        let visitor = Fixture.visitor(status: .checkedIn, requiresApproval: false)
        let first = CheckOut.decide(visitor: visitor, at: Self.now)
        let second = CheckOut.decide(visitor: first.visitor, at: Self.now.addingTimeInterval(60))
        #expect(second.result == .notCheckedIn)
        #expect(second.visitor.checkedOutAt == Self.now)
    }

    @Test func aCheckedOutPassIsSingleEntry() {
        let visitor = Fixture.visitor(status: .checkedIn, requiresApproval: false)
        let out = CheckOut.decide(visitor: visitor, at: Self.now).visitor
        let decision = CheckIn.decide(visitor: out, receivedAt: Self.now.addingTimeInterval(60),
                                      request: CheckInRequest(), checkpointId: Fixture.gate)
        #expect(decision.result == .checkedOut)
        #expect(decision.visitor == out)
    }

    @Test func resultsUseTheNamesOfApiMd() {
        #expect(CheckOut.Result.checkedOut.rawValue == "CHECKED_OUT")
        #expect(CheckOut.Result.notCheckedIn.rawValue == "NOT_CHECKED_IN")
    }
}
