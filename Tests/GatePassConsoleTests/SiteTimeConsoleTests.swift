import Foundation
import GatePassCore
import Testing
@testable import GatePassConsole

/// The console shows every time in the organization's zone, on a site east of UTC and one
/// west of it: a pass valid all of 6 December reads 6 December in both, whatever the zone of
/// the computer the console runs on.
@Suite struct SiteTimeConsoleTests {
    static let zones = ["Europe/Bucharest", "America/Los_Angeles"]

    /// 6 December 2026, the whole site day of `zone`.
    static func sixthOfDecember(in zone: TimeZone) -> ValidityWindow {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let noon = calendar.date(from: DateComponents(year: 2026, month: 12, day: 6, hour: 12))!
        return ValidityWindow.day(containing: noon, in: zone)
    }

    /// The detail of a pass valid all of 6 December in `zoneName`, drawn by a console whose own
    /// zone is UTC (the site's is the one that counts).
    func sixthOfDecemberDetail(_ zoneName: String) throws -> Canvas {
        var visitor = Fixtures.visitor(1, name: "Ana Pop")
        visitor.validity = Self.sixthOfDecember(in: try #require(TimeZone(identifier: zoneName)))
        let services = FakeConsoleServices()
        services.details[visitor.id] = .success(ConsoleRead(value: VisitorDetail(visitor: visitor, context: nil),
                                                            updatedAt: Fixtures.now, fromCache: false))
        let screen = VisitorDetailScreen(visitor: visitor, services: services, clock: { Fixtures.now },
                                         siteClock: try #require(SiteClock(zoneNamed: zoneName)))
        _ = screen.appear()
        return Fixtures.render(screen, width: 90, height: 30)
    }

    @Test(arguments: zones) func theDetailReadsAWholeDayPassAsThatDayInTheSitesZone(_ zoneName: String) throws {
        let canvas = try sixthOfDecemberDetail(zoneName)
        #expect(Fixtures.row(canvas, containing: "Valid ").map(canvas.line)
                == "Valid           06 Dec 2026 00:00–23:59 (\(zoneName))")
    }

    @Test(arguments: zones) func theDetailsOtherTimesAreInTheSitesZoneWithTheDay(_ zoneName: String) throws {
        // 2025-06-15 15:01:40Z: 18:01 in Bucharest (UTC+3 in June), 08:01 in Los Angeles (UTC-7).
        let canvas = try sixthOfDecemberDetail(zoneName)
        let local = zoneName == "Europe/Bucharest" ? "15 Jun 2025 18:01" : "15 Jun 2025 08:01"
        #expect(Fixtures.row(canvas, containing: "Requested ").map(canvas.line) == "Requested       \(local) (5 min ago)")
    }

    @Test func theDetailNamesWhoDecidedAndTheApproverWithoutTheirIds() {
        var decided = Fixtures.listed(1, name: "Ana Pop")
        decided.status = .approved
        decided.decidedAt = Fixtures.now.addingTimeInterval(-600)
        decided.decidedBy = "u7"
        decided.approverId = "u8"
        let console = FakeConsoleServices()
        console.details[decided.id] = .success(ConsoleRead(value: VisitorDetail(visitor: decided, context: nil),
                                                           updatedAt: Fixtures.now, fromCache: false))
        let services = FakeVisitorsServices()
        services.names = ["u7": "Ion Ene", "u8": "Maria Popa"]
        let screen = VisitorDetailScreen(visitor: decided, services: console, clock: { Fixtures.now },
                                         siteClock: SiteClock(zoneNamed: "Europe/Bucharest")!, management: services)
        _ = screen.appear()
        let canvas = Fixtures.render(screen, width: 100, height: 30)
        #expect(Fixtures.row(canvas, containing: "Decided by").map(canvas.line) == "Decided by      Ion Ene")
        #expect(Fixtures.row(canvas, containing: "Approver").map(canvas.line) == "Approver        Maria Popa")
    }

    /// The History tab reads the site's zone itself, as the On-site tab does: its times agree
    /// with the On-site tab's although the console was started in another zone.
    @Test(arguments: zones) func theHistoryListsTimesInTheSitesZone(_ zoneName: String) throws {
        let services = FakeHistoryServices()
        // 01:48:22 UTC on 30 November: 03:48:22 in Bucharest; 17:48:22 UTC: 09:48:22 in Los Angeles.
        let scanned = zoneName == "Europe/Bucharest" ? "2026-11-30T01:48:22Z" : "2026-11-30T17:48:22Z"
        services.scans = [Fixtures.scan("s1", at: Fixtures.instant(scanned))]
        services.visitorNames = ["v1": "Ana Pop"]
        services.organization = Organization(id: "org-1", name: "Acme Works", timeZone: zoneName)
        let screen = HistoryScreen(services: services, clock: { Fixtures.instant("2026-11-30T12:00:00Z") },
                                   timeZone: TimeZone(identifier: "UTC")!, homeDirectory: "/home/ana")
        _ = screen.appear()
        let text = Fixtures.render(screen, width: 100, height: 30).text
        let local = zoneName == "Europe/Bucharest" ? "03:48:22" : "09:48:22"
        #expect(text.contains(local), "\(text)")
        #expect(text.contains("times in \(zoneName)"), "\(text)")
        #expect(services.lastFilter?.from == ValidityWindow.day(containing: Fixtures.instant("2026-11-30T12:00:00Z"),
                                                                  in: TimeZone(identifier: zoneName)!).from,
                "the day asked for is the site's")
    }

    /// An approver may not read the users list: it is named where it decided, and anyone else
    /// who decided is "another user", never an id.
    @Test func anApproverSeesItsOwnNameAsTheDeciderAndNoIds() {
        var decided = Fixtures.visitor(1, name: "Ana Pop", status: .approved)
        decided.decidedAt = Fixtures.now.addingTimeInterval(-600)
        decided.decidedBy = "01a248f3-0000-7000-8000-000000000001"
        let console = FakeConsoleServices()
        console.user = ConsoleUser(id: "01a248f3-0000-7000-8000-000000000001", name: "Ana Approver",
                                   email: "approver@example.com", role: .approver, server: "http://gate.test")
        console.details[decided.id] = .success(ConsoleRead(value: VisitorDetail(visitor: decided, context: nil),
                                                           updatedAt: Fixtures.now, fromCache: false))
        let screen = VisitorDetailScreen(visitor: decided, services: console, clock: { Fixtures.now },
                                         siteClock: SiteClock(zoneNamed: "America/New_York")!)
        _ = screen.appear()
        var canvas = Fixtures.render(screen, width: 100, height: 30)
        #expect(Fixtures.row(canvas, containing: "Decided by").map(canvas.line) == "Decided by      Ana Approver")
        console.user?.id = "someone-else"
        canvas = Fixtures.render(screen, width: 100, height: 30)
        #expect(Fixtures.row(canvas, containing: "Decided by").map(canvas.line) == "Decided by      another user")
        #expect(!canvas.text.contains("01a248f3"))
    }

    /// The Scan tab's decision times are the site's, east and west of UTC.
    @Test(arguments: zones) func theScanTabsDecisionTimesAreInTheSitesZone(_ zoneName: String) {
        let services = FakeScanServices()
        // 2025-06-15 15:06:40Z: 18:06:40 in Bucharest, 08:06:40 in Los Angeles.
        let screen = ScanScreen(services: services, clock: { Fixtures.now }, sourceDescription: nil,
                                siteClock: SiteClock(zoneNamed: zoneName)!)
        _ = screen.appear()
        services.answer("K7Q2M9XD", with: ScanScreenFixtures.decision(.checkedIn, ScanScreenFixtures.ana))
        Fixtures.type("K7Q2M9XD", into: screen)
        _ = screen.handle(.enter)
        let text = Fixtures.render(screen, width: 100, height: 30).text
        #expect(text.contains(zoneName == "Europe/Bucharest" ? "18:06:40" : "08:06:40"), "\(text)")
    }
}
