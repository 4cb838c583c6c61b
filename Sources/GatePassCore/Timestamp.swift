import Foundation

/// An RFC 3339 instant as the API writes it: UTC, whole seconds, `Z` (`2026-11-29T16:08:43Z`).
///
/// Parsing is more lenient than writing, as a careful API should be: fractional seconds and
/// numeric offsets (`+02:00`) are accepted; anything else is rejected.
public struct Timestamp: Codable, Sendable, Equatable, CustomStringConvertible {
    public var date: Date

    public init(_ date: Date) { self.date = date }

    public init?(rfc3339 text: String) {
        guard let date = Timestamp.parse(text) else { return nil }
        self.date = date
    }

    public var description: String { Timestamp.format(date) }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = Timestamp.parse(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "expected an RFC 3339 time like 2026-11-29T16:08:43Z")
        }
        self.date = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Timestamp.format(date))
    }

    // MARK: - Formatting (proleptic Gregorian, UTC; no Calendar, so it is cheap on hot paths)

    public static func format(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        var days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Civil-from-days (Howard Hinnant's public-domain algorithm description).
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let dayOfEra = days - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        var year = yearOfEra + era * 400
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        let month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        if month <= 2 { year += 1 }
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay % 3600 / 60, 2)):\(pad(secondOfDay % 60, 2))Z"
    }

    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    // MARK: - Parsing

    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 40 else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            return value
        }
        guard let year = number(0..<4), bytes[4] == 45, let month = number(5..<7), bytes[7] == 45,
              let day = number(8..<10), bytes[10] == 84 || bytes[10] == 116,
              let hour = number(11..<13), bytes[13] == 58, let minute = number(14..<16), bytes[16] == 58,
              let second = number(17..<19)
        else { return nil }
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        let monthLengths: [Int64] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        let isLeap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        guard day <= monthLengths[Int(month - 1)], !(month == 2 && day == 29 && !isLeap) else { return nil }
        var index = 19
        var fraction = 0.0
        if index < bytes.count, bytes[index] == 46 {
            index += 1
            var scale = 0.1
            let start = index
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                fraction += Double(bytes[index] - 48) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        guard index < bytes.count else { return nil }
        var offsetSeconds: Int64 = 0
        switch bytes[index] {
        case 90, 122: // Z z
            index += 1
        case 43, 45: // + -
            guard bytes.count == index + 6, bytes[index + 3] == 58,
                  let offsetHour = number(index + 1..<index + 3), let offsetMinute = number(index + 4..<index + 6),
                  offsetHour < 24, offsetMinute < 60
            else { return nil }
            offsetSeconds = (offsetHour * 3600 + offsetMinute * 60) * (bytes[index] == 43 ? 1 : -1)
            index += 6
        default:
            return nil
        }
        guard index == bytes.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offsetSeconds
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }
}
