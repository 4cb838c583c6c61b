import Foundation
import Testing
@testable import GatePassCore

/// api.md: times are RFC 3339 UTC strings (`2026-11-29T16:08:43Z`). Expected epoch values were
/// computed with Python's `datetime`, independently of the code under test.
@Suite("RFC 3339 timestamps")
struct TimestampTests {

    static let known: [(Double, String)] = [
        (0, "1970-01-01T00:00:00Z"),
        (1_795_968_523, "2026-11-29T16:08:43Z"),
        (1_709_210_096, "2024-02-29T12:34:56Z"),            // leap day
        (951_782_400, "2000-02-29T00:00:00Z"),              // 400-year leap day
        (4_107_542_400, "2100-03-01T00:00:00Z"),            // 2100 is not a leap year
        (1_483_228_799, "2016-12-31T23:59:59Z"),
        (-1, "1969-12-31T23:59:59Z"),
        (-14_182_940, "1969-07-20T20:17:40Z"),
        (-2_208_988_800, "1900-01-01T00:00:00Z"),
        (-11_670_998_400, "1600-02-29T00:00:00Z"),
        (-62_135_596_800, "0001-01-01T00:00:00Z"),
        (253_402_300_799, "9999-12-31T23:59:59Z"),
    ]

    @Test("Formats known instants", arguments: known)
    func formatsKnownInstants(seconds: Double, text: String) {
        #expect(Timestamp.format(Date(timeIntervalSince1970: seconds)) == text)
        #expect(Timestamp(Date(timeIntervalSince1970: seconds)).description == text)
    }

    @Test("Parses known instants", arguments: known)
    func parsesKnownInstants(seconds: Double, text: String) {
        #expect(Timestamp.parse(text) == Date(timeIntervalSince1970: seconds))
        #expect(Timestamp(rfc3339: text)?.date == Date(timeIntervalSince1970: seconds))
    }

    @Test func formattingDropsFractionsTowardsThePast() {
        #expect(Timestamp.format(Date(timeIntervalSince1970: 0.999)) == "1970-01-01T00:00:00Z")
        #expect(Timestamp.format(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59Z")
        #expect(Timestamp.format(Date(timeIntervalSince1970: 1_795_968_523.75)) == "2026-11-29T16:08:43Z")
    }

    @Test func roundTripOfWholeSecondsAcrossTheRange() throws {
        var generator = SplitMix64(seed: 2026)
        let lower: Int64 = -62_135_596_800          // 0001-01-01
        let upper: Int64 = 253_402_300_799          // 9999-12-31T23:59:59
        var samples: [Int64] = [lower, upper, -86_401, -86_400, -86_399, -1, 0, 1, 86_399, 86_400]
        for _ in 0..<5_000 { samples.append(Int64.random(in: lower...upper, using: &generator)) }
        for seconds in samples {
            let date = Date(timeIntervalSince1970: Double(seconds))
            let text = Timestamp.format(date)
            #expect(text.utf8.count == 20)
            let parsed = try #require(Timestamp.parse(text), "\(text)")
            #expect(parsed == date, "\(seconds) → \(text)")
            #expect(Timestamp.format(parsed) == text)
        }
    }

    @Test func everyDayOfALeapAndACommonYearRoundTrips() throws {
        for (start, days) in [(1_704_067_200.0, 366), (1_735_689_600.0, 365)] {   // 2024, 2025
            var previous = ""
            for day in 0..<days {
                let date = Date(timeIntervalSince1970: start + Double(day) * 86_400 + 43_200)
                let text = Timestamp.format(date)
                #expect(text > previous)
                #expect(text.hasSuffix("T12:00:00Z"))
                #expect(Timestamp.parse(text) == date)
                previous = text
            }
        }
    }

    // MARK: - Lenient parsing

    static let base = 1_795_968_523.0   // 2026-11-29T16:08:43Z

