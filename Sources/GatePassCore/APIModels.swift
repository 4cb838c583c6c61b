import Foundation

// The JSON shapes of api.md, shared by the server (which encodes them) and the clients
// (which decode them strictly), so both sides agree by construction. Optional values are
// always written, as `null`, because api.md shows every key.

/// A user as the API shows it (api.md "Profile").
public struct Profile: Codable, Sendable, Equatable {
    public var id: String
    public var email: String
    public var name: String
    public var role: Role
    public var organizationId: String
    public var canScanCheckpoint: Bool

    public init(id: String, email: String, name: String, role: Role, organizationId: String, canScanCheckpoint: Bool) {
        self.id = id; self.email = email; self.name = name; self.role = role
        self.organizationId = organizationId; self.canScanCheckpoint = canScanCheckpoint
    }

    public var principalKind: PrincipalKind { .user(role, canScanCheckpoint: canScanCheckpoint) }
}

/// A profile with what the user may do (`GET /api/visitors/admin-me`).
public struct AdminProfile: Codable, Sendable, Equatable {
    public var profile: Profile
    public var flags: [String: Bool]

    public init(profile: Profile, flags: [String: Bool]) {
        self.profile = profile
        self.flags = flags
    }

    enum CodingKeys: String, CodingKey { case flags }
    public init(from decoder: any Decoder) throws {
        profile = try Profile(from: decoder)
        flags = try decoder.container(keyedBy: CodingKeys.self).decode([String: Bool].self, forKey: .flags)
    }
    public func encode(to encoder: any Encoder) throws {
        try profile.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(flags, forKey: .flags)
    }
}

public struct CheckpointSummary: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public init(id: String, name: String) { self.id = id; self.name = name }
}

public struct Checkpoint: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var organizationId: String
    public var isDefault: Bool
    public var createdAt: Timestamp
    /// A retired gate keeps its history but issues no scanner token or enrolment (api.md
    /// "Users, checkpoints, scanner tokens").
    public var retired: Bool

    public init(id: String, name: String, organizationId: String, isDefault: Bool, createdAt: Timestamp,
                retired: Bool = false) {
        self.id = id; self.name = name; self.organizationId = organizationId; self.isDefault = isDefault
        self.createdAt = createdAt; self.retired = retired
    }

    enum CodingKeys: String, CodingKey { case id, name, organizationId, isDefault, createdAt, retired }
    /// `retired` may be absent: servers before issue 12 and lists cached by older clients lack it.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try c.decode(String.self, forKey: .id), name: try c.decode(String.self, forKey: .name),
                  organizationId: try c.decode(String.self, forKey: .organizationId),
                  isDefault: try c.decode(Bool.self, forKey: .isDefault),
                  createdAt: try c.decode(Timestamp.self, forKey: .createdAt),
                  retired: try c.decodeIfPresent(Bool.self, forKey: .retired) ?? false)
    }
}

/// `{"items": [...], "nextCursor": ... | null}` (api.md "Lists").
public struct Page<Item: Codable & Sendable>: Codable, Sendable {
    public var items: [Item]
    public var nextCursor: String?

    public init(items: [Item], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }

    enum CodingKeys: String, CodingKey { case items, nextCursor }
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        items = try c.decode([Item].self, forKey: .items)
        nextCursor = try c.decodeIfPresent(String.self, forKey: .nextCursor)
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(items, forKey: .items)
        try c.encode(nextCursor, forKey: .nextCursor)
    }
}

/// One check-in attempt in the scan history (api.md "Scan").
public struct Scan: Codable, Sendable, Equatable {
    public var id: String
    public var shortId: String?
    /// The scanned text; null once retention or an erase removed it (api.md "Retention").
    public var raw: String?
    public var result: ScanResult
    public var visitorId: String?
    public var checkpointId: String
    public var scannedBy: String
    public var scannedAt: Timestamp
    public var receivedAt: Timestamp
    public var offline: Bool
    /// What the kiosk decided offline, for a replayed offline scan (api.md "Offline passes").
    public var offlineDecision: ScanResult?

