import Foundation
import GatePassCore

// What the site-governance tabs (Blocklist, Users, Audit; OWNER/ADMIN) ask of the world. The
// shell backs it with the client core (`ClientCoreServices`, in GatePassConsoleServices);
// tests back it with a fake. Only plain domain values cross it.

/// Which audit entries the Audit tab asks for (api.md "Audit log"); nil matches everything.
public struct AuditQuery: Sendable, Equatable, Hashable {
    /// Only entries of this actor (a user's id, a kiosk's token id, or `system`).
    public var actor: String?
    /// Only entries with this action, e.g. `visitor.checkin`.
    public var action: String?
    /// Only entries about this entity (a visitor's id).
    public var entityId: String?
    /// The next page's cursor, from the answer before.
    public var cursor: String?

    public init(actor: String? = nil, action: String? = nil, entityId: String? = nil, cursor: String? = nil) {
        self.actor = actor; self.action = action; self.entityId = entityId; self.cursor = cursor
    }
}

/// One page of the audit log, newest first.
public struct AuditPage: Sendable, Equatable {
    public var entries: [AuditEntry]
    /// The cursor of the next (older) page; nil on the last.
    public var nextCursor: String?

    public init(entries: [AuditEntry], nextCursor: String?) { self.entries = entries; self.nextCursor = nextCursor }
}

/// The calls of the Blocklist, Users and Audit tabs.
///
/// Every call blocks and is made from the console's one UI thread. Failures are
/// `ConsoleError`s, already sorted into what a person can act on. Nothing here is cached for
/// offline use: these are the server's current truth or nothing.
public protocol GovernanceServices: AnyObject {
    /// The site (its time zone: expiry times are typed and shown in it).
    func site() throws(ConsoleError) -> ConsoleRead<Organization>

    /// Checkpoint (gate) names by id, best effort: empty when unknown.
    func gateNames() -> [String: String]

    /// Every blocklist entry, expired ones included, newest first (every page).
    func blocklist() throws(ConsoleError) -> [BlocklistEntry]

    /// Adds an entry (already checked by `NewBlocklistEntry.validated`). The same key for a
    /// retry of the same entry, so the server adds it once.
    func addBlocklistEntry(_ entry: NewBlocklistEntry, idempotencyKey: String) throws(ConsoleError) -> BlocklistEntry

    func removeBlocklistEntry(id: String) throws(ConsoleError)

    /// Every user of the organization with `disabled` and `lastLoginAt` (every page).
    func organizationUsers() throws(ConsoleError) -> [UserSummary]

    /// Creates a user; who may create which role is the server's rule (`UserRules`).
    func createUser(_ user: NewUser, idempotencyKey: String) throws(ConsoleError) -> UserSummary

    /// Changes a user; only what `changes` sets is sent.
    func updateUser(id: String, _ changes: UserChanges, idempotencyKey: String) throws(ConsoleError) -> UserSummary

    /// One page of the audit log.
    func auditLog(_ query: AuditQuery) throws(ConsoleError) -> AuditPage

    /// A visitor's name (`GET /api/visitors/:id`), for the entries about it.
    /// - Throws: `.refused` when the visitor is gone (erased by retention, never there).
    func visitorName(id: String) throws(ConsoleError) -> String
}
