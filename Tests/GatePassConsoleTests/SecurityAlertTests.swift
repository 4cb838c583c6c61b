import Foundation
import GatePassCore
import Testing
@testable import GatePassConsole

/// The `security.alert` pop-up of the shell, and the tab bar once the governance tabs make it long.
@Suite struct SecurityAlertTests {
    func app(_ titles: [String] = ["Approvals", "History", "More"], zone: String = "Europe/Bucharest") -> (ConsoleApp, [RecordingScreen]) {
        let screens = titles.map(RecordingScreen.init)
        let clock = TestClock()
        let app = ConsoleApp(factory: .init(tabs: { screens }, visitorDetail: { RecordingScreen("Visitor \($0)") },
                                            gateNames: { ["c1": "Main gate"] }, clock: clock.function,
                                            siteClock: { SiteClock(zoneNamed: zone)! }))
        return (app, screens)
    }

    /// The alert's time is the site's, named as the organization names its zone (Foundation
    /// would call `UTC` "GMT"), east and west of UTC.
    @Test(arguments: [("UTC", "15 Jun 2025 15:06 (UTC)"), ("America/Los_Angeles", "15 Jun 2025 08:06 (America/Los_Angeles)")])
    func theAlertsTimeIsInTheSitesZoneByItsName(zone: String, expected: String) {
        let (app, _) = app(zone: zone)
        #expect(app.receive(Fixtures.securityAlert(Fixtures.visitor(3, name: "Mallory"), entryId: "b1", checkpointId: "c1")))
        let canvas = app.render(width: 80, height: 20)
        #expect(Fixtures.row(canvas, containing: "received \(expected)") != nil, "\(canvas.text)")
    }

    @Test func anAlertShowsOverWhateverTabRingsAndStaysUntilEnterOrEsc() {
        let (app, screens) = app()
        app.handle(.character("2"))
        let visitor = Fixtures.visitor(3, name: "Mallory\u{1B}[2J\u{1B}]0;pwned\u{7}", status: .rejected)
        #expect(app.receive(Fixtures.securityAlert(visitor, entryId: "b1", checkpointId: "c1")))
        #expect(screens[1].events.count == 1, "the screens hear it too (the Blocklist keeps its matches)")
        let canvas = app.render(width: 80, height: 20)
        #expect(Fixtures.row(canvas, containing: "SECURITY ALERT") != nil)
        let who = Fixtures.row(canvas, containing: "at Main gate")
        #expect(who.map { canvas.line($0).contains(#"Mallory\x1b[2J\x1b]0;pwned\x07 at Main gate"#) } == true)
        #expect(!canvas.text.contains("\u{1B}") && !canvas.text.contains("\u{7}"))
        #expect(canvas.line(0).contains("2 History"), "the tab bar stays")
        #expect(Fixtures.row(canvas, containing: "received 15 Jun 2025 18:06 (Europe/Bucharest)") != nil, "in the site's zone")
        // A second alert waits behind the first.
        _ = app.receive(Fixtures.securityAlert(Fixtures.visitor(4, name: "Trent"), entryId: "b2", checkpointId: "c-unknown"))
        #expect(Fixtures.row(app.render(width: 80, height: 20), containing: "v: open the visitor · Enter or Esc: dismiss (1 more waiting)") != nil)
        // Keys meant for the screen or the shell do not dismiss it, and do not reach the screen.
        for key: Key in [.character("q"), .character("1"), .tab, .character("?"), .character("x"), .down] { app.handle(key) }
        #expect(app.securityAlerts.count == 2 && !app.wantsQuit && app.selectedTab == 1 && !app.showingHelp)
        #expect(screens[1].keys.isEmpty)
        app.handle(.enter)
        #expect(app.securityAlerts.map(\.visitorName) == ["Trent"] && app.securityAlerts[0].gate == "c-unknown")
        app.handle(.escape)
        #expect(app.securityAlerts.isEmpty && Fixtures.row(app.render(width: 80, height: 20), containing: "SECURITY ALERT") == nil)
        app.handle(.character("x"))
        #expect(screens[1].keys == [.character("x")], "keys reach the screen again")
    }

    @Test func anOfflineConflictSaysWhatTheGateDecidedAndWhatTheServerSays() {
        let (app, _) = app()
        let visitor = Fixtures.visitor(5, name: "Cleo", status: .checkedIn)
        let data = VisitorEventData(visitor: visitor, scanId: "s1", checkpointId: "c1", offlineDecision: .checkedIn,
                                    decision: .cancelled)
        #expect(app.receive(ServerEvent(id: 9, kindName: EventKind.securityAlert.rawValue,
                                        data: String(decoding: try! JSONEncoder().encode(data), as: UTF8.self))))
        let canvas = app.render(width: 80, height: 20)
        #expect(Fixtures.row(canvas, containing: "Admitted offline, but the server says CANCELLED:") != nil, "\(canvas.text)")
        #expect(Fixtures.row(canvas, containing: "Cleo at Main gate") != nil)
        #expect(Fixtures.row(canvas, containing: "A blocked person") == nil)
    }

    @Test func vOpensTheAlertsVisitorOverTheCurrentTab() {
        let (app, _) = app()
        _ = app.receive(Fixtures.securityAlert(Fixtures.visitor(3), entryId: "b1"))
        app.handle(.character("v"))
        #expect(app.securityAlerts.isEmpty && app.current?.title == "Visitor v3" && app.stack.count == 1)
    }

    @Test func ctrlCStillQuitsUnderAnAlertAndALogoutDropsThem() {
        let (app, _) = app()
        _ = app.receive(Fixtures.securityAlert(Fixtures.visitor(3), entryId: "b1"))
        app.handle(.control("c"))
        #expect(app.wantsQuit)
        let (other, screens) = self.app()
        _ = other.receive(Fixtures.securityAlert(Fixtures.visitor(3), entryId: "b1"))
        #expect(other.securityAlerts.count == 1)
        // The session ended (a logout elsewhere): the next user does not inherit the alert.
        screens[0].tickAnswer = .sessionChanged
        _ = other.tick(now: Fixtures.now)
        #expect(other.securityAlerts.isEmpty)
    }

    @Test func otherEventsRaiseNoAlertAndAnUndecodableOneNeither() {
        let (app, _) = app()
        _ = app.receive(Fixtures.event(.visitorArrived, Fixtures.visitor(1)))
        _ = app.receive(ServerEvent(id: 9, kindName: "security.alert", data: "{not json"))
        #expect(app.securityAlerts.isEmpty)
    }

    @Test func aLongTabBarKeepsTheSelectedTitleTheFirstOnesAndTheHint() {
        let titles = ["Approvals", "Scan", "Visitors", "On site", "History", "More", "Blocklist", "Users", "Audit"]
        let (app, _) = app(titles)
        #expect(app.render(width: 140, height: 5).line(0).hasPrefix(" 1 Approvals   2 Scan   3 Visitors "), "all fit at 140")
        app.handle(.character("5"))
        let narrow = app.render(width: 60, height: 5).line(0)
        #expect(narrow.count <= 60 && narrow.contains("1 Approvals") && narrow.contains("5 History") && narrow.contains(" 9 "))
        let wide = app.render(width: 110, height: 5).line(0)
        #expect(wide.contains("6 More") && wide.hasSuffix("? help  q quit") && wide.contains(" 9 "))
        app.handle(.character("9"))
        #expect(app.render(width: 60, height: 5).line(0).contains("9 Audit"), "the selected tab keeps its title")
    }
}
