import Foundation
import GatePassCore
import SQLBinding

struct SQLDirectoryRepository<Database: SQLRunner>: DirectoryRepository {
    let db: Database
    /// A change of a user row is noted here: cached sessions carry their user (`SessionCache`).
    let notes: TransactionNotes

    private static var userColumns: String { "id, email, name, role, organization_id, can_scan" }

    /// An unknown role throws: it must never read as some role nobody gave.
    static func profile(_ row: Database.Row) throws -> Profile {
        let role = try row.parsed(named: "role", as: "role", Role.init(rawValue:))
        return Profile(id: try row.string(named: "id"), email: try row.string(named: "email"), name: try row.string(named: "name"),
                       role: role, organizationId: try row.string(named: "organization_id"),
                       canScanCheckpoint: role.canScanCheckpoint(stored: try row.bool(named: "can_scan")))
    }

    func user(email: String) throws -> Profile? {
        try db.queryFirst("SELECT \(Self.userColumns) FROM users WHERE email = ?", [email.lowercased()], { try Self.profile($0) })
    }

    func user(id: String) throws -> Profile? {
        try db.queryFirst("SELECT \(Self.userColumns) FROM users WHERE id = ?", [id], { try Self.profile($0) })
    }

    func organizationId(named name: String) throws -> String? {
        try db.queryFirst("SELECT id FROM organizations WHERE name = ?", [name]) { try $0.string(named: "id") }
    }

    func organizationExists(id: String) throws -> Bool {
        try db.scalarInt("SELECT COUNT(*) FROM organizations WHERE id = ?", [id]) == 1
    }

    /// Creates an organization with its default checkpoint "Main gate".
    func createOrganization(name: String, now: Date) throws -> String {
        let id = newIdentifier()
        try db.execute("INSERT INTO organizations (id, name, created_at) VALUES (?, ?, ?)", [id, name, now.milliseconds])
        try db.execute("""
            INSERT INTO checkpoints (id, organization_id, name, is_default, created_at) VALUES (?, ?, ?, 1, ?)
            """, [newIdentifier(), id, Checkpoint.defaultName, now.milliseconds])
        return id
    }

