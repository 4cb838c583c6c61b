import Foundation
import GatePassCore
import SQLBinding

struct SQLNotificationRepository<Database: SQLRunner>: NotificationRepository {
    let db: Database

    /// The condition on event row `e` for "this event is in `user`'s list", with its arguments.
    static func scope(_ user: Profile) -> (sql: String, arguments: [any SQLBindable]) {
        switch user.role {
        case .platformAdmin:
            // api.md: PLATFORM_ADMIN receives no events.
            return ("1 = 0", [])
        case .host:
            // Only what is addressed to it: organization-wide events may name visitors it does not see.
            return ("e.organization_id = ? AND e.user_id = ?", [user.organizationId, user.id])
        case .owner, .admin:
            return ("e.organization_id = ? AND (e.user_id IS NULL OR e.user_id = ?)", [user.organizationId, user.id])
        case .approver:
            return ("e.organization_id = ? AND (e.user_id = ? OR (e.user_id IS NULL AND e.managers_only = 0 AND (e.approver_id IS NULL OR e.approver_id = ?)))",
                    [user.organizationId, user.id, user.id])
        }
    }

    private static var columns: String { "e.id, e.kind, e.title, e.visitor_id, e.created_at, m.read_at" }

    private static func notification(_ row: Database.Row) throws -> NotificationItem {
        NotificationItem(id: String(try row.int64(named: "id")),
                         kind: try row.parsed(named: "kind", as: "event kind", EventKind.init(rawValue:)),
                         title: try row.string(named: "title"), visitorId: try row.optionalString(named: "visitor_id"),
                         createdAt: Timestamp(try row.date(named: "created_at")),
                         readAt: try row.optionalDate(named: "read_at").map(Timestamp.init))
    }

    func list(for user: Profile, unreadOnly: Bool, after cursor: ListCursor?, limit: Int) throws -> [NotificationItem] {
        let scope = Self.scope(user)
        var sql = """
            SELECT \(Self.columns) FROM events e
            LEFT JOIN notification_marks m ON m.user_id = ? AND m.event_id = e.id
            WHERE e.title IS NOT NULL AND \(scope.sql) AND m.deleted_at IS NULL
            """
        var arguments: [any SQLBindable] = [user.id] + scope.arguments
        if unreadOnly { sql += " AND m.read_at IS NULL" }
        KeysetOrder.bySequence("e.id").appendPage(after: cursor, limit: limit, to: &sql, &arguments)
        return try db.query(sql, arguments, Self.notification)
    }

    func notification(id: Int64, for user: Profile) throws -> NotificationItem? {
        let scope = Self.scope(user)
        let sql = """
            SELECT \(Self.columns) FROM events e
            LEFT JOIN notification_marks m ON m.user_id = ? AND m.event_id = e.id
            WHERE e.id = ? AND e.title IS NOT NULL AND \(scope.sql) AND m.deleted_at IS NULL
            """
        return try db.queryFirst(sql, [user.id, id] + scope.arguments, Self.notification)
    }

    func markRead(userId: String, eventId: Int64, now: Date) throws {
        try db.execute("""
            INSERT INTO notification_marks (user_id, event_id, read_at) VALUES (?, ?, ?)
            ON CONFLICT (user_id, event_id) DO UPDATE SET read_at = excluded.read_at
            """, [userId, eventId, now.milliseconds])
    }

    func markDeleted(userId: String, eventId: Int64, now: Date) throws {
        try db.execute("""
            INSERT INTO notification_marks (user_id, event_id, deleted_at) VALUES (?, ?, ?)
            ON CONFLICT (user_id, event_id) DO UPDATE SET deleted_at = excluded.deleted_at
            """, [userId, eventId, now.milliseconds])
    }

    func marks(visitorId: String) throws -> [NotificationMark] {
        try db.query("""
            SELECT m.event_id, m.user_id, m.read_at, m.deleted_at FROM notification_marks m
            JOIN events e ON e.id = m.event_id WHERE e.visitor_id = ? ORDER BY m.event_id, m.user_id
            """, [visitorId]) { row in
            NotificationMark(eventId: String(try row.int64(named: "event_id")), userId: try row.string(named: "user_id"),
                             readAt: try row.optionalDate(named: "read_at"), deletedAt: try row.optionalDate(named: "deleted_at"))
        }
    }
}
