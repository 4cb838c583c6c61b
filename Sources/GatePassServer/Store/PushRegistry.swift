import Foundation
import GatePassCore
import SQLite

/// The push-token registry's operations: test sends and the delivery log. Used by the API
/// (`/api/admin/push-test`, `/api/admin/push-deliveries`) and by `gatepass push-test --db`.
public enum PushRegistry {
    /// Registered devices (of one organization, or all), optionally only `token`.
    static func targets(organizationId: String?, token: String?, _ db: Connection) throws -> [PushTarget] {
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
            PushTarget(token: try row.string(0), platform: try row.string(1), userId: try row.string(2),
                       email: try row.string(3), name: try row.string(4))
        }
    }

    /// Writes one `push.test` event per target (each for its device only) and returns the
    /// event ids, in the targets' order.
    static func sendTests(to targets: [PushTarget], now: Date, _ db: Connection) throws -> [Int64] {
        try targets.map { target in
            guard let organizationId = try db.queryFirst("SELECT organization_id FROM users WHERE id = ?", [target.userId],
                                                         { try $0.string(0) }) else {
                throw APIError.notFound("user")
            }
            let data = EventLog.encode(PushTestData(message: "Test notification from gatepass push-test", sentAt: Timestamp(now)))
            return try EventLog.append(.pushTest,
                                       audience: EventAudience(organizationId: organizationId, userId: target.userId,
                                                               deviceToken: target.token),
                                       visitorId: nil, title: NotificationItem.title(for: .pushTest, visitorName: nil),
                                       data: data, now: now, db)
        }
    }

    /// Polls the deliveries of `eventIds` until all are delivered or `wait` has passed
    /// (`gatepass push-test --db`: a command, which may block; the server uses `PushTestWaits`).
    static func outcomes(for targets: [PushTarget], eventIds: [Int64], store: ServerDatabase, wait: Duration) -> [PushTestOutcome] {
        let deadline = ContinuousClock.now + wait
        var statuses: [String: String] = [:]
        while true {
            statuses = (try? store.readConnection { db in try deliveryStatuses(targets: targets, eventIds: eventIds, db) }) ?? statuses
            if allDelivered(statuses, targets: targets) || ContinuousClock.now >= deadline { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return outcomes(for: targets, eventIds: eventIds, statuses: statuses)
    }

    /// The status of each target's delivery of its event, by token.
    static func deliveryStatuses(targets: [PushTarget], eventIds: [Int64], _ db: Connection) throws -> [String: String] {
        try Dictionary(uniqueKeysWithValues: zip(targets, eventIds).compactMap { target, id -> (String, String)? in
            try db.queryFirst("SELECT status FROM push_deliveries WHERE token = ? AND event_id = ?", [target.token, id]) {
                (target.token, try $0.string(0))
            }
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
        let targets = try store.readConnection { db in try Self.targets(organizationId: nil, token: token, db) }
        if let token, targets.isEmpty {
            return [PushTestOutcome(token: token, status: .error, detail: "this token is not registered")]
        }
        let ids = try store.writeConnection { db in try Self.sendTests(to: targets, now: now, db) }
        return outcomes(for: targets, eventIds: ids, store: store, wait: wait)
    }

    /// The delivery log of one token, newest first (only within `organizationId` when given).
    static func deliveries(organizationId: String?, token: String, limit: Int, before: Int64?,
                           _ db: Connection) throws -> [PushDelivery] {
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
        if let before {
            sql += " AND p.event_id < ?"
            arguments.append(before)
        }
        sql += " ORDER BY p.event_id DESC, p.token LIMIT ?"
        arguments.append(limit)
        return try db.query(sql, arguments) { row in
            PushDelivery(eventId: try row.int64(0), kind: try row.string(1), token: try row.string(2),
                         userId: try row.string(3), status: try row.string(4), createdAt: Timestamp(try row.date(5)),
                         finishedAt: try row.optionalDate(6).map(Timestamp.init))
        }
    }

    /// `gatepass push-deliveries --db`.
    public static func deliveries(store: ServerDatabase, token: String, limit: Int) throws -> [PushDelivery] {
        try store.readConnection { db in try deliveries(organizationId: nil, token: token, limit: limit, before: nil, db) }
    }
}
