import Foundation

// The live events of api.md ("Events (server-sent events)") and the per-user notification
// list, shared by the server (which writes them) and the clients (which read them).

/// The kinds of event on `GET /api/events`. `stream.gap` is not stored: the server sends it
/// first when a `Last-Event-ID` is older than what it keeps.
public enum EventKind: String, Codable, Sendable, CaseIterable {
    case visitorAwaiting = "visitor.awaiting"
    case visitorDecided = "visitor.decided"
    case visitorArrived = "visitor.arrived"
    case visitorDeparted = "visitor.departed"
    case requestCreated = "request.created"
    case notificationNew = "notification.new"
    case notificationRead = "notification.read"
    case notificationDeleted = "notification.deleted"
    case securityAlert = "security.alert"
    case pushTest = "push.test"
    case streamGap = "stream.gap"

    /// Kinds whose data is `{"visitor": Visitor, "scanId"?, "checkpointId"?}`.
    public var carriesVisitor: Bool {
        switch self {
        case .visitorAwaiting, .visitorDecided, .visitorArrived, .visitorDeparted, .requestCreated, .securityAlert: true
        default: false
        }
    }

    /// Kinds that land in the notification lists of the users they concern. The
    /// `notification.*` kinds only report on the list itself, and a gap is no news.
    public var isNotable: Bool { carriesVisitor || self == .pushTest }
}

/// The data of a `visitor.*`, `request.created` or `security.alert` event.
public struct VisitorEventData: Codable, Sendable, Equatable {
    public var visitor: Visitor
    public var scanId: String?
    public var checkpointId: String?
    /// `security.alert`: the blocklist entry the visitor matched (its reason is not here:
    /// `GET /api/blocklist` has it, for OWNER/ADMIN).
    public var entryId: String?
    /// `security.alert` of a replayed offline scan the server decided otherwise (api.md
    /// "Offline passes"): what the kiosk decided offline, and what the server decided.
    public var offlineDecision: ScanResult?
    public var decision: ScanResult?
    /// `security.alert` of an offline admission that does not count: the condition it failed
    /// (api.md "Which offline claims count").
    public var failedCondition: OfflineClaimFailure?

    public init(visitor: Visitor, scanId: String? = nil, checkpointId: String? = nil, entryId: String? = nil,
                offlineDecision: ScanResult? = nil, decision: ScanResult? = nil, failedCondition: OfflineClaimFailure? = nil) {
        self.visitor = visitor
        self.scanId = scanId
        self.checkpointId = checkpointId
        self.entryId = entryId
        self.offlineDecision = offlineDecision
        self.decision = decision
        self.failedCondition = failedCondition
    }

    /// True for the alert of an offline decision the server disagrees with.
    public var isOfflineConflict: Bool { offlineDecision != nil }

    enum CodingKeys: String, CodingKey { case visitor, scanId, checkpointId, entryId, offlineDecision, decision, failedCondition, conflict }
    // "scanId"? and "checkpointId"? in api.md: absent keys are left out, not written as null.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(visitor, forKey: .visitor)
        try container.encodeIfPresent(scanId, forKey: .scanId)
        try container.encodeIfPresent(checkpointId, forKey: .checkpointId)
        try container.encodeIfPresent(entryId, forKey: .entryId)
        try container.encodeIfPresent(offlineDecision, forKey: .offlineDecision)
        try container.encodeIfPresent(decision, forKey: .decision)
        try container.encodeIfPresent(failedCondition, forKey: .failedCondition)
        if offlineDecision != nil { try container.encode(true, forKey: .conflict) }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        visitor = try container.decode(Visitor.self, forKey: .visitor)
        scanId = try container.decodeIfPresent(String.self, forKey: .scanId)
        checkpointId = try container.decodeIfPresent(String.self, forKey: .checkpointId)
        entryId = try container.decodeIfPresent(String.self, forKey: .entryId)
        offlineDecision = try container.decodeIfPresent(ScanResult.self, forKey: .offlineDecision)
        decision = try container.decodeIfPresent(ScanResult.self, forKey: .decision)
        failedCondition = try container.decodeIfPresent(OfflineClaimFailure.self, forKey: .failedCondition)
    }
}

/// One entry of a user's notification list (`GET /api/notifications`).
public struct NotificationItem: Codable, Sendable, Equatable {
    /// The id of the event that caused it, as a decimal string.
    public var id: String
    public var kind: EventKind
    public var title: String
    public var visitorId: String?
    public var createdAt: Timestamp
    public var readAt: Timestamp?

    public init(id: String, kind: EventKind, title: String, visitorId: String?, createdAt: Timestamp, readAt: Timestamp?) {
        self.id = id; self.kind = kind; self.title = title
        self.visitorId = visitorId; self.createdAt = createdAt; self.readAt = readAt
    }

