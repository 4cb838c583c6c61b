import Foundation

/// A time a person typed for a site: either an instant (RFC 3339, `2026-12-02T09:00:00+02:00`)
/// or a wall-clock time in the site's time zone (`2026-12-02 09:00`, `2026-12-02T09:00`, with
/// optional `:SS`), which only becomes an instant once the organization's zone is known.
///
///     let typed = try SiteTime.parse("2026-12-02 09:00")
///     let instant = try typed.instant(in: TimeZone(identifier: "Europe/Bucharest")!)  // 07:00Z
public enum SiteTime: Sendable, Equatable {
    case instant(Date)
    case local(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int)

    /// What went wrong, as a sentence ending in what the value must look like.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    static let example = "a site-local time like 2026-12-02 09:00 (or 2026-12-02T09:00) or an RFC 3339 time like 2026-12-02T07:00:00Z"

    /// Reads `text`; `name` (the option or field) starts the error message.
    public static func parse(_ text: String, _ name: String) throws(Failure) -> SiteTime {
        guard text.utf8.count <= 40 else { throw Failure(message: "\(name) must be \(example)") }
        if let date = Timestamp.parse(text) { return .instant(date) }
        let bytes = Array(text.utf8)
        guard bytes.count == 16 || bytes.count == 19 else { throw Failure(message: "\(name) must be \(example)") }
        guard let (year, month, day) = LocalDay.digits(bytes, 0),
              bytes[10] == UInt8(ascii: " ") || bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
              let hour = LocalDay.number(bytes, 11..<13), bytes[13] == UInt8(ascii: ":"),
              let minute = LocalDay.number(bytes, 14..<16)
        else { throw Failure(message: "\(name) must be \(example)") }
        var second = 0
        if bytes.count == 19 {
            guard bytes[16] == UInt8(ascii: ":"), let seconds = LocalDay.number(bytes, 17..<19) else {
                throw Failure(message: "\(name) must be \(example)")
            }
            second = seconds
        }
        guard LocalDay.isDate(year: year, month: month, day: day), hour < 24, minute < 60, second < 60 else {
            throw Failure(message: "\(name): \(text) is not a date and time of the calendar")
        }
        return .local(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// The instant this time names in `zone`. A wall-clock time the clocks skip (the hour a
    /// daylight-saving change jumps over) is refused rather than moved; a time that happens
    /// twice (the hour the clocks go back) is its first occurrence.
    /// - Parameter name: the option or field, for the error message.
    public func instant(in zone: TimeZone, _ name: String) throws(Failure) -> Date {
        switch self {
        case .instant(let date):
            return date
        case .local(let year, let month, let day, let hour, let minute, let second):
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let wanted = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
            guard let date = calendar.date(from: wanted) else {
                throw Failure(message: "\(name): \(description) cannot be placed in \(zone.identifier)")
            }
            let back = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            guard back.year == year, back.month == month, back.day == day, back.hour == hour, back.minute == minute,
                  back.second == second
            else {
                throw Failure(message: "\(name): \(description) does not exist in \(zone.identifier) (the clocks skip it); choose another time")
            }
            return date
        }
    }

    /// `2026-12-02 09:00` (with `:SS` when not zero), or the RFC 3339 text of an instant.
    public var description: String {
        switch self {
        case .instant(let date): return Timestamp.format(date)
        case .local(let year, let month, let day, let hour, let minute, let second):
            let day = LocalDay(year: year, month: month, day: day).description
            let time = LocalDay.pad(hour) + ":" + LocalDay.pad(minute) + (second == 0 ? "" : ":" + LocalDay.pad(second))
            return day + " " + time
        }
    }
}

/// A calendar day, `YYYY-MM-DD`, as the visitor list's `from`/`to` take it (api.md: days in
/// the organization's time zone).
public struct LocalDay: Sendable, Equatable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    public init(year: Int, month: Int, day: Int) { self.year = year; self.month = month; self.day = day }

    /// `2026-12-02`; nil for anything else, impossible dates (`2026-02-30`) included.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, let (year, month, day) = Self.digits(bytes, 0),
              Self.isDate(year: year, month: month, day: day)
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// The day holding `date` in `zone`.
    public init(containing date: Date, in zone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        self.init(year: parts.year ?? 0, month: parts.month ?? 0, day: parts.day ?? 0)
    }

    public var description: String {
        let year = String(year)
        return String(repeating: "0", count: max(0, 4 - year.count)) + year + "-" + Self.pad(month) + "-" + Self.pad(day)
    }

    static func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }

    static func number(_ bytes: [UInt8], _ range: Range<Int>) -> Int? {
        var value = 0
        for index in range {
            guard index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 else { return nil }
            value = value * 10 + Int(bytes[index] - 48)
        }
        return value
    }

    /// `YYYY-MM-DD` at `start`: the three numbers, not yet checked against the calendar.
    static func digits(_ bytes: [UInt8], _ start: Int) -> (Int, Int, Int)? {
        guard bytes.count >= start + 10, let year = number(bytes, start..<start + 4), bytes[start + 4] == UInt8(ascii: "-"),
              let month = number(bytes, start + 5..<start + 7), bytes[start + 7] == UInt8(ascii: "-"),
              let day = number(bytes, start + 8..<start + 10)
        else { return nil }
        return (year, month, day)
    }

    static func isDate(year: Int, month: Int, day: Int) -> Bool {
        guard year >= 1, (1...12).contains(month), day >= 1 else { return false }
        let lengths = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        let isLeap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        return day <= lengths[month - 1] && !(month == 2 && day == 29 && !isLeap)
    }
}
