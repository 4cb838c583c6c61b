import Foundation
import GatePassCore
import Testing
@testable import GatePassConsole

@Suite struct VisitorsScreenTests {
    func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: width - text.count) }

    /// A Visitors tab over `visitors`, appeared, with a clock the test moves.
    func withScreen(_ visitors: [Visitor], fromCache: Bool = false, updatedAt: Date = Fixtures.now,
                    _ body: (VisitorsScreen, FakeVisitorsServices, TestClock) throws -> Void) rethrows {
        let services = FakeVisitorsServices()
        services.visitorsResult = .success(ConsoleRead(value: visitors, updatedAt: updatedAt, fromCache: fromCache))
        let clock = TestClock()
        let screen = VisitorsScreen(services: services, clock: clock.function, fallbackZone: TimeZone(identifier: "UTC")!)
        #expect(screen.appear() == .redraw)
        try body(screen, services, clock)
    }

    static let three = [Fixtures.listed(1, name: "Ana Pop"),
                        Fixtures.listed(2, name: "Dan Ene", status: .awaitingApproval, from: Fixtures.now.addingTimeInterval(86_400)),
                        Fixtures.listed(3, name: "Ion Vlad", status: .checkedIn)]

    @Test func listsFromTodayInTheSitesZoneWithWhenNameCompanyHostAndStatus() {
        withScreen(Self.three) { screen, services, _ in
            // 2025-06-15 15:06 UTC is 18:06 in Bucharest.
            #expect(services.queries == [VisitorListQuery(fromDay: "2025-06-15")])
            let canvas = Fixtures.render(screen, width: 80, height: 10)
            #expect(canvas.line(0) == "Visitors from 2025-06-15 (Europe/Bucharest) · all statuses · 3 shown")
            // 80 columns: from 12, status 18, then name 20, company 15, host 15.
            #expect(canvas.line(1) == pad("From", 13) + pad("Name", 19) + pad("Company", 14) + pad("Host", 16) + "Status")
            #expect(canvas.line(2) == pad("18:06", 13) + pad("Ana Pop", 19) + pad("Acme", 14) + pad("Ion", 16) + "expected")
            #expect(canvas.line(3) == pad("16 Jun 18:06", 13) + pad("Dan Ene", 19) + pad("Acme", 14) + pad("Ion", 16) + "awaiting approval")
            #expect(canvas.line(4).hasSuffix("checked in"))
            #expect(canvas[0, 2].style == .selected && canvas[79, 2].style == .selected)
            #expect(canvas[0, 3].style.role == .warning, "awaiting approval stands out")
            #expect(canvas.line(9) == "Enter: open · n: new visitor · f/F: status · /: search · r: reload")
        }
    }

    @Test func todayIsTheSitesDayNotTheTerminals() {
        let services = FakeVisitorsServices()
        // 22:30 UTC on the 15th is already the 16th in Bucharest.
        let clock = TestClock(Fixtures.instant("2025-06-15T22:30:00Z"))
        let screen = VisitorsScreen(services: services, clock: clock.function, fallbackZone: TimeZone(identifier: "UTC")!)
        _ = screen.appear()
        #expect(services.queries.last?.fromDay == "2025-06-16")
    }

    @Test func aSiteZoneThatCannotBeReadIsSaidAndTheTerminalsIsUsed() {
        let services = FakeVisitorsServices()
        services.siteResult = .failure(.offline("connection refused"))
        let screen = VisitorsScreen(services: services, clock: { Fixtures.now }, fallbackZone: TimeZone(identifier: "Asia/Tokyo")!)
        _ = screen.appear()
        // 15:06 UTC is past midnight in Tokyo.
        #expect(services.queries.last?.fromDay == "2025-06-16")
        let canvas = Fixtures.render(screen, width: 200, height: 6)
        #expect(canvas.line(0).hasPrefix("Visitors from 2025-06-16 (Asia/Tokyo)"))
        #expect(canvas.line(1).hasPrefix("The site's time zone could not be read (The server cannot be reached"))
        // The next appear tries the site again.
        services.siteResult = .success(ConsoleRead(value: FakeVisitorsServices.site, updatedAt: Fixtures.now, fromCache: false))
        _ = screen.appear()
        #expect(screen.siteTime.timeZone.identifier == "Europe/Bucharest" && screen.siteProblem == nil)

        let unknown = FakeVisitorsServices()
        unknown.siteResult = .success(ConsoleRead(value: Organization(id: "o", name: "X", timeZone: "Mars/Olympus"),
                                                  updatedAt: Fixtures.now, fromCache: false))
        let other = VisitorsScreen(services: unknown, clock: { Fixtures.now }, fallbackZone: TimeZone(identifier: "UTC")!)
        _ = other.appear()
        #expect(other.siteProblem == "The site's time zone Mars/Olympus is unknown here; times are this terminal's.")
    }

    @Test func fStepsThroughTheStatusFiltersBothWaysAndReloads() {
        withScreen(Self.three) { screen, services, _ in
            #expect(screen.handle(.character("f")) == .redraw)
            #expect(services.queries.last?.status == .expected)
            _ = screen.handle(.character("f"))
            #expect(services.queries.last?.status == .awaitingApproval)
            #expect(Fixtures.render(screen, width: 100, height: 6).line(0).contains("· awaiting approval ·"))
            _ = screen.handle(.character("F"))
            _ = screen.handle(.character("F"))
            #expect(services.queries.last?.status == nil)
            _ = screen.handle(.character("F"))
            #expect(services.queries.last?.status == .cancelled, "backwards from all wraps to the last")
            for _ in 0..<VisitorsScreen.statusFilters.count { _ = screen.handle(.character("f")) }
            #expect(screen.statusFilter == .cancelled, "a full round comes back")
        }
    }

    @Test func slashOpensTheSearchEnterSearchesEscKeepsTheListAndEmptyClears() {
        withScreen(Self.three) { screen, services, _ in
            #expect(!screen.isCapturingText)
            _ = screen.handle(.character("/"))
            #expect(screen.isCapturingText)
            Fixtures.type("  ana q", into: screen)
            _ = screen.handle(.backspace)
            _ = screen.handle(.backspace)
            #expect(Fixtures.render(screen, width: 60, height: 8).line(6) == "Search:   ana_")
            _ = screen.handle(.enter)
            #expect(!screen.isCapturingText)
            #expect(services.queries.last == VisitorListQuery(fromDay: "2025-06-15", search: "ana"))
            #expect(Fixtures.render(screen, width: 100, height: 8).line(0).contains("· search \"ana\" ·"))
            let before = services.queries.count
            _ = screen.handle(.character("/"))
            #expect(screen.searchText == "ana", "the prompt opens with the current search")
            _ = screen.handle(.control("u"))
            Fixtures.type("zzz", into: screen)
            _ = screen.handle(.escape)
            #expect(services.queries.count == before && screen.search == "ana", "Esc searches nothing")
            _ = screen.handle(.character("/"))
            _ = screen.handle(.control("u"))
            _ = screen.handle(.enter)
            #expect(screen.search == nil && services.queries.last?.search == nil)
        }
    }

    @Test func hostileSearchInputIsRefusedOrShownSpelledOut() {
        withScreen(Self.three) { screen, services, _ in
            _ = screen.handle(.character("/"))
            for character in Fixtures.escapeSequence { _ = screen.handle(.character(character)) }
            #expect(screen.searchText == "[2J]0;owned", "ESC and BEL cannot be typed")
            #expect(screen.notice?.text == "Control characters cannot be typed here; nothing was changed.")
            _ = screen.handle(.control("u"))
            Fixtures.type(Fixtures.tenKilobytes, into: screen)
            #expect(screen.searchText?.count == VisitorsScreen.searchLimit)
            #expect(screen.notice?.text == "A search takes at most 200 characters; the rest was not typed.")
            _ = screen.handle(.control("u"))
            Fixtures.type("\u{202E}" + Fixtures.wide + Fixtures.combiningStack, into: screen)
            let canvas = Fixtures.render(screen, width: 30, height: 6)
            #expect(canvas.line(4).hasPrefix("Search: "))
            #expect(canvas.line(4).count <= 30)
            #expect(!canvas.text.contains("\u{202E}"), "the bidi override is spelled out, not drawn")
            _ = screen.handle(.enter)
            #expect(services.queries.last?.search == "\u{202E}" + Fixtures.wide + Fixtures.combiningStack,
                    "sent as typed: the server matches it as text")
            #expect(Fixtures.render(screen, width: 200, height: 6).line(0).contains("<U+202E>"))
        }
    }

    @Test func movingAndEnterOpenTheSelectedVisitor() {
        withScreen(Self.three) { screen, _, _ in
            #expect(screen.handle(.up) == .none)
            #expect(screen.handle(.down) == .redraw && screen.selection == 1)
            #expect(screen.handle(.end) == .redraw && screen.selection == 2)
            #expect(screen.handle(.enter) == .openVisitor(id: "v3"))
            #expect(screen.handle(.home) == .redraw)
            #expect(screen.handle(.enter) == .openVisitor(id: "v1"))
            #expect(screen.handle(.character("x")) == .none)
        }
        withScreen([]) { screen, _, _ in
            #expect(screen.handle(.enter) == .none)
            #expect(Fixtures.render(screen, width: 80, height: 6).line(1) == "No visitors today or later. Press n to register one.")
            _ = screen.handle(.character("f"))
            #expect(Fixtures.render(screen, width: 80, height: 6).line(1) == "No visitor matches. Press f or / to change the filter.")
        }
    }

    @Test func offlineTheListSaysHowOldAndAFailedReloadKeepsWhatIsShown() {
        withScreen(Self.three, fromCache: true, updatedAt: Fixtures.now.addingTimeInterval(-300)) { screen, services, _ in
            #expect(Fixtures.render(screen, width: 80, height: 10).line(1) == "Offline: showing the list as it was 5 min ago.")
            services.visitorsResult = .failure(.offline("no route to host"))
            _ = screen.handle(.character("r"))
            #expect(screen.visitors.count == 3)
            let canvas = Fixtures.render(screen, width: 200, height: 10)
            #expect(canvas.line(2) == "Could not load the visitors. The server cannot be reached (no route to host); try again when it is back.")
        }
        let services = FakeVisitorsServices()
        services.visitorsResult = .failure(.offline("no route to host"))
        let screen = VisitorsScreen(services: services, clock: { Fixtures.now })
        _ = screen.appear()
        #expect(!Fixtures.render(screen, width: 120, height: 6).text.contains("Loading"))
    }

    @Test func eventsKeepTheShownVisitorsCurrentAndAGapReloads() {
        withScreen(Self.three) { screen, services, _ in
            var arrived = Self.three[0]
            arrived.status = .checkedIn
            #expect(screen.receive(Fixtures.event(.visitorArrived, arrived)) == .redraw)
            #expect(screen.visitors[0].status == .checkedIn)
            #expect(screen.receive(Fixtures.event(.visitorArrived, Fixtures.listed(9))) == .none, "not shown: the next read has it")
            let reads = services.queries.count
            #expect(screen.receive(ServerEvent(id: 5, kindName: EventKind.streamGap.rawValue, data: "{}")) == .redraw)
            #expect(services.queries.count == reads + 1)
            #expect(screen.receive(ServerEvent(id: 6, kindName: "visitor.arrived", data: "{not json")) == .none)
        }
    }

    @Test func theListScrollsOnAShortTerminalAndNothingOverflowsTheWidth() {
        let many = (1...40).map { Fixtures.listed($0, name: "Visitor \($0) " + Fixtures.wide + Fixtures.escapeSequence) }
        withScreen(many) { screen, _, _ in
            _ = screen.handle(.end)
            for (width, height) in [(80, 8), (20, 4), (5, 2), (1, 1), (0, 0)] {
                let canvas = Fixtures.render(screen, width: width, height: height)
                for y in 0..<height { #expect(canvas.line(y).count <= width) }
                #expect(!canvas.text.contains("\u{1B}"))
            }
            let canvas = Fixtures.render(screen, width: 80, height: 8)
            #expect(canvas.line(6).hasPrefix(pad("18:06", 13) + "Visitor 40 李小龍🙂\\x…"), "the last row is in view, spelled out")
        }
    }

    @Test func everyKeyIsInTheHelp() {
        withScreen(Self.three) { screen, _, _ in
            let keys = screen.keyHelp.map(\.key).joined(separator: " ")
            for key in ["Enter", "n", "f, F", "/", "r"] { #expect(keys.contains(key)) }
            _ = screen.handle(.character("/"))
            #expect(screen.keyHelp.map(\.key).contains("Esc"))
        }
    }
}
