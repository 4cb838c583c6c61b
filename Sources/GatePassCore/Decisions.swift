import Foundation

/// Approving or rejecting a visitor (api.md: approve/reject apply only to AWAITING_APPROVAL,
/// or EXPECTED with `requiresApproval`; anything else is a conflict naming the status).
public enum ApprovalDecision: String, Sendable {
    case approve
    case reject

    /// - Parameter blocklist: the blocklist entries the store found for the visitor's keys; a
    ///   block beats an approval (api.md "Blocklist"), a rejection is always allowed.
    public func apply(to visitor: Visitor, by userId: String, note: String?, at now: Date,
                      blocklist: [BlocklistEntry] = []) throws(DecisionConflict) -> Visitor {
        let decidable = visitor.status == .awaitingApproval
            || (visitor.status == .expected && visitor.requiresApproval)
        guard decidable else { throw DecisionConflict(status: visitor.status, action: rawValue) }
        if self == .approve, Blocklist.firstMatch(blocklist, for: visitor, at: now) != nil {
            throw DecisionConflict(status: visitor.status, action: rawValue, blocked: true)
        }
        var updated = visitor
        updated.status = self == .approve ? .approved : .rejected
        updated.decidedAt = now
        updated.decidedBy = userId
        updated.decisionNote = note
        return updated
    }
}

/// Cancelling a pass: anything not yet used or decided against can be cancelled.
public enum Cancellation {
    public static func apply(to visitor: Visitor) throws(DecisionConflict) -> Visitor {
        switch visitor.status {
        case .expected, .awaitingApproval, .approved:
            var updated = visitor
            updated.status = .cancelled
            return updated
        case .rejected, .checkedIn, .checkedOut, .cancelled:
            throw DecisionConflict(status: visitor.status, action: "cancel")
        }
    }
}

/// Checking a visitor out (api.md: `CHECKED_OUT` or `NOT_CHECKED_IN`).
public enum CheckOut {
    public enum Result: String, Sendable, Codable {
        case checkedOut = "CHECKED_OUT"
        case notCheckedIn = "NOT_CHECKED_IN"
    }

    public static func decide(visitor: Visitor, at now: Date) -> (result: Result, visitor: Visitor) {
        guard visitor.status == .checkedIn else { return (.notCheckedIn, visitor) }
        var updated = visitor
        updated.status = .checkedOut
        updated.checkedOutAt = now
        return (.checkedOut, updated)
    }
}

/// An action that the visitor's current status does not allow.
public struct DecisionConflict: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: VisitorStatus
    public var action: String
    /// The visitor matches the blocklist (the message does not say which entry or why).
    public var blocked: Bool

    public init(status: VisitorStatus, action: String, blocked: Bool = false) {
        self.status = status; self.action = action; self.blocked = blocked
    }

    public var description: String {
        blocked ? "cannot \(action): the visitor matches the site's blocklist"
            : "cannot \(action): the visitor is \(status.rawValue)"
    }
}
