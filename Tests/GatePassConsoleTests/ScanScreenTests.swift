import Foundation
import GatePassCore
import Testing
@testable import GatePassConsole

@Suite struct ScanScreenTests {
    typealias F = ScanScreenFixtures

    /// A scan screen that has appeared (stats read), with a clock the test moves.
    func withScreen(source: String? = nil,
                    _ body: (ScanScreen, FakeScanServices, TestClock) throws -> Void) rethrows {
        let services = FakeScanServices()
        let clock = TestClock()
        let screen = ScanScreen(services: services, clock: clock.function, sourceDescription: source, siteClock: SiteClock(zoneNamed: "UTC")!)
        #expect(screen.appear() == .redraw)
        try body(screen, services, clock)
    }

    @discardableResult
    func submit(_ text: String, _ screen: ScanScreen) -> ScreenAction {
        Fixtures.type(text, into: screen)
        return screen.handle(.enter)
    }

    func lines(_ canvas: Canvas) -> [String] { (0..<canvas.height).map(canvas.line) }

    /// A row of block letters as `Canvas.line` gives it back: indented, trailing spaces removed.
    func blockRow(_ word: String, _ row: Int) -> String {
        var text = "  " + BlockLetters.rows(word)![row]
        while text.last == " " { text.removeLast() }
        return text
    }

    // MARK: - Layout

    @Test func at80x24TheStatsSourceLargeDecisionFieldAndRecentListAreDrawn() {
        withScreen { screen, services, _ in
            services.answer("K7Q2M9XD", with: F.decision(.checkedIn, F.ana))
            #expect(submit("k7q2-m9xd", screen) == .redraw)
            let canvas = Fixtures.render(screen, width: 80, height: 24)
            let text = lines(canvas)
            #expect(text[0] == "Checked in 12 · Awaiting 3 · Expected 40 · On site 9  · no pass cache")
            #expect(canvas[0, 0].style == .title)
            #expect(text[1] == "No camera: type a short id")
            // The box: caption, five rows of block letters, who, why; coloured as "ok".
            #expect(text[2] == "  ADMITTED · 15:06:40")
            #expect((3...7).allSatisfy { text[$0].hasPrefix("  ") && text[$0].contains("█") })
            #expect((0..<5).allSatisfy { text[3 + $0] == blockRow("ADMITTED", $0) })
            #expect(text[8] == "  Ana Pop (K7Q2M9XD)")
            #expect(text[9] == "  welcome")
            for y in 2...9 {
                #expect(canvas[0, y].style == Canvas.Style(.ok, bold: true, reverse: true))
                #expect(canvas[79, y].style.reverse, "the box spans the width")
            }
            #expect(text[10] == "Short id  _")
            #expect(canvas[10, 10].style.underline)
            #expect(text[11] == ScanScreen.digitsHint)
            #expect(text[12] == "Enter: check in · /: look up · w: walk-in · Esc: recent list · ?: help")
            #expect(text[13] == "Recent (1)")
            #expect(text[14] == "15:06:40  ADMITTED            Ana Pop (K7Q2M9XD) — welcome")
            #expect(canvas[0, 14].style.role == .ok)
        }
    }

    /// The short-id field is a text field: digits typed there go into it, and it says so, with
    /// the way out (Esc, then a number). In the recent list the hint is gone and digits switch tabs.
    @Test func theFieldSaysDigitsGoIntoItAndEscThenANumberSwitchesTabs() {
        let services = FakeScanServices()
        let scan = ScanScreen(services: services, clock: TestClock().function, sourceDescription: nil, siteClock: SiteClock(zoneNamed: "UTC")!)
        let other = RecordingScreen("More")
        let app = ConsoleApp(factory: .init(tabs: { [scan, other] }, visitorDetail: { _ in other }))
        #expect(ScanScreen.digitsHint == "Digits go into this field — Esc, then a number, to switch tabs.")
        #expect(app.render(width: 80, height: 24).text.contains(ScanScreen.digitsHint))
        app.handle(.character("2"))
        #expect(app.selectedTab == 0 && scan.shortIdText == "2", "a digit in the field is part of a short id")
        // With text in the field the first Esc only clears it, and the hint says so.
        #expect(app.render(width: 80, height: 24).text.contains(ScanScreen.digitsHintWithText))
        #expect(ScanScreen.digitsHintWithText == "Digits go into this field — Esc clears it; Esc again, then a number: tabs.")
        app.handle(.escape)   // clears the field
        #expect(app.render(width: 80, height: 24).text.contains(ScanScreen.digitsHint))
        app.handle(.escape)   // leaves it for the recent list
        #expect(!app.render(width: 80, height: 24).text.contains(ScanScreen.digitsHint))
        app.handle(.character("2"))
        #expect(app.selectedTab == 1, "out of the field, digits switch tabs")
        app.handle(.character("?"))
        #expect(app.render(width: 80, height: 24).text.contains("switch tabs (in a text field: Esc first)"))
    }

    @Test func beforeAnyScanTheScreenSaysWhatToDo() {
        withScreen(source: "Camera /dev/video0: starting") { screen, _, _ in
            let text = lines(Fixtures.render(screen))
            #expect(text[1] == "Camera /dev/video0: starting")
            #expect(text[2] == "Show a pass to the camera, or type its short id and press Enter.")
            #expect(text.contains("Recent: none yet in this session"))
        }
    }

