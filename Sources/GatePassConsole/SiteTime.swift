import Foundation

/// Dates as the site sees them: "today", the times shown and the times typed are in the
/// organization's time zone (`GET /api/organization`), not the terminal's, so a host in
/// another zone registers the visitor for the gate's morning.
public struct SiteTime: Sendable, Equatable {
    public let timeZone: TimeZone

    public init(timeZone: TimeZone) { self.timeZone = timeZone }

    /// The zone of `organization`, or nil when its name is no zone this system knows.
    public init?(zoneNamed name: String) {
        guard let zone = TimeZone(identifier: name) else { return nil }
        self.init(timeZone: zone)
    }

    private func formatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.timeZone = timeZone
        formatter.dateFormat = format
        return formatter
    }

    /// `YYYY-MM-DD` of `date` (the API's `from=`/`to=` days).
    public func day(_ date: Date) -> String { formatter("yyyy-MM-dd").string(from: date) }

    /// `YYYY-MM-DD HH:MM`, what the form takes and the detail shows.
    public func minute(_ date: Date) -> String { formatter("yyyy-MM-dd HH:mm").string(from: date) }

    /// `HH:MM` when `date` is on the same site day as `now`, else `MM-DD HH:MM`.
    public func short(_ date: Date, now: Date) -> String {
        day(date) == day(now) ? formatter("HH:mm").string(from: date) : formatter("MM-dd HH:mm").string(from: date)
    }

    /// The instant a person typed as `YYYY-MM-DD HH:MM` (site-local); nil when it is not
    /// exactly that, or names a time the zone skips (a spring-forward gap).
    public func parseMinute(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.count == 16, trimmed.allSatisfy({ $0.isASCII }) else { return nil }
        let parser = formatter("yyyy-MM-dd HH:mm")
        parser.isLenient = false
        guard let date = parser.date(from: trimmed), minute(date) == trimmed else { return nil }
        return date
    }
}
