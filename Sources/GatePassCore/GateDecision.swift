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
    /// Set when the kiosk decided without the server (issue 13): what it rested on
    /// (`cached-visitor`, `signature`, `none`). Absent for the server's decisions.
    public var offlineBasis: OfflineDecision.Basis?
    /// With `offlineBasis`: how old the pass cache was, in whole seconds (absent: no cache).
    public var cacheAgeSeconds: Int?
    /// True when a replayed offline decision disagreed with the server's (api.md "Offline
    /// passes": the server recorded it and raised `security.alert`).
    public var conflict: Bool?

    public init(outcome: Outcome, code: String, visitorName: String? = nil, visitorId: String? = nil, shortId: String? = nil,
                result: String? = nil, reason: String) {
        self.outcome = outcome; self.code = code; self.visitorName = visitorName; self.visitorId = visitorId
        self.shortId = shortId; self.result = result; self.reason = reason
    }

    /// What the gate shows for each result: one table for the server's answers and the
    /// kiosk's own offline decisions.
    public static func presentation(of result: ScanResult) -> (outcome: Outcome, reason: String) {
        switch result {
        case .checkedIn: (.admitted, "welcome")
        case .alreadyCheckedIn: (.admitted, "already inside")
        case .approvalRequired: (.approvalRequested, "this pass needs an approver")
        case .awaitingApproval: (.approvalRequested, "waiting for an approver")
        case .rejected: (.denied, "the visit was rejected")
        case .cancelled: (.denied, "the pass was cancelled")
        case .checkedOut: (.denied, "the pass was already used (single entry)")
        case .expired: (.denied, "the pass has expired")
        case .notYetValid: (.denied, "the pass is not valid yet")
        case .blocked: (.denied, blockedReason)
        case .notFound: (.denied, "unknown pass")
        case .invalid: (.denied, "not a Gate Pass code")
        }
    }

    /// The kiosk's own decision while the server does not answer. `APPROVAL_REQUIRED` does
    /// not admit: the approval is requested once the server answers.
    /// - Parameter cacheAge: how old the pass cache is, in seconds; nil when there is none.
    public static func offline(_ decision: OfflineDecision, code: String, cacheAge: Double?) -> GateDecision {
        var (outcome, reason) = presentation(of: decision.result)
        switch decision.result {
        case .approvalRequired: reason = "this pass needs an approver; asked for when the server answers"
        case .invalid where decision.shortId != nil:
            reason = "the pass's signature or fields do not check out"
        case .notFound where decision.basis == .none && decision.shortId != nil:
            reason = "the server does not answer and this pass cannot be checked here"
        default: break
        }
        var made = GateDecision(outcome: outcome, code: code, visitorName: decision.visitor?.name, visitorId: decision.visitor?.id,
                                shortId: decision.shortId?.rawValue, result: decision.result.rawValue, reason: reason)
        made.offlineBasis = decision.basis
        made.cacheAgeSeconds = cacheAge.map { Int(max(0, $0).rounded(.down)) }
        return made
    }

    /// A replayed offline decision the server disagreed with: what the server decided, said
    /// beside what the gate did.
    public static func conflict(_ answer: CheckInAnswer, offlineDecision: ScanResult, code: String) -> GateDecision {
        var made = from(answer, code: code)
        made.conflict = true
        made.reason = "decided \(offlineDecision.rawValue) offline, the server says \(answer.result.rawValue): "
            + "\(presentation(of: answer.result).reason) (reported to the admins)"
        return made
    }

    /// "3 min old", "45 s old", "2 h old".
    public static func ageText(_ seconds: Int?) -> String {
        guard let seconds else { return "no cache" }
        if seconds < 60 { return "cache \(seconds) s old" }
        if seconds < 3600 { return "cache \(seconds / 60) min old" }
        return "cache \(seconds / 3600) h old"
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
        let (outcome, reason) = presentation(of: answer.result)
        return make(outcome, reason)
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

    /// The pass as a person reads it when no name is known: its short id (a GP2 text admitted
    /// by its signature is 140 characters nobody reads), else the text as scanned.
    private var namedPass: String {
        shortId ?? (try? QRPayload.reference(from: code).shortId.rawValue) ?? code
    }

    /// The one line the gate prints: outcome first, in capitals, then who and why. The code,
    /// name and reason (which may hold an approver's note) came from outside: their controls
    /// and invisible characters are spelled out, so no scanned text can redraw the line.
    public var line: String {
        let who = TerminalText.visible(visitorName.map { name in shortId.map { "\(name) (\($0))" } ?? name } ?? namedPass)
        let reason = TerminalText.visible(reason)
        if conflict == true { return "CONFLICT  \(who) — \(reason)" }
        let offline = offlineBasis == nil ? "" : " offline (\(Self.ageText(cacheAgeSeconds)))"
        switch outcome {
        case .admitted: return "ADMITTED\(offline)  \(who) — \(reason)"
        case .denied: return "DENIED\(offline)  \(who) — \(reason)"
        case .approvalRequested: return offlineBasis == nil ? "APPROVAL REQUESTED  \(who) — \(reason)"
            : "APPROVAL NEEDED\(offline)  \(who) — \(reason)"
        case .queuedOffline: return "QUEUED OFFLINE  \(who) — \(reason)"
        case .signedOut: return "SIGNED OUT  \(who) — \(reason)"
        }
    }
}
