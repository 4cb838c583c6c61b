import Foundation
import GatePassCore

// What the login, approvals and visitor-detail screens ask of the world. The shell backs it
// with the client core (`ClientCoreServices`, in the GatePassConsoleServices module); tests
// back it with a fake. Only plain values cross it, so a screen never sees HTTP, SQLite or
// the outbox.

/// The calls the login, approvals and visitor-detail screens make.
///
/// Every call blocks and is made from the console's one UI thread. Failures are
/// `ConsoleError`s, already sorted into what a person can act on.
public protocol ConsoleServices: AnyObject {
    /// Who is logged in on this device, or nil. A state file that cannot be read counts as
    /// nobody logged in (the login screen then shows).
    func currentUser() -> ConsoleUser?

    /// The server the login screen offers: the one saved for this state folder, else the
    /// session's, else the default the console was started with; empty when none is known.
    func serverURL() -> String

    /// Saves `url` for this state folder (the next start offers it again).
    /// - Throws: `.refused` when it is not an http:// or https:// URL; `.failed` when the
    ///   state file cannot be written.
    func setServerURL(_ url: String) throws(ConsoleError)

    /// Asks `server` to e-mail a one-time code to `email`.
    /// - Throws: `.throttled` (with the server's wait) when codes were asked for too often.
    func sendCode(server: String, email: String) throws(ConsoleError)

    /// Verifies the code and starts the session.
    /// - Parameter allowPurge: whether queued entries of a different previous user may be
    ///   deleted; without it such a login throws `.identityChange` before the code is used.
    /// - Throws: `.unauthorized` for a wrong, expired or used-up code.
    func logIn(server: String, email: String, code: String, allowPurge: Bool) throws(ConsoleError) -> ConsoleUser

    /// The visitors awaiting approval that this user may decide, from the server or, offline,
    /// from the cache (then `fromCache` is true and `updatedAt` says how old it is).
    func pendingApprovals() throws(ConsoleError) -> ConsoleRead<[Visitor]>

    /// Tells the offline copy of the approvals list what the live stream changed in it, so
    /// that the list read offline still holds every visitor shown (and none decided since)
    /// and its `updatedAt` stays the age of the oldest data in it.
    func noteLiveApproval(_ change: LiveListChange)

    /// One visitor with the approval context when the server gives one (approvers get
    /// previous visits and the requesting checkpoint; owners and admins get the visitor only).
    func visitorDetail(id: String) throws(ConsoleError) -> ConsoleRead<VisitorDetail>

    /// Approves or rejects through the outbox: applied now, queued while the server is away,
    /// refused by the server, or waiting for a new login. Never throws: every failure is an outcome.
    func decide(_ decision: ApprovalDecision, visitorId: String, note: String?) -> DecisionOutcome
}

/// The logged-in user as the console shows it.
public struct ConsoleUser: Sendable, Equatable {
    /// The user's id (empty when not known, as in a test's made-up user).
    public var id: String
    public var name: String
    public var email: String
    public var role: Role
    public var server: String
    /// Whether this user may scan at a checkpoint (OWNER, ADMIN, an APPROVER with
    /// `canScanCheckpoint`): the Scan tab is shown only then.
    public var mayScan: Bool

    public init(id: String = "", name: String, email: String, role: Role, server: String, mayScan: Bool = false) {
        self.id = id; self.name = name; self.email = email; self.role = role; self.server = server; self.mayScan = mayScan
    }
}

/// A value read from the server, or from the cache when the server could not be reached.
public struct ConsoleRead<Value: Sendable>: Sendable {
    public var value: Value
    /// When the value came from the server.
    public var updatedAt: Date
    /// True when the cache answered because the server could not be reached.
    public var fromCache: Bool
    /// True when the server has more than this one page (the API's lists stop at 500).
    public var hasMore: Bool

    public init(value: Value, updatedAt: Date, fromCache: Bool, hasMore: Bool = false) {
        self.value = value; self.updatedAt = updatedAt; self.fromCache = fromCache; self.hasMore = hasMore
    }
}

extension ConsoleRead: Equatable where Value: Equatable {}

/// A change to a live list (the approvals queue, the on-site roll) that came on the event
/// stream, not from a list read.
public enum LiveListChange: Sendable, Equatable {
    /// The visitor joined the list (now awaiting approval; now on site).
    case arrived(Visitor)
    /// The visitor left it (decided; departed).
    case left(visitorId: String)
}

/// A visitor with its approval context (nil when the server gives none for this role).
public struct VisitorDetail: Sendable, Equatable {
    public var visitor: Visitor
    public var context: ApprovalContext?

    public init(visitor: Visitor, context: ApprovalContext?) { self.visitor = visitor; self.context = context }
}

/// What became of an approval or a rejection.
public enum DecisionOutcome: Sendable, Equatable {
    /// The server applied it; the visitor as it now stands.
    case applied(Visitor)
    /// The server could not be reached: the decision waits in the outbox.
    case queued
    /// The server refused it for good (already decided, not yours…), in words for a person.
    case refused(String)
    /// The session is over: the decision stays queued until someone logs in again.
    case needsLogin(String)
}

/// A failure of a console call, sorted by what the person at the terminal can do about it.
public enum ConsoleError: Error, Sendable, Equatable {
    /// The server cannot be reached (the detail says how).
    case offline(String)
    /// 401: a wrong, expired or used-up code at login; an ended session elsewhere.
    case unauthorized(String)
    /// 429: asked too often; `retryAfterSeconds` is the server's Retry-After when it sent one.
    case throttled(retryAfterSeconds: Int?, message: String)
    /// Logging in would delete queued entries of the previous user on this device.
    case identityChange(entriesAtRisk: Int, previousEmail: String, previousServer: String)
    /// The server refused the request for good (other 4xx), or the input is not acceptable.
    case refused(String)
    /// 409 `BLOCKLIST_MATCH`: the visitor matches the blocklist and nothing was saved.
    case blocklistMatch(String)
    /// Anything else: the server failed, answered nonsense, or the state file could not be used.
    case failed(String)
}

extension ConsoleError {
    /// The error as one plain sentence for an error line (the wording rules of the
    /// command line's `sentence(for:)`: say what happened, then what to do).
    public var sentence: String {
        switch self {
        case .offline(let detail):
            "The server cannot be reached (\(detail)); try again when it is back."
        case .unauthorized(let message):
            "Not accepted: \(message)."
        case .throttled(let seconds, let message):
            "Too many requests (\(message)): " + ConsoleError.waitPhrase(seconds) + "."
        case .identityChange(let count, let email, let server):
            "Logging in would delete \(count) queued \(count == 1 ? "entry" : "entries") of \(email) on \(server)."
        case .refused(let message), .blocklistMatch(let message):
            "Refused: \(message)."
        case .failed(let message):
            "Failed: \(message)."
        }
    }

    /// "wait 30 s", "wait 2 min", or "wait a little" without a Retry-After.
    static func waitPhrase(_ seconds: Int?) -> String {
        guard let seconds, seconds > 0 else { return "wait a little, then try again" }
        if seconds < 120 { return "wait \(seconds) s, then try again" }
        return "wait \((seconds + 59) / 60) min, then try again"
    }
}
