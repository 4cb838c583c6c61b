import Foundation
import Testing
@testable import GatePassCore

/// The validity window: both ends inclusive; the default is "today 00:00:00 to 23:59:59,
/// server-local time" (api.md "Validity default"). Expected instants computed with Python's
/// `zoneinfo`, independently of Foundation.
@Suite("Validity window")
struct ValidityWindowTests {

    // MARK: - Position and inclusive boundaries

    @Test(arguments: [
        (-86_400.0, ValidityWindow.Position.notYetValid),
        (-1, .notYetValid),
        (-0.001, .notYetValid),
        (0, .inside),
        (0.001, .inside),
        (18_000, .inside),
        (35_999.999, .inside),
        (36_000, .inside),                   // validUntil itself
        (36_000.001, .expired),
        (36_001, .expired),
        (86_400, .expired),
    ])
    func positionRelativeToValidFrom(offset: Double, expected: ValidityWindow.Position) {
        let window = Fixture.window          // 08:00:00Z – 18:00:00Z
        let instant = Fixture.validFrom.addingTimeInterval(offset)
        #expect(window.position(of: instant) == expected)
        #expect(window.contains(instant) == (expected == .inside))
    }

    @Test func singleInstantWindowContainsOnlyThatInstant() {
        let t = Fixture.validFrom
        let window = ValidityWindow(from: t, until: t)
        #expect(window.position(of: t) == .inside)
        #expect(window.position(of: t.addingTimeInterval(-0.001)) == .notYetValid)
        #expect(window.position(of: t.addingTimeInterval(0.001)) == .expired)
    }

    // MARK: - Overlaps

    static func w(_ from: Double, _ until: Double) -> ValidityWindow {
        ValidityWindow(from: Fixture.day.addingTimeInterval(from), until: Fixture.day.addingTimeInterval(until))
    }

    @Test(arguments: [
        (w(0, 100), w(200, 300), false),      // disjoint
        (w(0, 100), w(101, 200), false),      // one second apart
        (w(0, 100), w(100, 200), true),       // touching at one instant (inclusive ends)
        (w(0, 100), w(50, 150), true),        // partial
        (w(0, 300), w(100, 200), true),       // containment
        (w(0, 100), w(0, 100), true),         // identical
        (w(50, 50), w(0, 100), true),         // a single instant inside
        (w(100.5, 100.5), w(0, 100), false),  // a single instant just after
    ])
    func overlaps(a: ValidityWindow, b: ValidityWindow, expected: Bool) {
        #expect(a.overlaps(b) == expected)
        #expect(b.overlaps(a) == expected, "overlap is symmetric")
    }

    // MARK: - The default validity: the local calendar day

    struct DayCase: Sendable, CustomTestStringConvertible {
        var zone: String
        var instant: Double
        var from: Double
        var until: Double
        var note: String
        var testDescription: String { "\(zone): \(note)" }
    }

    static let dayCases: [DayCase] = [
        DayCase(zone: "UTC", instant: 1_795_968_523, from: 1_795_910_400, until: 1_795_996_799,
                note: "2026-11-29T16:08:43Z"),
        DayCase(zone: "UTC", instant: 1_795_910_400, from: 1_795_910_400, until: 1_795_996_799,
                note: "exactly midnight belongs to the day it starts"),
        DayCase(zone: "UTC", instant: 1_795_996_799, from: 1_795_910_400, until: 1_795_996_799,
                note: "23:59:59 is the last second of the day"),
        DayCase(zone: "UTC", instant: 1_795_996_800, from: 1_795_996_800, until: 1_796_083_199,
                note: "the next midnight starts the next day"),
        DayCase(zone: "Europe/Bucharest", instant: 1_795_995_000, from: 1_795_989_600, until: 1_796_075_999,
                note: "2026-11-29T23:30Z is 30 Nov 01:30 local (UTC+2)"),
        DayCase(zone: "Europe/Bucharest", instant: 1_784_116_800, from: 1_784_062_800, until: 1_784_149_199,
                note: "summer time (UTC+3)"),
        DayCase(zone: "Europe/Bucharest", instant: 1_774_785_600, from: 1_774_735_200, until: 1_774_817_999,
                note: "2026-03-29, clocks go forward: a 23-hour day"),
        DayCase(zone: "Europe/Bucharest", instant: 1_792_929_600, from: 1_792_875_600, until: 1_792_965_599,
                note: "2026-10-25, clocks go back: a 25-hour day"),
        DayCase(zone: "America/Los_Angeles", instant: 1_795_928_400, from: 1_795_852_800, until: 1_795_939_199,
                note: "2026-11-29T05:00Z is still 28 Nov local (UTC-8)"),
        DayCase(zone: "America/Los_Angeles", instant: 1_772_971_200, from: 1_772_956_800, until: 1_773_039_599,
                note: "2026-03-08, clocks go forward: a 23-hour day"),
        DayCase(zone: "America/Los_Angeles", instant: 1_793_534_400, from: 1_793_516_400, until: 1_793_606_399,
                note: "2026-11-01, clocks go back: a 25-hour day"),
        // Santiago moves its clocks at midnight: 2026-09-06 has no 00:00 and starts at 01:00 (-03).
        DayCase(zone: "America/Santiago", instant: 1_788_609_600, from: 1_788_580_800, until: 1_788_667_199,
                note: "2026-09-05 ends where 2026-09-06 begins"),
        DayCase(zone: "America/Santiago", instant: 1_788_696_000, from: 1_788_667_200, until: 1_788_749_999,
                note: "2026-09-06 starts at 01:00 and ends at 23:59:59 local"),
    ]

    @Test("Local day", arguments: dayCases)
    func localDay(_ c: DayCase) throws {
        let zone = try #require(TimeZone(identifier: c.zone))
        let instant = Fixture.date(c.instant)
        let window = ValidityWindow.day(containing: instant, in: zone)
        #expect(window.from == Fixture.date(c.from))
        #expect(window.until == Fixture.date(c.until))
        #expect(window.contains(instant))
    }

    @Test("Days tile time: every instant in one window, consecutive days abut",
          arguments: ["UTC", "Europe/Bucharest", "America/Los_Angeles", "America/Santiago", "Asia/Kolkata",
                      "Australia/Lord_Howe", "Pacific/Chatham"])
    func daysTileTime(zoneName: String) throws {
        let zone = try #require(TimeZone(identifier: zoneName))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        // 2026-01-01T00:00:00Z, then every 3 hours for a year.
        for step in 0..<(366 * 8) {
            let instant = Fixture.date(1_767_225_600 + Double(step) * 10_800)
            let day = ValidityWindow.day(containing: instant, in: zone)
            let next = ValidityWindow.day(containing: day.until.addingTimeInterval(1), in: zone)
            #expect(day.contains(instant))
            #expect(next.from == day.until.addingTimeInterval(1), "\(zoneName) \(instant): days must abut")
            #expect(!day.overlaps(next))
            let length = day.until.timeIntervalSince(day.from) + 1
            #expect((22 * 3600...26 * 3600).contains(length), "\(zoneName) \(instant): day of \(length) s")
            let fromDay = calendar.dateComponents([.year, .month, .day], from: day.from)
            let untilParts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: day.until)
            let instantDay = calendar.dateComponents([.year, .month, .day], from: instant)
            #expect(fromDay == instantDay)
            #expect(untilParts.year == instantDay.year && untilParts.month == instantDay.month
                    && untilParts.day == instantDay.day, "\(zoneName) \(instant): until stays on the same local day")
            #expect(untilParts.hour == 23 && untilParts.minute == 59 && untilParts.second == 59)
        }
    }
}
