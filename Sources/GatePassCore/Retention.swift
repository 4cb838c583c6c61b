import Foundation

/// Retention (api.md "Retention and the end of the day"): what anonymising a visitor erases and
/// keeps, which visitors are due, and when an organization's daily run is due. Pure rules: the
/// server applies them to every copy it keeps.
public enum Retention {
    /// The name an anonymised visitor keeps (api.md).
    public static let anonymisedName = "(anonymised)"

    /// The site-local time of the daily run, as minutes after midnight (03:30): a quiet hour,
    /// after the night's automatic check-outs and before the first shift.
    public static let dailyRunMinutes = 3 * 60 + 30

    /// Visitors whose pass ended (`validUntil`) before this instant are due: `retentionDays`
    /// whole days of 24 hours before `now`.
    public static func cutoff(now: Date, retentionDays: Int) -> Date {
        now.addingTimeInterval(-TimeInterval(retentionDays) * 86_400)
    }

    /// Whether an organization's daily run is due at `now`, given the site-local day it last
    /// ran on (nil: never). A day's run is due from 03:30 site time; a server that was down then
    /// runs it when it next looks (at start). It runs at most once per site-local day: a
    /// catch-up at 01:00 counts as that day's run. On a day whose clocks skip 03:30 (a
    /// daylight-saving change), it is due from the first minute after.
    ///
    ///     Retention.isDailyRunDue(now: d2_0331, in: zone, lastRunDay: d1)   // true
    ///     Retention.isDailyRunDue(now: d2_0100, in: zone, lastRunDay: d1)   // false: 03:30 has not come
    ///     Retention.isDailyRunDue(now: d3_0100, in: zone, lastRunDay: d1)   // true: day 2's run was missed
    public static func isDailyRunDue(now: Date, in zone: TimeZone, lastRunDay: LocalDay?) -> Bool {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let today = LocalDay(containing: now, in: zone)
        guard let lastRunDay else { return true }
        if lastRunDay.isSameOrAfter(today) { return false }
        let parts = calendar.dateComponents([.hour, .minute], from: now)
        if (parts.hour ?? 0) * 60 + (parts.minute ?? 0) >= dailyRunMinutes { return true }
        // Before today's 03:30: due only if yesterday's run never happened.
        guard let yesterday = calendar.date(byAdding: .day, value: -1, to: now) else { return true }
        return !lastRunDay.isSameOrAfter(LocalDay(containing: yesterday, in: zone))
    }
}

/// What a retention run anonymises (`POST /api/admin/retention/run` answers it, the audit
/// entry `retention.run` records it): visitors, and scans whose `raw` text it erases.
public struct RetentionCounts: Codable, Sendable, Equatable {
    public var visitors: Int
    public var scans: Int

    public init(visitors: Int, scans: Int) {
        self.visitors = visitors
        self.scans = scans
    }

    public static let zero = RetentionCounts(visitors: 0, scans: 0)

    public static func + (left: RetentionCounts, right: RetentionCounts) -> RetentionCounts {
        RetentionCounts(visitors: left.visitors + right.visitors, scans: left.scans + right.scans)
    }
}

extension Visitor {
    /// The visitor with its personal data removed (api.md): the name becomes `"(anonymised)"`;
    /// email, phone, company, purpose, host name and email and the decision note become null.
    /// Everything else — id, short id, statuses, times, checkpoint, approver — stays, so counts
    /// and history keep it.
    public func anonymised() -> Visitor {
        var visitor = self
        visitor.name = Retention.anonymisedName
        visitor.email = nil
        visitor.phone = nil
        visitor.company = nil
        visitor.purpose = nil
        visitor.hostName = nil
        visitor.hostEmail = nil
        visitor.decisionNote = nil
        return visitor
    }
}

extension LocalDay {
    /// Whether this day is `other` or a later one.
    func isSameOrAfter(_ other: LocalDay) -> Bool {
        (year, month, day) >= (other.year, other.month, other.day)
    }
}
