/// What the unattended gate shows for one scanned pass: the outcome a guard or visitor must
/// read at a glance, and the sentence that says why. Pure: built from the server's answer.
public struct GateDecision: Sendable, Equatable, Codable {
    public enum Outcome: String, Sendable, Codable {
        /// Let them in (checked in now, or already inside).
        case admitted
        /// Do not let them in; `reason` says why.
        case denied
        /// An approver has been asked; the gate shows their decision when it comes.
        case approvalRequested = "approval-requested"
        /// The server is unreachable: the check-in waits in the outbox and is sent later.
        case queuedOffline = "queued-offline"
        /// An admin revoked this gate's credential (or retired its checkpoint): nothing is
        /// checked in until the kiosk is enrolled again.
        case signedOut = "signed-out"
    }

    public var outcome: Outcome
    /// The scanned text as read from the code.
    public var code: String
    public var visitorName: String?
    public var visitorId: String?
    public var shortId: String?
    /// The server's result, when it answered (`CHECKED_IN`, `EXPIRED`, …, or `REJECTED` for
    /// an approver's rejection).
    public var result: String?
    public var reason: String

    public init(outcome: Outcome, code: String, visitorName: String? = nil, visitorId: String? = nil, shortId: String? = nil,
                result: String? = nil, reason: String) {
        self.outcome = outcome; self.code = code; self.visitorName = visitorName; self.visitorId = visitorId
        self.shortId = shortId; self.result = result; self.reason = reason
    }

    /// What a gate says of a blocked visitor: nothing of which entry, or why (api.md "Blocklist").
    public static let blockedReason = "entry refused; call security"

    /// The decision for a check-in answer. `APPROVAL_REQUIRED` is not final: the gate asks
    /// for approval and shows `approvalRequested` from that second answer.
    public static func from(_ answer: CheckInAnswer, code: String) -> GateDecision {
        let visitor = answer.visitor
        func make(_ outcome: Outcome, _ reason: String) -> GateDecision {
            GateDecision(outcome: outcome, code: code, visitorName: visitor.name, visitorId: visitor.id,
                         shortId: visitor.shortId.rawValue, result: answer.result.rawValue, reason: reason)
        }
        switch answer.result {
        case .checkedIn: return make(.admitted, "welcome")
        case .alreadyCheckedIn: return make(.admitted, "already inside")
        case .approvalRequired: return make(.approvalRequested, "this pass needs an approver")
        case .awaitingApproval: return make(.approvalRequested, "waiting for an approver")
        case .rejected: return make(.denied, "the visit was rejected")
        case .cancelled: return make(.denied, "the pass was cancelled")
        case .checkedOut: return make(.denied, "the pass was already used (single entry)")
        case .expired: return make(.denied, "the pass has expired")
        case .notYetValid: return make(.denied, "the pass is not valid yet")
        case .blocked: return make(.denied, blockedReason)
        case .notFound: return make(.denied, "unknown pass")
        case .invalid: return make(.denied, "not a Gate Pass code")
        }
    }

    /// The decision for a refusal without a check-in answer: an unknown pass (`.notFound`)
    /// or a code that is not a pass (any other result).
    public static func refused(_ result: ScanResult, code: String) -> GateDecision {
        let unknown = result == .notFound
        return GateDecision(outcome: .denied, code: code, result: unknown ? ScanResult.notFound.rawValue : ScanResult.invalid.rawValue,
                            reason: unknown ? "unknown pass" : "not a Gate Pass code")
    }

    /// An approver's decision arriving on the event stream for a visitor the gate asked about.
    public static func decided(_ visitor: Visitor, code: String) -> GateDecision {
        let approved = visitor.status == .approved || visitor.status == .checkedIn
        return GateDecision(outcome: approved ? .admitted : .denied, code: code, visitorName: visitor.name,
                            visitorId: visitor.id, shortId: visitor.shortId.rawValue, result: visitor.status.rawValue,
                            reason: approved ? "approved" : "an approver rejected the visit"
                                + (visitor.decisionNote.map { ": \($0)" } ?? ""))
    }

    public static func queued(code: String) -> GateDecision {
        GateDecision(outcome: .queuedOffline, code: code, reason: "the server is unreachable; the check-in will be sent when it is back")
    }

    /// What a signed-out gate answers every pass with, until it is enrolled again.
    public static func signedOut(code: String, reason: String) -> GateDecision {
        GateDecision(outcome: .signedOut, code: code, reason: reason)
    }

    /// The one line the gate prints: outcome first, in capitals, then who and why. The code,
    /// name and reason (which may hold an approver's note) came from outside: their controls
    /// and invisible characters are spelled out, so no scanned text can redraw the line.
    public var line: String {
        let who = TerminalText.visible(visitorName.map { name in shortId.map { "\(name) (\($0))" } ?? name } ?? code)
        let reason = TerminalText.visible(reason)
        switch outcome {
        case .admitted: return "ADMITTED  \(who) — \(reason)"
        case .denied: return "DENIED  \(who) — \(reason)"
        case .approvalRequested: return "APPROVAL REQUESTED  \(who) — \(reason)"
        case .queuedOffline: return "QUEUED OFFLINE  \(who) — \(reason)"
        case .signedOut: return "SIGNED OUT  \(who) — \(reason)"
        }
    }
}