    @Test("Accepted forms", arguments: [
        ("2026-11-29T16:08:43Z", base),
        ("2026-11-29t16:08:43z", base),
        ("2026-11-29T16:08:43z", base),
        ("2026-11-29T16:08:43.5Z", base + 0.5),
        ("2026-11-29T16:08:43.250Z", base + 0.25),
        ("2026-11-29T16:08:43.000Z", base),
        ("2026-11-29T16:08:43.123456789Z", base + 0.123456789),
        ("2026-11-29T18:08:43+02:00", base),
        ("2026-11-29T18:08:43.5+02:00", base + 0.5),
        ("2026-11-29T11:08:43-05:00", base),
        ("2026-11-29T21:38:43+05:30", base),
        ("2026-11-29T16:08:43+00:00", base),
        ("2026-11-29T16:08:43-00:00", base),
        ("2026-11-30T01:08:43+09:00", base),              // the day changes with the offset
        ("2026-03-01T01:00:00+02:00", 1_772_319_600),     // 2026-02-28T23:00:00Z
        ("2016-12-31T23:59:60Z", 1_483_228_799),          // a leap second counts as :59
    ])
    func acceptedForms(_ text: String, seconds: Double) throws {
        let date = try #require(Timestamp.parse(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 1e-6)
    }

    @Test("Rejected forms", arguments: [
        "",
        "not a time",
        "2026-11-29",
        "2026-11-29T16:08:43",                 // missing zone
        "2026-11-29T16:08:43.5",               // fraction, missing zone
        "2026-11-29T16:08Z",
        "2026-11-29T16:08:43.Z",               // empty fraction
        "2026-02-30T00:00:00Z",
        "2026-02-29T00:00:00Z",
        "2025-02-29T00:00:00Z",
        "2100-02-29T00:00:00Z",
        "2026-04-31T00:00:00Z",
        "2026-11-31T00:00:00Z",
        "2026-11-00T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-00-10T00:00:00Z",
        "2026-11-32T00:00:00Z",
        "2026-11-29T24:00:00Z",
        "2026-11-29T16:60:00Z",
        "2026-11-29T16:08:61Z",
        "2026-11-29T16:08:43Zjunk",
        "2026-11-29T16:08:43Z ",
        " 2026-11-29T16:08:43Z",
        "2026-11-29T16:08:43Z\u{0}",
        "2026-11-29T16:08:43+0200",
        "2026-11-29T16:08:43+02",
        "2026-11-29T16:08:43+02:00junk",
        "2026-11-29T16:08:43+24:00",
        "2026-11-29T16:08:43+02:60",
        "2026-11-29T16:08:43UTC",
        "2026-11-29T16:08:43GMT",
        "2026/11/29T16:08:43Z",
        "2026-11-29X16:08:43Z",
        "26-11-29T16:08:43Z",
        "+2026-11-29T16:08:43Z",
        "２０２６-11-29T16:08:43Z",           // fullwidth digits
        "2026-11-29T16:08:43.12345678901234567890Z",               // too long (41 bytes)
        "2026-11-29T16:08:43." + String(repeating: "9", count: 1_000) + "Z",
    ])
    func rejectedForms(_ text: String) {
        #expect(Timestamp.parse(text) == nil)
        #expect(Timestamp(rfc3339: text) == nil)
    }

    @Test func lengthLimitIsFortyBytes() {
        let forty = "2026-11-29T18:08:43." + String(repeating: "0", count: 14) + "+02:00"
        #expect(forty.utf8.count == 40)
        #expect(Timestamp.parse(forty) == Date(timeIntervalSince1970: Self.base))
        let fortyOne = "2026-11-29T18:08:43." + String(repeating: "0", count: 15) + "+02:00"
        #expect(Timestamp.parse(fortyOne) == nil)
    }

    // MARK: - Codable

    @Test func encodesAsAnRFC3339String() throws {
        let data = try JSONEncoder().encode([Timestamp(Date(timeIntervalSince1970: Self.base + 0.9))])
        #expect(String(decoding: data, as: UTF8.self) == #"["2026-11-29T16:08:43Z"]"#)
    }

    @Test func decodesLenientForms() throws {
        let json = #"["2026-11-29T16:08:43Z", "2026-11-29T18:08:43+02:00", "2026-11-29t16:08:43z"]"#
        let stamps = try JSONDecoder().decode([Timestamp].self, from: Data(json.utf8))
        #expect(stamps.map(\.date) == Array(repeating: Date(timeIntervalSince1970: Self.base), count: 3))
    }

    @Test(arguments: [#"["2026-11-29"]"#, #"["2026-02-30T00:00:00Z"]"#, #"[1795968523]"#, #"[null]"#])
    func decodingRejectsOtherValues(json: String) {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([Timestamp].self, from: Data(json.utf8)) }
    }
}
