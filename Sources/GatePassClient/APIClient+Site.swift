import Foundation
import GatePassAPI
import GatePassCore

/// The host's side of api.md "Site operations": editing visitors, passes, invitations,
/// the site, its users, the mail log and the event-stream ticket.
extension APIClient {
    // MARK: - Visitors

    /// `PATCH /api/visitors/:id`: only what `changes` sets is sent; a changed window re-issues the pass.
    /// - Parameter confirmBlocked: save the change even though the visitor then matches the blocklist.
    public func updateVisitor(token: String, id: String, _ changes: VisitorChanges, confirmBlocked: Bool = false,
                              idempotencyKey: String? = nil) throws(ClientError) -> Visitor {
        try request(Visitor.self, .visitorsUpdate, id, token: token, json: VisitorEdit(changes: changes, confirmBlocked: confirmBlocked),
                    idempotencyKey: idempotencyKey)
    }

    /// A PATCH body: the changes, and `"confirmBlocked": true` only when confirmed.
    struct VisitorEdit: Encodable {
        var changes: VisitorChanges
        var confirmBlocked: Bool

        enum CodingKeys: String, CodingKey { case confirmBlocked }

        func encode(to encoder: any Encoder) throws {
            try changes.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            if confirmBlocked { try container.encode(true, forKey: .confirmBlocked) }
        }
    }

    /// (Re)sends the invitation mail; a new pass page each time.
    public func inviteVisitor(token: String, id: String, idempotencyKey: String? = nil) throws(ClientError) -> InvitationAnswer {
        try request(InvitationAnswer.self, .visitorsInvite, id, token: token, json: [String: String](),
                    idempotencyKey: idempotencyKey)
    }

    /// Checks a visitor out from the office (the gate's check-out is `checkOut(scannerToken:…)`).
    public func checkOutVisitor(token: String, id: String, idempotencyKey: String? = nil) throws(ClientError) -> Visitor {
        try request(Visitor.self, .visitorsCheckOut, id, token: token, json: [String: String](),
                    idempotencyKey: idempotencyKey)
    }

    /// The printable pass (A6 at 300 dpi), as PNG bytes.
    public func passPNG(token: String, id: String) throws(ClientError) -> [UInt8] {
        let response = try send(.visitorsPassPNG, id, token: token)
        guard response.body.starts(with: [0x89, 0x50, 0x4E, 0x47]) else {
            throw .decoding("the pass is not a PNG (\(response.body.count) bytes)")
        }
        return response.body
    }

    // MARK: - The site

    public func organization(token: String) throws(ClientError) -> Organization {
        try request(Organization.self, .organizationGet, token: token)
    }

    /// `PATCH /api/organization` (OWNER): only what `changes` sets is sent.
    public func updateOrganization(token: String, _ changes: OrganizationChanges,
                                   idempotencyKey: String? = nil) throws(ClientError) -> Organization {
        try request(Organization.self, .organizationUpdate, token: token, json: changes, idempotencyKey: idempotencyKey)
    }

    public func users(token: String, limit: Int? = nil, cursor: String? = nil,
                      organizationId: String? = nil) throws(ClientError) -> Page<UserSummary> {
        try request(Page<UserSummary>.self, .usersList, query: [
            ("limit", limit.map(String.init)), ("cursor", cursor), ("organizationId", organizationId),
        ], token: token)
    }

    /// `POST /api/users` (OWNER, ADMIN): who may create which role is the server's rule.
    public func createUser(token: String, _ user: NewUser, idempotencyKey: String? = nil) throws(ClientError) -> UserSummary {
        try request(UserSummary.self, .usersCreate, token: token, json: user, idempotencyKey: idempotencyKey)
    }

    /// `PATCH /api/users/:id`: only what `changes` sets is sent. Disabling ends the user's
    /// sessions, scanner tokens and event streams at once.
    public func updateUser(token: String, id: String, _ changes: UserChanges,
                           idempotencyKey: String? = nil) throws(ClientError) -> UserSummary {
        try request(UserSummary.self, .usersUpdate, id, token: token, json: changes, idempotencyKey: idempotencyKey)
    }

    // MARK: - Mail

    public func mailLog(token: String, limit: Int? = nil, cursor: String? = nil) throws(ClientError) -> Page<MailSummary> {
        try request(Page<MailSummary>.self, .adminMailList, query: [("limit", limit.map(String.init)), ("cursor", cursor)],
                    token: token)
    }

    public func sendTestMail(token: String, to address: String, idempotencyKey: String? = nil) throws(ClientError) -> QueuedAnswer {
        try request(QueuedAnswer.self, .adminMailTest, token: token, json: ["to": address], idempotencyKey: idempotencyKey)
    }

    // MARK: - Blocklist

    /// The organization's blocklist, newest entry first, expired ones included (OWNER/ADMIN).
    public func blocklist(token: String, limit: Int? = nil, cursor: String? = nil) throws(ClientError) -> Page<BlocklistEntry> {
        try request(Page<BlocklistEntry>.self, .blocklistList, query: [("limit", limit.map(String.init)), ("cursor", cursor)],
                    token: token)
    }

    /// Adds an entry; from then on every check-in and walk-in matching it answers `BLOCKED`.
    public func addBlocklistEntry(token: String, _ entry: NewBlocklistEntry, idempotencyKey: String? = nil) throws(ClientError) -> BlocklistEntry {
        try request(BlocklistEntry.self, .blocklistAdd, token: token, json: entry, idempotencyKey: idempotencyKey)
    }

    public func removeBlocklistEntry(token: String, id: String) throws(ClientError) {
        _ = try send(.blocklistRemove, id, token: token)
    }

    // MARK: - Audit log

    /// `GET /api/admin/audit` (OWNER/ADMIN): one page of the audit log, newest first; every
    /// filter left nil matches everything (api.md "Audit log").
    public func auditLog(token: String, from: Date? = nil, to: Date? = nil, actor: String? = nil, action: String? = nil,
                         entityId: String? = nil, limit: Int? = nil, cursor: String? = nil) throws(ClientError) -> Page<AuditEntry> {
        try request(Page<AuditEntry>.self, .adminAudit, query: Self.auditQuery(from: from, to: to, actor: actor, action: action, entityId: entityId) + [
            ("limit", limit.map(String.init)), ("cursor", cursor),
        ], token: token)
    }

    /// `GET /api/admin/audit.csv` (OWNER/ADMIN): the log as the server's CSV (UTC times), with
    /// the same filters; the server records the export itself (`audit.export`).
    public func auditLogCSV(token: String, from: Date? = nil, to: Date? = nil, actor: String? = nil, action: String? = nil,
                            entityId: String? = nil) throws(ClientError) -> String {
        let response = try send(.adminAuditCSV, query: Self.auditQuery(from: from, to: to, actor: actor, action: action, entityId: entityId),
                                token: token)
        return String(decoding: response.body, as: UTF8.self)
    }

    private static func auditQuery(from: Date?, to: Date?, actor: String?, action: String?,
                                   entityId: String?) -> [(String, String?)] {
        [("from", from.map { Timestamp($0).description }), ("to", to.map { Timestamp($0).description }),
         ("actor", actor), ("action", action), ("entityId", entityId)]
    }

    // MARK: - Events

    public func eventTicket(token: String) throws(ClientError) -> EventTicket {
        try request(EventTicket.self, .eventsTicket, token: token, json: [String: String]())
    }
}
