import Foundation
import GatePassCore

/// Dates as the site sees them: "today", the times shown and the times typed are in the
/// organization's time zone (`GET /api/organization`), not the terminal's, so a host in
/// another zone registers the visitor for the gate's morning. Typed times are read by the
/// domain's `SiteTime`, as `gatepass visitor add --valid-from` reads them.
public struct SiteClock: Sendable, Equatable {
    public let timeZone: TimeZone

    public init(timeZone: TimeZone) { self.timeZone = timeZone }

    /// The clock of a zone by its IANA name, or nil when this system does not know it.
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
    public func day(_ date: Date) -> String { LocalDay(containing: date, in: timeZone).description }

    /// `YYYY-MM-DD HH:MM`, as the detail and the roll show times.
    public func minute(_ date: Date) -> String { formatter("yyyy-MM-dd HH:mm").string(from: date) }

    /// `HH:MM` when `date` is on the same site day as `now`, else `MM-DD HH:MM`.
    public func short(_ date: Date, now: Date) -> String {
        day(date) == day(now) ? formatter("HH:mm").string(from: date) : formatter("MM-dd HH:mm").string(from: date)
    }

    /// The instant a person typed: a site-local `2026-12-02 09:00` (or `T`, optional `:SS`) in
    /// this zone, or an RFC 3339 time; otherwise the domain's sentence for `name`.
    public func instant(_ text: String, _ name: String) -> Result<Date, SiteTime.Failure> {
        Result { () throws(SiteTime.Failure) in
            try SiteTime.parse(text.trimmingCharacters(in: .whitespaces), name).instant(in: timeZone, name)
        }
    }
}
