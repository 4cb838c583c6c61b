import Foundation
import GatePassCore

/// The push-token registry's operations: test sends and the delivery log. Used by the API
/// (`/api/admin/push-test`, `/api/admin/push-deliveries`) and by `gatepass push-test --db`.
public enum PushRegistry {
    /// Writes one `push.test` event per target (each for its device only) and returns the
    /// event ids, in the targets' order.
    static func sendTests(to targets: [PushTarget], now: Date, _ tx: any Transaction) throws -> [Int64] {
        try targets.map { target in
            guard let organizationId = try tx.directory.organizationId(ofUser: target.userId) else {
                throw APIError.notFound("user")
            }
            let data = EventLog.encode(PushTestData(message: "Test notification from gatepass push-test", sentAt: Timestamp(now)))
            return try tx.events.append(.pushTest,
                                        audience: EventAudience(organizationId: organizationId, userId: target.userId,
                                                                deviceToken: target.token),
                                        visitorId: nil, title: NotificationItem.title(for: .pushTest, visitorName: nil),
                                        data: data, now: now)
        }
    }

    /// Polls the deliveries of `eventIds` until all are delivered or `wait` has passed
    /// (`gatepass push-test --db`: a command, which may block; the server uses `PushTestWaits`).
    static func outcomes(for targets: [PushTarget], eventIds: [Int64], store: ServerDatabase, wait: Duration) -> [PushTestOutcome] {
        let deadline = ContinuousClock.now + wait
        var statuses: [String: String] = [:]
        while true {
            statuses = (try? store.read { tx in try deliveryStatuses(targets: targets, eventIds: eventIds, tx) }) ?? statuses
            if allDelivered(statuses, targets: targets) || ContinuousClock.now >= deadline { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return outcomes(for: targets, eventIds: eventIds, statuses: statuses)
    }

    /// The status of each target's delivery of its event, by token.
    static func deliveryStatuses(targets: [PushTarget], eventIds: [Int64], _ tx: any Transaction) throws -> [String: String] {
        try Dictionary(uniqueKeysWithValues: zip(targets, eventIds).compactMap { target, id -> (String, String)? in
            try tx.push.deliveryStatus(token: target.token, eventId: id).map { (target.token, $0) }
        })
    }

    static func allDelivered(_ statuses: [String: String], targets: [PushTarget]) -> Bool {
        statuses.count == targets.count && statuses.values.allSatisfy { $0 == "delivered" }
    }

    static func outcomes(for targets: [PushTarget], eventIds: [Int64], statuses: [String: String]) -> [PushTestOutcome] {
        zip(targets, eventIds).map { target, id in
            let status: PushTestOutcome.Status
            var detail: String?
            switch statuses[target.token] {
            case "delivered": status = .delivered
            case "pending": status = .notConnected
            case "failed": status = .notConnected; detail = "the delivery failed"
            default: status = .error; detail = "no delivery was recorded"
            }
            return PushTestOutcome(token: target.token, platform: target.platform, userId: target.userId, email: target.email,
                                   status: status, detail: detail, eventId: id)
        }
    }

    /// Runs a whole test against a database file (`gatepass push-test --db`): a server using
    /// the same file delivers the events to its streams and records it.
    public static func test(store: ServerDatabase, token: String?, wait: Duration, now: Date) throws -> [PushTestOutcome] {
        let targets = try store.read { tx in try tx.push.targets(organizationId: nil, token: token) }
        if let token, targets.isEmpty {
            return [PushTestOutcome(token: token, status: .error, detail: "this token is not registered")]
        }
        let ids = try store.write { tx in try Self.sendTests(to: targets, now: now, tx) }
        return outcomes(for: targets, eventIds: ids, store: store, wait: wait)
    }

    /// `gatepass push-deliveries --db`.
    public static func deliveries(store: ServerDatabase, token: String, limit: Int) throws -> [PushDelivery] {
        try store.read { tx in try tx.push.deliveries(organizationId: nil, token: token, after: nil, limit: limit) }
    }
}
