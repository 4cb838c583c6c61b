import Foundation
import GatePassCore
import Testing
@testable import GatePassConsole

@Suite struct ApprovalsScreenTests {
    func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: width - text.count) }

    /// An approvals screen over `visitors`, loaded, with a clock the test moves.
    func withScreen(_ visitors: [Visitor], fromCache: Bool = false, updatedAt: Date = Fixtures.now,
                    _ body: (ApprovalsScreen, FakeConsoleServices, TestClock) throws -> Void) rethrows {
        let services = FakeConsoleServices()
        services.approvals = .success(ConsoleRead(value: visitors, updatedAt: updatedAt, fromCache: fromCache))
        let clock = TestClock()
        let screen = ApprovalsScreen(services: services, clock: clock.function)
        #expect(screen.appear() == .redraw)
        try body(screen, services, clock)
    }

    static let three = [Fixtures.visitor(1, name: "Old One", minutesAgo: 90),
                        Fixtures.visitor(2, name: "New One", company: "Bolt", host: "Maria", minutesAgo: 3),
                        Fixtures.visitor(3, name: "Mid One", minutesAgo: 30)]

    @Test func listsNewestRequestFirstWithNameCompanyHostAndWaitingTime() {
        withScreen(Self.three) { screen, _, _ in
            #expect(screen.visitors.map(\.id) == ["v2", "v3", "v1"])
            let canvas = Fixtures.render(screen, width: 80, height: 10)
            #expect(canvas.line(0) == "Awaiting approval (3)")
            // 80 columns: waiting 8 on the right, then name 28, company 21, host 23.
            #expect(canvas.line(1) == pad("Name", 28) + pad("Company", 21) + pad("Host", 23) + " Waiting")
            #expect(canvas.line(2) == pad("New One", 28) + pad("Bolt", 21) + pad("Maria", 23) + "   3 min")
            #expect(canvas.line(3).hasPrefix("Mid One ") && canvas.line(3).hasSuffix("30 min"))
            #expect(canvas.line(4).hasSuffix(" 1 h"))
        }
    }

    /// `o` puts the longest wait at the top (and back); the help names the key; the selection
    /// stays on its visitor; a live arrival then joins at the bottom, and a reload keeps the order.
    @Test func oShowsTheLongestWaitFirstAndBack() {
        withScreen(Self.three) { screen, services, _ in
            #expect(screen.keyHelp.contains { $0.key == "o" && $0.action.contains("oldest") })
            _ = screen.handle(.down)   // Mid One
            #expect(screen.handle(.character("o")) == .redraw)
            #expect(screen.visitors.map(\.id) == ["v1", "v3", "v2"] && screen.selectedVisitor?.id == "v3")
            var canvas = Fixtures.render(screen, width: 80, height: 10)
            #expect(canvas.line(0) == "Awaiting approval (3) · oldest first (o: newest first)")
            #expect(canvas.line(2).hasPrefix("Old One ") && canvas.line(2).hasSuffix(" 1 h"))
            _ = screen.receive(Fixtures.event(.visitorAwaiting, Fixtures.visitor(4, name: "Just Now", minutesAgo: 0)))
            #expect(screen.visitors.map(\.id) == ["v1", "v3", "v2", "v4"], "the newest request waits least: at the bottom")
            services.approvals = .success(ConsoleRead(value: Self.three, updatedAt: Fixtures.now, fromCache: false))
            _ = screen.handle(.character("r"))
            #expect(screen.visitors.map(\.id) == ["v1", "v3", "v2"])
            #expect(screen.handle(.character("o")) == .redraw)
            #expect(screen.visitors.map(\.id) == ["v2", "v3", "v1"] && screen.selectedVisitor?.id == "v3")
            canvas = Fixtures.render(screen, width: 80, height: 10)
            #expect(canvas.line(0) == "Awaiting approval (3)")
        }
    }

    @Test func theSelectedRowIsReversedAcrossTheWholeWidth() {
        withScreen(Self.three) { screen, _, _ in
            var canvas = Fixtures.render(screen, width: 60, height: 10)
            #expect((0..<60).allSatisfy { canvas[$0, 2].style == .selected })
            #expect(!canvas[0, 3].style.reverse)
            _ = screen.handle(.down)
            canvas = Fixtures.render(screen, width: 60, height: 10)
            #expect(canvas[59, 3].style.reverse && !canvas[0, 2].style.reverse)
        }
    }

    @Test func arrowsJKHomeEndAndPagesMoveTheSelectionWithinTheList() {
        withScreen((1...30).map { Fixtures.visitor($0, minutesAgo: Double($0)) }) { screen, _, _ in
            _ = Fixtures.render(screen, width: 60, height: 12)   // 10 rows of list
            #expect(screen.handle(.up) == .none && screen.selection == 0)
            #expect(screen.handle(.character("k")) == .none)
            #expect(screen.handle(.down) == .redraw && screen.selection == 1)
            #expect(screen.handle(.character("j")) == .redraw && screen.selection == 2)
            #expect(screen.handle(.character("k")) == .redraw && screen.selection == 1)
            #expect(screen.handle(.up) == .redraw && screen.selection == 0)
            #expect(screen.handle(.pageDown) == .redraw && screen.selection == 10)
            #expect(screen.handle(.pageUp) == .redraw && screen.selection == 0)
            #expect(screen.handle(.end) == .redraw && screen.selection == 29)
            #expect(screen.handle(.down) == .none && screen.selection == 29)
            #expect(screen.handle(.pageDown) == .none)
            let canvas = Fixtures.render(screen, width: 60, height: 12)
            #expect(canvas.line(11).hasPrefix("Visitor 30 ") && canvas[0, 11].style == .selected, "the selection scrolls into view")
            #expect(screen.handle(.home) == .redraw && screen.selection == 0)
            #expect(Fixtures.render(screen, width: 60, height: 12).line(2).hasPrefix("Visitor 1 "))
            #expect(screen.handle(.character("x")) == .none && screen.handle(.escape) == .none)
            #expect(screen.handle(.resize) == .redraw)
        }
    }

    @Test func enterOpensTheSelectedVisitor() {
        withScreen(Self.three) { screen, _, _ in
            _ = screen.handle(.end)
            #expect(screen.handle(.enter) == .openVisitor(id: "v1"))
        }
    }

    @Test func anEmptyQueueSaysSo() {
        withScreen([]) { screen, _, _ in
            #expect(screen.handle(.enter) == .none)
            #expect(screen.handle(.down) == .none && screen.handle(.end) == .none)
            let canvas = Fixtures.render(screen, width: 60, height: 6)
            #expect(canvas.text == "Awaiting approval (0)\nNo visitors are waiting for approval.\nNew requests appear here as they arrive.\n\n\n")
        }
    }

    @Test func offlineTheListComesFromTheCacheAndSaysHowOld() {
        withScreen(Self.three, fromCache: true, updatedAt: Fixtures.now.addingTimeInterval(-300)) { screen, _, clock in
            var canvas = Fixtures.render(screen, width: 80, height: 10)
            #expect(canvas.line(1) == "Offline: showing the list as it was 5 min ago.")
            #expect(canvas[0, 1].style.role == .warning)
            #expect(canvas.line(3).hasPrefix("New One"))
            clock.advance(2 * 3600)
            canvas = Fixtures.render(screen, width: 80, height: 10)
            #expect(canvas.line(1) == "Offline: showing the list as it was 2 h ago.")
        }
    }

    @Test func aFailedReloadKeepsTheListAndSaysWhy() {
        withScreen(Self.three) { screen, services, _ in
            _ = screen.handle(.down)
            services.approvals = .failure(.offline("connection refused"))
            #expect(screen.handle(.character("r")) == .redraw)
            #expect(services.calls == ["pendingApprovals", "pendingApprovals"])
            #expect(screen.visitors.count == 3 && screen.selection == 1)
            let canvas = Fixtures.render(screen, width: 120, height: 10)
            #expect(canvas.line(1) == "Could not load the list. The server cannot be reached (connection refused); try again when it is back.")
            #expect(canvas[0, 1].style.role == .danger)
        }
    }

    @Test func nothingLoadedAndOfflineSaysSoWithoutAnEmptyState() {
        let services = FakeConsoleServices()
        services.approvals = .failure(.offline("no route to host"))
        let screen = ApprovalsScreen(services: services, clock: TestClock().function)
        #expect(Fixtures.render(screen).line(1) == "Loading…")
        _ = screen.appear()
        let text = Fixtures.render(screen, width: 120).text
        #expect(text.contains("Could not load the list. The server cannot be reached (no route to host)"))
        #expect(!text.contains("No visitors are waiting"))
    }

    @Test func aLiveArrivalGoesToTheTopHighlightedAndRingsThenTurnsPlainAfterThreeSeconds() {
        withScreen(Self.three) { screen, _, clock in
            _ = screen.handle(.down)   // "Mid One" selected
            let walkIn = Fixtures.visitor(9, name: "Live Arrival", minutesAgo: 0)
            #expect(screen.receive(Fixtures.event(.visitorAwaiting, walkIn)) == .alert)
            #expect(screen.visitors.first?.id == "v9")
            #expect(screen.selectedVisitor?.id == "v3", "the selection stays on the same visitor")
            var canvas = Fixtures.render(screen, width: 60, height: 10)
            #expect(canvas.line(0) == "Awaiting approval (4)")
            #expect(canvas.line(2).hasPrefix("Live Arrival") && canvas.line(2).hasSuffix("<1 min"))
            #expect(canvas[0, 2].style == Canvas.Style(.accent, bold: true) && canvas[59, 2].style.bold)
            #expect(screen.isHighlighted("v9"))
            #expect(screen.nextChangeAt == Fixtures.now.addingTimeInterval(3))
            clock.advance(2.9)
            #expect(Fixtures.render(screen, width: 60, height: 10)[0, 2].style.bold)
            clock.advance(0.1)
            canvas = Fixtures.render(screen, width: 60, height: 10)
            #expect(canvas[0, 2].style == .plain && !screen.isHighlighted("v9"))
            #expect(screen.nextChangeAt == nil)
        }
    }

    @Test func aWalkInRequestAlsoArrivesAndARepeatMovesToTheTopWithoutADuplicate() {
        withScreen(Self.three) { screen, _, _ in
            var walkIn = Fixtures.visitor(1, name: "Old One Again", minutesAgo: 0)
            walkIn.walkIn = true
            #expect(screen.receive(Fixtures.event(.requestCreated, walkIn)) == .alert)
            #expect(screen.visitors.map(\.id) == ["v1", "v2", "v3"])
            #expect(screen.visitors.first?.name == "Old One Again")
            var decided = Fixtures.visitor(7)
            decided.status = .approved
            #expect(screen.receive(Fixtures.event(.visitorAwaiting, decided)) == .none, "only pending visitors are listed")
            #expect(screen.visitors.count == 3)
        }
    }

    @Test func decidedArrivedAndDepartedVisitorsLeaveTheList() {
        withScreen(Self.three) { screen, _, _ in
            _ = screen.handle(.end)
            var visitor = Self.three[0]
            visitor.status = .approved
            #expect(screen.receive(Fixtures.event(.visitorDecided, visitor)) == .redraw)
            #expect(screen.visitors.map(\.id) == ["v2", "v3"])
            #expect(screen.selection == 1, "the selection falls back to the nearest row")
            #expect(screen.receive(Fixtures.event(.visitorArrived, Self.three[1])) == .redraw)
            #expect(screen.receive(Fixtures.event(.visitorDeparted, Self.three[2])) == .redraw)
            #expect(screen.visitors.isEmpty)
            #expect(screen.receive(Fixtures.event(.visitorDecided, Self.three[2])) == .none)
            #expect(Fixtures.render(screen).line(1) == "No visitors are waiting for approval.")
        }
    }

    @Test func aStreamGapReloadsAndOtherEventsAreIgnored() {
        withScreen(Self.three) { screen, services, _ in
            services.approvals = .success(ConsoleRead(value: [Fixtures.visitor(5)], updatedAt: Fixtures.now, fromCache: false))
            #expect(screen.receive(ServerEvent(id: nil, kindName: "stream.gap", data: #"{"oldestKeptId":10}"#)) == .redraw)
            #expect(screen.visitors.map(\.id) == ["v5"])
            #expect(services.calls.count == 2)
            #expect(screen.receive(ServerEvent(id: 3, kindName: "visitor.awaiting", data: "{not json")) == .none)
            #expect(screen.receive(ServerEvent(id: 4, kindName: "visitor.teleported", data: "{}")) == .none)
            #expect(screen.receive(ServerEvent(id: 5, kindName: "push.test", data: #"{"message":"hi","sentAt":"2025-01-01T00:00:00Z"}"#)) == .none)
            #expect(screen.visitors.map(\.id) == ["v5"])
        }
    }

    @Test func reloadDropsVisitorsThatAreNoLongerPendingAndKeepsTheSelection() {
        withScreen(Self.three) { screen, services, _ in
            _ = screen.handle(.down)   // v3
            services.approvals = .success(ConsoleRead(value: [Self.three[2], Self.three[0], Fixtures.visitor(8, status: .approved)],
                                                      updatedAt: Fixtures.now, fromCache: false))
            _ = screen.handle(.character("r"))
            #expect(screen.visitors.map(\.id) == ["v3", "v1"])
            #expect(screen.selectedVisitor?.id == "v3")
        }
    }

    @Test func decisionsFromTheDetailUpdateTheList() {
        withScreen(Self.three) { screen, _, _ in
            screen.noteDecision(visitorId: "v2", outcome: .applied(Self.three[1]))
            #expect(screen.visitors.map(\.id) == ["v3", "v1"])
            screen.noteDecision(visitorId: "v3", outcome: .queued)
            #expect(screen.isQueued("v3"))
            #expect(Fixtures.render(screen, width: 80).line(2).contains("(decision queued) Ion"))
            screen.noteDecision(visitorId: "v1", outcome: .refused("CONFLICT"))
            #expect(!screen.isQueued("v1") && screen.visitors.count == 2)
        }
    }

    @Test func waitingTimesReadAsMinutesHoursAndDays() {
        #expect(ConsoleFormat.waiting(since: Fixtures.now, now: Fixtures.now) == "<1 min")
        #expect(ConsoleFormat.waiting(since: Fixtures.now.addingTimeInterval(60), now: Fixtures.now) == "<1 min")
        #expect(ConsoleFormat.waiting(since: Fixtures.now.addingTimeInterval(-180), now: Fixtures.now) == "3 min")
        #expect(ConsoleFormat.waiting(since: Fixtures.now.addingTimeInterval(-7_300), now: Fixtures.now) == "2 h")
        #expect(ConsoleFormat.waiting(since: Fixtures.now.addingTimeInterval(-90_000), now: Fixtures.now) == "1 d")
        #expect(ConsoleFormat.age(since: Fixtures.now.addingTimeInterval(-40), now: Fixtures.now) == "40 s")
    }

    @Test func hostileNamesAndCompaniesStayOnTheirRow() {
        let visitors = [Fixtures.visitor(1, name: "Evil\u{1B}[2J\nName\u{7}", company: String(repeating: "C", count: 10_000)),
                        Fixtures.visitor(2, name: "", company: "", host: "", minutesAgo: 1),
                        Fixtures.visitor(3, name: "No Company", company: nil, host: nil, minutesAgo: 2)]
        withScreen(visitors) { screen, _, _ in
            let canvas = Fixtures.render(screen, width: 60, height: 8)
            #expect(canvas.line(2) == String(repeating: " ", count: 55) + "1 min", "empty strings leave empty cells")
            #expect(canvas.line(3).hasPrefix("No Company") && canvas.line(3).hasSuffix("2 min"))
            let evil = canvas.line(4)
            // 60 columns: name 20, company 15, host 17, waiting 8.
            #expect(evil == pad("Evil\\x1b[2J\\nName\\…", 20) + pad(String(repeating: "C", count: 13) + "…", 15) + pad("Ion", 17) + "   5 min")
            #expect(!canvas.text.contains("\u{1B}") && canvas.text.split(separator: "\n", omittingEmptySubsequences: false).count == 8)
        }
    }

    @Test func tenThousandVisitorsRenderOnlyWhatFits() {
        let many = (0..<10_000).map { Fixtures.visitor($0, minutesAgo: Double($0) / 10) }
        withScreen(many) { screen, _, _ in
            var canvas = Fixtures.render(screen, width: 80, height: 24)
            #expect(canvas.line(0) == "Awaiting approval (10000)")
            #expect(canvas.line(2).hasPrefix("Visitor 0 ") && canvas.line(23).hasPrefix("Visitor 21 "))
            _ = screen.handle(.end)
            canvas = Fixtures.render(screen, width: 80, height: 24)
            #expect(canvas.line(23).hasPrefix("Visitor 9999 ") && canvas[0, 23].style == .selected)
            #expect(canvas.line(2).hasPrefix("Visitor 9978 "))
            #expect(screen.top == 9978)
        }
    }

    @Test func tinyAreasNeverCrashAndNeverSpillOver() {
        withScreen(Self.three, fromCache: true) { screen, _, _ in
            _ = screen.receive(Fixtures.event(.visitorAwaiting, Fixtures.visitor(4, minutesAgo: 0)))
            for width in 0...10 {
                for height in 0...10 {
                    var canvas = Canvas(width: 12, height: 12)
                    screen.render(into: &canvas, area: Area(x: 1, y: 1, width: width, height: height))
                    for y in 0..<12 {
                        #expect(canvas.line(y).count <= 1 + width)
                        if y == 0 || y > height { #expect(canvas.line(y).isEmpty) }
                        #expect(canvas[0, y].character == " " && canvas[0, y].style == .plain)
                    }
                    if width >= 1, height >= 1 { #expect(canvas.line(1).hasSuffix("…")) }
                }
            }
            _ = screen.handle(.end)
            #expect(screen.selection == 3)
        }
    }

    @Test func keyHelpListsEveryKey() {
        let keys = ApprovalsScreen(services: FakeConsoleServices()).keyHelp.map(\.key)
        #expect(keys == ["Up, k", "Down, j", "PgUp, PgDn", "Home, End", "Enter", "o", "r"])
    }

    @Test func ticksRedrawWhenAHighlightEndsAndWhenTheMinuteTurns() {
        withScreen(Self.three) { screen, _, clock in
            // The first tick only learns the minute; an idle list then stays quiet.
            clock.now = Date(timeIntervalSince1970: 1_750_000_040)   // 20 s into a minute
            #expect(screen.tick(now: clock.now) == .none)
            clock.advance(10)
            #expect(screen.tick(now: clock.now) == .none)
            // A new pending visitor is highlighted; the tick after the highlight ends redraws once.
            #expect(screen.receive(Fixtures.event(.visitorAwaiting, Fixtures.visitor(9, name: "Live", minutesAgo: 0))) == .alert)
            #expect(screen.tick(now: clock.now) == .none)
            clock.advance(4)
            #expect(screen.tick(now: clock.now) == .redraw)
            #expect(screen.tick(now: clock.now) == .none)
            // The minute turns: waiting times change.
            clock.advance(30)
            #expect(screen.tick(now: clock.now) == .redraw)
            #expect(screen.tick(now: clock.now) == .none)
        }
    }

    @Test func aPartialPageSaysMoreAreWaitingInsteadOfMiscounting() {
        let services = FakeConsoleServices()
        services.approvals = .success(ConsoleRead(value: Self.three, updatedAt: Fixtures.now, fromCache: false, hasMore: true))
        let screen = ApprovalsScreen(services: services, clock: TestClock().function)
        _ = screen.appear()
        #expect(screen.hasMore)
        #expect(Fixtures.render(screen, width: 120, height: 10).line(0)
                == "Awaiting approval (3 shown; more are waiting; the list refills as these are decided)")
    }
}
