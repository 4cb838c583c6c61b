import Foundation

/// Times as the people of a site read and type them: every surface a person reads (console, CLI,
/// kiosk, mail, pages, error messages) shows instants in the organization's time zone through
/// this one formatter, so "06 Dec" means the same day at the gate, in the invitation and in the
/// history. Machine formats (`--json`, the API, the CSV's UTC columns) stay RFC 3339 UTC and
/// never come through here.
///
///     let site = SiteClock(zoneNamed: "Europe/Bucharest")!
///     site.window(from: start, until: end)   // "06 Dec 2026 09:00–17:00 (Europe/Bucharest)"
///     site.dateTime(scan)                    // "06 Dec 2026 03:48"
///     site.short(scan, now: now)             // "03:48" today, "05 Dec 22:10" another day
///
/// The zone's name is added (`stamped`, `window`) where a reader could misplace the day: in
/// mail, on passes, in messages and in lists read away from the site. Screens whose header
/// already names the zone show `dateTime` or `short`.
public struct SiteClock: Sendable, Equatable {
    public let timeZone: TimeZone
    /// The zone's name as the organization gives it, `Europe/Bucharest` (Foundation would call
    /// `UTC` "GMT").
    public let zoneName: String

    public init(timeZone: TimeZone) { self.timeZone = timeZone; self.zoneName = timeZone.identifier }

    /// The clock of a zone by its IANA name, or nil when this system does not know it.
    public init?(zoneNamed name: String) {
        guard let zone = TimeZone(identifier: name) else { return nil }
        self.timeZone = zone
        self.zoneName = name
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private struct Parts {
        var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, offsetSeconds: Int
    }

    private func parts(_ date: Date) -> Parts {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let p = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return Parts(year: p.year ?? 0, month: p.month ?? 1, day: p.day ?? 1, hour: p.hour ?? 0, minute: p.minute ?? 0,
                     second: p.second ?? 0, offsetSeconds: timeZone.secondsFromGMT(for: date))
    }

    private static func pad(_ value: Int) -> String { LocalDay.pad(value) }

    private static func dayText(_ p: Parts) -> String {
        pad(p.day) + " " + months[max(0, min(11, p.month - 1))] + " " + String(p.year)
    }

    private static func clockText(_ p: Parts) -> String { pad(p.hour) + ":" + pad(p.minute) }

    // MARK: Reading

    /// `2026-12-06`: the site day holding `date` (the API's `from=`/`to=` days).
    public func day(_ date: Date) -> String { LocalDay(containing: date, in: timeZone).description }

    /// `06 Dec 2026`.
    public func date(_ date: Date) -> String { Self.dayText(parts(date)) }

    /// `09:00`.
    public func time(_ date: Date) -> String { Self.clockText(parts(date)) }

    /// `09:00:05`, for lists of scans where seconds tell two scans apart.
    public func timeWithSeconds(_ date: Date) -> String {
        let p = parts(date)
        return Self.clockText(p) + ":" + Self.pad(p.second)
    }

    /// `06 Dec 2026 09:00`.
    public func dateTime(_ date: Date) -> String {
        let p = parts(date)
        return Self.dayText(p) + " " + Self.clockText(p)
    }

    /// `06 Dec 2026 09:00 (Europe/Bucharest)`: an instant read away from the site.
    public func stamped(_ date: Date) -> String { dateTime(date) + " (" + zoneName + ")" }

    /// `09:00` when `date` is on the same site day as `now`, `05 Dec 22:10` otherwise, and with
    /// the year when it is not `now`'s.
    public func short(_ date: Date, now: Date) -> String {
        let p = parts(date)
        let n = parts(now)
        if p.year == n.year, p.month == n.month, p.day == n.day { return Self.clockText(p) }
        let day = Self.pad(p.day) + " " + Self.months[max(0, min(11, p.month - 1))]
        return (p.year == n.year ? day : day + " " + String(p.year)) + " " + Self.clockText(p)
    }

    /// A validity window: `06 Dec 2026 09:00–17:00 (Europe/Bucharest)` within one site day,
    /// `06 Dec 2026 09:00 – 08 Dec 2026 17:00 (Europe/Bucharest)` across days. A window that
    /// ends on the last second of a day (`23:59:59`, as whole-day passes do) reads `23:59`.
    public func window(from: Date, until: Date) -> String {
        let start = parts(from)
        let end = parts(until)
        let sameDay = start.year == end.year && start.month == end.month && start.day == end.day
        let text = sameDay
            ? Self.dayText(start) + " " + Self.clockText(start) + "–" + Self.clockText(end)
            : Self.dayText(start) + " " + Self.clockText(start) + " – " + Self.dayText(end) + " " + Self.clockText(end)
        return text + " (" + zoneName + ")"
    }

    /// `2026-12-06T03:48:22+02:00`: a site-local instant a program can still read (the history
    /// CSV's `scannedAtLocal`). The offset is the zone's at that instant, so a daylight-saving
    /// day reads right on both sides of the change.
    public func localRFC3339(_ date: Date) -> String {
        let p = parts(date)
        let offset = abs(p.offsetSeconds) / 60
        let sign = p.offsetSeconds < 0 ? "-" : "+"
        let year = String(p.year)
        return String(repeating: "0", count: max(0, 4 - year.count)) + year + "-" + Self.pad(p.month) + "-"
            + Self.pad(p.day) + "T" + Self.clockText(p) + ":" + Self.pad(p.second) + sign + Self.pad(offset / 60) + ":"
            + Self.pad(offset % 60)
    }

    // MARK: Typing

    /// The instant a person typed: a site-local `2026-12-02 09:00` (or `T`, optional `:SS`) in
    /// this zone, or an RFC 3339 time; otherwise the domain's sentence for `name`.
    public func instant(_ text: String, _ name: String) -> Result<Date, SiteTime.Failure> {
        Result { () throws(SiteTime.Failure) in
            try SiteTime.parse(text.trimmingCharacters(in: .whitespaces), name).instant(in: timeZone, name)
        }
    }
}