    enum CodingKeys: String, CodingKey { case id, kind, title, visitorId, createdAt, readAt }
    // api.md shows every key: absent values are written as null.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(kind, forKey: .kind)
        try container.encode(title, forKey: .title)
        try container.encode(visitorId, forKey: .visitorId)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(readAt, forKey: .readAt)
    }

    /// The one-line title shown in lists, from the event kind and the visitor's name.
    public static func title(for kind: EventKind, visitorName: String?, decision: VisitorStatus? = nil) -> String {
        let name = visitorName ?? "a visitor"
        switch kind {
        case .visitorAwaiting: return "\(name) is waiting for approval"
        case .visitorDecided: return decision == .rejected ? "\(name) was rejected" : "\(name) was approved"
        case .visitorArrived: return "\(name) arrived"
        case .visitorDeparted: return "\(name) left"
        case .requestCreated: return "Walk-in \(name) asks to enter"
        case .securityAlert: return "Security alert at the gate"
        case .pushTest: return "Test notification"
        case .notificationNew, .notificationRead, .notificationDeleted, .streamGap: return kind.rawValue
        }
    }
}

/// The data of `notification.new` and `notification.read`.
public struct NotificationEventData: Codable, Sendable, Equatable {
    public var notification: NotificationItem
    public init(notification: NotificationItem) { self.notification = notification }
}

/// The data of `notification.deleted`.
public struct NotificationDeletedData: Codable, Sendable, Equatable {
    public var id: String
    public init(id: String) { self.id = id }
}

/// The data of `push.test`.
public struct PushTestData: Codable, Sendable, Equatable {
    public var message: String
    public var sentAt: Timestamp
    public init(message: String, sentAt: Timestamp) { self.message = message; self.sentAt = sentAt }
}

/// The data of `stream.gap`: events between the client's last id and the oldest kept one
/// are gone, so lists must be reloaded.
public struct StreamGapData: Codable, Sendable, Equatable {
    public var oldestKeptId: Int64?
    public init(oldestKeptId: Int64?) { self.oldestKeptId = oldestKeptId }
}

/// One event as read off the stream: its id (absent only on `stream.gap`), its kind as sent
/// and its one-line JSON data.
public struct ServerEvent: Sendable, Equatable {
    public var id: Int64?
    public var kindName: String
    public var data: String

    public init(id: Int64?, kindName: String, data: String) {
        self.id = id
        self.kindName = kindName
        self.data = data
    }

    /// The kind, or nil for one this build does not know (newer servers may add kinds).
    public var kind: EventKind? { EventKind(rawValue: kindName) }

    /// The data decoded as what its kind carries.
    public enum Payload: Sendable, Equatable {
        case visitor(VisitorEventData)
        case notification(NotificationItem)
        case notificationDeleted(id: String)
        case pushTest(PushTestData)
        case gap(StreamGapData)
        /// A kind this build does not know; the raw data is in `ServerEvent.data`.
        case unknown
    }

    public enum DecodingFailure: Error, Sendable, Equatable {
        case malformedData(kind: String, detail: String)
    }

    public func payload() throws(DecodingFailure) -> Payload {
        guard let kind else { return .unknown }
        let bytes = Data(data.utf8)
        let decoder = JSONDecoder()
        do {
            if kind.carriesVisitor { return .visitor(try decoder.decode(VisitorEventData.self, from: bytes)) }
            switch kind {
            case .notificationNew, .notificationRead:
                return .notification(try decoder.decode(NotificationEventData.self, from: bytes).notification)
            case .notificationDeleted: return .notificationDeleted(id: try decoder.decode(NotificationDeletedData.self, from: bytes).id)
            case .pushTest: return .pushTest(try decoder.decode(PushTestData.self, from: bytes))
            case .streamGap: return .gap(try decoder.decode(StreamGapData.self, from: bytes))
            default: return .unknown
            }
        } catch {
            throw .malformedData(kind: kindName, detail: String(describing: error))
        }
    }
}

// MARK: - The push-token registry (`gatepass push-test`, `/api/admin/push-test`, `/api/admin/push-deliveries`)

/// A registered device as an operator sees it.
public struct PushTarget: Codable, Sendable, Equatable {
    public var token: String
    public var platform: String
    public var userId: String
    public var email: String
    public var name: String

    public init(token: String, platform: String, userId: String, email: String, name: String) {
        self.token = token; self.platform = platform; self.userId = userId; self.email = email; self.name = name
    }
}

/// What `push-test` found for one token.
public struct PushTestOutcome: Codable, Sendable, Equatable {
    public enum Status: String, Codable, Sendable {
        /// A stream that presented the token received the test event.
        case delivered
        /// No stream with that token took it within the wait.
        case notConnected = "not connected"
        case error
    }
    public var token: String
    public var platform: String?
    public var userId: String?
    public var email: String?
    public var status: Status
    public var detail: String?
    /// The `push.test` event sent, when one was.
    public var eventId: Int64?

    public init(token: String, platform: String? = nil, userId: String? = nil, email: String? = nil, status: Status,
                detail: String? = nil, eventId: Int64? = nil) {
        self.token = token; self.platform = platform; self.userId = userId; self.email = email
        self.status = status; self.detail = detail; self.eventId = eventId
    }
}

/// One row of the delivery log.
public struct PushDelivery: Codable, Sendable, Equatable {
    public var eventId: Int64
    public var kind: String
    public var token: String
    public var userId: String
    public var status: String
    public var createdAt: Timestamp
    public var finishedAt: Timestamp?

    public init(eventId: Int64, kind: String, token: String, userId: String, status: String, createdAt: Timestamp,
                finishedAt: Timestamp?) {
        self.eventId = eventId; self.kind = kind; self.token = token; self.userId = userId
        self.status = status; self.createdAt = createdAt; self.finishedAt = finishedAt
    }
}
