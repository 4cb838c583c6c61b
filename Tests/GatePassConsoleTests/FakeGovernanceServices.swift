import Foundation
import GatePassCore
@testable import GatePassConsole

/// Governance services scripted by a test: each call answers what the test set and is
/// recorded; adding, removing and changing act on the scripted lists as the server would.
final class FakeGovernanceServices: GovernanceServices {
    var siteResult: Result<ConsoleRead<Organization>, ConsoleError> =
        .success(ConsoleRead(value: FakeVisitorsServices.site, updatedAt: Fixtures.now, fromCache: false))
    var gates: [String: String] = ["c1": "Main gate", "c2": "Dock"]
    var entries: [BlocklistEntry] = []
    var blocklistError: ConsoleError?
    var addError: ConsoleError?
    var removeError: ConsoleError?
    var users: [UserSummary] = []
    var usersError: ConsoleError?
    var createError: ConsoleError?
    var updateError: ConsoleError?
    /// Pages of the audit log by cursor (nil: the first page).
    var auditPages: [String?: AuditPage] = [nil: AuditPage(entries: [], nextCursor: nil)]
    var auditError: ConsoleError?

    private(set) var calls: [String] = []
    private(set) var added: [(entry: NewBlocklistEntry, key: String)] = []
    private(set) var created: [(user: NewUser, key: String)] = []
    private(set) var updates: [(id: String, changes: UserChanges, key: String)] = []
    private(set) var auditQueries: [AuditQuery] = []

    func site() throws(ConsoleError) -> ConsoleRead<Organization> {
        calls.append("site")
        return try siteResult.get()
    }

    func gateNames() -> [String: String] {
        calls.append("gateNames")
        return gates
    }

    func blocklist() throws(ConsoleError) -> [BlocklistEntry] {
        calls.append("blocklist")
        if let blocklistError { throw blocklistError }
        return entries
    }

    func addBlocklistEntry(_ entry: NewBlocklistEntry, idempotencyKey: String) throws(ConsoleError) -> BlocklistEntry {
        calls.append("add")
        added.append((entry, idempotencyKey))
        if let addError { throw addError }
        let stored = BlocklistEntry(id: "b\(entries.count + 1)", name: entry.name, email: entry.email, phone: entry.phone,
                                    company: entry.company, reason: entry.reason, expiresAt: entry.expiresAt?.date,
                                    createdAt: Fixtures.now, createdBy: "u1")
        entries.insert(stored, at: 0)
        return stored
    }

    func removeBlocklistEntry(id: String) throws(ConsoleError) {
        calls.append("remove \(id)")
        if let removeError { throw removeError }
        entries.removeAll { $0.id == id }
    }

    func organizationUsers() throws(ConsoleError) -> [UserSummary] {
        calls.append("users")
        if let usersError { throw usersError }
        return users
    }

    func createUser(_ user: NewUser, idempotencyKey: String) throws(ConsoleError) -> UserSummary {
        calls.append("create")
        created.append((user, idempotencyKey))
        if let createError { throw createError }
        let summary = UserSummary(profile: Profile(id: "u\(users.count + 10)", email: user.email, name: user.name, role: user.role,
                                                   organizationId: "org-1", canScanCheckpoint: user.canScanCheckpoint ?? false),
                                  disabled: false, lastLoginAt: nil)
        users.append(summary)
        return summary
    }

    func updateUser(id: String, _ changes: UserChanges, idempotencyKey: String) throws(ConsoleError) -> UserSummary {
        calls.append("update \(id)")
        updates.append((id, changes, idempotencyKey))
        if let updateError { throw updateError }
        guard let index = users.firstIndex(where: { $0.profile.id == id }) else { throw .refused("no such user") }
        if let name = changes.name { users[index].profile.name = name }
        if let role = changes.role { users[index].profile.role = role }
        if let scan = changes.canScanCheckpoint { users[index].profile.canScanCheckpoint = scan }
        if let disabled = changes.disabled { users[index].disabled = disabled }
        return users[index]
    }

    /// Visitors' names by id; any other id answers 404.
    var visitorNames: [String: String] = [:]

    func visitorName(id: String) throws(ConsoleError) -> String {
        calls.append("visitor \(id)")
        guard let name = visitorNames[id] else { throw .refused("NOT_FOUND: no such visitor") }
        return name
    }

    func auditLog(_ query: AuditQuery) throws(ConsoleError) -> AuditPage {
        calls.append("audit")
        auditQueries.append(query)
        if let auditError { throw auditError }
        return auditPages[query.cursor] ?? AuditPage(entries: [], nextCursor: nil)
    }
}

extension Fixtures {
    static func user(_ id: String, _ name: String, _ role: Role, disabled: Bool = false, scans: Bool = false,
                     lastLogin: Date? = nil) -> UserSummary {
        UserSummary(profile: Profile(id: id, email: "\(name.split(separator: " ").first!.lowercased())@example.com", name: name,
                                     role: role, organizationId: "org-1", canScanCheckpoint: scans || role.managesOrganization),
                    disabled: disabled, lastLoginAt: lastLogin)
    }

    static func blocked(_ id: String, name: String? = nil, email: String? = nil, phone: String? = nil, company: String? = nil,
                        reason: String = "threatened staff", expiresAt: Date? = nil) -> BlocklistEntry {
        BlocklistEntry(id: id, name: name, email: email, phone: phone, company: company, reason: reason, expiresAt: expiresAt,
                       createdAt: now.addingTimeInterval(-86_400), createdBy: "u1")
    }

    /// A `security.alert` for `visitor` at `checkpointId`, matching entry `entryId`.
    static func securityAlert(_ visitor: Visitor, entryId: String, checkpointId: String = "c1", id: Int64 = 7) -> ServerEvent {
        let data = VisitorEventData(visitor: visitor, checkpointId: checkpointId, entryId: entryId)
        return ServerEvent(id: id, kindName: EventKind.securityAlert.rawValue,
                           data: String(decoding: try! JSONEncoder().encode(data), as: UTF8.self))
    }
}
