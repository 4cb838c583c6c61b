import Foundation
import GatePassCore

/// A `--from`/`--to` time as people type it: `2026-12-06 09:00` in the site's time zone, or
/// RFC 3339. The form is checked while parsing (a usage error before anything is sent); the
/// instant is fixed when the command runs, once the organization's zone is known — and a
/// site-local time is the only thing that asks the server for it, so an RFC 3339 filter still
/// works on a cached read.
enum SiteTimeOptions {
    static func option(_ name: String, help: String) -> Option<String> {
        Option(name, value: "TIME", help: help) { (text: String) throws(UsageError) -> String in
            do throws(SiteTime.Failure) { _ = try SiteTime.parse(text.trimmingCharacters(in: .whitespaces), name) } catch {
                throw UsageError(error.message)
            }
            return text
        }
    }

    /// The instants of `from` and `to` (nil where not given), refusing an end before the start.
    static func window(from: String?, to: String?, clock: () throws -> SiteClock) throws -> (from: Date?, to: Date?) {
        var site: SiteClock?
        func instant(_ text: String?, _ name: String) throws -> Date? {
            guard let text else { return nil }
            let typed: SiteTime
            do throws(SiteTime.Failure) { typed = try SiteTime.parse(text.trimmingCharacters(in: .whitespaces), name) } catch {
                throw UsageError(error.message)
            }
            if case .instant(let date) = typed { return date }
            let zone = try site ?? clock()
            site = zone
            do throws(SiteTime.Failure) { return try typed.instant(in: zone.timeZone, name) } catch {
                throw UsageError(error.message)
            }
        }
        let start = try instant(from, "--from"), end = try instant(to, "--to")
        if let start, let end, end < start {
            let zone = try site ?? clock()
            throw UsageError("--to (\(zone.stamped(end))) is before --from (\(zone.stamped(start))); give an end after the start")
        }
        return (start, end)
    }
}
