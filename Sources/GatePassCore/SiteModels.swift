import Foundation

/// A site as every user of it sees it (`GET /api/organization`). Its time zone defines
/// "today", validity defaults, the visitor list's `from`/`to` and the times on passes and in mail.
public struct Organization: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    /// An IANA zone name, e.g. `Europe/Bucharest`.
    public var timeZone: String
    /// Days after a pass ends before its visitor is anonymised (api.md "Retention").
    public var retentionDays: Int
    /// `"HH:MM"` site-local: when visitors still inside are checked out; nil = never.
    public var autoCheckoutAt: String?

    /// The policy an organization has until its owner sets one (api.md).
    public static let defaultRetentionDays = 180

    public init(id: String, name: String, timeZone: String, retentionDays: Int = Organization.defaultRetentionDays,
                autoCheckoutAt: String? = nil) {
        self.id = id; self.name = name; self.timeZone = timeZone
        self.retentionDays = retentionDays; self.autoCheckoutAt = autoCheckoutAt
    }

    enum CodingKeys: String, CodingKey { case id, name, timeZone, retentionDays, autoCheckoutAt }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(name, forKey: .name)
        try c.encode(timeZone, forKey: .timeZone)
        try c.encode(retentionDays, forKey: .retentionDays)
        // Off is an explicit null, as api.md writes absent values.
        try c.encode(autoCheckoutAt, forKey: .autoCheckoutAt)
    }

    // An answer of a server from before the settings (or a client's cached copy of one) has
    // neither setting: it had the defaults.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        name = try c.decode(String.self, forKey: .name)
        timeZone = try c.decode(String.self, forKey: .timeZone)
        retentionDays = try c.decodeIfPresent(Int.self, forKey: .retentionDays) ?? Self.defaultRetentionDays
        autoCheckoutAt = try c.decodeIfPresent(String.self, forKey: .autoCheckoutAt)
    }
}

/// What `PATCH /api/organization` changes (OWNER): absent keys stay as they are;
/// `retentionDays: null` returns to the server's default, `autoCheckoutAt: null` turns the
/// automatic check-out off.
public struct OrganizationChanges: Codable, Sendable, Equatable {
    public var name: String?
    public var timeZone: String?
    /// nil: unchanged; `.some(nil)`: the server's default.
    public var retentionDays: Int??
    /// nil: unchanged; `.some(nil)`: off.
    public var autoCheckoutAt: String??

    public init(name: String? = nil, timeZone: String? = nil, retentionDays: Int?? = nil, autoCheckoutAt: String?? = nil) {
        self.name = name; self.timeZone = timeZone; self.retentionDays = retentionDays; self.autoCheckoutAt = autoCheckoutAt
    }

    enum CodingKeys: String, CodingKey { case name, timeZone, retentionDays, autoCheckoutAt }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decodeIfPresent(String.self, forKey: .name)
        timeZone = try c.decodeIfPresent(String.self, forKey: .timeZone)
        if c.contains(.retentionDays) {
            retentionDays = .some(try c.decodeNil(forKey: .retentionDays) ? nil : try c.decode(Int.self, forKey: .retentionDays))
        }
        if c.contains(.autoCheckoutAt) {
            autoCheckoutAt = .some(try c.decodeNil(forKey: .autoCheckoutAt) ? nil : try c.decode(String.self, forKey: .autoCheckoutAt))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(name, forKey: .name)
        try c.encodeIfPresent(timeZone, forKey: .timeZone)
        if let retentionDays { try c.encode(retentionDays, forKey: .retentionDays) }
        if let autoCheckoutAt { try c.encode(autoCheckoutAt, forKey: .autoCheckoutAt) }
    }
}

/// The rules of an organization's settings, shared by the server and the CLI.
public enum OrganizationRules {
    public static let retentionDaysRange = 1...3650

    /// Whether `name` is a zone of the IANA database this system knows (`Europe/Bucharest`,
    /// `UTC`): no abbreviations (`EST`) or offsets (`GMT+2`), whose meaning a reader of the
    /// setting would have to guess, and at most 64 bytes.
    public static func isZoneName(_ name: String) -> Bool {
        name.utf8.count <= 64 && (TimeZone.knownTimeZoneIdentifiers.contains(name) || name == "UTC")
            && TimeZone(identifier: name) != nil
    }

