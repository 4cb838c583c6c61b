import Foundation

/// Every result a scan can have in the scan history. The check-in decision produces all but
/// `notFound` and `invalid`, which the service records for ids it cannot resolve.
public enum ScanResult: String, Codable, Sendable, CaseIterable {
    case checkedIn = "CHECKED_IN"
    case alreadyCheckedIn = "ALREADY_CHECKED_IN"
    case approvalRequired = "APPROVAL_REQUIRED"
    case awaitingApproval = "AWAITING_APPROVAL"
    case rejected = "REJECTED"
    case cancelled = "CANCELLED"
    case checkedOut = "CHECKED_OUT"
    case expired = "EXPIRED"
    case notYetValid = "NOT_YET_VALID"
    case blocked = "BLOCKED"
    case notFound = "NOT_FOUND"
    case invalid = "INVALID"
}

extension ScanResult {
    /// Whether the gate decided to keep the visitor out (`gatepass checkin` and `walk-in` exit
    /// 3): the pass is known and was judged. Not a refusal: an admission, a wait for an
    /// approver, and the errors (`NOT_FOUND`, `INVALID`: nothing was judged). The switch has no
    /// default, so every later result declares which it is.
    public var isDecidedRefusal: Bool {
        switch self {
        case .checkedIn, .alreadyCheckedIn, .awaitingApproval: false
        case .approvalRequired, .rejected, .cancelled, .checkedOut, .expired, .notYetValid, .blocked: true
        case .notFound, .invalid: false
        }
    }
}

/// What a kiosk asked for when it scanned a pass.
public struct CheckInRequest: Sendable, Equatable {
    public var confirmApprovalRequest: Bool
    /// True when the scan is replayed from a client's offline queue.
    public var offline: Bool
    /// When the pass was really scanned, if the client said so.
    public var scannedAt: Date?

    public init(confirmApprovalRequest: Bool = false, offline: Bool = false, scannedAt: Date? = nil) {
        self.confirmApprovalRequest = confirmApprovalRequest
        self.offline = offline
        self.scannedAt = scannedAt
    }
}

/// The event a state change announces (api.md "Events").
public enum VisitorEventKind: String, Sendable, Codable {
    case awaiting = "visitor.awaiting"
    case decided = "visitor.decided"
    case arrived = "visitor.arrived"
    case departed = "visitor.departed"
}

/// The outcome of scanning one pass: the result to answer, the visitor as it must be stored
/// (equal to the input when nothing changes), the instant the decision was judged at, the
/// event the change causes, and for `BLOCKED` the entry that blocked (for the managers'
/// `security.alert`, never for the gate).
public struct CheckInDecision: Sendable, Equatable {
    public var result: ScanResult
    public var visitor: Visitor
    public var judgedAt: Date
    public var event: VisitorEventKind?
    public var blockingEntry: BlocklistEntry?

    public init(result: ScanResult, visitor: Visitor, judgedAt: Date, event: VisitorEventKind?,
                blockingEntry: BlocklistEntry? = nil) {
        self.result = result; self.visitor = visitor; self.judgedAt = judgedAt; self.event = event
        self.blockingEntry = blockingEntry
    }

    public var changesVisitor: Bool { event != nil }
}

public enum CheckIn {
    /// How far back an offline replay's `scannedAt` is trusted (api.md "Offline replays").
    public static let offlineReplayHorizon: TimeInterval = 24 * 3600

    /// The instant a scan is judged at: the client's `scannedAt` when it is neither in the
    /// future nor older than 24 hours, otherwise the server's receive time.
    public static func judgementTime(receivedAt: Date, scannedAt: Date?) -> Date {
        guard let scannedAt, scannedAt <= receivedAt,
              receivedAt.timeIntervalSince(scannedAt) <= offlineReplayHorizon
        else { return receivedAt }
        return scannedAt
    }

    /// The check-in decision table of api.md, with its precedence: blocked → terminal
    /// statuses → already inside → validity window → approval → admit.
    ///
    /// Pure: the caller stores `decision.visitor` and the scan in one transaction.
    /// - Parameters:
    ///   - visitor: the visitor as currently stored.
    ///   - receivedAt: the server's receive time.
    ///   - request: the kiosk's flags and, for offline replays, the real scan time.
    ///   - checkpointId: the checkpoint (gate) the scanner token is bound to.
    ///   - blocklist: the organization's blocklist entries the store found for the visitor's
    ///     keys (`BlocklistKeys`); the domain judges each (`BlocklistEntry.matches`) at the
    ///     receive time, since a block is about who may enter now, whenever the pass was scanned.
    public static func decide(visitor: Visitor, receivedAt: Date, request: CheckInRequest,
                              checkpointId: String, blocklist: [BlocklistEntry] = []) -> CheckInDecision {
        let judgedAt = judgementTime(receivedAt: receivedAt, scannedAt: request.scannedAt)
        func unchanged(_ result: ScanResult) -> CheckInDecision {
            CheckInDecision(result: result, visitor: visitor, judgedAt: judgedAt, event: nil)
        }
        if let entry = Blocklist.firstMatch(blocklist, for: visitor, at: receivedAt) {
            return CheckInDecision(result: .blocked, visitor: visitor, judgedAt: judgedAt, event: nil, blockingEntry: entry)
        }
        switch visitor.status {
        case .cancelled: return unchanged(.cancelled)
        case .rejected: return unchanged(.rejected)
        case .checkedOut: return unchanged(.checkedOut)
        case .checkedIn: return unchanged(.alreadyCheckedIn)
        case .expected, .awaitingApproval, .approved: break
        }
        switch visitor.validity.position(of: judgedAt) {
        case .notYetValid: return unchanged(.notYetValid)
        case .expired: return unchanged(.expired)
        case .inside: break
        }
        switch visitor.status {
        case .awaitingApproval:
            return unchanged(.awaitingApproval)
        case .expected where visitor.requiresApproval:
            guard request.confirmApprovalRequest else { return unchanged(.approvalRequired) }
            var updated = visitor
            updated.status = .awaitingApproval
            updated.approvalRequestedAt = receivedAt
            return CheckInDecision(result: .awaitingApproval, visitor: updated, judgedAt: judgedAt, event: .awaiting)
        default:
            return CheckInDecision(result: .checkedIn, visitor: admittedVisitor(visitor, at: judgedAt, checkpointId: checkpointId),
                                   judgedAt: judgedAt, event: .arrived)
        }
    }
}

