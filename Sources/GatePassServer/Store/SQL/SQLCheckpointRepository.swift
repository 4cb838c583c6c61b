import Foundation
import GatePassCore
import SQLBinding

struct SQLCheckpointRepository<Database: SQLRunner>: CheckpointRepository {
    let db: Database

    private static var checkpointColumns: String { "id, name, organization_id, is_default, created_at, retired_at IS NOT NULL AS retired" }
    private static func checkpoint(_ row: Database.Row) throws -> Checkpoint {
        Checkpoint(id: try row.string(named: "id"), name: try row.string(named: "name"),
                   organizationId: try row.string(named: "organization_id"), isDefault: try row.bool(named: "is_default"),
                   createdAt: Timestamp(try row.date(named: "created_at")), retired: try row.bool(named: "retired"))
    }

    func all(organizationId: String?) throws -> [Checkpoint] {
        if let organizationId {
            return try db.query("SELECT \(Self.checkpointColumns) FROM checkpoints WHERE organization_id = ? ORDER BY created_at, name",
                                [organizationId], Self.checkpoint)
        }
        return try db.query("SELECT \(Self.checkpointColumns) FROM checkpoints ORDER BY organization_id, created_at, name", [], Self.checkpoint)
    }

    func find(id: String, organizationId: String) throws -> Checkpoint? {
        try db.queryFirst("SELECT \(Self.checkpointColumns) FROM checkpoints WHERE id = ? AND organization_id = ?",
                          [id, organizationId], Self.checkpoint)
    }

    func defaultCheckpoint(organizationId: String) throws -> Checkpoint? {
        try db.queryFirst("SELECT \(Self.checkpointColumns) FROM checkpoints WHERE organization_id = ? AND is_default = 1",
                          [organizationId], Self.checkpoint)
    }

    func create(organizationId: String, name: String, now: Date) throws -> Checkpoint {
        let id = newIdentifier()
        try db.execute("INSERT INTO checkpoints (id, organization_id, name, is_default, created_at) VALUES (?, ?, ?, 0, ?)",
                       [id, organizationId, name, now.milliseconds])
        return Checkpoint(id: id, name: name, organizationId: organizationId, isDefault: false, createdAt: Timestamp(now))
    }

    func exists(named name: String, organizationId: String) throws -> Bool {
        try db.scalarInt("SELECT COUNT(*) FROM checkpoints WHERE organization_id = ? AND name = ?", [organizationId, name]) != 0
    }

    func update(id: String, name: String, retired: Bool, at time: Date) throws {
        // A checkpoint retired again keeps its first retirement time.
        try db.execute("""
            UPDATE checkpoints SET name = ?,
                retired_at = CASE WHEN ? = 1 THEN COALESCE(retired_at, ?) ELSE NULL END
            WHERE id = ?
            """, [name, retired, time.milliseconds, id])
    }
}
