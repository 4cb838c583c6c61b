import Foundation

/// The interval in which a pass admits its visitor, both ends inclusive.
public struct ValidityWindow: Sendable, Equatable {
    public var from: Date
    public var until: Date

    public init(from: Date, until: Date) {
        self.from = from
        self.until = until
    }

    /// Where `instant` falls relative to the window.
    public enum Position: Sendable, Equatable { case notYetValid, inside, expired }

    public func position(of instant: Date) -> Position {
        if instant < from { return .notYetValid }
        if instant > until { return .expired }
        return .inside
    }

    public func contains(_ instant: Date) -> Bool { position(of: instant) == .inside }

    /// The first and last instants a pass text can carry: its times are unsigned decimal unix
    /// seconds of at most ten digits (api.md "Offline passes").
    public static let earliest = Date(timeIntervalSince1970: 0)
    public static let latest = Date(timeIntervalSince1970: 9_999_999_999)

    /// Whether the window shares at least one instant with `other`.
    public func overlaps(_ other: ValidityWindow) -> Bool { from <= other.until && other.from <= until }

    /// The default validity of a new pass (api.md): the local calendar day holding `instant`,
    /// 00:00:00 to 23:59:59 in `timeZone`.
    public static func day(containing instant: Date, in timeZone: TimeZone) -> ValidityWindow {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let start = calendar.startOfDay(for: instant)
        // startOfDay again: where clocks jump at midnight (America/Santiago), the day starts at
        // 01:00 and adding a day keeps 01:00, an hour past the next day's start.
        let nextDay = calendar.startOfDay(
            for: calendar.date(byAdding: .day, value: 1, to: start) ?? start.addingTimeInterval(86_400))
        return ValidityWindow(from: start, until: nextDay.addingTimeInterval(-1))
    }
}

extension ValidityWindow {
    /// Noon of a `YYYY-MM-DD` day in `timeZone` (noon exists on every day, whatever the clocks do).
    public static func localDay(_ text: String, in timeZone: TimeZone) -> Date? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let year = Int(parts[0]), let month = Int(parts[1]), let dayOfMonth = Int(parts[2]),
              (1...9999).contains(year)
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let components = DateComponents(year: year, month: month, day: dayOfMonth, hour: 12)
        guard components.isValidDate(in: calendar), let date = calendar.date(from: components) else { return nil }
        return date
    }
}
