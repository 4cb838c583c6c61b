import Foundation
import GatePassCore
import Testing
@testable import GatePassConsole

/// A screen that records what reached it.
final class RecordingScreen: ConsoleScreen {
    let title: String
    var keys: [Key] = []
    var appearances = 0
    var events: [ServerEvent] = []
    var capturing = false
    var answer: ScreenAction = .redraw
    init(_ title: String) { self.title = title }
    var keyHelp: [(key: String, action: String)] { [("x", "do the \(title) thing")] }
    var isCapturingText: Bool { capturing }
    func render(into canvas: inout Canvas, area: Area) { canvas.put("screen \(title)", x: area.x, y: area.y) }
    func handle(_ key: Key) -> ScreenAction { keys.append(key); return answer }
    func receive(_ event: ServerEvent) -> ScreenAction { events.append(event); return .alert }
    func appear() -> ScreenAction { appearances += 1; return .none }
    var tickAnswer: ScreenAction = .none
    var ticks = 0
    func tick(now: Date) -> ScreenAction { ticks += 1; return tickAnswer }
}

@Suite struct ConsoleAppTests {
    func app() -> (ConsoleApp, [RecordingScreen], () -> RecordingScreen?) {
        let screens = [RecordingScreen("Approvals"), RecordingScreen("History"), RecordingScreen("More")]
        var detail: RecordingScreen?
        let app = ConsoleApp(factory: .init(tabs: { screens }, visitorDetail: { id in
            let screen = RecordingScreen("Visitor \(id)")
            detail = screen
            return screen
        }))
        return (app, screens, { detail })
    }

    @Test func digitsTabAndShiftTabSwitchTabs() {
        let (app, screens, _) = app()
        #expect(app.selectedTab == 0 && screens[0].appearances == 1)
        app.handle(.character("3"))
        #expect(app.selectedTab == 2 && screens[2].appearances == 1)
        app.handle(.tab)
        #expect(app.selectedTab == 0)
        app.handle(.backTab)
        #expect(app.selectedTab == 2)
        app.handle(.character("9"))   // no such tab
        #expect(app.selectedTab == 2)
        #expect(screens.allSatisfy { $0.keys.isEmpty }, "shell keys never reach screens")
    }

    @Test func detailOpensOverTheListAndEscClosesIt() {
        let (app, screens, detail) = app()
        screens[0].answer = .openVisitor(id: "v-1")
        app.handle(.enter)
        #expect(app.current === detail() && detail()?.title == "Visitor v-1")
        // Inside a detail, digits and q go to the screen, not the shell.
        app.handle(.character("q"))
        app.handle(.character("2"))
        #expect(!app.wantsQuit && app.selectedTab == 0 && detail()?.keys == [.character("q"), .character("2")])
        detail()?.answer = .back
        app.handle(.escape)
        #expect(app.current === screens[0] && screens[0].appearances == 2)
    }

    @Test func qQuitsFromATabAndCtrlCFromAnywhere() {
        let (app, screens, _) = app()
        screens[0].capturing = true
        app.handle(.character("q"))
        #expect(!app.wantsQuit && screens[0].keys == [.character("q")], "a text field gets q")
        app.handle(.control("c"))
        #expect(app.wantsQuit)
        let (other, _, _) = self.app()
        other.handle(.character("q"))
        #expect(other.wantsQuit)
    }

    @Test func helpListsTheScreensKeysAndAnyKeyClosesIt() {
        let (app, _, _) = app()
        app.handle(.character("?"))
        let text = app.render(width: 80, height: 20).text
        #expect(text.contains("Keys of Approvals") && text.contains("do the Approvals thing") && text.contains("switch tabs"))
        app.handle(.character("x"))
        #expect(!app.showingHelp && !app.render(width: 80, height: 20).text.contains("Keys of"))
    }

    @Test func eventsReachEveryTabAndRingTheBell() {
        let (app, screens, _) = app()
        let bell = app.receive(ServerEvent(id: 7, kindName: "visitor.awaiting", data: "{}"))
        #expect(bell && screens.allSatisfy { $0.events.count == 1 })
    }

