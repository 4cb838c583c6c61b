import Foundation
import GatePassCore
@testable import GatePassConsole

/// Console services scripted by a test: each call answers what the test set and is recorded.
final class FakeConsoleServices: ConsoleServices {
    var user: ConsoleUser?
    var server = "http://gate.test"
    var setServerError: ConsoleError?
    var sendCodeError: ConsoleError?
    /// Answers of `logIn`, one per call (the last repeats).
    var logInResults: [Result<ConsoleUser, ConsoleError>] = []
    var approvals: Result<ConsoleRead<[Visitor]>, ConsoleError> = .success(ConsoleRead(value: [], updatedAt: Fixtures.now, fromCache: false))
    var details: [String: Result<ConsoleRead<VisitorDetail>, ConsoleError>] = [:]
    var decision: DecisionOutcome = .queued

    private(set) var calls: [String] = []
    private(set) var sentCodes: [(server: String, email: String)] = []
    private(set) var logIns: [(server: String, email: String, code: String, allowPurge: Bool)] = []
    private(set) var decisions: [(decision: ApprovalDecision, visitorId: String, note: String?)] = []
    private(set) var liveApprovals: [LiveListChange] = []

    func currentUser() -> ConsoleUser? { user }

    func serverURL() -> String { server }

    func setServerURL(_ url: String) throws(ConsoleError) {
        calls.append("setServerURL \(url)")
        if let setServerError { throw setServerError }
        server = url
    }

    func sendCode(server: String, email: String) throws(ConsoleError) {
        calls.append("sendCode")
        sentCodes.append((server, email))
        if let sendCodeError { throw sendCodeError }
    }

    func logIn(server: String, email: String, code: String, allowPurge: Bool) throws(ConsoleError) -> ConsoleUser {
        calls.append("logIn")
        logIns.append((server, email, code, allowPurge))
        let result = logInResults.count > 1 ? logInResults.removeFirst()
            : logInResults.first ?? .failure(.failed("no login scripted"))
        switch result {
        case .success(let user):
            self.user = user
            return user
        case .failure(let error):
            throw error
        }
    }

    func pendingApprovals() throws(ConsoleError) -> ConsoleRead<[Visitor]> {
        calls.append("pendingApprovals")
        return try approvals.get()
    }

    func noteLiveApproval(_ change: LiveListChange) { liveApprovals.append(change) }

    func visitorDetail(id: String) throws(ConsoleError) -> ConsoleRead<VisitorDetail> {
        calls.append("visitorDetail \(id)")
        guard let result = details[id] else { throw .refused("no such visitor") }
        return try result.get()
    }

    func decide(_ decision: ApprovalDecision, visitorId: String, note: String?) -> DecisionOutcome {
        calls.append("decide")
        decisions.append((decision, visitorId, note))
        return self.decision
    }
}

/// A clock a test moves by hand.
final class TestClock: @unchecked Sendable {
    var now: Date
    init(_ now: Date = Fixtures.now) { self.now = now }
    func advance(_ seconds: TimeInterval) { now = now.addingTimeInterval(seconds) }
    var function: () -> Date { { self.now } }
}

enum Fixtures {
    static let now = Date(timeIntervalSince1970: 1_750_000_000)

    /// A pending visitor whose request is `minutesAgo` old.
    static func visitor(_ number: Int, name: String? = nil, company: String? = "Acme", host: String? = "Ion",
                        minutesAgo: Double = 5, status: VisitorStatus = .awaitingApproval) -> Visitor {
        Visitor(id: "v\(number)", shortId: ShortID("K7Q2M9XD")!, name: name ?? "Visitor \(number)", email: "v\(number)@example.com",
                phone: "+40700000\(number)", company: company, purpose: "Delivery", hostName: host,
                requiresApproval: true, walkIn: false, status: status,
                validity: ValidityWindow(from: now.addingTimeInterval(-3600), until: now.addingTimeInterval(3600)),
                createdAt: now.addingTimeInterval(-86_400),
                approvalRequestedAt: now.addingTimeInterval(-minutesAgo * 60))
    }

    /// A `visitor.*` or `request.created` event carrying `visitor`.
    static func event(_ kind: EventKind, _ visitor: Visitor, id: Int64 = 1) -> ServerEvent {
        let data = String(decoding: try! JSONEncoder().encode(VisitorEventData(visitor: visitor)), as: UTF8.self)
        return ServerEvent(id: id, kindName: kind.rawValue, data: data)
    }

    /// Renders `screen` on a fresh canvas the size of the area.
    static func render(_ screen: some ConsoleScreen, width: Int = 80, height: Int = 24) -> Canvas {
        var canvas = Canvas(width: width, height: height)
        screen.render(into: &canvas, area: Area(x: 0, y: 0, width: width, height: height))
        return canvas
    }

    /// The first row whose text contains `text`.
    static func row(_ canvas: Canvas, containing text: String) -> Int? {
        (0..<canvas.height).first { canvas.line($0).contains(text) }
    }

    static func type(_ text: String, into screen: some ConsoleScreen) {
        for character in text { _ = screen.handle(.character(character)) }
    }
}
