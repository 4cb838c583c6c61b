import Foundation
import GatePassAPI
import GatePassCore
import HTTPServer

/// The per-user notification list: the notable events that reached the user (the same
/// audience rule as the event stream), minus what they deleted, with when they read each.
extension GatePassApplication {
    /// The notifications controller: a user's notification list.
    static let notificationRoutes: [Route] = [
        .read(.notificationsList) { app, call, tx in try app.listNotifications(call, tx) },
        .write(.notificationsRead) { app, call, tx in try app.readNotification(call, tx) },
        .write(.notificationsDelete) { app, call, tx in try app.deleteNotification(call, tx) },
    ]

    func listNotifications(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let query = call.request.query
        let limit = try Field.limit(query)
        let cursor = try Field.cursor(query)
        let unreadOnly: Bool
        switch query["unread"] {
        case nil, "false": unreadOnly = false
        case "true": unreadOnly = true
        default: throw APIError.badRequest("unread must be true or false")
        }
        let rows = try tx.notifications.list(for: call.caller.user, unreadOnly: unreadOnly, after: cursor,
                                             limit: limit + 1)
        let items = Array(rows.prefix(limit))
        let next = rows.count > limit ? items.last.map { ListCursor(time: $0.createdAt.date.milliseconds, seq: Int64($0.id)!).token } : nil
        return JSONBody.response(Page(items: items, nextCursor: next))
    }

    /// The caller's notification `:id`, unless it does not exist, is not theirs or was deleted (404).
    private func ownNotification(_ call: Call, _ tx: any Transaction) throws -> NotificationItem {
        let raw = call.parameter("id")
        guard raw.count <= 19, raw.allSatisfy(\.isASCII), let id = Int64(raw), id > 0 else {
            throw APIError.notFound("notification")
        }
        guard let item = try tx.notifications.notification(id: id, for: call.caller.user) else {
            throw APIError.notFound("notification")
        }
        return item
    }

    /// Marks read (the first read time stays) and tells the user's other devices.
    func readNotification(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        var item = try ownNotification(call, tx)
        let user = call.caller.user
        if item.readAt == nil {
            try tx.notifications.markRead(userId: user.id, eventId: Int64(item.id)!, now: call.now)
            item.readAt = Timestamp(call.now)
            try tx.events.append(.notificationRead,
                                 audience: EventAudience(organizationId: user.organizationId, userId: user.id),
                                 visitorId: item.visitorId, title: nil,
                                 data: EventLog.encode(NotificationEventData(notification: item)), now: call.now)
        }
        return JSONBody.response(item)
    }

    func deleteNotification(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let item = try ownNotification(call, tx)
        let user = call.caller.user
        try tx.notifications.markDeleted(userId: user.id, eventId: Int64(item.id)!, now: call.now)
        try tx.events.append(.notificationDeleted,
                             audience: EventAudience(organizationId: user.organizationId, userId: user.id),
                             visitorId: item.visitorId, title: nil,
                             data: EventLog.encode(NotificationDeletedData(id: item.id)), now: call.now)
        return Self.noContent
    }
}
