import Foundation
import GatePassCore

/// What a queued mail will say, as the worker needs it to compose the message when it sends
/// (so an edit made meanwhile is what the visitor reads). Secrets in it (a login code, a pass
/// page token) leave the database with the payload once the mail is sent or given up.
enum MailContent: Codable, Sendable, Equatable {
    /// A login code, to the user's email.
    case otp(code: String)
    /// The visitor's invitation: pass PNG, pass page (this token's), calendar entry.
    case invitation(visitorId: String, passToken: String)
    /// The host's notice that their visitor checked in.
    case arrival(visitorId: String)
    /// An approver's notice that a visitor waits for a decision.
    case approval(visitorId: String)
    /// `POST /api/admin/mail/test`.
    case test

    /// The visitor the mail is about (stored beside the payload, which is erased once sent, so
    /// retention and an erase still find the mail).
    var visitorId: String? {
        switch self {
        case .invitation(let visitorId, _), .arrival(let visitorId), .approval(let visitorId): visitorId
        case .otp, .test: nil
        }
    }

    /// The queued row's payload: the JSON that the synthesized `Codable` reads back, written
    /// without JSONEncoder (every check-in that admits queues one: a host's arrival notice).
    var payloadJSON: [UInt8] {
        var writer = JSONTextWriter(capacity: 96)
        switch self {
        case .otp(let code):
            writer.raw("{\"otp\":{\"code\":"); writer.string(code)
        case .invitation(let visitorId, let passToken):
            writer.raw("{\"invitation\":{\"visitorId\":"); writer.string(visitorId)
            writer.raw(",\"passToken\":"); writer.string(passToken)
        case .arrival(let visitorId):
            writer.raw("{\"arrival\":{\"visitorId\":"); writer.string(visitorId)
        case .approval(let visitorId):
            writer.raw("{\"approval\":{\"visitorId\":"); writer.string(visitorId)
        case .test:
            writer.raw("{\"test\":{")
        }
        writer.raw("}}")
        return writer.bytes
    }

    var kind: MailKind {
        switch self {
        case .otp: .otp
        case .invitation: .invitation
        case .arrival: .arrival
        case .approval: .approval
        case .test: .test
        }
    }
}

/// A mail waiting for its next attempt.
struct QueuedMail: Sendable, Equatable {
    var id: String
    var organizationId: String?
    var kind: MailKind
    var recipient: String
    /// nil when the stored payload is not one this version understands: the worker gives the
    /// mail up with that error (it never guesses what the mail was to say).
    var content: MailContent?
    var attempts: Int
    var createdAt: Date
    var giveUpAt: Date
}

/// The mail queue and log. Rows are written in the transaction of their cause; the worker
/// alone moves them from `queued` to `sent` or `failed`.
protocol MailRepository {
    func enqueue(id: String, organizationId: String?, recipient: String, content: MailContent, now: Date,
                 giveUpAt: Date) throws
    /// Mails whose next attempt is due at `now`, soonest first.
    func due(at now: Date, limit: Int) throws -> [QueuedMail]
    /// When the soonest queued mail is due, if any is queued.
    func nextAttemptAt() throws -> Date?
    func markSent(id: String, at time: Date) throws
    func markRetry(id: String, error: String, nextAttemptAt: Date) throws
    /// Gives up on the mail: status failed, payload erased.
    func markFailed(id: String, error: String, countsAsAttempt: Bool) throws
    /// Gives up on every queued mail whose time ran out (24 h, or its login code's expiry);
    /// returns how many.
    func expire(at now: Date) throws -> Int
    /// The mail log of an organization (nil: every mail, login codes included), newest first.
    func list(organizationId: String?, after cursor: ListCursor?, limit: Int) throws -> [(mail: MailSummary, cursor: ListCursor)]
    /// The stored payload of one mail, nil once erased (what tests of erasure read).
    func payload(id: String) throws -> String?

    // MARK: Retention

    /// Removes one visitor's personal data from the mail log: recipient, payload and last error
    /// of every mail about it (and of invitations sent to `legacyEmail` in its organization
    /// before mails named their visitor); a mail still queued is given up. Returns how many rows.
    func erase(visitorId: String, organizationId: String, legacyEmail: String?) throws -> Int
    /// The mails about one visitor, oldest first, without payloads (a visitor's export).
    func mails(visitorId: String, limit: Int) throws -> [MailSummary]
    /// Deletes sent and failed mails created before `cutoff` (`mailLogRetentionHours`); queued ones stay.
    func purge(finishedBefore cutoff: Date) throws
}
