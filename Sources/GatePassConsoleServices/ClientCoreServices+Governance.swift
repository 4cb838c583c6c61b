import Foundation
import GatePassClient
import GatePassConsole
import GatePassCore

// The Blocklist, Users and Audit tabs' calls (`GovernanceServices`, declared in
// GatePassConsole) over the client core. Nothing is cached: a blocklist or a user list read
// offline could show someone as blocked, or able to log in, who no longer is.

extension ClientCoreServices: GovernanceServices {
    /// Every page of one list call with the session's API.
    private func everyPage<Item>(_ read: (APIClient, Session, String?) throws(ClientError) -> Page<Item>) throws(ConsoleError) -> [Item] {
        try call { api, session throws(ClientError) in
            try Self.followPages { cursor throws(ClientError) in try read(api, session, cursor) }.items
        }
    }

    public func blocklist() throws(ConsoleError) -> [BlocklistEntry] {
        try everyPage { api, session, cursor throws(ClientError) in
            try api.blocklist(token: session.token, limit: ListBounds.maximumLimit, cursor: cursor)
        }
    }

    public func addBlocklistEntry(_ entry: NewBlocklistEntry, idempotencyKey: String) throws(ConsoleError) -> BlocklistEntry {
        try call { api, session throws(ClientError) in
            try api.addBlocklistEntry(token: session.token, entry, idempotencyKey: idempotencyKey)
        }
    }

    public func removeBlocklistEntry(id: String) throws(ConsoleError) {
        try call { api, session throws(ClientError) in try api.removeBlocklistEntry(token: session.token, id: id) }
    }

    public func organizationUsers() throws(ConsoleError) -> [UserSummary] {
        try everyPage { api, session, cursor throws(ClientError) in
            try api.users(token: session.token, limit: ListBounds.maximumLimit, cursor: cursor)
        }
    }

    public func createUser(_ user: NewUser, idempotencyKey: String) throws(ConsoleError) -> UserSummary {
        try call { api, session throws(ClientError) in
            try api.createUser(token: session.token, user, idempotencyKey: idempotencyKey)
        }
    }

    public func updateUser(id: String, _ changes: UserChanges, idempotencyKey: String) throws(ConsoleError) -> UserSummary {
        try call { api, session throws(ClientError) in
            try api.updateUser(token: session.token, id: id, changes, idempotencyKey: idempotencyKey)
        }
    }

    /// Entries per page of the Audit tab: more than a screen shows, few enough to read at once.
    static let auditPageSize = 100

    public func visitorName(id: String) throws(ConsoleError) -> String {
        try call { api, session throws(ClientError) in try api.visitor(token: session.token, id: id).name }
    }

    public func auditLog(_ query: AuditQuery) throws(ConsoleError) -> AuditPage {
        try call { api, session throws(ClientError) in
            let page = try api.auditLog(token: session.token, actor: query.actor, action: query.action, entityId: query.entityId,
                                        limit: Self.auditPageSize, cursor: query.cursor)
            return AuditPage(entries: page.items, nextCursor: page.nextCursor)
        }
    }
}
