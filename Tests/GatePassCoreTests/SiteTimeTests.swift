import Foundation
import Testing
@testable import GatePassCore

@Suite struct SiteTimeTests {
    let bucharest = TimeZone(identifier: "Europe/Bucharest")!

    func utc(_ text: String) -> Date { Timestamp.parse(text)! }

    @Test(arguments: ["2026-12-02 09:00", "2026-12-02T09:00", "2026-12-02t09:00", "2026-12-02 09:00:00"])
    func siteLocalTimesAreReadInTheSitesZone(text: String) throws {
        let time = try SiteTime.parse(text, "--valid-from")
        #expect(time == .local(year: 2026, month: 12, day: 2, hour: 9, minute: 0, second: 0))
        // Bucharest is UTC+2 in December.
        #expect(try time.instant(in: bucharest, "--valid-from") == utc("2026-12-02T07:00:00Z"))
        #expect(try time.instant(in: TimeZone(identifier: "UTC")!, "--valid-from") == utc("2026-12-02T09:00:00Z"))
    }

    @Test func summerTimeIsTakenFromTheZoneOnThatDay() throws {
        let time = try SiteTime.parse("2026-07-01 09:00", "--valid-from")
        #expect(try time.instant(in: bucharest, "--valid-from") == utc("2026-07-01T06:00:00Z"))
    }

    @Test(arguments: ["2026-12-02T07:00:00Z", "2026-12-02T09:00:00+02:00", "2026-12-02T07:00:00.000Z"])
    func rfc3339TimesAreTakenAsTheyAre(text: String) throws {
        let time = try SiteTime.parse(text, "--valid-from")
        #expect(time == .instant(utc("2026-12-02T07:00:00Z")))
        #expect(try time.instant(in: bucharest, "--valid-from") == utc("2026-12-02T07:00:00Z"))
    }

    @Test(arguments: ["", "tomorrow", "2026-12-02", "2026-12-02 9:00", "2026-13-02 09:00", "2026-02-30 09:00",
                      "2025-02-29 09:00", "2026-12-02 24:00", "2026-12-02 09:60", "2026-12-02 09:00:60",
                      "２０２６-12-02 09:00", "2026-12-02\u{1B}09:00", "2026-12-02 09:00\u{0}", "0000-01-01 00:00",
                      String(repeating: "2026-12-02 09:00", count: 640)])
    func anythingElseIsRefusedWithTheOptionsName(text: String) {
        #expect(throws: SiteTime.Failure.self) { try SiteTime.parse(text, "--valid-from") }
        do {
            _ = try SiteTime.parse(text, "--valid-from")
        } catch {
            #expect(error.message.hasPrefix("--valid-from"))
            #expect(error.message.utf8.count < 300) // never the 10 kB input echoed back
        }
    }

    @Test func aTimeTheClocksSkipIsRefused() throws {
        // 2026-03-29: Bucharest goes from 03:00 straight to 04:00.
        let skipped = try SiteTime.parse("2026-03-29 03:30", "--valid-from")
        #expect(throws: SiteTime.Failure.self) { try skipped.instant(in: bucharest, "--valid-from") }
        #expect(try SiteTime.parse("2026-03-29 04:00", "x").instant(in: bucharest, "x") == utc("2026-03-29T01:00:00Z"))
    }

    @Test func aTimeTheClocksPassTwiceIsItsFirstOccurrence() throws {
        // 2026-10-25: Bucharest goes from 04:00 back to 03:00; 03:30 happens at 00:30Z and 01:30Z.
        let twice = try SiteTime.parse("2026-10-25 03:30", "x")
        #expect(try twice.instant(in: bucharest, "x") == utc("2026-10-25T00:30:00Z"))
    }


    @Test func daysAreCalendarDays() {
        #expect(LocalDay("2026-12-02")?.description == "2026-12-02")
        #expect(LocalDay("2028-02-29") != nil)
        for bad in ["2026-02-29", "2026-12-2", "2026-12-02 ", "26-12-02", "2026/12/02", "", "2026-00-10", "2026-12-32"] {
            #expect(LocalDay(bad) == nil, "\(bad)")
        }
        // 23:30Z on 1 December is already 2 December in Bucharest.
        #expect(LocalDay(containing: utc("2026-12-01T23:30:00Z"), in: bucharest) == LocalDay(year: 2026, month: 12, day: 2))
    }
}

@Suite struct VisitorReferenceTests {
    @Test func shortIdsInAnyCrockfordSpellingAreCanonical() {
        #expect(VisitorReference("K7Q2M9XD") == .shortId(ShortID("K7Q2M9XD")!))
        #expect(VisitorReference("k7q2-m9xd")?.pathValue == "K7Q2M9XD")
        #expect(VisitorReference(" k7q2m9xd ")?.pathValue == "K7Q2M9XD")
        // O reads as 0, I and L as 1.
        #expect(VisitorReference("oi-lab234")?.pathValue == "011AB234")
    }

    @Test func idsAreUUIDsInLowerCase() {
        let id = "0190E5C2-7B1A-7C3D-8E4F-5A6B7C8D9E0F"
        #expect(VisitorReference(id) == .id(id.lowercased()))
        #expect(VisitorReference(id)?.pathValue == id.lowercased())
    }

    @Test(arguments: ["", "K7Q2M9X", "K7Q2M9XDZ", "K7Q2M9XU", "../../api/admin", "K7Q2M9XD/cancel", "K7Q2M9XD?x=1",
                      "0190e5c2-7b1a-7c3d-8e4f-5a6b7c8d9e0", "0190e5c2x7b1a-7c3d-8e4f-5a6b7c8d9e0f",
                      "0190e5c2-7b1a-7c3d-8e4f-5a6b7c8d9e0g", "\u{1B}]0;pwned\u{7}", "K7Q2\u{202E}M9XD",
                      String(repeating: "K", count: 10_000)])
    func anythingElseIsNoReference(text: String) {
        #expect(VisitorReference(text) == nil)
    }
}
