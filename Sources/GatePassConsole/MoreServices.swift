import Foundation
import GatePassCore

// What the More tab asks of the world: the profile, the server, this device's push token,
// the outbox, and logout. The shell backs it with the client core (`ClientCoreServices`,
// in GatePassConsoleServices); tests back it with a fake. Only plain values cross it: the
// outbox entries' bodies (notes, names) and the session token never do.

/// This device's push token and whether the server knows it.
public struct ConsoleDevice: Sendable, Equatable {
    /// The push token (made once per state folder, kept across logins). Not the session
    /// token, but whoever holds it could have this device's events pushed elsewhere, so
    /// screens show it shortened.
    public var token: String
    /// How the token registers (`console`, `kiosk`).
    public var platform: String
    /// The server the token is registered with for the logged-in user; nil when it is not
    /// (registration failed at login, or a logout unregistered it). The state file does not
    /// record when it was registered.
    public var registeredWith: String?

    public init(token: String, platform: String, registeredWith: String?) {
        self.token = token; self.platform = platform; self.registeredWith = registeredWith
    }
}

/// A mutation waiting in the outbox.
public struct QueuedEntry: Sendable, Equatable {
    public var id: Int64
    /// "checkin", "checkout", "approve", "reject", "walk-in".
    public var kind: String
    /// Method and path, like "POST /api/visitor-scanner/checkin".
    public var request: String
    public var attempts: Int
    public var lastError: String?
    public var nextAttemptAt: Date
    public var createdAt: Date

    public init(id: Int64, kind: String, request: String, attempts: Int, lastError: String?, nextAttemptAt: Date, createdAt: Date) {
        self.id = id; self.kind = kind; self.request = request; self.attempts = attempts; self.lastError = lastError
        self.nextAttemptAt = nextAttemptAt; self.createdAt = createdAt
    }
}

/// A mutation the server refused for good, kept so a person sees it (never a silent drop).
public struct DeadEntry: Sendable, Equatable {
    public var id: Int64
    public var kind: String
    public var request: String
    public var attempts: Int
    /// The server's answer: HTTP status, error code and message.
    public var status: Int
    public var code: String
    public var message: String
    public var createdAt: Date
    public var deadAt: Date

    public init(id: Int64, kind: String, request: String, attempts: Int, status: Int, code: String, message: String,
                createdAt: Date, deadAt: Date) {
        self.id = id; self.kind = kind; self.request = request; self.attempts = attempts; self.status = status
        self.code = code; self.message = message; self.createdAt = createdAt; self.deadAt = deadAt
    }
}

/// The outbox as the More tab shows it.
public struct OutboxState: Sendable, Equatable {
    /// Waiting entries, oldest first (the order they are sent).
    public var queued: [QueuedEntry]
    public var deadLetters: [DeadEntry]
    /// Set when the server refused the session: nothing is sent until the next login.
    public var pausedForLogin: String?

    public init(queued: [QueuedEntry] = [], deadLetters: [DeadEntry] = [], pausedForLogin: String? = nil) {
        self.queued = queued; self.deadLetters = deadLetters; self.pausedForLogin = pausedForLogin
    }
}

/// What one "send now" did.
public struct DrainSummary: Sendable, Equatable {
    public var sent: Int
    public var deadLettered: Int
    /// Entries still queued afterwards.
    public var remaining: Int
    /// The server could not be reached (the drain stopped there).
    public var offline: Bool
    /// The server refused the session: log in again.
    public var pausedForLogin: String?
    /// Another process (the kiosk, `gatepass outbox drain`) was sending this outbox.
    public var busy: Bool
    /// The state file could not be used.
    public var failure: String?

    public init(sent: Int = 0, deadLettered: Int = 0, remaining: Int = 0, offline: Bool = false, pausedForLogin: String? = nil,
                busy: Bool = false, failure: String? = nil) {
        self.sent = sent; self.deadLettered = deadLettered; self.remaining = remaining; self.offline = offline
        self.pausedForLogin = pausedForLogin; self.busy = busy; self.failure = failure
    }
}

/// The calls the More tab makes.
///
/// Every call blocks and is made from the console's one UI thread. Failures are
/// `ConsoleError`s, already sorted into what a person can act on.
public protocol MoreServices: AnyObject {
    /// The logged-in user, from the server or, offline, from the cache (`fromCache`, and
    /// `updatedAt` says how old).
    func profile() throws(ConsoleError) -> ConsoleRead<Profile>

    /// The organization (its name for the profile), from the server or, offline, the cache.
    func site() throws(ConsoleError) -> ConsoleRead<Organization>

    /// The server of the session; nil when nobody is logged in.
    func sessionServer() -> String?

    /// This device's push token and its registration.
    /// - Throws: `.failed` when the state file cannot be read.
    func device() throws(ConsoleError) -> ConsoleDevice

    /// The queued entries and dead letters (local: works offline).
    func outboxState() throws(ConsoleError) -> OutboxState

    /// Puts a dead letter back in the queue (or makes a waiting entry due now); the next
    /// drain sends it.
    /// - Returns: false when no entry has that id (it was sent or retried meanwhile).
    func retryOutboxEntry(id: Int64) throws(ConsoleError) -> Bool

    /// Sends every queued entry now, backoff or not (like `gatepass outbox drain`).
    func drainOutboxNow() -> DrainSummary

    /// Unregisters this device's push token while the session still works, ends the session
    /// on the server, and drops it here; queued entries stay for the next login.
    /// - Returns: what went wrong on the way (the local session is dropped regardless);
    ///   empty when all went well or nobody was logged in.
    /// - Throws: `.failed` when the state file cannot be written (the session may remain).
    func logOut() throws(ConsoleError) -> [String]
}