    @Test func eachOutcomeHasItsWordAndColour() {
        withScreen { screen, services, _ in
            let cases: [(GateDecision, String, Canvas.Style.Role, ScreenAction)] = [
                (F.decision(.checkedIn, F.ana), "ADMITTED", .ok, .redraw),
                (F.decision(.expired, F.ana), "DENIED", .danger, .alert),
                (F.decision(.awaitingApproval, F.ana), "APPROVAL REQUESTED", .warning, .redraw),
                (GateDecision.queued(code: "K7Q2M9XD"), "QUEUED OFFLINE", .warning, .redraw),
            ]
            for (decision, word, role, action) in cases {
                services.answer("K7Q2M9XD", with: decision)
                #expect(submit("K7Q2M9XD", screen) == action)
                let canvas = Fixtures.render(screen)
                #expect(canvas.line(2).hasPrefix("  \(word) · "))
                #expect(canvas.line(3) == blockRow(word, 0))
                #expect(canvas[0, 2].style.role == role && canvas[0, 2].style.reverse)
                #expect(lines(canvas).contains("  " + decision.reason))
            }
            #expect(screen.recent.map { ScanScreen.headline($0.decision) }
                    == ["QUEUED OFFLINE", "APPROVAL REQUESTED", "DENIED", "ADMITTED"])
        }
    }

    @Test func aTinyTerminalKeepsTheDecisionAndTheFieldAndNeverCrashes() {
        withScreen { screen, services, _ in
            services.answer("K7Q2M9XD", with: F.decision(.checkedIn, F.ana))
            submit("K7Q2M9XD", screen)
            Fixtures.type("AB", into: screen)
            let canvas = Fixtures.render(screen, width: 20, height: 5)
            #expect(lines(canvas) == ["Checked in 12 · Awa…", "No camera: type a s…", "ADMITTED  Ana Pop (…",
                                      "Short id  AB_", "Enter: check in · /…"])
            // Every state, at sizes down to nothing.
            let sizes = [(20, 5), (1, 1), (5, 2), (0, 0), (3, 24), (200, 3), (80, 24)]
            func renderAll() { for (width, height) in sizes { _ = Fixtures.render(screen, width: width, height: height) } }
            renderAll()
            services.answer("QW3RTY45", with: F.decision(.approvalRequired, F.dan))
            _ = screen.handle(.control("u"))
            submit("QW3RTY45", screen)
            renderAll()
            #expect(lines(Fixtures.render(screen, width: 20, height: 5)).contains("Request approval fo…"))
            _ = screen.handle(.character("n"))
            _ = screen.handle(.character("/"))
            services.lookupAnswer = .success([F.ana, F.dan])
            submit("a", screen)
            renderAll()
            _ = screen.handle(.escape)
            _ = screen.handle(.character("w"))
            renderAll()
            #expect(lines(Fixtures.render(screen, width: 20, height: 5)).contains { $0.hasPrefix("> Name") })
            _ = screen.handle(.escape)
            _ = screen.handle(.character("?"))
            renderAll()
        }
    }

    // MARK: - Typing a short id

    @Test func theFieldHasTheKeyboardSoDigitsStartAShortIdInsteadOfSwitchingTabs() {
        let services = FakeScanServices()
        let screen = ScanScreen(services: services, clock: TestClock().function, sourceDescription: nil, siteClock: SiteClock(zoneNamed: "UTC")!)
        let other = RecordingScreen("History")
        let app = ConsoleApp(factory: .init(tabs: { [screen, other] }, visitorDetail: { RecordingScreen($0) }))
        #expect(screen.isCapturingText)
        app.handle(.character("2"))
        app.handle(.character("q"))
        app.handle(.character("w"))
        #expect(app.selectedTab == 0 && !app.wantsQuit)
        #expect(screen.shortIdText == "2qw" && screen.walkIn == nil)
        app.handle(.tab)
        #expect(app.selectedTab == 0 && screen.focus == .recent && !screen.isCapturingText)
        // In the list the shell's keys work again.
        app.handle(.character("2"))
        #expect(app.selectedTab == 1)
        app.handle(.character("1"))
        #expect(app.selectedTab == 0 && screen.focus == .shortId, "coming back to the tab is ready to type")
    }

    @Test func onAnEmptyFieldLowercaseQQuitsAndCapitalsStartAShortId() {
        let screen = ScanScreen(services: FakeScanServices(), clock: TestClock().function, sourceDescription: nil, siteClock: SiteClock(zoneNamed: "UTC")!)
        let app = ConsoleApp(factory: .init(tabs: { [screen] }, visitorDetail: { RecordingScreen($0) }))
        app.handle(.character("Q"))
        app.handle(.character("W"))
        #expect(screen.shortIdText == "QW" && !app.wantsQuit)
        app.handle(.control("u"))
        #expect(screen.shortIdText.isEmpty)
        app.handle(.character("q"))
        #expect(app.wantsQuit)
    }

    @Test func questionMarkShowsTheHelpWithEveryKeyAndAnyKeyClosesIt() {
        withScreen { screen, _, _ in
            Fixtures.type("K7", into: screen)
            #expect(screen.handle(.character("?")) == .redraw)
            #expect(screen.showingHelp && screen.isCapturingText)
            let text = Fixtures.render(screen, width: 100, height: 24).text
            #expect(text.contains("Keys of Scan"))
            for (key, action) in screen.keyHelp {
                #expect(text.contains(key), "\(key) is listed")
                #expect(text.contains(String(action.prefix(40))))
            }
            for key in ["/", "w", "q", "?", "Esc", "Enter", "y, n", "Up, k / Down, j", "Home, End, PgUp, PgDn",
                        "Tab, Shift-Tab", "i, Esc", "Backspace, Ctrl-U", "Q, W", "r, Ctrl-R"] {
                #expect(screen.keyHelp.contains { $0.key == key }, "\(key) in the help")
            }
            #expect(screen.handle(.character("q")) == .redraw)
            #expect(!screen.showingHelp && screen.shortIdText == "K7", "the key that closes the help does nothing else")
        }
    }

    @Test func escapeClearsTheFieldThenLeavesItAndIOrEscapeComesBack() {
        withScreen { screen, _, _ in
            Fixtures.type("AB", into: screen)
            #expect(screen.handle(.escape) == .redraw)
            #expect(screen.shortIdText.isEmpty && screen.focus == .shortId)
            #expect(screen.handle(.escape) == .redraw)
            #expect(screen.focus == .recent && !screen.isCapturingText)
            #expect(Fixtures.render(screen).text.contains("Short id  (Esc or i to type one)"))
            #expect(screen.handle(.character("i")) == .redraw && screen.focus == .shortId)
            _ = screen.handle(.backTab)
            #expect(screen.focus == .recent)
            #expect(screen.handle(.escape) == .redraw && screen.focus == .shortId)
        }
    }

    @Test func aTypedShortIdIsNormalisedTheCrockfordWayBeforeItIsSent() {
        withScreen { screen, services, _ in
            services.answer("K7Q2M9XD", with: F.decision(.checkedIn, F.ana))
            services.answer("11023456", with: F.decision(.checkedIn, F.ana))
            submit("k7q2-m9xd", screen)
            submit("GP1:K7Q2M9XD", screen)
            submit("ilo23456", screen)
            #expect(services.calls == ["stats", "checkIn K7Q2M9XD", "checkIn K7Q2M9XD", "checkIn 11023456"])
            #expect(screen.shortIdText.isEmpty, "a sent short id leaves the field")
            #expect(screen.handle(.backspace) == .none)
        }
    }

    @Test func malformedShortIdsAreRefusedWithAClearMessageNotSentAndKept() {
        withScreen { screen, services, _ in
            for bad in ["K7Q2M9X", "K7Q2M9XDA", "K7Q2M9XU", "GP1:", "GP2:K7Q2M9XD"] {
                _ = screen.handle(.control("u"))
                #expect(submit(bad, screen) == .redraw)
                #expect(screen.shortIdText == bad, "nothing typed is lost")
                #expect(screen.notice?.kind == .error)
                #expect(screen.notice?.text == "“\(bad)” is not a short id: 8 characters from 0–9 and A–Z without U (I, L, O count as 1, 1, 0), like K7Q2M9XD. Nothing was sent.")
            }
            _ = screen.handle(.control("u"))
            #expect(submit("", screen) == .redraw)
            #expect(screen.notice?.text == "Type a short id (8 letters and digits, like K7Q2M9XD), then press Enter.")
            #expect(services.calls == ["stats"], "nothing was sent")
            let canvas = Fixtures.render(screen, width: 120)
            let row = Fixtures.row(canvas, containing: "Type a short id")!
            #expect(canvas[0, row].style.role == .danger)
        }
    }

    @Test func hostileInputInTheFieldIsRefusedCharacterByCharacter() {
        withScreen { screen, services, _ in
            Fixtures.type("K7'; DROP TABLE visitors;--", into: screen)
            #expect(screen.shortIdText == "K7DROPTABLEvisitors--")
            #expect(screen.handle(.character("'")) == .redraw)
            #expect(screen.notice?.text == "A short id has only letters and digits, like K7Q2M9XD; that character was not typed.")
            _ = screen.handle(.control("u"))
            for control in ["\u{0}", "\u{1B}", "\u{7}", "\u{7F}", "\u{85}", "\n", "\t"] {
                #expect(screen.handle(.character(Character(control))) == .redraw)
                #expect(screen.notice?.text == "Control characters cannot be typed into the short id; nothing was changed.")
            }
            #expect(screen.shortIdText.isEmpty)
            Fixtures.type("é€😀", into: screen)
            #expect(screen.shortIdText.isEmpty)
            Fixtures.type(String(repeating: "A", count: 10_000), into: screen)
            #expect(screen.shortIdText == String(repeating: "A", count: ScanScreen.shortIdLimit))
            #expect(screen.notice?.text.hasPrefix("A short id has 8 characters; the field takes at most 32") == true)
            #expect(screen.handle(.enter) == .redraw)
            #expect(screen.notice?.text.contains("is not a short id") == true)
            #expect(services.calls == ["stats"])
            // Whatever was refused, the screen still draws, at any size.
            #expect(Fixtures.render(screen, width: 80, height: 24).text
                    .contains("Short id  " + String(repeating: "A", count: ScanScreen.shortIdLimit) + "_"))
            #expect(Fixtures.render(screen, width: 30, height: 24).text.contains("Short id  …AAAA"))
        }
    }

    // MARK: - The camera

    @Test func scannedCodesAreCheckedInAsReadAndADenialRingsTheBell() {
        withScreen { screen, services, _ in
            services.answer("GP1:K7Q2M9XD", with: F.decision(.checkedIn, F.ana, code: "GP1:K7Q2M9XD"))
            #expect(screen.scanned("GP1:K7Q2M9XD") == .redraw)
            #expect(screen.lastDecision?.outcome == .admitted)
            #expect(screen.scanned("GP1:ZZZZZZZZ") == .alert)
            #expect(screen.lastDecision?.reason == "unknown pass")
            #expect(screen.scanned("  \n") == .none)
            #expect(services.calls == ["stats", "checkIn GP1:K7Q2M9XD", "checkIn GP1:ZZZZZZZZ"])
            // Hostile text from a QR code is drawn without its control characters, cut to fit.
            let hostile = "\u{1B}[2J\u{7}" + String(repeating: "x", count: 3000)
            #expect(screen.scanned(hostile) == .alert)
            let canvas = Fixtures.render(screen, width: 80, height: 24)
            #expect(!canvas.text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
            #expect(lines(canvas).allSatisfy { $0.count <= 80 })
        }
    }

    /// No scanned text may make a DENIED decision look like ADMITTED: its carriage return,
    /// erase-line sequence and right-to-left override are drawn as visible text.
    @Test func aHostileCodeIsDrawnVisiblyAndCannotDisguiseTheDenial() {
        withScreen { screen, _, _ in
            let hostile = "x\r\u{1B}[2KADMITTED  Ana\u{202E}DEINED\u{2066}"
            #expect(screen.scanned(hostile) == .alert)
            #expect(screen.lastDecision?.outcome == .denied)
            let canvas = Fixtures.render(screen, width: 100, height: 24)
            let text = lines(canvas)
            #expect(text[2].hasPrefix("  DENIED · "))
            #expect((0..<5).allSatisfy { text[3 + $0] == blockRow("DENIED", $0) })
            let spelled = "x\\r\\x1b[2KADMITTED  Ana<U+202E>DEINED<U+2066>"
            #expect(text.contains { $0.contains(spelled) }, "\(text.joined(separator: "\n"))")
            // "ADMITTED" appears only inside the spelled-out code, never as a decision.
            #expect(text.filter { $0.contains("ADMITTED") }.allSatisfy { $0.contains("\\x1b[2KADMITTED") })
            #expect(!canvas.cells.contains { $0.character.unicodeScalars.contains(where: TerminalText.needsSpelling) })
        }
    }

    @Test func theDriverSetsTheSourceLine() {
        withScreen { screen, _, _ in
            #expect(screen.sourceState("Camera /dev/video0: streaming") == .redraw)
            #expect(screen.sourceState("Camera /dev/video0: streaming") == .none)
            var canvas = Fixtures.render(screen)
            #expect(canvas.line(1) == "Camera /dev/video0: streaming" && canvas[0, 1].style == .dim)
            #expect(screen.sourceState("Camera /dev/video0: lost (ENODEV); type short ids meanwhile", isProblem: true) == .redraw)
            canvas = Fixtures.render(screen)
            #expect(canvas.line(1) == "Camera /dev/video0: lost (ENODEV); type short ids meanwhile")
            #expect(canvas[0, 1].style.role == .warning)
        }
    }

    // MARK: - Approval

    @Test func aPassThatNeedsApprovalAsksTheGuardAndYRequestsIt() {
        withScreen { screen, services, _ in
            services.answer("QW3RTY45", with: F.decision(.approvalRequired, F.dan))
            services.answer("QW3RTY45", confirm: true, with: F.decision(.awaitingApproval, F.dan))
            #expect(submit("QW3RTY45", screen) == .redraw)
            #expect(services.calls == ["stats", "checkIn QW3RTY45"], "nothing requested silently")
            #expect(screen.question?.code == "QW3RTY45" && screen.isCapturingText)
            var text = lines(Fixtures.render(screen))
            #expect(text[2].hasPrefix("  APPROVAL NEEDED"))
            #expect(text.contains("Request approval for Dan Ene (QW3RTY45)? y/n"))
            #expect(screen.recent.isEmpty, "not a decision yet")
            #expect(screen.keyHelp.map(\.key) == ["y", "n, Esc"])
            // Other keys do not answer (and `q` does not quit).
            #expect(screen.handle(.character("q")) == .redraw)
            #expect(screen.notice?.text == "Press y to ask an approver, or n not to.")
            #expect(screen.handle(.character("x")) == .none)
            #expect(screen.handle(.character("y")) == .redraw)
            #expect(services.calls.last == "checkIn QW3RTY45 confirm")
            #expect(screen.question == nil && screen.awaitingDecision == ["v-dan": "QW3RTY45"])
            text = lines(Fixtures.render(screen))
            #expect(text[2].hasPrefix("  APPROVAL REQUESTED"))
            #expect(text.contains("  waiting for an approver"))
        }
    }

    @Test func answeringNoDeniesWithoutRequesting() {
        withScreen { screen, services, _ in
            services.answer("QW3RTY45", with: F.decision(.approvalRequired, F.dan))
            submit("QW3RTY45", screen)
            #expect(screen.handle(.escape) == .redraw)
            #expect(services.checkInCalls.filter(\.confirm).isEmpty)
            #expect(screen.lastDecision?.outcome == .denied)
            #expect(screen.lastDecision?.reason == "approval was not requested: do not let them in")
            #expect(screen.awaitingDecision.isEmpty)
            submit("QW3RTY45", screen)
            #expect(screen.handle(.character("N")) == .redraw && screen.recent.count == 2)
        }
    }

    @Test func anApprovalOnTheStreamChecksTheVisitorInAndARejectionDenies() {
        withScreen { screen, services, _ in
            services.answer("QW3RTY45", with: F.decision(.approvalRequired, F.dan))
            services.answer("QW3RTY45", confirm: true, with: F.decision(.awaitingApproval, F.dan))
            submit("QW3RTY45", screen)
            _ = screen.handle(.character("y"))
            // Someone else's visitor decided: nothing to do for this gate.
            var other = F.ana
            other.status = .approved
            _ = screen.receive(Fixtures.event(.visitorDecided, other))
            #expect(!services.calls.contains("checkIn K7Q2M9XD"))
            // Approved: the gate checks them in, which admits them.
            services.answer("QW3RTY45", with: F.decision(.checkedIn, F.dan))
            var approved = F.dan
            approved.status = .approved
            #expect(screen.receive(Fixtures.event(.visitorDecided, approved)) == .redraw)
            #expect(services.calls.suffix(1) == ["checkIn QW3RTY45"])
            #expect(screen.lastDecision?.outcome == .admitted && screen.awaitingDecision.isEmpty)
            // A second decided event for them does nothing more.
            let count = services.checkInCalls.count
            _ = screen.receive(Fixtures.event(.visitorDecided, approved))
            #expect(services.checkInCalls.count == count)

            // Rejected: a denial, with the bell and the approver's note.
            services.answer("QW3RTY45", with: F.decision(.approvalRequired, F.dan))
            submit("QW3RTY45", screen)
            _ = screen.handle(.character("y"))
            var rejected = F.dan
            rejected.status = .rejected
            rejected.decisionNote = "not today"
            #expect(screen.receive(Fixtures.event(.visitorDecided, rejected)) == .alert)
            #expect(screen.lastDecision?.outcome == .denied)
            #expect(screen.lastDecision?.reason == "an approver rejected the visit: not today")
            #expect(lines(Fixtures.render(screen)).contains("  an approver rejected the visit: not today"))
        }
    }

    // MARK: - Offline

    /// A screen on a moved clock that never refreshes by itself: only an age makes it redraw.
    static func agingScreen(_ services: FakeScanServices) -> (ScanScreen, TestClock) {
        let clock = TestClock()
        let screen = ScanScreen(services: services, clock: clock.function, sourceDescription: nil, siteClock: SiteClock(zoneNamed: "UTC")!,
                                statsRefreshInterval: 3600)
        _ = screen.appear()
        return (screen, clock)
    }

    @Test func offlineTheStatsSayHowOldTheyAreAndCheckInsQueue() {
        let services = FakeScanServices()
        services.statsAnswer = .success(ConsoleRead(value: F.stats, updatedAt: Fixtures.now.addingTimeInterval(-300), fromCache: true))
        let (screen, clock) = Self.agingScreen(services)
        var canvas = Fixtures.render(screen, width: 100)
        #expect(canvas.line(0) == "Checked in 12 · Awaiting 3 · Expected 40 · On site 9  (cached, 5 min old)  · no pass cache")
        #expect(canvas[56, 0].style.role == .warning)
        services.answer("K7Q2M9XD", with: .queued(code: "K7Q2M9XD"))
        #expect(submit("K7Q2M9XD", screen) == .redraw)
        canvas = Fixtures.render(screen, width: 100)
        #expect(canvas.line(2).hasPrefix("  QUEUED OFFLINE"))
        #expect(lines(canvas).contains("  the server is unreachable; the check-in will be sent when it is back"))
        // The age ticks on: a redraw when the minute changes, not before.
        clock.advance(30)
        #expect(screen.tick(now: clock.now) == .none)
        clock.advance(30)
        #expect(screen.tick(now: clock.now) == .redraw)
        canvas = Fixtures.render(screen, width: 100)
        #expect(canvas.line(0).hasSuffix("(cached, 6 min old)  · no pass cache"))
        #expect(screen.tick(now: clock.now) == .none)
    }

    /// Issue 13: what an offline decision here would be judged against, and how old it is.
    @Test func thePassCachesAgeIsShownAndTicksOn() {
        let services = FakeScanServices()
        services.passCacheAnswer = Fixtures.now.addingTimeInterval(-180)
        let (screen, clock) = Self.agingScreen(services)
        var canvas = Fixtures.render(screen, width: 100)
        #expect(canvas.line(0) == "Checked in 12 · Awaiting 3 · Expected 40 · On site 9  · pass cache 3 min old")
        clock.advance(30)
        #expect(screen.tick(now: clock.now) == .none)
        clock.advance(30)
        #expect(screen.tick(now: clock.now) == .redraw)
        canvas = Fixtures.render(screen, width: 100)
        #expect(canvas.line(0).hasSuffix("· pass cache 4 min old"))
    }

    @Test func statsThatCannotBeReadSaySoAndKeepWhatWasShown() {
        withScreen { screen, services, _ in
            services.statsAnswer = .failure(.offline("connection refused"))
            _ = screen.handle(.control("r"))
            let text = lines(Fixtures.render(screen, width: 120))
            #expect(text[0] == "Checked in 12 · Awaiting 3 · Expected 40 · On site 9  · no pass cache")
            #expect(text[2] == "Could not load the stats. The server cannot be reached (connection refused); try again when it is back.")
        }
        let services = FakeScanServices()
        services.statsAnswer = .failure(.refused("this user may not see gate stats"))
        let screen = ScanScreen(services: services, clock: TestClock().function, sourceDescription: nil, siteClock: SiteClock(zoneNamed: "UTC")!)
        #expect(Fixtures.render(screen).line(0) == "Loading the stats…")
        _ = screen.appear()
        let text = lines(Fixtures.render(screen, width: 120))
        #expect(text[0] == "Stats not available")
        #expect(text[2] == "Could not load the stats. Refused: this user may not see gate stats.")
    }

    // MARK: - Live stats

    @Test func visitorEventsRefreshTheStatsAtMostOncePerSecond() {
        withScreen { screen, services, clock in
            #expect(services.statsCalls == 1)
            var newer = F.stats
            newer.checkedInToday = 13
            services.statsAnswer = .success(ConsoleRead(value: newer, updatedAt: clock.now, fromCache: false))
            // A burst right after the first read is folded into one read a second later.
            for kind in [EventKind.visitorArrived, .visitorDeparted, .visitorAwaiting, .requestCreated] {
                #expect(screen.receive(Fixtures.event(kind, F.ana)) == .none)
            }
            #expect(services.statsCalls == 1)
            clock.advance(0.5)
            #expect(screen.tick(now: clock.now) == .none)
            clock.advance(0.5)
            #expect(screen.tick(now: clock.now) == .redraw)
            #expect(services.statsCalls == 2)
            #expect(Fixtures.render(screen).line(0).hasPrefix("Checked in 13 "))
            #expect(screen.tick(now: clock.now) == .none)
            // An event a second or more after the last read refreshes at once.
            clock.advance(1)
            #expect(screen.receive(Fixtures.event(.visitorArrived, F.ana)) == .redraw)
            #expect(services.statsCalls == 3)
            // Events that do not move the counters do nothing.
            let notification = ServerEvent(id: 9, kindName: "notification.new", data: "{}")
            clock.advance(5)
            #expect(screen.receive(notification) == .none)
            #expect(screen.receive(ServerEvent(id: 10, kindName: "some.future.kind", data: "{}")) == .none)
            #expect(services.statsCalls == 3)
            // A gap reloads; with no event at all they are read again every minute.
            #expect(screen.receive(ServerEvent(id: nil, kindName: "stream.gap", data: "{\"oldestKeptId\":1}")) == .redraw)
            #expect(services.statsCalls == 4)
            clock.advance(59)
            #expect(screen.tick(now: clock.now) == .none)
            clock.advance(1)
            #expect(screen.tick(now: clock.now) == .redraw)
            #expect(services.statsCalls == 5)
        }
    }

    // MARK: - Recent decisions

    @Test func theRecentListMovesAndOpensTheVisitor() {
        withScreen { screen, services, _ in
            services.answer("K7Q2M9XD", with: F.decision(.checkedIn, F.ana))
            services.answer("QW3RTY45", with: F.decision(.expired, F.dan))
            submit("K7Q2M9XD", screen)
            submit("QW3RTY45", screen)
            #expect(screen.scanned("not a pass") == .alert)
            _ = screen.handle(.escape)
            #expect(screen.focus == .recent)
            var canvas = Fixtures.render(screen)
            let first = Fixtures.row(canvas, containing: "Recent (3)")! + 1
            #expect(canvas.line(first).contains("DENIED") && canvas.line(first).contains("not a pass"))
            #expect(canvas[0, first].style == .selected && canvas[79, first].style == .selected)
            #expect(screen.handle(.enter) == .redraw)
            #expect(screen.notice?.text == "That scan matched no visitor, so there is nothing to open.")
            #expect(screen.handle(.character("j")) == .redraw && screen.recentSelection == 1)
            #expect(screen.handle(.enter) == .openVisitor(id: "v-dan"))
            #expect(screen.handle(.down) == .redraw && screen.recentSelection == 2)
            #expect(screen.handle(.down) == .none)
            #expect(screen.handle(.character("k")) == .redraw && screen.recentSelection == 1)
            #expect(screen.handle(.home) == .redraw && screen.recentSelection == 0)
            #expect(screen.handle(.up) == .none)
            #expect(screen.handle(.end) == .redraw && screen.recentSelection == 2)
            #expect(screen.handle(.pageUp) == .redraw && screen.recentSelection == 0)
            #expect(screen.handle(.pageDown) == .redraw && screen.recentSelection == 2)
            #expect(screen.handle(.enter) == .openVisitor(id: "v-ana"))
            canvas = Fixtures.render(screen)
            let top = Fixtures.row(canvas, containing: "Recent (3)")! + 1
            #expect(canvas[0, top + 2].style == .selected && canvas[0, top].style != .selected)
            // A new decision while browsing keeps the row the guard is on.
            _ = screen.handle(.home)
            #expect(screen.scanned("GP1:ZZZZZZZZ") == .alert)
            #expect(screen.recentSelection == 1)
            // `r` reloads the stats from the list.
            let before = services.statsCalls
            #expect(screen.handle(.character("r")) == .redraw && services.statsCalls == before + 1)
        }
    }

    @Test func aLongRecentListScrollsToTheSelection() {
        withScreen { screen, _, _ in
            for index in 0..<30 { _ = screen.scanned("code \(index)") }
            _ = screen.handle(.escape)
            _ = screen.handle(.end)
            let canvas = Fixtures.render(screen, width: 80, height: 24)
            #expect(canvas.line(23).contains("code 0 — unknown pass"))
            #expect(canvas[0, 23].style == .selected)
        }
    }

    // MARK: - Lookup

    @Test func lookupSearchesChoosesAndChecksTheSelectedVisitorIn() {
        withScreen { screen, services, _ in
            #expect(screen.handle(.character("/")) == .redraw)
            #expect(screen.lookup != nil && screen.isCapturingText)
            services.lookupAnswer = .success([F.ana, F.dan])
            Fixtures.type("ana", into: screen)
            #expect(screen.handle(.enter) == .redraw)
            #expect(services.lookups == ["ana"])
            #expect(screen.lookup?.onResults == true && screen.lookup?.selection == 0)
            var canvas = Fixtures.render(screen)
            var text = lines(canvas)
            #expect(text[2] == "Look up a visitor by name, phone or email")
            #expect(text[3] == "Find  ana")
            let header = Fixtures.row(canvas, containing: "Short id")!
            #expect(text[header].hasPrefix("Name") && text[header].hasSuffix("Status"))
            #expect(text[header + 1].hasPrefix("Ana Pop") && text[header + 1].contains("K7Q2M9XD")
                    && text[header + 1].hasSuffix("expected"))
            #expect(canvas[0, header + 1].style == .selected)
            #expect(screen.handle(.character("j")) == .redraw && screen.lookup?.selection == 1)
            #expect(screen.handle(.down) == .none)
            #expect(screen.handle(.character("k")) == .redraw && screen.lookup?.selection == 0)
            #expect(screen.handle(.up) == .none)
            #expect(screen.handle(.end) == .redraw && screen.lookup?.selection == 1)
            #expect(screen.handle(.home) == .redraw && screen.lookup?.selection == 0)
            _ = screen.handle(.down)
            canvas = Fixtures.render(screen)
            #expect(canvas[0, header + 2].style == .selected)
            services.answer("QW3RTY45", with: F.decision(.approvalRequired, F.dan))
            #expect(screen.handle(.enter) == .redraw)
            #expect(screen.lookup == nil)
            #expect(services.calls.last == "checkIn QW3RTY45")
            #expect(screen.question?.code == "QW3RTY45", "a looked-up visitor who needs approval is asked about too")
            text = lines(Fixtures.render(screen))
            #expect(text.contains("Request approval for Dan Ene (QW3RTY45)? y/n"))
        }
    }

    @Test func lookupSaysWhenNothingMatchesWhenTheQueryIsEmptyAndWhenOffline() {
        withScreen { screen, services, _ in
            _ = screen.handle(.character("/"))
            #expect(screen.handle(.enter) == .redraw)
            #expect(screen.lookup?.notice?.text == "Type a name, phone or email, then press Enter.")
            Fixtures.type("   ", into: screen)
            _ = screen.handle(.enter)
            #expect(services.lookups.isEmpty)
            _ = screen.handle(.control("u"))
            Fixtures.type("zzz", into: screen)
            _ = screen.handle(.enter)
            #expect(screen.lookup?.notice == .init(kind: .info, text: "No visitor matches “zzz”."))
            #expect(screen.lookup?.onResults == false)
            #expect(screen.handle(.down) == .none)
            services.lookupAnswer = .failure(.offline("no route to host"))
            _ = screen.handle(.enter)
            #expect(screen.lookup?.notice?.text == "Could not look up. The server cannot be reached (no route to host); try again when it is back.")
            #expect(screen.lookup?.queryText == "zzz", "the search stays, to be sent again")
            let canvas = Fixtures.render(screen, width: 120)
            #expect(canvas[0, Fixtures.row(canvas, containing: "Could not look up")!].style.role == .danger)
            #expect(screen.handle(.escape) == .redraw && screen.lookup == nil)
            #expect(screen.focus == .shortId)
        }
    }

    @Test func hostileLookupInputIsSentAsTextOrRefusedWithAMessage() {
        withScreen { screen, services, _ in
            _ = screen.handle(.character("/"))
            let injection = "'; DROP TABLE visitors; -- %2F ../"
            Fixtures.type(injection, into: screen)
            _ = screen.handle(.enter)
            #expect(services.lookups == [injection], "sent as plain text: the server binds it")
            _ = screen.handle(.control("u"))
            for control in ["\u{0}", "\u{1B}", "\u{9B}", "\r"] {
                #expect(screen.handle(.character(Character(control))) == .redraw)
                #expect(screen.lookup?.notice?.text == "Control characters cannot be typed here; nothing was changed.")
            }
            #expect(screen.lookup?.queryText == "")
            Fixtures.type(String(repeating: "a", count: 10_000), into: screen)
            #expect(screen.lookup?.queryText.count == ScanScreen.lookupLimit)
            #expect(screen.lookup?.notice?.text == "A lookup takes at most 100 characters; the rest was not typed.")
            #expect(screen.handle(.backspace) == .redraw && screen.lookup?.notice == nil)
            _ = Fixtures.render(screen, width: 20, height: 5)
        }
    }

    @Test func typingOnTheResultsGoesBackToTheSearch() {
        withScreen { screen, services, _ in
            _ = screen.handle(.character("/"))
            services.lookupAnswer = .success([F.ana])
            submit("an", screen)
            #expect(screen.lookup?.onResults == true)
            #expect(screen.handle(.character("a")) == .redraw)
            #expect(screen.lookup?.onResults == false && screen.lookup?.queryText == "ana")
            #expect(screen.handle(.tab) == .redraw && screen.lookup?.onResults == true)
            #expect(screen.handle(.backspace) == .redraw && screen.lookup?.onResults == false)
            #expect(screen.lookup?.queryText == "ana", "Backspace on the results only goes back")
            _ = screen.handle(.down)
            #expect(screen.handle(.escape) == .redraw && screen.lookup == nil)
        }
    }

    // MARK: - Walk-in

    @Test func aWalkInIsTypedFieldByFieldAndRegistered() {
        withScreen { screen, services, _ in
            #expect(screen.handle(.character("w")) == .redraw)
            #expect(screen.walkIn?.focus == .name && screen.isCapturingText)
            Fixtures.type("Mara Ionescu", into: screen)
            _ = screen.handle(.tab)
            Fixtures.type("+40 721 000 000", into: screen)
            _ = screen.handle(.down)
            Fixtures.type("Mara@Example.com", into: screen)
            _ = screen.handle(.enter)
            Fixtures.type("Bolt", into: screen)
            _ = screen.handle(.enter)
            Fixtures.type("Interview", into: screen)
            _ = screen.handle(.enter)
            #expect(screen.walkIn?.focus == .hostName)
            Fixtures.type("Ion", into: screen)
            let canvas = Fixtures.render(screen)
            let text = lines(canvas)
            #expect(text[2] == "Walk-in visitor: a name is required; an approver decides")
            #expect(text[3] == "  Name      Mara Ionescu")
            #expect(text[8] == "> Host      Ion_")
            #expect(text[9] == "Tab: next field · Shift-Tab: back · Ctrl-S: register · Esc: cancel")
            var mara = F.visitor("v-mara", name: "Mara Ionescu", shortId: "M4R41234", status: .awaitingApproval,
                                 requiresApproval: true)
            mara.walkIn = true
            services.walkInAnswer = .applied(mara)
            #expect(screen.handle(.enter) == .redraw)
            #expect(services.walkIns == [WalkInRegistration(name: "Mara Ionescu", phone: "+40 721 000 000",
                                                            email: "mara@example.com", company: "Bolt",
                                                            purpose: "Interview", hostName: "Ion")])
            #expect(screen.walkIn == nil)
            #expect(screen.lastDecision?.outcome == .approvalRequested)
            #expect(screen.awaitingDecision == ["v-mara": "M4R41234"])
            let after = lines(Fixtures.render(screen))
            #expect(after[2].hasPrefix("  APPROVAL REQUESTED"))
            #expect(after.contains("  Mara Ionescu (M4R41234)") && after.contains("  walk-in registered; waiting for an approver"))
            // Approved on the stream: checked in.
            services.answer("M4R41234", with: F.decision(.checkedIn, mara))
            mara.status = .approved
            #expect(screen.receive(Fixtures.event(.visitorDecided, mara)) == .redraw)
            #expect(screen.lastDecision?.outcome == .admitted)
        }
    }

    /// A walk-in the blocklist blocks comes back REJECTED (the server answered BLOCKED): the
    /// gate says DENIED with the block's one sentence, waits for no approver, and alerts.
    @Test func aBlockedWalkInIsDeniedAndAwaitsNoApprover() {
        withScreen { screen, services, _ in
            _ = screen.handle(.character("w"))
            Fixtures.type("Ion Ionescu", into: screen)
            var ion = F.visitor("v-ion", name: "Ion Ionescu", shortId: "10N12345", status: .rejected, requiresApproval: true)
            ion.walkIn = true
            services.walkInAnswer = .applied(ion)
            #expect(screen.handle(.control("s")) == .alert)
            #expect(services.walkIns.map(\.name) == ["Ion Ionescu"])
            #expect(screen.walkIn == nil)
            #expect(screen.lastDecision?.outcome == .denied)
            #expect(screen.lastDecision?.result == "BLOCKED")
            #expect(screen.lastDecision?.reason == "entry refused; call security")
            #expect(screen.awaitingDecision.isEmpty)
            let after = lines(Fixtures.render(screen))
            #expect(after[2].hasPrefix("  DENIED"), "\(after[2])")
            #expect(after.contains("  entry refused; call security"))
        }
    }

    @Test func walkInValidationSaysWhatIsWrongAndLosesNothing() {
        withScreen { screen, services, _ in
            _ = screen.handle(.character("w"))
            #expect(screen.handle(.control("s")) == .redraw)
            #expect(screen.walkIn?.notice?.text == "Type the visitor's name; it is the one field a walk-in needs.")
            Fixtures.type("   ", into: screen)
            _ = screen.handle(.control("s"))
            #expect(screen.walkIn?.focus == .name && screen.walkIn?.notice?.kind == .error)
            _ = screen.handle(.control("u"))
            Fixtures.type("Ana", into: screen)
            _ = screen.handle(.tab)
            Fixtures.type("call me", into: screen)
            _ = screen.handle(.tab)
            Fixtures.type("ana@", into: screen)
            _ = screen.handle(.control("s"))
            #expect(screen.walkIn?.focus == .phone)
            #expect(screen.walkIn?.notice?.text == "Phone may hold digits, spaces and + - ( ) . only (at least 3 digits), like +40 721 000 000.")
            _ = screen.handle(.control("u"))
            Fixtures.type("0721", into: screen)
            _ = screen.handle(.control("s"))
            #expect(screen.walkIn?.focus == .email)
            #expect(screen.walkIn?.notice?.text == "Email must be an address like ana@example.com.")
            #expect(screen.walkIn?.text(.name) == "Ana" && screen.walkIn?.text(.phone) == "0721"
                    && screen.walkIn?.text(.email) == "ana@")
            #expect(services.walkIns.isEmpty)
            let canvas = Fixtures.render(screen, width: 100)
            #expect(canvas[0, Fixtures.row(canvas, containing: "Email must be")!].style.role == .danger)
            // Shift-Tab and Up go back, wrapping round.
            _ = screen.handle(.backTab)
            #expect(screen.walkIn?.focus == .phone)
            _ = screen.handle(.up)
            _ = screen.handle(.up)
            #expect(screen.walkIn?.focus == .hostName)
            _ = screen.handle(.tab)
            #expect(screen.walkIn?.focus == .name)
        }
    }

    @Test func walkInHostileInputIsRefusedOrSentVerbatim() {
        withScreen { screen, services, _ in
            _ = screen.handle(.character("w"))
            Fixtures.type(String(repeating: "N", count: 10_000), into: screen)
            #expect(screen.walkIn?.text(.name).count == 200)
            #expect(screen.walkIn?.notice?.text == "Name takes at most 200 characters; the rest was not typed.")
            _ = screen.handle(.control("u"))
            #expect(screen.handle(.character("\u{1B}")) == .redraw)
            #expect(screen.walkIn?.notice?.text == "Control characters cannot be typed here; nothing was changed.")
            #expect(screen.walkIn?.text(.name) == "")
            let name = "Robert'); DROP TABLE visitors;--"
            Fixtures.type(name, into: screen)
            for _ in 0..<4 { _ = screen.handle(.tab) }
            Fixtures.type(String(repeating: "p", count: 600), into: screen)
            #expect(screen.walkIn?.text(.purpose).count == 500)
            services.walkInAnswer = .queued
            #expect(screen.handle(.control("s")) == .redraw)
            #expect(services.walkIns.first?.name == name)
            #expect(services.walkIns.first?.purpose?.count == 500)
            #expect(screen.lastDecision?.outcome == .queuedOffline)
            #expect(lines(Fixtures.render(screen)).contains("  walk-in queued; it is sent when the server is back"))
        }
    }

    @Test func aRefusedWalkInKeepsTheFormAndACancelledOneSendsNothing() {
        withScreen { screen, services, _ in
            _ = screen.handle(.character("w"))
            Fixtures.type("Ana", into: screen)
            services.walkInAnswer = .refused("hostName must be at most 200 characters")
            #expect(screen.handle(.control("s")) == .alert)
            #expect(screen.walkIn?.notice?.text == "Not registered: hostName must be at most 200 characters")
            #expect(screen.walkIn?.text(.name) == "Ana")
            services.walkInAnswer = .needsLogin("the session has ended")
            _ = screen.handle(.control("s"))
            #expect(screen.walkIn == nil && screen.lastDecision?.outcome == .queuedOffline)
            #expect(screen.lastDecision?.reason == "your session has ended (the session has ended); log in again — the walk-in stays queued until then")
            _ = screen.handle(.character("w"))
            Fixtures.type("Dan", into: screen)
            #expect(screen.handle(.escape) == .redraw)
            #expect(screen.walkIn == nil && screen.notice?.text == "Walk-in cancelled: nothing was sent.")
            #expect(services.walkIns.count == 2)
            // `w` with a short id begun types a W instead.
            Fixtures.type("K7", into: screen)
            _ = screen.handle(.character("w"))
            #expect(screen.walkIn == nil && screen.shortIdText == "K7w")
        }
    }

    @Test func keyHelpFollowsWhatIsOpen() {
        withScreen { screen, _, _ in
            _ = screen.handle(.character("w"))
            #expect(screen.keyHelp.contains { $0.key == "Ctrl-S" } && screen.keyHelp.contains { $0.key == "Esc" })
            _ = screen.handle(.escape)
            _ = screen.handle(.character("/"))
            #expect(screen.keyHelp.contains { $0.key == "Up, k / Down, j" })
            #expect(screen.keyHelp.contains { $0.key == "Home, End, PgUp, PgDn" })
            _ = screen.handle(.escape)
            #expect(screen.keyHelp.count == 15)
        }
    }

    // MARK: - Walk-in rules

    @Test func walkInRegistrationsAreTrimmedAndEmptyFieldsDropped() throws {
        let registration = try WalkInRegistration(name: "  Ana  ", phone: " ", email: " ANA@Example.COM ", company: "",
                                                  purpose: nil, hostName: " Ion ").validated()
        #expect(registration == WalkInRegistration(name: "Ana", email: "ana@example.com", hostName: "Ion"))
        #expect(throws: WalkInRegistration.Problem.self) {
            try WalkInRegistration(name: "Ana", company: String(repeating: "c", count: 201)).validated()
        }
        #expect(throws: WalkInRegistration.Problem.self) { try WalkInRegistration(name: "A\u{7}na").validated() }
    }
}
