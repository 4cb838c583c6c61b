import Foundation

/// `PATCH /api/checkpoints/:id`: only the fields present change.
public struct CheckpointChanges: Codable, Sendable, Equatable {
    public var name: String?
    public var retired: Bool?

    public init(name: String? = nil, retired: Bool? = nil) { self.name = name; self.retired = retired }
}

/// One live scanner token as `GET /api/admin/scanner-tokens` lists it: a person's (made with
/// a login) or an enrolled kiosk's (`kioskName` set; not in api.md, an addition).
public struct ScannerTokenSummary: Codable, Sendable, Equatable {
    public var id: String
    public var checkpointId: String
    /// The user who made it (for a kiosk: who made its enrolment code).
    public var createdBy: String
    public var createdAt: Timestamp
    public var expiresAt: Timestamp
    /// Recorded at most once a minute, so it may be up to a minute behind.
    public var lastUsedAt: Timestamp?
    public var kioskName: String?

    public init(id: String, checkpointId: String, createdBy: String, createdAt: Timestamp, expiresAt: Timestamp,
                lastUsedAt: Timestamp?, kioskName: String?) {
        self.id = id; self.checkpointId = checkpointId; self.createdBy = createdBy; self.createdAt = createdAt
        self.expiresAt = expiresAt; self.lastUsedAt = lastUsedAt; self.kioskName = kioskName
    }

    enum CodingKeys: String, CodingKey { case id, checkpointId, createdBy, createdAt, expiresAt, lastUsedAt, kioskName }

    // Every key is present, a token never used (or a person's) with null: api.md lists them all.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(checkpointId, forKey: .checkpointId)
        try c.encode(createdBy, forKey: .createdBy)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(expiresAt, forKey: .expiresAt)
        try c.encode(lastUsedAt, forKey: .lastUsedAt)
        try c.encode(kioskName, forKey: .kioskName)
    }
}

/// `POST /api/admin/kiosks` `{checkpointId, name}`.
public struct KioskRequest: Codable, Sendable, Equatable {
    public var checkpointId: String
    public var name: String
    public init(checkpointId: String, name: String) { self.checkpointId = checkpointId; self.name = name }
}

/// The answer of `POST /api/admin/kiosks`: the one-time code (shown once, stored hashed).
public struct KioskEnrolmentCode: Codable, Sendable, Equatable {
    public var id: String
    public var enrolmentCode: String
    public var expiresAt: Timestamp
    public init(id: String, enrolmentCode: String, expiresAt: Timestamp) {
        self.id = id; self.enrolmentCode = enrolmentCode; self.expiresAt = expiresAt
    }
}

/// `POST /api/visitor-scanner/enrol` `{enrolmentCode}`; the answer is a `ScannerTokenAnswer`.
public struct KioskEnrolmentRequest: Codable, Sendable, Equatable {
    public var enrolmentCode: String
    public init(enrolmentCode: String) { self.enrolmentCode = enrolmentCode }
}

/// The end-of-day check-out's timing (api.md "Retention and the end of the day",
/// `autoCheckoutAt`): when, in a site's zone, the latest check-out was due.
public enum AutoCheckout {
    /// One due moment: the site-local day it belongs to and the instant.
    public struct Due: Sendable, Equatable {
        /// `YYYY-MM-DD`, the site-local day; a run is recorded against it so it happens once a day.
        public var day: String
        public var instant: Date

        public init(day: String, instant: Date) { self.day = day; self.instant = instant }
    }

    /// The latest moment at or before `now` when the local clock of `zone` read `clockTime`
    /// (`HH:MM`). On the day the clocks skip that time (spring forward), it is the first
    /// moment after the gap; on the day it happens twice (fall back), its first occurrence,
    /// so the check-out happens once that day.
    /// - Returns: nil when `clockTime` is not `HH:MM`.
    public static func latestDue(clockTime: String, zone: TimeZone, now: Date) -> Due? {
        guard OrganizationRules.isClockTime(clockTime) else { return nil }
        let parts = clockTime.split(separator: ":")
        guard let hour = Int(parts[0]), let minute = Int(parts[1]) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let today = calendar.dateComponents([.year, .month, .day], from: now)
        guard let todayDue = due(on: today, hour: hour, minute: minute, calendar) else { return nil }
        if todayDue.instant <= now { return todayDue }
        // Yesterday is found from today's noon: a day back from noon stays clear of the hours
        // a DST change moves.
        guard let noon = calendar.date(from: DateComponents(year: today.year, month: today.month, day: today.day, hour: 12)),
              let yesterdayNoon = calendar.date(byAdding: .day, value: -1, to: noon)
        else { return nil }
        return due(on: calendar.dateComponents([.year, .month, .day], from: yesterdayNoon), hour: hour, minute: minute,
                   calendar)
    }

    private static func due(on day: DateComponents, hour: Int, minute: Int, _ calendar: Calendar) -> Due? {
        guard let year = day.year, let month = day.month, let dayOfMonth = day.day,
              let midnight = calendar.date(from: DateComponents(year: year, month: month, day: dayOfMonth)),
              let instant = calendar.date(bySettingHour: hour, minute: minute, second: 0, of: midnight,
                                          matchingPolicy: .nextTime, repeatedTimePolicy: .first, direction: .forward)
        else { return nil }
        let key = String(format: "%04d-%02d-%02d", year, month, dayOfMonth)
        return Due(day: key, instant: instant)
    }
}
