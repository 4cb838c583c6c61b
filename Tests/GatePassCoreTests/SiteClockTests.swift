import Foundation
import Testing
@testable import GatePassCore

/// The one formatter of times people read, east and west of UTC.
@Suite struct SiteClockTests {
    let east = SiteClock(zoneNamed: "Europe/Bucharest")!      // UTC+2 in winter, +3 in summer
    let west = SiteClock(zoneNamed: "America/Los_Angeles")!   // UTC-8 in winter, -7 in summer

    func utc(_ text: String) -> Date { Timestamp.parse(text)! }

    @Test func aWholeSiteDayReadsAsThatDayInItsOwnZone() {
        // A pass valid all of 6 December in Bucharest: 5 Dec 22:00Z to 6 Dec 21:59:59Z.
        #expect(east.window(from: utc("2026-12-05T22:00:00Z"), until: utc("2026-12-06T21:59:59Z"))
            == "06 Dec 2026 00:00–23:59 (Europe/Bucharest)")
        #expect(west.window(from: utc("2026-12-06T08:00:00Z"), until: utc("2026-12-07T07:59:59Z"))
            == "06 Dec 2026 00:00–23:59 (America/Los_Angeles)")
    }

    @Test func aWindowAcrossDaysNamesBothDays() {
        #expect(east.window(from: utc("2026-12-06T07:00:00Z"), until: utc("2026-12-08T15:00:00Z"))
            == "06 Dec 2026 09:00 – 08 Dec 2026 17:00 (Europe/Bucharest)")
        // 23:30 in Los Angeles on the 5th is already the 6th in UTC.
        #expect(west.window(from: utc("2026-12-06T07:30:00Z"), until: utc("2026-12-06T09:00:00Z"))
            == "05 Dec 2026 23:30 – 06 Dec 2026 01:00 (America/Los_Angeles)")
    }

    @Test func instantsTakeTheZonesOffsetOnTheirOwnDay() {
        #expect(east.dateTime(utc("2026-12-06T01:48:22Z")) == "06 Dec 2026 03:48")
        #expect(east.dateTime(utc("2026-07-01T06:00:00Z")) == "01 Jul 2026 09:00")
        #expect(west.dateTime(utc("2026-12-06T01:48:22Z")) == "05 Dec 2026 17:48")
        #expect(west.dateTime(utc("2026-07-01T16:00:00Z")) == "01 Jul 2026 09:00")
        #expect(east.timeWithSeconds(utc("2026-12-06T01:48:22Z")) == "03:48:22")
        #expect(east.stamped(utc("2026-12-06T01:48:22Z")) == "06 Dec 2026 03:48 (Europe/Bucharest)")
        #expect(east.day(utc("2026-12-05T22:30:00Z")) == "2026-12-06")
        #expect(west.day(utc("2026-12-05T22:30:00Z")) == "2026-12-05")
        #expect(east.date(utc("2026-12-05T22:30:00Z")) == "06 Dec 2026")
    }

    @Test func shortTimesNameTheDayOnlyWhenItIsNotToday() {
        let now = utc("2026-12-06T10:00:00Z")
        #expect(east.short(utc("2026-12-06T01:48:00Z"), now: now) == "03:48")
        #expect(east.short(utc("2026-12-05T20:10:00Z"), now: now) == "05 Dec 22:10")
        #expect(east.short(utc("2025-12-05T20:10:00Z"), now: now) == "05 Dec 2025 22:10")
        #expect(west.short(utc("2026-12-06T01:48:00Z"), now: now) == "05 Dec 17:48")
    }

    @Test func theLocalRFC3339FormKeepsTheInstantAndShowsTheOffset() {
        #expect(east.localRFC3339(utc("2026-12-06T01:48:22Z")) == "2026-12-06T03:48:22+02:00")
        #expect(east.localRFC3339(utc("2026-07-01T06:00:00Z")) == "2026-07-01T09:00:00+03:00")
        #expect(west.localRFC3339(utc("2026-12-06T01:48:22Z")) == "2026-12-05T17:48:22-08:00")
        let kolkata = SiteClock(zoneNamed: "Asia/Kolkata")!
        #expect(kolkata.localRFC3339(utc("2026-12-06T01:48:22Z")) == "2026-12-06T07:18:22+05:30")
        for clock in [east, west, kolkata] {
            let text = clock.localRFC3339(utc("2026-03-29T01:30:00Z"))
            #expect(Timestamp.parse(text) == utc("2026-03-29T01:30:00Z"))
        }
    }

    @Test func typedTimesAreReadInTheSitesZone() throws {
        #expect(try east.instant("2026-12-06 09:00", "--valid-from").get() == utc("2026-12-06T07:00:00Z"))
        #expect(try west.instant("2026-12-06 09:00", "--valid-from").get() == utc("2026-12-06T17:00:00Z"))
        #expect(try west.instant(" 2026-12-06T07:00:00Z ", "--valid-from").get() == utc("2026-12-06T07:00:00Z"))
    }
}

extension SiteClockTests {
    @Test func theZoneKeepsTheNameTheOrganizationGaveIt() {
        #expect(SiteClock(zoneNamed: "UTC")!.stamped(utc("2026-12-06T01:48:22Z")) == "06 Dec 2026 01:48 (UTC)")
        #expect(SiteClock(zoneNamed: "Not/AZone") == nil)
    }
}
