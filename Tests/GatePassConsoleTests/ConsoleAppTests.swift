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
        app.status = .init(who: "Ana Approver", role: "APPROVER", server: "http://gate", online: false, queued: 2)
        let canvas = app.render(width: 80, height: 10)
        #expect(canvas.line(9).contains("Ana Approver (APPROVER)") && canvas.line(9).contains("OFFLINE  2 queued"))
        #expect(canvas.line(0).contains("1 Approvals") && canvas.line(1) == "screen Approvals")
        for (width, height) in [(0, 0), (1, 1), (5, 2), (80, 1)] { _ = app.render(width: width, height: height) }
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