extension CheckIn {
    /// The server's decision on a replayed offline scan, reconciled with what the kiosk
    /// decided offline (api.md "Offline passes"). What happened at the gate stands:
    /// - The kiosk admitted and the server would not: the visitor is inside, so a visitor not
    ///   yet CHECKED_IN becomes so (the evacuation roll must show them); one already inside
    ///   stays as is. The result is the server's own, and it is a conflict.
    /// - The kiosk refused and the server would admit: nobody came in, so nothing changes and
    ///   the scan keeps the kiosk's result; a conflict too (no alert: nobody got in).
    /// - Otherwise the server's decision applies (a refusal offline may still ask for approval).
    /// - An admission no offline kiosk could have made (`claimFailure`, see `OfflineClaim`)
    ///   does not count: the server's own result is recorded, nobody is admitted, a conflict.
    /// - Parameters:
    ///   - visitor: the visitor as stored, which `decision` was made from.
    ///   - claimFailure: why the kiosk's admission does not count, when it does not.
    public static func reconcile(_ decision: CheckInDecision, offlineDecision: ScanResult, visitor: Visitor,
                                 checkpointId: String, claimFailure: OfflineClaimFailure? = nil)
        -> (decision: CheckInDecision, conflict: Bool) {
        let admittedOffline = offlineDecision == .checkedIn
        if admittedOffline, claimFailure != nil {
            return (CheckInDecision(result: decision.result, visitor: visitor, judgedAt: decision.judgedAt, event: nil,
                                    blockingEntry: decision.blockingEntry), true)
        }
        let admitted = decision.result == .checkedIn
        guard admittedOffline != admitted else { return (decision, false) }
        guard admittedOffline else {
            return (CheckInDecision(result: offlineDecision, visitor: visitor, judgedAt: decision.judgedAt, event: nil), true)
        }
        guard visitor.status != .checkedIn else {
            return (CheckInDecision(result: decision.result, visitor: visitor, judgedAt: decision.judgedAt, event: nil,
                                    blockingEntry: decision.blockingEntry), true)
        }
        return (CheckInDecision(result: decision.result, visitor: admittedVisitor(visitor, at: decision.judgedAt, checkpointId: checkpointId),
                                judgedAt: decision.judgedAt, event: .arrived, blockingEntry: decision.blockingEntry), true)
    }

    /// `visitor` inside since `time`, through `checkpointId`.
    public static func admittedVisitor(_ visitor: Visitor, at time: Date, checkpointId: String) -> Visitor {
        var inside = visitor
        inside.status = .checkedIn
        inside.checkedInAt = time
        inside.checkpointId = checkpointId
        return inside
    }
}

/// What a walk-in's registration answers (api.md: `AWAITING_APPROVAL`, or `BLOCKED` when the
/// visitor matches the blocklist).
public enum WalkInResult: String, Codable, Sendable, CaseIterable {
    case awaitingApproval = "AWAITING_APPROVAL"
    case blocked = "BLOCKED"
}

extension WalkInResult {
    /// The check-in result of the same name, whose `isDecidedRefusal` the walk-in shares.
    public var scanResult: ScanResult {
        switch self {
        case .awaitingApproval: .awaitingApproval
        case .blocked: .blocked
        }
    }
}

public enum WalkIn {
    /// A walk-in's registration: it waits for approval, unless the blocklist blocks it, in
    /// which case it is stored REJECTED at once (decided by nobody: no approver is asked, and
    /// no note says why, since the gate is shown the visitor).
    /// - Parameter visitor: the walk-in as registered, AWAITING_APPROVAL.
    public static func decide(_ visitor: Visitor, blocklist: [BlocklistEntry], at now: Date)
        -> (result: WalkInResult, visitor: Visitor, blockingEntry: BlocklistEntry?) {
        guard let entry = Blocklist.firstMatch(blocklist, for: visitor, at: now) else { return (.awaitingApproval, visitor, nil) }
        var rejected = visitor
        rejected.status = .rejected
        rejected.decidedAt = now
        rejected.decidedBy = nil
        rejected.decisionNote = nil
        return (.blocked, rejected, entry)
    }
}
