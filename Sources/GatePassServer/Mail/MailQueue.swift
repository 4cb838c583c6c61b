import Foundation
import GatePassCore

/// Queuing mail from a request's transaction: the row commits with its cause, or not at all,
/// and the worker is woken once the commit is done.
extension GatePassApplication {
    /// Queues `content` for `recipient`; false (and nothing queued) when mail is off.
    @discardableResult
    func queueMail(_ content: MailContent, to recipient: String, organizationId: String?, _ call: Call,
                   _ tx: any Transaction, giveUpAt: Date? = nil) throws -> Bool {
        try queueMail(content, to: recipient, organizationId: organizationId, now: call.now, effects: call.effects, tx,
                      giveUpAt: giveUpAt)
    }

    /// `queueMail` outside a request (the demo's seed): `effects` says whether to wake the worker.
    @discardableResult
    func queueMail(_ content: MailContent, to recipient: String, organizationId: String?, now: Date,
                   effects: CommitEffects, _ tx: any Transaction, giveUpAt: Date? = nil) throws -> Bool {
        guard mail.isEnabled else { return false }
        try tx.mail.enqueue(id: newIdentifier(), organizationId: organizationId, recipient: recipient, content: content,
                            now: now, giveUpAt: giveUpAt ?? now.addingTimeInterval(MailSettings.retryFor))
        effects.noteQueuedMail()
        return true
    }

    /// The mails a visitor event sends: the host's arrival notice (`visitor.arrived`, to
    /// `hostEmail`) and the approvers' notice (`visitor.awaiting` and walk-ins: to the assigned
    /// approver, or to every approver of the site when none is assigned).
    func queueNotices(for kind: EventKind, visitor: Visitor, organizationId: String, _ call: Call,
                      _ tx: any Transaction) throws {
        switch kind {
        case .visitorArrived:
            if let host = visitor.hostEmail {
                try queueMail(.arrival(visitorId: visitor.id), to: host, organizationId: organizationId, call, tx)
            }
        case .visitorAwaiting, .requestCreated:
            let approvers: [Profile]
            if let approverId = visitor.approverId {
                approvers = try tx.directory.user(id: approverId).map { [$0] } ?? []
            } else {
                approvers = try tx.directory.approvers(organizationId: organizationId)
            }
            for approver in approvers {
                try queueMail(.approval(visitorId: visitor.id), to: approver.email, organizationId: organizationId, call, tx)
            }
        default:
            break
        }
    }

    /// Gives the visitor a new pass page (the old one stops working) and queues the
    /// invitation with it; returns the page's address.
    /// A request's invitation, audited as `visitor.invite` (a new pass page; the old one ends).
    func queueInvitation(_ visitor: Visitor, organizationId: String, _ call: Call, _ tx: any Transaction) throws -> String {
        try refuseInvitationIfBlocked(visitor, organizationId: organizationId, now: call.now, role: call.caller.user.role, tx)
        let url = try queueInvitation(visitor, organizationId: organizationId, now: call.now, effects: call.effects, tx)
        // After the checks that refuse an invitation (no mail, no email), so a refused one is
        // not counted; a 429 here rolls the whole request back (a creation with it too).
        try chargeInvitations(1, call)
        try audit(.visitorInvite, id: visitor.id, .facts(["email": visitor.email]), call, organizationId: organizationId, tx)
        return url
    }

    func queueInvitation(_ visitor: Visitor, organizationId: String, now: Date, effects: CommitEffects,
                         _ tx: any Transaction) throws -> String {
        guard mail.isEnabled else {
            throw APIError.conflict("this server sends no mail: set smtpURL (README \"Mail\")")
        }
        guard let email = visitor.email else { throw APIError.conflict("the visitor has no email address") }
        guard ![.cancelled, .checkedOut, .rejected].contains(visitor.status) else {
            throw APIError.conflict("the visitor is \(visitor.status.rawValue): no invitation is sent")
        }
        let token = try newPassToken(for: visitor.id, tx)
        try queueMail(.invitation(visitorId: visitor.id, passToken: token), to: email, organizationId: organizationId,
                      now: now, effects: effects, tx)
        return composer.passURL(token)
    }
}