    @Test func theStatusLineIsAlwaysThereAndTinyTerminalsDoNotCrash() {
        let (app, _, _) = app()
        app.status = .init(who: "Ana Approver", role: "APPROVER", server: "http://gate", queued: 2)
        app.connection.serverUnreachable(at: Date())
        let canvas = app.render(width: 120, height: 10)
        #expect(canvas.line(9).contains("Ana Approver (APPROVER)")
                && canvas.line(9).contains("OFFLINE · no answer since the console started  2 queued"))
        #expect(canvas.line(0).contains("1 Approvals") && canvas.line(1) == "screen Approvals")
        for (width, height) in [(0, 0), (1, 1), (5, 2), (80, 1)] { _ = app.render(width: width, height: height) }
    }

    /// The status line and the More tab read one connection: whatever the state, both say
    /// the same, with the data's age when offline or when the stream has been away a while.
    @Test func theStatusLineAndTheMoreTabSayTheSameInEveryState() {
        let clock = TestClock()
        let connection = ConsoleConnection(start: clock.now)
        let more = MoreScreen(services: FakeMoreServices(), clock: clock.function, connection: connection)
        let app = ConsoleApp(factory: .init(tabs: { [RecordingScreen("Approvals"), more] }, visitorDetail: { _ in more },
                                            clock: clock.function), connection: connection)
        app.status = .init(who: "Ana Pop", role: "OWNER", server: "http://gate.test")
        app.handle(.character("2"))
        /// (status line, the More tab's State line, whether both are drawn as a warning).
        func shown() -> (footer: String, state: String, warning: Bool) {
            let canvas = app.render(width: 120, height: 24)
            let row = (0..<24).first { canvas.line($0).hasPrefix("  State") } ?? 0
            return (canvas.line(23), String(canvas.line(row).dropFirst(16)),
                    canvas[0, 23].style.role == .warning && canvas[16, row].style.role == .warning)
        }
        func expectFooter(_ words: String, state: String, warning: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
            let now = shown()
            #expect(now.footer == "Ana Pop (OWNER)  http://gate.test  \(words)", sourceLocation: sourceLocation)
            #expect(now.state == state, sourceLocation: sourceLocation)
            #expect(now.warning == warning, sourceLocation: sourceLocation)
        }
        expectFooter("online", state: "online", warning: false)
        connection.streamChanged(connected: true, at: clock.now)
        expectFooter("live", state: "live: new requests and changes show as they happen", warning: false)
        // The server goes away: the first request that gets no answer says so, in both places;
        // the data is as old as the moment the live stream broke off.
        clock.advance(5)
        connection.streamChanged(connected: false, at: clock.now)
        connection.serverUnreachable(at: clock.now)
        clock.advance(20)
        expectFooter("OFFLINE · no answer for 20 s", state: "offline · no answer for 20 s: changes queue and are sent when it is back",
                     warning: true)
        clock.advance(100)
        expectFooter("OFFLINE · no answer for 2 min", state: "offline · no answer for 2 min: changes queue and are sent when it is back",
                     warning: true)
        // Back: a request answered; the stream, away since the server went, not yet.
        connection.serverAnswered(at: clock.now)
        expectFooter("online · not live for 2 min", state: "online · not live for 2 min: lists change only when read again (r, g)",
                     warning: true)
        connection.streamChanged(connected: true, at: clock.now)
        expectFooter("live", state: "live: new requests and changes show as they happen", warning: false)
        // A stream that drops and comes back within seconds is not worth a word; one that stays away is.
        connection.streamChanged(connected: false, at: clock.now)
        clock.advance(10)
        expectFooter("online", state: "online", warning: false)
        clock.advance(30)
        expectFooter("online · not live for 40 s", state: "online · not live for 40 s: lists change only when read again (r, g)",
                     warning: true)
        connection.streamChanged(connected: true, at: clock.now)
        expectFooter("live", state: "live: new requests and changes show as they happen", warning: false)
    }

    @Test func ticksReachEveryTabAndOpenScreenAndSayWhetherToRedrawOrRing() {
        let (app, screens, detail) = app()
        #expect(app.tick(now: Date()) == (redraw: false, bell: false))
        #expect(screens.allSatisfy { $0.ticks == 1 }, "hidden tabs tick too (highlights fade, counters refresh)")
        screens[2].tickAnswer = .redraw
        #expect(app.tick(now: Date()) == (redraw: true, bell: false))
        screens[2].tickAnswer = .alert
        #expect(app.tick(now: Date()) == (redraw: true, bell: true))
        screens[2].tickAnswer = .none
        // A tick may act like a key: open a visitor, then that screen ticks as well.
        screens[1].tickAnswer = .openVisitor(id: "v-9")
        #expect(app.tick(now: Date()).redraw)
        screens[1].tickAnswer = .none
        #expect(detail()?.title == "Visitor v-9" && app.stack.count == 1)
        _ = app.tick(now: Date())
        #expect(detail()?.ticks == 1)
    }

    @Test func aMessageScreenSaysItsLinesAndGoesBackOnEscOrEnter() {
        let message = MessageScreen(title: "Visitor", lines: ["This visitor cannot be opened.", "Refused: not found."])
        var canvas = Canvas(width: 40, height: 8)
        message.render(into: &canvas, area: Area(x: 0, y: 0, width: 40, height: 8))
        #expect(canvas.line(0) == "Visitor")
        #expect(canvas.line(2) == "This visitor cannot be opened.")
        #expect(canvas.line(3) == "Refused: not found.")
        #expect(canvas.line(7) == "Esc: back")
        #expect(message.handle(.character("a")) == .none)
        #expect(message.handle(.escape) == .back)
        #expect(message.handle(.enter) == .back)
        // A tiny area draws what fits without trapping.
        var tiny = Canvas(width: 3, height: 1)
        message.render(into: &tiny, area: Area(x: 0, y: 0, width: 3, height: 1))
        #expect(tiny.line(0) == "Vi…", "cut with an ellipsis")
    }

    @Test func aSessionChangeRebuildsTheTabsAndCountsAGeneration() {
        let (app, screens, _) = app()
        let first = app.sessionGeneration
        app.handle(.character("2"))
        app.handle(.character("x"))   // an ordinary key: same session
        #expect(app.sessionGeneration == first)
        screens[1].answer = .sessionChanged
        app.handle(.character("x"))
        #expect(app.sessionGeneration == first + 1, "the driver refreshes the status line on this")
        #expect(app.selectedTab == 0 && app.stack.isEmpty)
    }
}