    /// Whether `text` is `HH:MM` on a 24-hour clock (`00:00`…`23:59`, two digits each).
    public static func isClockTime(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":"),
              [0, 1, 3, 4].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[$0]) })
        else { return false }
        let hours = Int(bytes[0] - 48) * 10 + Int(bytes[1] - 48)
        let minutes = Int(bytes[3] - 48) * 10 + Int(bytes[4] - 48)
        return hours < 24 && minutes < 60
    }
}

/// What `POST /api/users` takes (OWNER, ADMIN).
public struct NewUser: Codable, Sendable, Equatable {
    public var email: String
    public var name: String
    public var role: Role
    public var canScanCheckpoint: Bool?

    public init(email: String, name: String, role: Role, canScanCheckpoint: Bool? = nil) {
        self.email = email; self.name = name; self.role = role; self.canScanCheckpoint = canScanCheckpoint
    }
}

/// What `PATCH /api/users/:id` changes; absent keys stay as they are.
public struct UserChanges: Codable, Sendable, Equatable {
    public var name: String?
    public var role: Role?
    public var canScanCheckpoint: Bool?
    public var disabled: Bool?

    public init(name: String? = nil, role: Role? = nil, canScanCheckpoint: Bool? = nil, disabled: Bool? = nil) {
        self.name = name; self.role = role; self.canScanCheckpoint = canScanCheckpoint; self.disabled = disabled
    }
}

/// A user as `GET /api/users` lists them: the profile plus what an admin choosing among
/// them needs.
public struct UserSummary: Codable, Sendable, Equatable {
    public var profile: Profile
    public var disabled: Bool
    public var lastLoginAt: Date?

    public init(profile: Profile, disabled: Bool, lastLoginAt: Date?) {
        self.profile = profile; self.disabled = disabled; self.lastLoginAt = lastLoginAt
    }

    enum CodingKeys: String, CodingKey { case disabled, lastLoginAt }

    // The profile's keys sit beside `disabled` and `lastLoginAt` (api.md: "Profile plus …").
    public func encode(to encoder: any Encoder) throws {
        try profile.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(disabled, forKey: .disabled)
        try c.encode(lastLoginAt.map(Timestamp.init), forKey: .lastLoginAt)
    }

    public init(from decoder: any Decoder) throws {
        profile = try Profile(from: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        disabled = try c.decode(Bool.self, forKey: .disabled)
        lastLoginAt = try c.decodeIfPresent(Timestamp.self, forKey: .lastLoginAt)?.date
    }
}

/// What a queued mail is for (api.md: `kind` of `GET /api/admin/mail`).
public enum MailKind: String, Codable, Sendable, CaseIterable {
    case otp, invitation, arrival, approval, test
}

/// Where a queued mail stands.
public enum MailStatus: String, Codable, Sendable, CaseIterable {
    /// Waiting for its first or next attempt.
    case queued
    case sent
    /// Given up: refused for good, or still failing after 24 hours.
    case failed
}

/// One row of the mail log (`GET /api/admin/mail`). It never carries the body: an OTP
/// mail's code is the body's, and is erased once sent.
public struct MailSummary: Codable, Sendable, Equatable {
    public var id: String
    public var kind: MailKind
    public var to: String
    public var status: MailStatus
    public var attempts: Int
    public var lastError: String?
    public var createdAt: Date
    public var sentAt: Date?

    public init(id: String, kind: MailKind, to: String, status: MailStatus, attempts: Int, lastError: String?,
                createdAt: Date, sentAt: Date?) {
        self.id = id; self.kind = kind; self.to = to; self.status = status; self.attempts = attempts
        self.lastError = lastError; self.createdAt = createdAt; self.sentAt = sentAt
    }

    enum CodingKeys: String, CodingKey { case id, kind, to, status, attempts, lastError, createdAt, sentAt }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(kind, forKey: .kind)
        try c.encode(to, forKey: .to)
        try c.encode(status, forKey: .status)
        try c.encode(attempts, forKey: .attempts)
        try c.encode(lastError, forKey: .lastError)
        try c.encode(Timestamp(createdAt), forKey: .createdAt)
        try c.encode(sentAt.map(Timestamp.init), forKey: .sentAt)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        kind = try c.decode(MailKind.self, forKey: .kind)
        to = try c.decode(String.self, forKey: .to)
        status = try c.decode(MailStatus.self, forKey: .status)
        attempts = try c.decode(Int.self, forKey: .attempts)
        lastError = try c.decodeIfPresent(String.self, forKey: .lastError)
        createdAt = try c.decode(Timestamp.self, forKey: .createdAt).date
        sentAt = try c.decodeIfPresent(Timestamp.self, forKey: .sentAt)?.date
    }
}

