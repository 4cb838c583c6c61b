import Foundation
import GatePassCore

// The History screen's days: calendar days without a time zone, ranges of them as typed, and
// their instants in the screen's time zone.

extension HistoryScreen {
    /// A calendar day, without a time zone: what a person picks.
    public struct Day: Sendable, Hashable, Comparable, CustomStringConvertible {
        public let year: Int
        public let month: Int
        public let day: Int

        /// Nil unless the date exists (month 1–12, a day the month has, years 1–9999).
        public init?(year: Int, month: Int, day: Int) {
            guard (1...9999).contains(year), (1...12).contains(month), day >= 1,
                  day <= Self.daysIn(month: month, year: year) else { return nil }
            self.year = year; self.month = month; self.day = day
        }

        /// "2026-11-30".
        public var description: String {
            func pad(_ value: Int, _ width: Int) -> String {
                let digits = String(value)
                return String(repeating: "0", count: max(0, width - digits.count)) + digits
            }
            return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
        }

        public static func < (lhs: Day, rhs: Day) -> Bool { lhs.dayNumber < rhs.dayNumber }

        /// The day `count` days later (earlier when negative). Plain civil arithmetic: a day
        /// is a day, whatever a time zone does to its length.
        public func adding(days count: Int) -> Day { Day(dayNumber: dayNumber + count) }

        /// Days between two days (`to` minus self).
        public func days(to other: Day) -> Int { other.dayNumber - dayNumber }

        /// "Mon".
        public var weekdayName: String {
            // 1970-01-01 was a Thursday.
            let index = ((dayNumber + 4) % 7 + 7) % 7
            return ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][index]
        }

        static func daysIn(month: Int, year: Int) -> Int {
            switch month {
            case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
            case 4, 6, 9, 11: 30
            default: 31
            }
        }

        static let monthNames = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                                 "October", "November", "December"]

        // Days since 1970-01-01 (Howard Hinnant's civil-from-days algorithms, public domain).
        var dayNumber: Int {
            let y = month <= 2 ? year - 1 : year
            let era = (y >= 0 ? y : y - 399) / 400
            let yearOfEra = y - era * 400
            let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
            let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
            return era * 146_097 + dayOfEra - 719_468
        }

        init(dayNumber: Int) {
            let z = dayNumber + 719_468
            let era = (z >= 0 ? z : z - 146_096) / 146_097
            let dayOfEra = z - era * 146_097
            let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
            let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
            let monthPrime = (5 * dayOfYear + 2) / 153
            day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
            month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
            year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        }
    }

    /// The chosen days, first to last inclusive.
    public struct DayRange: Sendable, Equatable, CustomStringConvertible {
        public var first: Day
        public var last: Day

        public init(_ day: Day) { first = day; last = day }

        /// Nil when `last` comes before `first`.
        public init?(first: Day, last: Day) {
            guard first <= last else { return nil }
            self.first = first; self.last = last
        }

        public var dayCount: Int { first.days(to: last) + 1 }

        /// "2026-11-30", or "2026-11-01..2026-11-30": what the `d` prompt takes.
        public var description: String { dayCount == 1 ? first.description : "\(first)..\(last)" }

        func shifted(by count: Int) -> DayRange {
            var moved = self
            moved.first = first.adding(days: count)
            moved.last = last.adding(days: count)
            return moved
        }

        /// Parses what was typed at the `d` prompt: "YYYY-MM-DD" or "YYYY-MM-DD..YYYY-MM-DD".
        /// - Returns: the range, or a sentence that says what is wrong and how to write it.
        public static func parse(_ typed: String, maxDays: Int = HistoryScreen.maxRangeDays) -> Result<DayRange, InputError> {
            let example = "type a day like 2026-11-30, or a range like 2026-11-01..2026-11-30"
            let text = typed.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty else { return .failure(InputError(message: "Nothing typed: \(example).")) }
            // Two days, the dots and some spaces fit in 32; more is no date, and echoing it
            // whole would push the explanation off the line.
            guard text.count <= 32 else {
                return .failure(InputError(message: "That is too long for a day or a range (\(text.count) characters): \(example)."))
            }
            let parts = text.components(separatedBy: "..")
            guard parts.count <= 2 else {
                return .failure(InputError(message: "“\(text)” is not a day or a range: \(example)."))
            }
            var days: [Day] = []
            for part in parts {
                let day = part.trimmingCharacters(in: .whitespaces)
                guard !day.isEmpty else {
                    return .failure(InputError(message: "A day is missing beside “..”: type a range like 2026-11-01..2026-11-30."))
                }
                switch parseDay(day) {
                case .success(let day): days.append(day)
                case .failure(let error): return .failure(error)
                }
            }
            guard let range = DayRange(first: days[0], last: days[days.count - 1]) else {
                return .failure(InputError(message: "The range ends before it starts (\(days[0])..\(days[1])): put the earlier day first."))
            }
            guard range.dayCount <= maxDays else {
                return .failure(InputError(message: "The range covers \(range.dayCount) days; choose at most \(maxDays)."))
            }
            return .success(range)
        }

        static func parseDay(_ text: String) -> Result<Day, InputError> {
            let characters = Array(text)
            let digitPositions = [0, 1, 2, 3, 5, 6, 8, 9]
            guard characters.count == 10, characters[4] == "-", characters[7] == "-",
                  digitPositions.allSatisfy({ characters[$0].isASCII && characters[$0].isWholeNumber })
            else {
                return .failure(InputError(message: "“\(text)” is not a day: write it as YYYY-MM-DD, like 2026-11-30."))
            }
            let number = { (range: Range<Int>) in Int(String(characters[range]))! }
            let (year, month, day) = (number(0..<4), number(5..<7), number(8..<10))
            guard year >= 1970 else {
                return .failure(InputError(message: "“\(text)” is before 1970: the scan log holds nothing that old."))
            }
            guard (1...12).contains(month) else {
                return .failure(InputError(message: "“\(text)” is not a day: there is no month \(month)."))
            }
            guard let parsed = Day(year: year, month: month, day: day) else {
                return .failure(InputError(
                    message: "“\(text)” is not a day: \(Day.monthNames[month - 1]) \(year) has \(Day.daysIn(month: month, year: year)) days."))
            }
            return .success(parsed)
        }
    }

    func today() -> Day { Self.day(of: clock(), in: calendar) }

    static func day(of date: Date, in calendar: Calendar) -> Day {
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        // The Gregorian calendar always answers a valid date for years 1–9999.
        return Day(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1) ?? Day(dayNumber: 0)
    }

    /// The first day `[`, `]` and `d` reach: the scan log holds nothing older.
    public static let earliestDay = Day(year: 1970, month: 1, day: 1)!
    /// The last day `[`, `]` and `d` reach.
    public static let latestDay = Day(year: 9999, month: 12, day: 31)!

    /// The first instant of `day` in the screen's zone (not always 00:00: some zones skip midnight).
    func start(of day: Day) -> Date {
        guard let noon = calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day, hour: 12)) else {
            return .distantFuture   // Unreachable for the days `show` lets through.
        }
        return calendar.startOfDay(for: noon)
    }

    var bounds: (start: Date, end: Date) { (start(of: range.first), start(of: range.last.adding(days: 1))) }

    func contains(_ date: Date) -> Bool {
        let (start, end) = bounds
        return date >= start && date < end
    }
}
