import Foundation
import GatePassCore
import SQLBinding

struct SQLPushRepository<Database: SQLRunner>: PushRepository {
    let db: Database

    // MARK: - Devices

    func device(token: String) throws -> Device? {
        try db.queryFirst("SELECT token, platform, user_id, created_at, last_seen_at FROM devices WHERE token = ?",
                          [token]) { row in
            Device(token: try row.string(named: "token"), platform: try row.string(named: "platform"),
                   userId: try row.string(named: "user_id"), createdAt: Timestamp(try row.date(named: "created_at")),
                   lastSeenAt: Timestamp(try row.date(named: "last_seen_at")))
        }
    }

    func deviceOwner(token: String) throws -> String? {
        try db.queryFirst("SELECT user_id FROM devices WHERE token = ?", [token]) { try $0.string(named: "user_id") }
    }

    func deviceOrganization(token: String) throws -> String? {
        try db.queryFirst("""
            SELECT u.organization_id FROM devices d JOIN users u ON u.id = d.user_id WHERE d.token = ?
            """, [token]) { try $0.string(named: "organization_id") }
    }

    func registerDevice(token: String, platform: String, userId: String, now: Date) throws {
        try db.execute("""
            INSERT INTO devices (token, platform, user_id, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (token) DO UPDATE SET platform = excluded.platform, user_id = excluded.user_id,
                last_seen_at = excluded.last_seen_at
            """, [token, platform, userId, now.milliseconds, now.milliseconds])
    }

    func unregisterDevice(token: String, userId: String) throws {
        try db.execute("DELETE FROM devices WHERE token = ? AND user_id = ?", [token, userId])
    }

    func targets(organizationId: String?, token: String?) throws -> [PushTarget] {
        var sql = """
            SELECT d.token, d.platform, u.id, u.email, u.name FROM devices d JOIN users u ON u.id = d.user_id WHERE 1 = 1
            """
        var arguments: [any SQLBindable] = []
        if let organizationId {
            sql += " AND u.organization_id = ?"
            arguments.append(organizationId)
        }
        if let token {
            sql += " AND d.token = ?"
            arguments.append(token)
        }
        sql += " ORDER BY u.email, d.token"
        return try db.query(sql, arguments) { row in
            PushTarget(token: try row.string(named: "token"), platform: try row.string(named: "platform"),
                       userId: try row.string(named: "id"), email: try row.string(named: "email"),
                       name: try row.string(named: "name"))
        }
    }

    // MARK: - Deliveries

    func deliveryStatus(token: String, eventId: Int64) throws -> String? {
        try db.queryFirst("SELECT status FROM push_deliveries WHERE token = ? AND event_id = ?", [token, eventId]) {
            try $0.string(named: "status")
        }
    }

    func deliveries(organizationId: String?, token: String, after cursor: ListCursor?, limit: Int) throws -> [PushDelivery] {
        var sql = """
            SELECT p.event_id, e.kind, p.token, p.user_id, p.status, p.created_at, p.finished_at
            FROM push_deliveries p JOIN events e ON e.id = p.event_id WHERE 1 = 1
            """
        var arguments: [any SQLBindable] = []
        if let organizationId {
            sql += " AND e.organization_id = ?"
            arguments.append(organizationId)
        }
        sql += " AND p.token = ?"
        arguments.append(token)
        // One token's deliveries: the event id alone orders them.
        KeysetOrder.bySequence("p.event_id").appendPage(after: cursor, limit: limit, to: &sql, &arguments)
        return try db.query(sql, arguments) { row in
            PushDelivery(eventId: try row.int64(named: "event_id"), kind: try row.string(named: "kind"),
                         token: try row.string(named: "token"), userId: try row.string(named: "user_id"),
                         status: try row.string(named: "status"), createdAt: Timestamp(try row.date(named: "created_at")),
                         finishedAt: try row.optionalDate(named: "finished_at").map(Timestamp.init))
        }
    }

    func markDelivered(token: String, eventId: Int64, now: Date) throws {
        try db.execute("""
            UPDATE push_deliveries SET status = 'delivered', finished_at = ?
            WHERE token = ? AND event_id = ? AND status = 'pending'
            """, [now.milliseconds, token, eventId])
    }

    func hasPendingDeliveries(createdBefore cutoff: Date) throws -> Bool {
        try db.queryFirst("SELECT 1 FROM push_deliveries WHERE status = 'pending' AND created_at < ? LIMIT 1",
                          [cutoff.milliseconds]) { _ in true } ?? false
    }

    func failPendingDeliveries(createdBefore cutoff: Date, now: Date) throws {
        try db.execute("""
            UPDATE push_deliveries SET status = 'failed', finished_at = ? WHERE status = 'pending' AND created_at < ?
            """, [now.milliseconds, cutoff.milliseconds])
    }

    func purgeDeliveries(createdBefore cutoff: Date) throws {
        try db.execute("DELETE FROM push_deliveries WHERE created_at < ?", [cutoff.milliseconds])
    }
}
