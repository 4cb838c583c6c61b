import Foundation
import GatePassAPI
import GatePassCore
import HTTPServer
import SQLite

/// The per-user notification list: the notable events that reached the user (the same
/// audience rule as the event stream), minus what they deleted, with when they read each.
extension GatePassApplication {
    /// The notifications controller: a user's notification list.
    static let notificationRoutes: [Route] = [
        .read(.notificationsList) { app, call, tx in try app.listNotifications(call, tx.connection) },
        .write(.notificationsRead) { app, call, tx in try app.readNotification(call, tx.connection) },
        .write(.notificationsDelete) { app, call, tx in try app.deleteNotification(call, tx.connection) },
    ]

    /// The condition on event row `e` for "this event is in `user`'s list", with its arguments.
    static func notificationScope(_ user: Profile) -> (sql: String, arguments: [any SQLBindable]) {
        switch user.role {
        case .platformAdmin:
            // api.md: PLATFORM_ADMIN receives no events.
            return ("0", [])
        case .owner, .admin:
            return ("e.organization_id = ? AND (e.user_id IS NULL OR e.user_id = ?)", [user.organizationId, user.id])
        case .approver:
            return ("e.organization_id = ? AND (e.user_id = ? OR (e.user_id IS NULL AND (e.approver_id IS NULL OR e.approver_id = ?)))",
                    [user.organizationId, user.id, user.id])
        }
    }

    private static let notificationColumns = "e.id, e.kind, e.title, e.visitor_id, e.created_at, m.read_at"

    private static func notification(_ row: Row) throws -> NotificationItem {
        NotificationItem(id: String(try row.int64(0)), kind: try row.parsed(1, as: "event kind", EventKind.init(rawValue:)),
                         title: try row.string(2), visitorId: try row.optionalString(3),
                         createdAt: Timestamp(try row.date(4)), readAt: try row.optionalDate(5).map(Timestamp.init))
    }

    func listNotifications(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        let query = call.request.query
        let limit = try Field.limit(query)
        let cursor = try Field.cursor(query)
        let unreadOnly: Bool
        switch query["unread"] {
        case nil, "false": unreadOnly = false
        case "true": unreadOnly = true
        default: throw APIError.badRequest("unread must be true or false")
        }
        let user = call.caller.user
        let scope = Self.notificationScope(user)
        var sql = """
            SELECT \(Self.notificationColumns) FROM events e
            LEFT JOIN notification_marks m ON m.user_id = ? AND m.event_id = e.id
            WHERE e.title IS NOT NULL AND \(scope.sql) AND m.deleted_at IS NULL
            """
        var arguments: [any SQLBindable] = [user.id] + scope.arguments
        if unreadOnly { sql += " AND m.read_at IS NULL" }
        if let cursor {
            sql += " AND e.id < ?"
            arguments.append(cursor.seq)
        }
        sql += " ORDER BY e.id DESC LIMIT ?"
        arguments.append(limit + 1)
        let rows = try db.query(sql, arguments, Self.notification)
        let items = Array(rows.prefix(limit))
        let next = rows.count > limit ? items.last.map { ListCursor(time: $0.createdAt.date.milliseconds, seq: Int64($0.id)!).token } : nil
        return JSONBody.response(Page(items: items, nextCursor: next))
    }

    /// The caller's notification `:id`, unless it does not exist, is not theirs or was deleted (404).
    private func ownNotification(_ call: Call, _ db: Connection) throws -> NotificationItem {
        let raw = call.parameter("id")
        guard raw.count <= 19, raw.allSatisfy(\.isASCII), let id = Int64(raw), id > 0 else {
            throw APIError.notFound("notification")
        }
        let user = call.caller.user
        let scope = Self.notificationScope(user)
        let sql = """
            SELECT \(Self.notificationColumns) FROM events e
            LEFT JOIN notification_marks m ON m.user_id = ? AND m.event_id = e.id
            WHERE e.id = ? AND e.title IS NOT NULL AND \(scope.sql) AND m.deleted_at IS NULL
            """
        guard let item = try db.queryFirst(sql, [user.id, id] + scope.arguments, Self.notification) else {
            throw APIError.notFound("notification")
        }
        return item
    }

    /// Marks read (the first read time stays) and tells the user's other devices.
    func readNotification(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        var item = try ownNotification(call, db)
        let user = call.caller.user
        if item.readAt == nil {
            try db.execute("""
                INSERT INTO notification_marks (user_id, event_id, read_at) VALUES (?, ?, ?)
                ON CONFLICT (user_id, event_id) DO UPDATE SET read_at = excluded.read_at
                """, [user.id, Int64(item.id)!, call.now.milliseconds])
            item.readAt = Timestamp(call.now)
            try EventLog.append(.notificationRead,
                                audience: EventAudience(organizationId: user.organizationId, userId: user.id),
                                visitorId: item.visitorId, title: nil,
                                data: EventLog.encode(NotificationEventData(notification: item)), now: call.now, db)
        }
        return JSONBody.response(item)
    }

    func deleteNotification(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        let item = try ownNotification(call, db)
        let user = call.caller.user
        try db.execute("""
            INSERT INTO notification_marks (user_id, event_id, deleted_at) VALUES (?, ?, ?)
            ON CONFLICT (user_id, event_id) DO UPDATE SET deleted_at = excluded.deleted_at
            """, [user.id, Int64(item.id)!, call.now.milliseconds])
        try EventLog.append(.notificationDeleted,
                            audience: EventAudience(organizationId: user.organizationId, userId: user.id),
                            visitorId: item.visitorId, title: nil,
                            data: EventLog.encode(NotificationDeletedData(id: item.id)), now: call.now, db)
        return Self.noContent
    }
}