    public init(id: String, shortId: String?, raw: String?, result: ScanResult, visitorId: String?, checkpointId: String,
                scannedBy: String, scannedAt: Timestamp, receivedAt: Timestamp, offline: Bool,
                offlineDecision: ScanResult? = nil) {
        self.id = id; self.shortId = shortId; self.raw = raw; self.result = result; self.visitorId = visitorId
        self.checkpointId = checkpointId; self.scannedBy = scannedBy; self.scannedAt = scannedAt
        self.receivedAt = receivedAt; self.offline = offline; self.offlineDecision = offlineDecision
    }

    enum CodingKeys: String, CodingKey {
        case id, shortId, raw, result, visitorId, checkpointId, scannedBy, scannedAt, receivedAt, offline, offlineDecision
    }

    /// A replayed offline scan where the kiosk admitted and the server would not (or the
    /// other way round): what the gate did and what the record says differ.
    public var isOfflineConflict: Bool {
        guard let offlineDecision else { return false }
        return (offlineDecision == .checkedIn) != (result == .checkedIn)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(shortId, forKey: .shortId)
        try c.encode(raw, forKey: .raw)
        try c.encode(result, forKey: .result)
        try c.encode(visitorId, forKey: .visitorId)
        try c.encode(checkpointId, forKey: .checkpointId)
        try c.encode(scannedBy, forKey: .scannedBy)
        try c.encode(scannedAt, forKey: .scannedAt)
        try c.encode(receivedAt, forKey: .receivedAt)
        try c.encode(offline, forKey: .offline)
        try c.encode(offlineDecision, forKey: .offlineDecision)
    }
}

/// Today's counters (`GET /api/visitor-scanner/stats`).
public struct ScanStats: Codable, Sendable, Equatable {
    public var checkedInToday: Int
    public var checkedOutToday: Int
    public var awaitingApproval: Int
    public var expectedToday: Int
    public var onSite: Int

    public init(checkedInToday: Int, checkedOutToday: Int, awaitingApproval: Int, expectedToday: Int, onSite: Int) {
        self.checkedInToday = checkedInToday; self.checkedOutToday = checkedOutToday
        self.awaitingApproval = awaitingApproval; self.expectedToday = expectedToday; self.onSite = onSite
    }
}

/// A push-token registration (api.md "Device").
public struct Device: Codable, Sendable, Equatable {
    public static let platforms: Set<String> = ["ios", "android", "web", "console", "kiosk"]
    public var token: String
    public var platform: String
    public var userId: String
    public var createdAt: Timestamp
    public var lastSeenAt: Timestamp

    public init(token: String, platform: String, userId: String, createdAt: Timestamp, lastSeenAt: Timestamp) {
        self.token = token; self.platform = platform; self.userId = userId
        self.createdAt = createdAt; self.lastSeenAt = lastSeenAt
    }
}

/// The answer of `POST /api/auth/verify-otp`: the profile sits under the role's key
/// ("owner", "admin", "approver" or "platformAdmin").
public struct LoginAnswer: Codable, Sendable, Equatable {
    public var role: Role
    public var token: String
    public var expiresAt: Timestamp
    public var profile: Profile

    public init(role: Role, token: String, expiresAt: Timestamp, profile: Profile) {
        self.role = role; self.token = token; self.expiresAt = expiresAt; self.profile = profile
    }

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        role = try c.decode(Role.self, forKey: Key("role"))
        token = try c.decode(String.self, forKey: Key("token"))
        expiresAt = try c.decode(Timestamp.self, forKey: Key("expiresAt"))
        profile = try c.decode(Profile.self, forKey: Key(role.profileKey))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(role, forKey: Key("role"))
        try c.encode(token, forKey: Key("token"))
        try c.encode(expiresAt, forKey: Key("expiresAt"))
        try c.encode(profile, forKey: Key(role.profileKey))
    }
}