    func createUser(organizationId: String, email: String, name: String, role: Role, canScan: Bool,
                           now: Date) throws -> Profile {
        let id = newIdentifier()
        try db.execute("""
            INSERT INTO users (id, organization_id, email, name, role, can_scan, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [id, organizationId, email.lowercased(), name, role.rawValue, canScan, now.milliseconds])
        return Profile(id: id, email: email.lowercased(), name: name, role: role, organizationId: organizationId,
                       canScanCheckpoint: role.canScanCheckpoint(stored: canScan))
    }

    func organizationId(ofUser userId: String) throws -> String? {
        try db.queryFirst("SELECT organization_id FROM users WHERE id = ?", [userId], { try $0.string(named: "organization_id") })
    }

    func organization(id: String) throws -> StoredOrganization? {
        try db.queryFirst("SELECT id, name, time_zone, retention_days, auto_checkout_at FROM organizations WHERE id = ?", [id]) {
            // Days become a time (the retention cutoff): only the range the API accepts is understood.
            StoredOrganization(id: try $0.string(named: "id"), name: try $0.string(named: "name"),
                               timeZone: try $0.optionalString(named: "time_zone"),
                               retentionDays: try $0.optionalInt(named: "retention_days", in: OrganizationRules.retentionDaysRange),
                               autoCheckoutAt: try $0.optionalString(named: "auto_checkout_at"))
        }
    }

    func update(_ organization: StoredOrganization) throws {
        try db.execute("UPDATE organizations SET name = ?, time_zone = ?, retention_days = ?, auto_checkout_at = ? WHERE id = ?",
                       [organization.name, organization.timeZone, organization.retentionDays, organization.autoCheckoutAt,
                        organization.id])
    }

    func userSummary(id: String) throws -> UserSummary? {
        try db.queryFirst("SELECT \(Self.userColumns), disabled, last_login_at FROM users WHERE id = ?", [id]) { row in
            UserSummary(profile: try Self.profile(row), disabled: try row.bool(named: "disabled"),
                        lastLoginAt: try row.optionalDate(named: "last_login_at"))
        }
    }

    func update(userId: String, name: String, role: Role, canScan: Bool, disabled: Bool) throws {
        notes.notePrincipalsChanged()
        try db.execute("UPDATE users SET name = ?, role = ?, can_scan = ?, disabled = ? WHERE id = ?",
                       [name, role.rawValue, canScan, disabled, userId])
    }

    func storedCanScan(userId: String) throws -> Bool {
        try db.queryFirst("SELECT can_scan FROM users WHERE id = ?", [userId]) { try $0.bool(named: "can_scan") } ?? false
    }

    func activeOwnerCount(organizationId: String) throws -> Int {
        Int(try db.scalarInt("SELECT COUNT(*) FROM users WHERE organization_id = ? AND role = 'OWNER' AND disabled = 0",
                             [organizationId]) ?? 0)
    }

    /// Read through the decoder, not compared in SQL: `disabled = 1` would let a stored 2
    /// count as enabled, where it must be an error.
    func isDisabled(userId: String) throws -> Bool {
        try db.queryFirst("SELECT disabled FROM users WHERE id = ?", [userId]) { try $0.bool(named: "disabled") } ?? false
    }

    func users(organizationId: String?, after cursor: ListCursor?, limit: Int) throws -> [(user: UserSummary, cursor: ListCursor)] {
        var sql = "SELECT \(Self.userColumns), disabled, last_login_at, created_at, rowid FROM users WHERE 1 = 1"
        var arguments: [any SQLBindable] = []
        if let organizationId { sql += " AND organization_id = ?"; arguments.append(organizationId) }
        KeysetOrder(time: "created_at", seq: "rowid").appendPage(after: cursor, limit: limit, to: &sql, &arguments)
        return try db.query(sql, arguments) { row in
            (UserSummary(profile: try Self.profile(row), disabled: try row.bool(named: "disabled"),
                         lastLoginAt: try row.optionalDate(named: "last_login_at")),
             ListCursor(time: try row.milliseconds(named: "created_at"), seq: try row.int64(named: "rowid")))
        }
    }

    func approvers(organizationId: String) throws -> [Profile] {
        try db.query("SELECT \(Self.userColumns) FROM users WHERE organization_id = ? AND role = 'APPROVER' AND disabled = 0",
                     [organizationId], { try Self.profile($0) })
    }

    func recordLogin(userId: String, at time: Date) throws {
        try db.execute("UPDATE users SET last_login_at = ? WHERE id = ?", [time.milliseconds, userId])
    }

    func organizationIds() throws -> [String] {
        try db.query("SELECT id FROM organizations ORDER BY created_at, id") { try $0.string(named: "id") }
    }

    func lastRetentionDay(organizationId: String) throws -> LocalDay? {
        // A day that does not read back is damage: the run is due again rather than skipped.
        try db.queryFirst("SELECT retention_ran_on FROM organizations WHERE id = ?", [organizationId]) {
            try $0.optionalString(named: "retention_ran_on").flatMap(LocalDay.init)
        } ?? nil
    }

    func recordRetentionDay(_ day: LocalDay, organizationId: String) throws {
        try db.execute("UPDATE organizations SET retention_ran_on = ? WHERE id = ?", [day.description, organizationId])
    }

    func serverRetentionDays() throws -> Int {
        let days = try db.queryFirst("SELECT retention_days FROM server_defaults WHERE id = 1") { row in
            try row.int(named: "retention_days", in: OrganizationRules.retentionDaysRange)
        }
        // The migration writes the row: a database without it is damage, never the default.
        guard let days else { throw StoredDataError("the server_defaults row is missing") }
        return days
    }

    func setServerRetentionDays(_ days: Int) throws {
        try db.execute("UPDATE server_defaults SET retention_days = ? WHERE id = 1", [days])
    }
}
