import Foundation
import GatePassCore
import SQLite

/// Organizations, users and checkpoints.
enum Directory {
    static let defaultCheckpointName = "Main gate"
    private static let userColumns = "id, email, name, role, organization_id, can_scan"

    /// An unknown role throws: it must never read as some role nobody gave.
    private static func profile(_ row: Row) throws -> Profile {
        Profile(id: try row.string(0), email: try row.string(1), name: try row.string(2),
                role: try row.parsed(3, as: "role", Role.init(rawValue:)), organizationId: try row.string(4),
                canScanCheckpoint: try row.bool(5))
    }

    static func user(email: String, _ db: Connection) throws -> Profile? {
        try db.queryFirst("SELECT \(userColumns) FROM users WHERE email = ?", [email.lowercased()], profile)
    }

    static func user(id: String, _ db: Connection) throws -> Profile? {
        try db.queryFirst("SELECT \(userColumns) FROM users WHERE id = ?", [id], profile)
    }

    static func organizationId(named name: String, _ db: Connection) throws -> String? {
        try db.queryFirst("SELECT id FROM organizations WHERE name = ?", [name]) { try $0.string(0) }
    }

    static func organizationExists(id: String, _ db: Connection) throws -> Bool {
        try db.scalarInt("SELECT COUNT(*) FROM organizations WHERE id = ?", [id]) == 1
    }

    /// Creates an organization with its default checkpoint "Main gate".
    @discardableResult
    static func createOrganization(name: String, now: Date, _ db: Connection) throws -> String {
        let id = newIdentifier()
        try db.execute("INSERT INTO organizations (id, name, created_at) VALUES (?, ?, ?)", [id, name, now.milliseconds])
        try db.execute("""
            INSERT INTO checkpoints (id, organization_id, name, is_default, created_at) VALUES (?, ?, ?, 1, ?)
            """, [newIdentifier(), id, defaultCheckpointName, now.milliseconds])
        return id
    }

    static func createUser(organizationId: String, email: String, name: String, role: Role, canScan: Bool,
                           now: Date, _ db: Connection) throws -> Profile {
        let id = newIdentifier()
        try db.execute("""
            INSERT INTO users (id, organization_id, email, name, role, can_scan, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [id, organizationId, email.lowercased(), name, role.rawValue, canScan, now.milliseconds])
        return Profile(id: id, email: email.lowercased(), name: name, role: role, organizationId: organizationId,
                       canScanCheckpoint: canScan)
    }

    private static let checkpointColumns = "id, name, organization_id, is_default, created_at"
    private static func checkpoint(_ row: Row) throws -> Checkpoint {
        Checkpoint(id: try row.string(0), name: try row.string(1), organizationId: try row.string(2),
                   isDefault: try row.bool(3), createdAt: Timestamp(try row.date(4)))
    }

    static func checkpoints(organizationId: String?, _ db: Connection) throws -> [Checkpoint] {
        if let organizationId {
            return try db.query("SELECT \(checkpointColumns) FROM checkpoints WHERE organization_id = ? ORDER BY created_at, name",
                                [organizationId], checkpoint)
        }
        return try db.query("SELECT \(checkpointColumns) FROM checkpoints ORDER BY organization_id, created_at, name", [], checkpoint)
    }

    static func checkpoint(id: String, organizationId: String, _ db: Connection) throws -> Checkpoint? {
        try db.queryFirst("SELECT \(checkpointColumns) FROM checkpoints WHERE id = ? AND organization_id = ?",
                          [id, organizationId], checkpoint)
    }

    static func defaultCheckpoint(organizationId: String, _ db: Connection) throws -> Checkpoint? {
        try db.queryFirst("SELECT \(checkpointColumns) FROM checkpoints WHERE organization_id = ? AND is_default = 1",
                          [organizationId], checkpoint)
    }

    static func createCheckpoint(organizationId: String, name: String, now: Date, _ db: Connection) throws -> Checkpoint {
        let id = newIdentifier()
        try db.execute("INSERT INTO checkpoints (id, organization_id, name, is_default, created_at) VALUES (?, ?, ?, 0, ?)",
                       [id, organizationId, name, now.milliseconds])
        return Checkpoint(id: id, name: name, organizationId: organizationId, isDefault: false, createdAt: Timestamp(now))
    }
}