public struct ScannerTokenAnswer: Codable, Sendable, Equatable {
    public var scannerToken: String
    public var checkpoint: CheckpointSummary
    public var expiresAt: Timestamp

    public init(scannerToken: String, checkpoint: CheckpointSummary, expiresAt: Timestamp) {
        self.scannerToken = scannerToken; self.checkpoint = checkpoint; self.expiresAt = expiresAt
    }
}

public struct CheckInAnswer: Codable, Sendable, Equatable {
    public var result: ScanResult
    public var visitor: Visitor
    public var scanId: String
    /// True when a replayed offline admission disagrees with the server's own decision
    /// (api.md "Offline passes"); absent otherwise.
    public var conflict: Bool?

    public init(result: ScanResult, visitor: Visitor, scanId: String, conflict: Bool? = nil) {
        self.result = result; self.visitor = visitor; self.scanId = scanId; self.conflict = conflict
    }
}

public struct CheckOutAnswer: Codable, Sendable, Equatable {
    public var result: CheckOut.Result
    public var visitor: Visitor

    public init(result: CheckOut.Result, visitor: Visitor) { self.result = result; self.visitor = visitor }
}

public struct WalkInAnswer: Codable, Sendable, Equatable {
    public var result: WalkInResult
    public var visitor: Visitor

    public init(result: WalkInResult, visitor: Visitor) { self.result = result; self.visitor = visitor }
}

/// What an approver needs to decide (`GET /api/approver/visitors/:id`).
public struct ApprovalContext: Codable, Sendable, Equatable {
    public var previousVisits: Int
    public var lastVisitAt: Timestamp?
    public var requestedAtCheckpoint: CheckpointSummary?

    public init(previousVisits: Int, lastVisitAt: Timestamp?, requestedAtCheckpoint: CheckpointSummary?) {
        self.previousVisits = previousVisits; self.lastVisitAt = lastVisitAt
        self.requestedAtCheckpoint = requestedAtCheckpoint
    }

    enum CodingKeys: String, CodingKey { case previousVisits, lastVisitAt, requestedAtCheckpoint }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(previousVisits, forKey: .previousVisits)
        try c.encode(lastVisitAt, forKey: .lastVisitAt)
        try c.encode(requestedAtCheckpoint, forKey: .requestedAtCheckpoint)
    }
}

public struct VisitorWithContext: Codable, Sendable, Equatable {
    public var visitor: Visitor
    public var context: ApprovalContext

    public init(visitor: Visitor, context: ApprovalContext) { self.visitor = visitor; self.context = context }
}

/// `GET /api/visitor-scanner/expected`: `cursor` is what the next `since=` takes.
public struct ExpectedPasses: Codable, Sendable, Equatable {
    /// Every pass valid today that changed after the cursor, in its current state.
    public var items: [Visitor]
    public var cursor: String
    /// Short ids of passes revoked after the cursor (cancelled, or matched by the blocklist).
    public var revoked: [String]

    public init(items: [Visitor], cursor: String, revoked: [String]) {
        self.items = items; self.cursor = cursor; self.revoked = revoked
    }

    /// How many passes of the feed the page covers: its items, and the blocked passes, which
    /// are named in `revoked` only (a cancelled one is in both). A page of the route's size
    /// means more may follow — counting `items` alone would stop early at a blocked pass.
    public var passCount: Int {
        let listed = Set(items.map(\.shortId.rawValue))
        return items.count + Set(revoked).subtracting(listed).count
    }
}

/// The error shape of api.md: `{"error": {"code", "message"}}`.
public struct APIErrorBody: Codable, Sendable, Equatable {
    public struct Detail: Codable, Sendable, Equatable {
        public var code: String
        public var message: String
        public init(code: String, message: String) { self.code = code; self.message = message }
    }
    public var error: Detail

    public init(code: String, message: String) { error = Detail(code: code, message: message) }
}