/// The answer of `POST /api/visitors/:id/invite`.
public struct InvitationAnswer: Codable, Sendable, Equatable {
    public var queued: Bool
    /// The visitor's pass page (a new one each time the invitation is sent).
    public var passURL: String

    public init(queued: Bool, passURL: String) { self.queued = queued; self.passURL = passURL }
}

/// The answer of `POST /api/admin/mail/test`.
public struct QueuedAnswer: Codable, Sendable, Equatable {
    public var queued: Bool
    public init(queued: Bool) { self.queued = queued }
}

/// The answer of `POST /api/events/ticket`: what a browser's `EventSource` puts in its URL
/// instead of a login token.
public struct EventTicket: Codable, Sendable, Equatable {
    public var ticket: String
    public var expiresAt: Date

    public init(ticket: String, expiresAt: Date) { self.ticket = ticket; self.expiresAt = expiresAt }

    enum CodingKeys: String, CodingKey { case ticket, expiresAt }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(ticket, forKey: .ticket)
        try c.encode(Timestamp(expiresAt), forKey: .expiresAt)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        ticket = try c.decode(String.self, forKey: .ticket)
        expiresAt = try c.decode(Timestamp.self, forKey: .expiresAt).date
    }
}

/// One field of a PATCH body: left as it is (the key absent), cleared (`null`) or set.
public enum FieldChange<Value: Codable & Sendable & Equatable>: Sendable, Equatable {
    case unchanged
    case cleared
    case set(Value)

    /// The value after the change, given the value before it.
    public func applied(to current: Value?) -> Value? {
        switch self {
        case .unchanged: current
        case .cleared: nil
        case .set(let value): value
        }
    }
}

/// The body of `PATCH /api/visitors/:id`: only the keys present change; `null` clears an
/// optional field. Encoded by clients, decoded (with the three cases kept apart) by the server.
public struct VisitorChanges: Codable, Sendable, Equatable {
    public var name: FieldChange<String> = .unchanged
    public var email: FieldChange<String> = .unchanged
    public var phone: FieldChange<String> = .unchanged
    public var company: FieldChange<String> = .unchanged
    public var purpose: FieldChange<String> = .unchanged
    public var hostName: FieldChange<String> = .unchanged
    public var hostEmail: FieldChange<String> = .unchanged
    public var approverId: FieldChange<String> = .unchanged
    public var requiresApproval: FieldChange<Bool> = .unchanged
    public var validFrom: FieldChange<Timestamp> = .unchanged
    public var validUntil: FieldChange<Timestamp> = .unchanged

    public init() {}

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case name, email, phone, company, purpose, hostName, hostEmail, approverId, requiresApproval, validFrom, validUntil
    }

    /// Whether nothing would change.
    public var isEmpty: Bool { self == VisitorChanges() }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        func put<V>(_ change: FieldChange<V>, _ key: CodingKeys) throws {
            switch change {
            case .unchanged: break
            case .cleared: try c.encodeNil(forKey: key)
            case .set(let value): try c.encode(value, forKey: key)
            }
        }
        try put(name, .name); try put(email, .email); try put(phone, .phone); try put(company, .company)
        try put(purpose, .purpose); try put(hostName, .hostName); try put(hostEmail, .hostEmail)
        try put(approverId, .approverId); try put(requiresApproval, .requiresApproval)
        try put(validFrom, .validFrom); try put(validUntil, .validUntil)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func take<V>(_ key: CodingKeys) throws -> FieldChange<V> {
            guard c.contains(key) else { return .unchanged }
            if try c.decodeNil(forKey: key) { return .cleared }
            return .set(try c.decode(V.self, forKey: key))
        }
        name = try take(.name); email = try take(.email); phone = try take(.phone); company = try take(.company)
        purpose = try take(.purpose); hostName = try take(.hostName); hostEmail = try take(.hostEmail)
        approverId = try take(.approverId); requiresApproval = try take(.requiresApproval)
        validFrom = try take(.validFrom); validUntil = try take(.validUntil)
    }
}
