import Foundation
import GatePassCore
@testable import GatePassConsole

/// Visitors services scripted by a test: each call answers what the test set and is recorded.
final class FakeVisitorsServices: VisitorsServices {
    static let site = Organization(id: "org-1", name: "Acme Works", timeZone: "Europe/Bucharest")
    static let approvers = [ApproverChoice(id: "u7", name: "Ion Ene", email: "ion@example.com"),
                            ApproverChoice(id: "u8", name: "Maria Popa", email: "maria@example.com")]

    var siteResult: Result<ConsoleRead<Organization>, ConsoleError> =
        .success(ConsoleRead(value: FakeVisitorsServices.site, updatedAt: Fixtures.now, fromCache: false))
    var visitorsResult: Result<ConsoleRead<[Visitor]>, ConsoleError> =
        .success(ConsoleRead(value: [], updatedAt: Fixtures.now, fromCache: false))
    var approversResult: Result<[ApproverChoice], ConsoleError> = .success(FakeVisitorsServices.approvers)
    var names: [String: String] = ["u7": "Ion Ene"]
    /// Answers of `register`, one per call (the last repeats).
    var registerResults: [Result<Visitor, ConsoleError>] = []
    var actionResult: Result<Visitor, ConsoleError>?
    var inviteResult: Result<String, ConsoleError> = .success("http://gate.test/p/tok")
    var passCodeResult: Result<PassCode, ConsoleError> = .success(FakeVisitorsServices.smallCode)
    var savePassResult: Result<String, ConsoleError> = .success("/work/here/gatepass-pass-K7Q2M9XD.png")
    var onSiteResult: Result<ConsoleRead<OnSiteRoll>, ConsoleError> =
        .success(ConsoleRead(value: FakeVisitorsServices.roll([]), updatedAt: Fixtures.now, fromCache: false))

    /// The server's roll of `visitors`, with `changes` of this device laid over it.
    static func roll(_ visitors: [Visitor], changes: [OnSiteRoll.LocalChange] = []) -> OnSiteRoll {
        OnSiteRoll.combine(server: visitors, serverRollAt: Fixtures.now, changes: changes)
    }
    var gates: [String: String] = ["c1": "Main gate", "c2": "Dock"]
    var saveRollResult: Result<String, ConsoleError> = .success("/work/here/gatepass-on-site.txt")

    private(set) var calls: [String] = []
    private(set) var queries: [VisitorListQuery] = []
    private(set) var registrations: [(registration: VisitorRegistration, key: String)] = []
    private(set) var liveOnSite: [LiveListChange] = []
    private(set) var savedRolls: [String] = []

    /// A 3×3 "code" small enough to check cell by cell.
    static let smallCode = PassCode(text: "GP1:K7Q2M9XD", size: 3,
                                    modules: [true, false, true,
                                              false, true, false,
                                              true, true, false])

    func site() throws(ConsoleError) -> ConsoleRead<Organization> {
        calls.append("site")
        return try siteResult.get()
    }

    func visitors(_ query: VisitorListQuery) throws(ConsoleError) -> ConsoleRead<[Visitor]> {
        calls.append("visitors")
        queries.append(query)
        return try visitorsResult.get()
    }

    func approvers() throws(ConsoleError) -> [ApproverChoice] {
        calls.append("approvers")
        return try approversResult.get()
    }

    func userNames() -> [String: String] {
        calls.append("userNames")
        return names
    }

    func register(_ registration: VisitorRegistration, idempotencyKey: String) throws(ConsoleError) -> Visitor {
        calls.append("register")
        registrations.append((registration, idempotencyKey))
        let result = registerResults.count > 1 ? registerResults.removeFirst()
            : registerResults.first ?? .failure(.failed("no registration scripted"))
        return try result.get()
    }

    func cancelVisitor(id: String) throws(ConsoleError) -> Visitor {
        calls.append("cancel \(id)")
        return try (actionResult ?? .failure(.failed("nothing scripted"))).get()
    }

    func checkOutVisitor(id: String) throws(ConsoleError) -> Visitor {
        calls.append("checkOut \(id)")
        return try (actionResult ?? .failure(.failed("nothing scripted"))).get()
    }

    func inviteVisitor(id: String) throws(ConsoleError) -> String {
        calls.append("invite \(id)")
        return try inviteResult.get()
    }

    func passCode(for visitor: Visitor) throws(ConsoleError) -> PassCode {
        calls.append("passCode \(visitor.id)")
        return try passCodeResult.get()
    }

    func savePassPNG(for visitor: Visitor) throws(ConsoleError) -> String {
        calls.append("savePassPNG \(visitor.id)")
        return try savePassResult.get()
    }

    func onSite() throws(ConsoleError) -> ConsoleRead<OnSiteRoll> {
        calls.append("onSite")
        return try onSiteResult.get()
    }

    func noteLiveOnSite(_ change: LiveListChange) { liveOnSite.append(change) }

    func gateNames() -> [String: String] {
        calls.append("gateNames")
        return gates
    }

    func saveOnSiteRoll(_ text: String) throws(ConsoleError) -> String {
        calls.append("saveOnSiteRoll")
        savedRolls.append(text)
        return try saveRollResult.get()
    }
}

extension Fixtures {
    /// Hostile text for every field: a terminal escape that would clear the screen, a bidi
    /// override, a zero-width space, wide and combining characters.
    static let escapeSequence = "\u{1B}[2J\u{1B}]0;owned\u{07}"
    static let tenKilobytes = String(repeating: "Ab9 ", count: 2_560)
    static let wide = "李小龍🙂"
    /// One character (a grapheme) of 1 letter and 60 combining marks: 121 bytes.
    static let combiningStack = "e" + String(repeating: "\u{0301}", count: 60)

    /// A visitor of the Visitors tab.
    static func listed(_ number: Int, name: String? = nil, status: VisitorStatus = .expected,
                       from: Date = Fixtures.now, email: String? = "v@example.com") -> Visitor {
        var visitor = visitor(number, name: name, status: status)
        visitor.email = email
        visitor.requiresApproval = false
        visitor.validity = ValidityWindow(from: from, until: from.addingTimeInterval(8 * 3600))
        return visitor
    }

    /// Someone on site since `minutesAgo`, at checkpoint `gate`.
    static func inside(_ number: Int, name: String, gate: String? = "c1", minutesAgo: Double = 30) -> Visitor {
        var visitor = visitor(number, name: name, status: .checkedIn)
        // Each person on site has a pass of their own (the roll knows passes by short id).
        visitor.shortId = ShortID("K7Q2" + String(format: "%04d", number))!
        visitor.checkedInAt = now.addingTimeInterval(-minutesAgo * 60)
        visitor.checkpointId = gate
        return visitor
    }
}
