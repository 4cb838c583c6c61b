import Foundation
import GatePassCore

/// The per-user notification lists: the notable events (those with a title) that reached a
/// user, by the same audience rule as the event stream, minus what they deleted, with when
/// they read each.
protocol NotificationRepository {
    /// `user`'s notifications, newest first: at most `limit`, only unread ones when
    /// `unreadOnly`, the page after `cursor` when given (by event id).
    func list(for user: Profile, unreadOnly: Bool, after cursor: ListCursor?, limit: Int) throws -> [NotificationItem]

    /// `user`'s notification of event `id`, unless it does not exist, is not theirs or was deleted.
    func notification(id: Int64, for user: Profile) throws -> NotificationItem?

    /// Marks event `eventId` read by `userId` at `now` (a later read replaces the time).
    func markRead(userId: String, eventId: Int64, now: Date) throws

    /// Marks event `eventId` deleted from `userId`'s list at `now`.
    func markDeleted(userId: String, eventId: Int64, now: Date) throws

    /// Who read or deleted the notifications about one visitor (a visitor's export).
    func marks(visitorId: String) throws -> [NotificationMark]
}

/// One user's read or delete mark on one notification.
struct NotificationMark: Codable, Sendable, Equatable {
    var eventId: String
    var userId: String
    var readAt: Date?
    var deletedAt: Date?
}
