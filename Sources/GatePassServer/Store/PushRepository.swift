import Foundation
import GatePassCore

/// The push-token registry: devices registered to users, and the delivery log (one row per
/// event and device it should reach, pending until a stream that presented the device's
/// token handed the event to its socket).
protocol PushRepository {
    // MARK: - Devices

    /// The device registered with `token`, if any.
    func device(token: String) throws -> Device?

    /// The user `token` is registered to, if it is.
    func deviceOwner(token: String) throws -> String?

    /// The organization of the user `token` is registered to, if it is.
    func deviceOrganization(token: String) throws -> String?

    /// Registers `token` to `userId`, or re-binds it (platform, user, last seen) when it exists;
    /// a new device was first seen `now`.
    func registerDevice(token: String, platform: String, userId: String, now: Date) throws

    /// Removes `token` if it is registered to `userId`; otherwise changes nothing.
    func unregisterDevice(token: String, userId: String) throws

    /// Registered devices (of one organization, or all), optionally only `token`, by the
    /// user's email, then token.
    func targets(organizationId: String?, token: String?) throws -> [PushTarget]

    // MARK: - Deliveries

    /// The status (`pending`, `delivered`, `failed`) of `token`'s delivery of event `eventId`,
    /// if one was recorded.
    func deliveryStatus(token: String, eventId: Int64) throws -> String?

    /// The delivery log of one token, newest first (only within `organizationId` when given),
    /// at most `limit` rows, the page after `cursor` when given (by event id).
    func deliveries(organizationId: String?, token: String, after cursor: ListCursor?, limit: Int) throws -> [PushDelivery]

    /// Records that `token`'s pending delivery of `eventId` was handed over at `now`.
    func markDelivered(token: String, eventId: Int64, now: Date) throws

    /// Whether any delivery created before `cutoff` is still pending.
    func hasPendingDeliveries(createdBefore cutoff: Date) throws -> Bool

    /// Fails (at `now`) every delivery created before `cutoff` that is still pending.
    func failPendingDeliveries(createdBefore cutoff: Date, now: Date) throws

    /// Deletes the delivery log's rows created before `cutoff` (`pushDeliveryRetentionHours`).
    func purgeDeliveries(createdBefore cutoff: Date) throws
}
