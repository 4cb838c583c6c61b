import Foundation
import GatePassCore
@testable import GatePassConsole

/// Scan services scripted by a test: each call answers what the test set and is recorded.
final class FakeScanServices: ScanServices {
    var statsAnswer: Result<ConsoleRead<ScanStats>, ConsoleError> =
        .success(ConsoleRead(value: ScanScreenFixtures.stats, updatedAt: Fixtures.now, fromCache: false))
    /// Answers of `checkIn` by code and confirmation; anything unscripted is an unknown pass.
    var checkIns: [CheckInKey: GateDecision] = [:]
    var lookupAnswer: Result<[Visitor], ConsoleError> = .success([])
    var walkInAnswer: WalkInOutcome = .queued
    var passCacheAnswer: Date?

    struct CheckInKey: Hashable {
        var code: String
        var confirm: Bool
    }

    private(set) var calls: [String] = []
    private(set) var checkInCalls: [CheckInKey] = []
    private(set) var lookups: [String] = []
    private(set) var walkIns: [WalkInRegistration] = []

    var statsCalls: Int { calls.filter { $0 == "stats" }.count }

    func answer(_ code: String, confirm: Bool = false, with decision: GateDecision) {
        checkIns[CheckInKey(code: code, confirm: confirm)] = decision
    }

    func passCacheSyncedAt() -> Date? { passCacheAnswer }

    func stats() throws(ConsoleError) -> ConsoleRead<ScanStats> {
        calls.append("stats")
        return try statsAnswer.get()
    }

    func checkIn(code: String, confirmApprovalRequest: Bool) -> GateDecision {
        calls.append("checkIn \(code)\(confirmApprovalRequest ? " confirm" : "")")
        let key = CheckInKey(code: code, confirm: confirmApprovalRequest)
        checkInCalls.append(key)
        return checkIns[key] ?? .refused(.notFound, code: code)
    }

    func lookup(_ query: String) throws(ConsoleError) -> [Visitor] {
        calls.append("lookup")
        lookups.append(query)
        return try lookupAnswer.get()
    }

    func walkIn(_ registration: WalkInRegistration) -> WalkInOutcome {
        calls.append("walkIn")
        walkIns.append(registration)
        return walkInAnswer
    }
}

enum ScanScreenFixtures {
    static let stats = ScanStats(checkedInToday: 12, checkedOutToday: 2, awaitingApproval: 3, expectedToday: 40, onSite: 9)
    static let utc = TimeZone(identifier: "UTC")!

    /// A visitor with a short id of their own.
    static func visitor(_ id: String, name: String, shortId: String, status: VisitorStatus = .expected,
                        requiresApproval: Bool = false, company: String? = "Acme") -> Visitor {
        Visitor(id: id, shortId: ShortID(shortId)!, name: name, email: "\(id)@example.com", phone: "+40 700 000 000",
                company: company, purpose: "Meeting", hostName: "Ion", requiresApproval: requiresApproval, status: status,
                validity: ValidityWindow(from: Fixtures.now.addingTimeInterval(-3600), until: Fixtures.now.addingTimeInterval(3600)),
                createdAt: Fixtures.now.addingTimeInterval(-86_400))
    }

    static let ana = visitor("v-ana", name: "Ana Pop", shortId: "K7Q2M9XD")
    static let dan = visitor("v-dan", name: "Dan Ene", shortId: "QW3RTY45", requiresApproval: true)

    /// The decision the server's answer `result` gives for `visitor`.
    static func decision(_ result: ScanResult, _ visitor: Visitor, code: String? = nil) -> GateDecision {
        var shown = visitor
        switch result {
        case .checkedIn, .alreadyCheckedIn: shown.status = .checkedIn
        case .awaitingApproval: shown.status = .awaitingApproval
        default: break
        }
        return GateDecision.from(CheckInAnswer(result: result, visitor: shown, scanId: "scan-1"),
                                 code: code ?? visitor.shortId.rawValue)
    }
}
