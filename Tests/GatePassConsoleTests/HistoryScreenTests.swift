import Foundation
import GatePassCore
import Testing
@testable import GatePassClient
@testable import GatePassConsole
@testable import GatePassConsoleServices

@Suite struct HistoryScreenTests {
    static let utc = TimeZone(identifier: "UTC")!
    static let bucharest = TimeZone(identifier: "Europe/Bucharest")!
    /// Monday 2026-11-30, noon UTC.
    static let monday = Fixtures.instant("2026-11-30T12:00:00Z")

    func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }

    /// A history screen over `scans`, loaded, with a clock the test moves.
    func withScreen(_ scans: [Scan] = [], now: Date = Self.monday, timeZone: TimeZone = Self.utc,
                    configure: (FakeHistoryServices) -> Void = { _ in },
                    _ body: (HistoryScreen, FakeHistoryServices, TestClock) throws -> Void) rethrows {
        let services = FakeHistoryServices()
        services.scans = scans
        services.visitorNames = ["v1": "Ana Pop"]
        services.checkpointNames = ["c1": "Main gate", "c2": "Side door"]
        services.updatedAt = now
        // The organization's zone is the one given (named as a site names UTC).
        services.organization = Organization(id: "org-1", name: "Acme Works",
                                             timeZone: timeZone == Self.utc ? "UTC" : timeZone.identifier)
        configure(services)
        let clock = TestClock(now)
        let screen = HistoryScreen(services: services, clock: clock.function, timeZone: timeZone, homeDirectory: "/home/ana")
        #expect(screen.appear() == .redraw)
        try body(screen, services, clock)
    }

    /// Monday's scans: 8 check-ins (1 at 08, 4 at 09, 2 at 10, 1 at 17), 3 rejections at
    /// 09:30, and two scans just outside the day.
    static let mondayScans: [Scan] = [
        Fixtures.scan("s1", at: Fixtures.instant("2026-11-30T08:15:00Z")),
        Fixtures.scan("s2", at: Fixtures.instant("2026-11-30T09:05:00Z")),
        Fixtures.scan("s3", at: Fixtures.instant("2026-11-30T09:10:00Z")),
        Fixtures.scan("s4", at: Fixtures.instant("2026-11-30T09:20:00Z")),
        Fixtures.scan("s5", at: Fixtures.instant("2026-11-30T09:59:59Z")),
        Fixtures.scan("s6", at: Fixtures.instant("2026-11-30T10:00:00Z")),
        Fixtures.scan("s7", at: Fixtures.instant("2026-11-30T10:30:00Z"), checkpoint: "c2", offline: true),
        Fixtures.scan("s8", at: Fixtures.instant("2026-11-30T17:45:00Z")),
        Fixtures.scan("r1", at: Fixtures.instant("2026-11-30T09:30:01Z"), result: .rejected, visitorId: "v2"),
        Fixtures.scan("r2", at: Fixtures.instant("2026-11-30T09:30:02Z"), result: .rejected, visitorId: "v2"),
        Fixtures.scan("r3", at: Fixtures.instant("2026-11-30T09:30:03Z"), result: .rejected, visitorId: "v2"),
        Fixtures.scan("before", at: Fixtures.instant("2026-11-29T23:59:59Z")),
        // Exactly the next midnight: the server includes `to`, the screen drops it.
        Fixtures.scan("after", at: Fixtures.instant("2026-12-01T00:00:00Z")),
    ]

    /// A chart row as text: `gutter` first, then each hour's bar of `width` characters at
    /// `gutterWidth + hour * slot`.
    func barRow(_ bars: [Int: Character], gutter: String = "", gutterWidth: Int = 2, slot: Int = 3, width: Int = 2) -> String {
        var cells = Array(repeating: Character(" "), count: 80)
        for (index, character) in gutter.enumerated() { cells[index] = character }
        for (hour, character) in bars {
            for offset in 0..<width { cells[gutterWidth + hour * slot + offset] = character }
        }
        var text = String(cells)
        while text.last == " " { text.removeLast() }
        return text
    }

    // MARK: - Loading and the chosen day

    @Test func showsTodayInTheLocalZoneAndAsksForItsBoundsWithTheRowCap() {
        // 22:30 UTC on the 30th is already 00:30 on 1 December in Bucharest.
        withScreen(now: Fixtures.instant("2026-11-30T22:30:00Z"), timeZone: Self.bucharest) { screen, services, _ in
            #expect(screen.range.description == "2026-12-01")
            #expect(services.historyCalls.count == 1 && services.historyCalls[0].limit == 5_000)
            #expect(services.lastFilter == ScanHistoryFilter(from: Fixtures.instant("2026-11-30T22:00:00Z"),
                                                             to: Fixtures.instant("2026-12-01T22:00:00Z")))
            let canvas = Fixtures.render(screen)
            #expect(canvas.line(0) == "Scan history — 2026-12-01 (Tue) · times in Europe/Bucharest")
            #expect(canvas[0, 0].style == .title)
            #expect(canvas.line(1) == "Result: all · Checkpoint: all · 0 scans")
            #expect(canvas.line(2) == "CHECKED_IN per hour: none")
            #expect(canvas.line(3) == "No scans on these days.")
            #expect(canvas.line(23) == "[ ] day · t today · d days · r result · c checkpoint · e export · g reload")
        }
    }

    @Test func theBarChartCountsCheckInsPerHourWithExactHeightsLabelsAndTheMaximum() {
        withScreen(Self.mondayScans) { screen, _, _ in
            #expect(screen.scans.map(\.id) == ["s8", "s7", "s6", "s5", "r3", "r2", "r1", "s4", "s3", "s2", "s1"])
            var expected = Array(repeating: 0, count: 24)
            expected[8] = 1; expected[9] = 4; expected[10] = 2; expected[17] = 1
            #expect(screen.hourlyCounts == expected)
            // 24 rows: 7 bar rows of 8 eighths each; the peak (4) fills all 56 eighths, a count
            // of 1 is 14 eighths (1 row and 6/8), 2 is 28 (3 rows and 4/8).
            let canvas = Fixtures.render(screen, width: 80, height: 24)
            #expect(canvas.line(0) == "Scan history — 2026-11-30 (Mon) · times in UTC")
            #expect(canvas.line(1) == "Result: all · Checkpoint: all · 11 scans · per gate: Main gate 10, Side door 1")
            #expect(canvas.line(2) == "CHECKED_IN per hour: 8 in all, at most 4 at 09:00")
            #expect(canvas.line(3) == barRow([9: "█"], gutter: "4"))
            #expect(canvas.line(4) == barRow([9: "█"]))
            #expect(canvas.line(5) == barRow([9: "█"]))
            #expect(canvas.line(6) == barRow([9: "█", 10: "▄"]))
            #expect(canvas.line(7) == barRow([9: "█", 10: "█"]))
            #expect(canvas.line(8) == barRow([8: "▆", 9: "█", 10: "█", 17: "▆"]))
            #expect(canvas.line(9) == barRow([8: "█", 9: "█", 10: "█", 17: "█"]))
            #expect(canvas.line(10) == "  " + (0..<24).map { $0 < 10 ? "0\($0)" : "\($0)" }.joined(separator: " "))
            #expect(canvas[29, 3].style.role == .ok, "check-in bars are drawn in the ok colour")
            // The list: time, result, pass, visitor, checkpoint, offline (9/19/9/21/14/8 at 80 columns).
            #expect(canvas.line(11) == pad("Time", 9) + pad("Result", 19) + pad("Pass", 9) + pad("Visitor", 21)
                + pad("Checkpoint", 14) + "Offline")
            #expect(canvas.line(12) == pad("17:45:00", 9) + pad("CHECKED_IN", 19) + pad("K7Q2M9XD", 9) + pad("Ana Pop", 21)
                + "Main gate")
            #expect(canvas.line(13) == pad("10:30:00", 9) + pad("CHECKED_IN", 19) + pad("K7Q2M9XD", 9) + pad("Ana Pop", 21)
                + pad("Side door", 14) + "offline")
            #expect(canvas.line(16) == pad("09:30:03", 9) + pad("REJECTED", 19) + pad("K7Q2M9XD", 9) + pad("—", 21) + "Main gate")
        }
    }

    @Test func anOfflineAdmissionTheServerDecidedOtherwiseIsFlaggedAsAConflict() {
        var conflict = Fixtures.scan("s9", at: Fixtures.instant("2026-11-30T10:30:00Z"), result: .cancelled, offline: true)
        conflict.offlineDecision = .checkedIn
        var agreed = Fixtures.scan("s8", at: Fixtures.instant("2026-11-30T10:29:00Z"), offline: true)
        agreed.offlineDecision = .checkedIn
        #expect(conflict.isOfflineConflict && !agreed.isOfflineConflict)
        withScreen([conflict, agreed]) { screen, _, _ in
            let canvas = Fixtures.render(screen)
            let row = Fixtures.row(canvas, containing: "CANCELLED")
            #expect(row.map { canvas.line($0).hasSuffix("conflict") } == true, "\(canvas.text)")
            #expect(row.map { canvas[72, $0].style.role } == .danger)
            #expect(Fixtures.row(canvas, containing: "offline") != nil, "the agreeing replay is a plain offline scan")
        }
    }

    @Test func resultsAreColouredAndTheSelectionIsReversedAcrossTheWidth() {
        withScreen(Self.mondayScans) { screen, _, _ in
            var canvas = Fixtures.render(screen)
            #expect(canvas[9, 12].style == Canvas.Style(.ok, bold: true, reverse: true), "the selected result keeps its colour")
            #expect(canvas[0, 12].style.reverse && canvas[79, 12].style.reverse)
            #expect(canvas[9, 13].style == Canvas.Style(.ok, bold: true) && !canvas[0, 13].style.reverse)
            #expect(canvas[9, 16].style.role == .danger, "a rejection is drawn as a denial")
            #expect(canvas[72, 13].style.role == .warning, "the offline flag stands out")
            #expect(canvas[47, 16].style.role == .muted, "an unknown visitor is muted")
            _ = screen.handle(.down)
            canvas = Fixtures.render(screen)
            #expect(canvas[0, 13].style.reverse && !canvas[0, 12].style.reverse)
        }
    }

    @Test func aNarrowOrShortAreaScalesTheChartDown() {
        withScreen(Self.mondayScans) { screen, _, _ in
            // 60 columns: 2 columns per hour, bars 1 wide, a label every second hour.
            var canvas = Fixtures.render(screen, width: 60, height: 24)
            #expect(canvas.line(3) == barRow([9: "█"], gutter: "4", slot: 2, width: 1))
            #expect(canvas.line(10) == "  " + stride(from: 0, to: 24, by: 2).map { $0 < 10 ? "0\($0)" : "\($0)" }.joined(separator: "  "))
            // 40 columns: 1 column per hour, a label every third hour.
            canvas = Fixtures.render(screen, width: 40, height: 24)
            #expect(canvas.line(9) == barRow([8: "█", 9: "█", 10: "█", 17: "█"], slot: 1, width: 1))
            #expect(canvas.line(10) == "  00 03 06 09 12 15 18 21")
            // 16 rows: 3 bar rows (24 eighths): 1 → 6 eighths, 2 → 12, 4 → 24.
            canvas = Fixtures.render(screen, width: 80, height: 16)
            #expect(canvas.line(3) == barRow([9: "█"], gutter: "4"))
            #expect(canvas.line(4) == barRow([9: "█", 10: "▄"]))
            #expect(canvas.line(5) == barRow([8: "▆", 9: "█", 10: "█", 17: "▆"]))
            #expect(canvas.line(6).hasPrefix("  00 01"))
            // 12 rows: no room for bars, the title line says it all.
            canvas = Fixtures.render(screen, width: 80, height: 12)
            #expect(canvas.line(2) == "CHECKED_IN per hour: 8 in all, at most 4 at 09:00")
            #expect(canvas.line(3).hasPrefix("Time "))
            #expect(!canvas.text.contains("█"))
        }
    }

    // MARK: - Filters

    @Test func rCyclesAllThenCheckedInThenEveryOtherResultAndTheChartFollows() {
        withScreen(Self.mondayScans) { screen, services, _ in
            let others = ScanResult.allCases.filter { $0 != .checkedIn }
            var seen: [ScanResult?] = []
            for _ in 0..<(others.count + 2) {
                #expect(screen.handle(.character("r")) == .redraw)
                seen.append(screen.resultFilter)
                #expect(services.lastFilter?.result == screen.resultFilter, "the filter goes to the services")
            }
            #expect(seen == [.checkedIn] + others + [nil])
            while screen.resultFilter != .rejected { _ = screen.handle(.character("r")) }
            #expect(screen.scans.map(\.id) == ["r3", "r2", "r1"])
            let canvas = Fixtures.render(screen)
            #expect(canvas.line(1) == "Result: REJECTED · Checkpoint: all · 3 scans")
            #expect(canvas.line(2) == "REJECTED per hour: 3 in all, at most 3 at 09:00")
            #expect(canvas[29, 3].style.role == .danger)
        }
    }

    @Test func cCyclesTheCheckpointsSeenSoFarAllFirstEvenAfterTheListNarrows() {
        var scans = Self.mondayScans
        scans.append(Fixtures.scan("x1", at: Fixtures.instant("2026-11-30T11:00:00Z"), checkpoint: "checkpoint-3-uuid"))
        withScreen(scans) { screen, services, _ in
            #expect(services.checkpointNameRequests == 1)
            // Sorted by what is shown: an unnamed id shows shortened.
            #expect(screen.knownCheckpoints == ["checkpoint-3-uuid", "c1", "c2"])
            #expect(screen.handle(.character("c")) == .redraw)
            #expect(services.lastFilter?.checkpointId == "checkpoint-3-uuid")
            #expect(Fixtures.render(screen).line(1) == "Result: all · Checkpoint: checkpoi… · 1 scan")
            _ = screen.handle(.character("c"))
            #expect(services.lastFilter?.checkpointId == "c1")
            #expect(Fixtures.render(screen).line(1) == "Result: all · Checkpoint: Main gate · 10 scans")
            _ = screen.handle(.character("c"))
            #expect(screen.checkpointFilter == "c2" && screen.scans.map(\.id) == ["s7"])
            _ = screen.handle(.character("c"))
            #expect(screen.checkpointFilter == nil && services.lastFilter?.checkpointId == nil)
            #expect(screen.scans.count == 12)
        }
    }

    @Test func cWithoutAnyCheckpointSaysSo() {
        withScreen { screen, services, _ in
            #expect(screen.handle(.character("c")) == .redraw)
            #expect(screen.notice?.text == "No checkpoints to choose from: none appears in the scans read so far.")
            #expect(services.historyCalls.count == 1)
            #expect(screen.handle(.escape) == .redraw && screen.notice == nil)
            #expect(screen.handle(.escape) == .none)
        }
    }

    // MARK: - Days

    @Test func bracketsStepADayAcrossTheMonthEndAndTReturnsToToday() {
        withScreen(Self.mondayScans) { screen, services, _ in
            #expect(screen.handle(.character("]")) == .redraw)
            #expect(screen.range.description == "2026-12-01")
            #expect(services.lastFilter == ScanHistoryFilter(from: Fixtures.instant("2026-12-01T00:00:00Z"),
                                                             to: Fixtures.instant("2026-12-02T00:00:00Z")))
            #expect(screen.scans.map(\.id) == ["after"], "a scan at midnight belongs to the day that starts then")
            #expect(Fixtures.render(screen).line(0) == "Scan history — 2026-12-01 (Tue) · times in UTC")
            _ = screen.handle(.character("["))
            _ = screen.handle(.character("["))
            #expect(screen.range.description == "2026-11-29")
            #expect(screen.scans.map(\.id) == ["before"])
            #expect(screen.handle(.character("t")) == .redraw && screen.range.description == "2026-11-30")
            let calls = services.historyCalls.count
            #expect(screen.handle(.character("t")) == .none && services.historyCalls.count == calls, "already today: no reload")
        }
        withScreen(now: Fixtures.instant("2026-12-31T12:00:00Z")) { screen, _, _ in
            _ = screen.handle(.character("]"))
            #expect(Fixtures.render(screen).line(0) == "Scan history — 2027-01-01 (Fri) · times in UTC")
            _ = screen.handle(.character("["))
            _ = screen.handle(.character("["))
            #expect(screen.range.description == "2026-12-30")
        }
        withScreen(now: Fixtures.instant("1970-01-01T12:00:00Z")) { screen, services, _ in
            #expect(screen.handle(.character("[")) == .redraw)
            #expect(screen.range.description == "1970-01-01" && services.historyCalls.count == 1)
            #expect(screen.notice?.text == "The scan log covers 1970-01-01 to 9999-12-31: there is nothing further.")
        }
    }

    @Test func theDayTheClocksGoBackHas25HoursAndTheRepeatedHourFallsInOneBar() {
        let scans = [Fixtures.scan("summer", at: Fixtures.instant("2026-10-25T00:30:00Z")),   // 03:30 EEST
                     Fixtures.scan("winter", at: Fixtures.instant("2026-10-25T01:30:00Z")),   // 03:30 EET
                     Fixtures.scan("late", at: Fixtures.instant("2026-10-25T21:59:59Z"))]     // 23:59:59 EET
        withScreen(scans, now: Fixtures.instant("2026-10-26T09:00:00Z"), timeZone: Self.bucharest) { screen, services, _ in
            _ = screen.handle(.character("["))
            #expect(screen.range.description == "2026-10-25")
            #expect(services.lastFilter?.from == Fixtures.instant("2026-10-24T21:00:00Z"))
            #expect(services.lastFilter?.to == Fixtures.instant("2026-10-25T22:00:00Z"))
            #expect(screen.scans.count == 3)
            #expect(screen.hourlyCounts[3] == 2 && screen.hourlyCounts[23] == 1)
            let canvas = Fixtures.render(screen)
            #expect(canvas.line(2) == "CHECKED_IN per hour: 3 in all, at most 2 at 03:00")
            #expect(canvas.text.contains("23:59:59 CHECKED_IN"))
            #expect(canvas.text.contains("03:30:00 CHECKED_IN"))
        }
    }

    @Test func theDayTheClocksGoForwardHas23Hours() {
        withScreen(now: Fixtures.instant("2026-03-30T09:00:00Z"), timeZone: Self.bucharest) { screen, services, _ in
            _ = screen.handle(.character("["))
            #expect(services.lastFilter?.from == Fixtures.instant("2026-03-28T22:00:00Z"))
            #expect(services.lastFilter?.to == Fixtures.instant("2026-03-29T21:00:00Z"))
            _ = screen.handle(.character("["))
            #expect(services.lastFilter?.from == Fixtures.instant("2026-03-27T22:00:00Z"))
            #expect(services.lastFilter?.to == Fixtures.instant("2026-03-28T22:00:00Z"))
        }
    }

    @Test func midnightMovesTodayOnUnlessAnotherDayWasChosen() {
        withScreen(now: Fixtures.instant("2026-11-30T23:59:00Z")) { screen, services, clock in
            #expect(screen.tick(now: clock.now) == .none)
            clock.advance(120)
            #expect(screen.tick(now: clock.now) == .redraw)
            #expect(screen.range.description == "2026-12-01" && services.historyCalls.count == 2)
            _ = screen.handle(.character("["))
            clock.advance(86_400)
            #expect(screen.tick(now: clock.now) == .none && screen.range.description == "2026-11-30")
        }
    }

    // MARK: - The date prompt

    @Test func dOpensAPromptForADayOrARange() {
        withScreen(Self.mondayScans) { screen, services, _ in
            #expect(!screen.isCapturingText)
            #expect(screen.handle(.character("d")) == .redraw)
            #expect(screen.prompt == .dates && screen.isCapturingText && screen.promptText == "2026-11-30")
            #expect(screen.keyHelp.map(\.key) == ["Enter", "Esc", "Backspace", "Ctrl-U"])
            var canvas = Fixtures.render(screen)
            #expect(canvas.line(22) == "Days (YYYY-MM-DD or YYYY-MM-DD..YYYY-MM-DD): 2026-11-30_")
            #expect(canvas.line(23) == "Enter: show these days · Esc: cancel")
            // Keys that mean something outside the prompt are text inside it.
            _ = screen.handle(.control("u"))
            Fixtures.type("2026-11-01..2026-11-07", into: screen)
            #expect(screen.handle(.backspace) == .redraw && screen.promptText == "2026-11-01..2026-11-0")
            _ = screen.handle(.character("7"))
            #expect(screen.handle(.enter) == .redraw)
            #expect(screen.prompt == nil && screen.notice == nil)
            #expect(screen.range.description == "2026-11-01..2026-11-07" && screen.range.dayCount == 7)
            #expect(services.lastFilter == ScanHistoryFilter(from: Fixtures.instant("2026-11-01T00:00:00Z"),
                                                             to: Fixtures.instant("2026-11-08T00:00:00Z")))
            canvas = Fixtures.render(screen)
            #expect(canvas.line(0) == "Scan history — 2026-11-01..2026-11-07 (7 days) · times in UTC")
            #expect(canvas.line(2) == "CHECKED_IN per hour: none, 7 days added up")
            // A range steps by its length.
            _ = screen.handle(.character("]"))
            #expect(screen.range.description == "2026-11-08..2026-11-14")
            _ = screen.handle(.character("]"))
            #expect(screen.range.description == "2026-11-15..2026-11-21")
        }
    }

    @Test func aRangeShowsMonthAndDayInTheTimeColumnAndAddsUpItsHours() {
        withScreen(Self.mondayScans) { screen, _, _ in
            _ = screen.handle(.character("d"))
            _ = screen.handle(.control("u"))
            Fixtures.type(" 2026-11-29 .. 2026-11-30 ", into: screen)
            _ = screen.handle(.enter)
            #expect(screen.range.description == "2026-11-29..2026-11-30")
            #expect(screen.scans.count == 12)
            var canvas = Fixtures.render(screen)
            #expect(canvas.line(2) == "CHECKED_IN per hour: 9 in all, at most 4 at 09:00, 2 days added up")
            #expect(canvas.line(8) == barRow([8: "▆", 9: "█", 10: "█", 17: "▆", 23: "▆"]))
            #expect(canvas.line(12).hasPrefix(pad("17:45", 13) + "CHECKED_IN"), "today's time alone")
            _ = screen.handle(.end)
            canvas = Fixtures.render(screen)
            #expect(canvas.line(22).hasPrefix(pad("29 Nov 23:59", 13) + "CHECKED_IN"))
        }
    }

    @Test func malformedOversizedAndHostileDatesAreRefusedClearlyAndLoseNothing() {
        withScreen(Self.mondayScans) { screen, services, _ in
            let calls = services.historyCalls.count
            _ = screen.handle(.character("d"))
            func attempt(_ text: String) -> String? {
                _ = screen.handle(.control("u"))
                Fixtures.type(text, into: screen)
                #expect(screen.handle(.enter) == .redraw)
                #expect(screen.prompt == .dates, "the prompt stays open after \(text.prefix(20))")
                return screen.notice?.text
            }
            #expect(attempt("2026-13-45") == "“2026-13-45” is not a day: there is no month 13.")
            #expect(screen.promptText == "2026-13-45", "what was typed stays, to be corrected")
            #expect(screen.notice?.kind == .error)
            #expect(attempt("2026-02-30") == "“2026-02-30” is not a day: February 2026 has 28 days.")
            #expect(attempt("2026-11-31") == "“2026-11-31” is not a day: November 2026 has 30 days.")
            #expect(attempt("2026-00-10") == "“2026-00-10” is not a day: there is no month 0.")
            #expect(attempt("2026-12-01..2026-11-01")
                == "The range ends before it starts (2026-12-01..2026-11-01): put the earlier day first.")
            #expect(attempt("2025-01-01..2026-12-31") == "The range covers 730 days; choose at most 366.")
            #expect(attempt("30/11/2026") == "“30/11/2026” is not a day: write it as YYYY-MM-DD, like 2026-11-30.")
            #expect(attempt("2026-11-01..") == "A day is missing beside “..”: type a range like 2026-11-01..2026-11-30.")
            #expect(attempt("1..2..3") == "“1..2..3” is not a day or a range: type a day like 2026-11-30, or a range like 2026-11-01..2026-11-30.")
            #expect(attempt("1969-12-31") == "“1969-12-31” is before 1970: the scan log holds nothing that old.")
            #expect(attempt("   ") == "Nothing typed: type a day like 2026-11-30, or a range like 2026-11-01..2026-11-30.")
            #expect(attempt("２０２６-11-30") == "“２０２６-11-30” is not a day: write it as YYYY-MM-DD, like 2026-11-30.")
            // Control characters (a pasted escape sequence, a bell, a newline) are never typed in.
            #expect(attempt("2026-11-\u{1B}[31m30\u{07}\n") == "“2026-11-[31m30” is not a day: write it as YYYY-MM-DD, like 2026-11-30.")
            #expect(screen.promptText == "2026-11-[31m30")
            // 10,000 characters: the field stops at its limit and says so, once.
            _ = screen.handle(.control("u"))
            var actions: [ScreenAction] = []
            for _ in 0..<10_000 { actions.append(screen.handle(.character("9"))) }
            #expect(screen.promptText.count == HistoryScreen.dateInputLimit)
            #expect(screen.notice?.text == "The field is full: it takes at most 64 characters.")
            #expect(actions.filter { $0 == .redraw }.count == 65, "64 characters and the one notice; the rest change nothing")
            #expect(screen.handle(.enter) == .redraw)
            #expect(screen.notice?.text == "That is too long for a day or a range (64 characters): type a day like 2026-11-30, or a range like 2026-11-01..2026-11-30.")
            let canvas = Fixtures.render(screen, width: 80, height: 24)
            #expect(canvas.line(22).hasSuffix("9999_") && canvas.line(22).count == 80, "the field shows its end")
            // Nothing was lost: the day, the scans and the list are as they were, and no call was made.
            #expect(services.historyCalls.count == calls)
            #expect(screen.range.description == "2026-11-30" && screen.scans.count == 11)
            #expect(screen.handle(.escape) == .redraw)
            #expect(screen.prompt == nil && screen.notice == nil && !screen.isCapturingText)
            #expect(screen.range.description == "2026-11-30")
        }
    }

    @Test func dayRangeParsingKnowsLeapYears() throws {
        #expect(try HistoryScreen.DayRange.parse("2028-02-29").get().description == "2028-02-29")
        #expect(try HistoryScreen.DayRange.parse("2000-02-29").get().description == "2000-02-29")
        #expect(throws: HistoryScreen.InputError(message: "“2100-02-29” is not a day: February 2100 has 28 days.")) {
            try HistoryScreen.DayRange.parse("2100-02-29").get()
        }
        #expect(try HistoryScreen.DayRange.parse("2026-01-01..2026-12-31").get().dayCount == 365)
        #expect(try HistoryScreen.DayRange.parse("2028-01-01..2028-12-31").get().dayCount == 366)
        #expect(try HistoryScreen.DayRange.parse("2026-11-30..2026-11-30").get().dayCount == 1)
        let day = HistoryScreen.Day(year: 2028, month: 2, day: 28)!
        #expect(day.adding(days: 1).description == "2028-02-29" && day.adding(days: 2).description == "2028-03-01")
        #expect(day.adding(days: -365 * 2 - 59).description == "2025-12-31")
        #expect(HistoryScreen.Day(year: 1970, month: 1, day: 1)!.weekdayName == "Thu")
        #expect(HistoryScreen.Day(year: 2026, month: 2, day: 29) == nil && HistoryScreen.Day(year: 0, month: 1, day: 1) == nil)
    }

    // MARK: - The list

    @Test func keysMoveTheSelectionAndEnterOpensTheVisitor() {
        let scans = (0..<40).map { Fixtures.scan("s\($0)", at: Self.monday.addingTimeInterval(Double(-$0 * 60)), visitorId: "v\($0)") }
        withScreen(scans) { screen, _, _ in
            _ = Fixtures.render(screen, width: 80, height: 24)   // 22 scrolls into the list
            #expect(screen.handle(.up) == .none && screen.handle(.character("k")) == .none)
            #expect(screen.handle(.down) == .redraw && screen.selection == 1)
            #expect(screen.handle(.character("j")) == .redraw && screen.selection == 2)
            #expect(screen.handle(.character("k")) == .redraw && screen.selection == 1)
            #expect(screen.handle(.enter) == .openVisitor(id: "v1"))
            #expect(screen.handle(.pageDown) == .redraw && screen.selection == 12, "a page is the 11 rows the list shows")
            #expect(screen.handle(.pageUp) == .redraw && screen.selection == 1)
            #expect(screen.handle(.end) == .redraw && screen.selection == 39)
            #expect(screen.handle(.down) == .none && screen.handle(.pageDown) == .none)
            let canvas = Fixtures.render(screen, width: 80, height: 24)
            #expect(canvas.line(22).hasPrefix("11:21:00") && canvas[0, 22].style.reverse, "the selection scrolls into view")
            #expect(screen.handle(.home) == .redraw && screen.selection == 0)
            #expect(Fixtures.render(screen).line(12).hasPrefix("12:00:00"))
            #expect(screen.handle(.character("x")) == .none && screen.handle(.resize) == .redraw)
        }
    }

    @Test func enterOnAScanWithoutAVisitorSaysThereIsNothingToOpen() {
        let scans = [Fixtures.scan("n1", at: Self.monday, result: .notFound, visitorId: nil, shortId: "ZZZZZZZZ", raw: "GP1:ZZZZZZZZ"),
                     Fixtures.scan("i1", at: Self.monday.addingTimeInterval(-60), result: .invalid, visitorId: nil, shortId: nil,
                                   raw: "\u{1B}[2Jhello")]
        withScreen(scans) { screen, _, _ in
            #expect(screen.handle(.enter) == .redraw)
            #expect(screen.notice == HistoryScreen.Notice(kind: .warning, text: "This scan matched no visitor (NOT_FOUND): there is nothing to open."))
            let canvas = Fixtures.render(screen)
            #expect(canvas.line(22) == "This scan matched no visitor (NOT_FOUND): there is nothing to open.")
            #expect(canvas.text.contains(pad("ZZZZZZZZ", 9) + "“GP1:ZZZZZZZZ”"), "what was scanned stands in for the visitor")
            #expect(canvas.text.contains(pad("INVALID", 19) + pad("-", 9) + "“\\x1b[2Jhello”"), "escape codes are shown, never obeyed")
        }
    }

    @Test func offlineTheScansComeFromTheCacheAndSayHowOld() {
        withScreen(Self.mondayScans, configure: { $0.fromCache = true; $0.updatedAt = Self.monday.addingTimeInterval(-300) }) { screen, _, clock in
            var canvas = Fixtures.render(screen)
            #expect(canvas.line(2) == "Offline: showing the scans as they were 5 min ago.")
            #expect(canvas[0, 2].style.role == .warning)
            #expect(canvas.line(3).hasPrefix("CHECKED_IN per hour: 8 in all"))
            clock.advance(2 * 3600)
            canvas = Fixtures.render(screen)
            #expect(canvas.line(2) == "Offline: showing the scans as they were 2 h ago.")
        }
    }

    @Test func aCappedLogSaysOnlyTheNewestAreShown() {
        let services = FakeHistoryServices()
        services.scans = Self.mondayScans.filter { $0.id != "after" }
        let screen = HistoryScreen(services: services, clock: { Self.monday }, timeZone: Self.utc, homeDirectory: "/home/ana",
                                   rowCap: 5)
        _ = screen.appear()
        #expect(services.historyCalls[0].limit == 5 && screen.isCapped && screen.scans.count == 5)
        let canvas = Fixtures.render(screen, width: 120)
        #expect(canvas.line(2) == "Only the newest 5 scans are shown: choose fewer days or a filter to see the rest.")
        #expect(HistoryScreen.grouped(5_000) == "5,000" && HistoryScreen.grouped(1_234_567) == "1,234,567")
    }

    @Test func aFailedReloadKeepsTheSameDaysScansButNeverShowsThemUnderAnotherDay() {
        withScreen(Self.mondayScans) { screen, services, _ in
            services.historyError = .offline("connection refused")
            #expect(screen.handle(.character("g")) == .redraw)
            #expect(screen.scans.count == 11)
            var canvas = Fixtures.render(screen, width: 120)
            #expect(canvas.line(2) == "Could not load the scans. The server cannot be reached (connection refused); try again when it is back.")
            #expect(canvas[0, 2].style.role == .danger)
            _ = screen.handle(.character("R"))
            #expect(services.historyCalls.count == 3)
            _ = screen.handle(.character("]"))
            #expect(screen.scans.isEmpty && screen.loaded == nil)
            canvas = Fixtures.render(screen, width: 120)
            #expect(canvas.line(0) == "Scan history — 2026-12-01 (Tue) · times in UTC")
            #expect(canvas.line(2).hasPrefix("Could not load the scans.") && !canvas.text.contains("Loading…"))
            #expect(!canvas.text.contains("per hour"))
            services.historyError = nil
            _ = screen.handle(.character("g"))
            #expect(screen.errorLine == nil && screen.loaded != nil)
        }
    }

    @Test func visitorNamesAreAskedForOnceAndLearnedFromEvents() {
        withScreen(Self.mondayScans) { screen, services, _ in
            #expect(services.visitorNameRequests == [["v1", "v2"]])
            _ = screen.handle(.character("g"))
            #expect(services.visitorNameRequests.count == 1, "ids asked about once are not asked again")
            var visitor = Fixtures.visitor(2, name: "Dan Ene", status: .rejected)
            #expect(screen.receive(Fixtures.event(.visitorDecided, visitor)) == .redraw)
            #expect(Fixtures.render(screen).line(16).contains("Dan Ene"))
            visitor.name = "Dan Ene"
            #expect(screen.receive(Fixtures.event(.visitorDecided, visitor)) == .none, "nothing new to show")
        }
    }

    // MARK: - Live

    @Test func liveArrivalsOnTheChosenDayReloadAtMostEveryTwoSeconds() {
        withScreen(Self.mondayScans) { screen, services, clock in
            var visitor = Fixtures.visitor(7, name: "Live One", status: .checkedIn)
            visitor.checkedInAt = clock.now
            #expect(screen.receive(Fixtures.event(.visitorArrived, visitor)) == .none)
            #expect(screen.isStale)
            clock.advance(1)
            #expect(screen.tick(now: clock.now) == .none && services.historyCalls.count == 1)
            clock.advance(1)
            #expect(screen.tick(now: clock.now) == .redraw && services.historyCalls.count == 2 && !screen.isStale)
            #expect(screen.tick(now: clock.now) == .none)
            _ = screen.receive(Fixtures.event(.visitorAwaiting, Fixtures.visitor(8)))
            _ = screen.receive(Fixtures.event(.securityAlert, Fixtures.visitor(9)))
            clock.advance(1.5)
            #expect(screen.tick(now: clock.now) == .none)
            clock.advance(0.5)
            #expect(screen.tick(now: clock.now) == .redraw && services.historyCalls.count == 3, "two events, one reload")
            // A gap in the stream may have hidden scans.
            _ = screen.receive(ServerEvent(id: 9, kindName: "stream.gap", data: "{}"))
            clock.advance(2)
            #expect(screen.tick(now: clock.now) == .redraw && services.historyCalls.count == 4)
        }
    }

    @Test func aTabNeverShownMakesNoRequestsOnTicks() {
        let services = FakeHistoryServices()
        let clock = TestClock(Self.monday)
        let screen = HistoryScreen(services: services, clock: clock.function, timeZone: Self.utc, homeDirectory: "/home/ana")
        var visitor = Fixtures.visitor(7, status: .checkedIn)
        visitor.checkedInAt = clock.now
        _ = screen.receive(Fixtures.event(.visitorArrived, visitor))
        clock.advance(2 * 86_400)
        #expect(screen.tick(now: clock.now) == .none && services.historyCalls.isEmpty)
        #expect(Fixtures.render(screen).line(2) == "Loading…")
        #expect(screen.appear() == .redraw && screen.range.description == "2026-12-02", "shown, it opens on today")
    }

    @Test func eventsOfOtherDaysAndOtherKindsChangeNothing() {
        withScreen(Self.mondayScans) { screen, services, clock in
            var replayed = Fixtures.visitor(7, status: .checkedIn)
            replayed.checkedInAt = Fixtures.instant("2026-11-29T18:00:00Z")   // an offline check-in replayed today
            _ = screen.receive(Fixtures.event(.visitorArrived, replayed))
            _ = screen.receive(Fixtures.event(.visitorDeparted, Fixtures.visitor(8, status: .checkedOut)))
            _ = screen.receive(ServerEvent(id: 3, kindName: "notification.new", data: "{}"))
            _ = screen.receive(ServerEvent(id: 4, kindName: "some.future.kind", data: "{}"))
            _ = screen.receive(ServerEvent(id: 5, kindName: "visitor.arrived", data: "not json"))
            #expect(!screen.isStale)
            clock.advance(10)
            #expect(screen.tick(now: clock.now) == .none && services.historyCalls.count == 1)
            // Looking at yesterday, today's arrivals do not concern the list.
            _ = screen.handle(.character("["))
            _ = screen.receive(Fixtures.event(.visitorAwaiting, Fixtures.visitor(8)))
            #expect(!screen.isStale)
        }
    }

    // MARK: - Export

    /// Monday's scans without the one at the next midnight, which the server's inclusive
    /// `to` would add to an export (see `HistoryScreen.filter`).
    static let mondayOnly = mondayScans.filter { $0.id != "after" }

    @Test func eExportsTheCurrentFilterToAFileInTheHomeFolder() {
        withScreen(Self.mondayOnly) { screen, services, _ in
            _ = screen.handle(.character("r"))   // CHECKED_IN
            #expect(screen.handle(.character("e")) == .redraw)
            #expect(screen.prompt == .exportPath && screen.isCapturingText)
            #expect(screen.promptText == "~/gatepass-scans-2026-11-30.csv")
            #expect(screen.keyHelp.map(\.key) == ["Enter", "Esc", "Backspace", "Ctrl-U"])
            #expect(Fixtures.render(screen).line(22) == "Save the CSV to: ~/gatepass-scans-2026-11-30.csv_")
            #expect(screen.handle(.enter) == .redraw)
            #expect(services.exports.count == 1)
            #expect(services.exports[0].path == "/home/ana/gatepass-scans-2026-11-30.csv" && !services.exports[0].overwrite)
            #expect(services.exports[0].filter == services.lastFilter && services.exports[0].filter.result == .checkedIn)
            #expect(screen.prompt == nil)
            #expect(screen.notice == HistoryScreen.Notice(kind: .ok, text: "Saved 8 rows to /home/ana/gatepass-scans-2026-11-30.csv"))
            let canvas = Fixtures.render(screen)
            #expect(canvas.line(22) == "Saved 8 rows to /home/ana/gatepass-scans-2026-11-30.csv")
            #expect(canvas[0, 22].style.role == .ok)
        }
    }

    @Test func anExistingFileIsOverwrittenOnlyAfterYes() {
        withScreen(Self.mondayOnly, configure: { $0.existingPaths = ["/home/ana/scans.csv"] }) { screen, services, _ in
            _ = screen.handle(.character("e"))
            _ = screen.handle(.control("u"))
            Fixtures.type("scans.csv", into: screen)
            _ = screen.handle(.enter)
            #expect(screen.prompt == .overwrite(path: "/home/ana/scans.csv") && screen.isCapturingText)
            #expect(screen.keyHelp.map(\.key) == ["y", "n, Esc"])
            var canvas = Fixtures.render(screen)
            #expect(canvas.line(22) == "/home/ana/scans.csv exists. Overwrite it? y/n")
            #expect(canvas.line(23) == "y: overwrite · n, Esc: choose another name")
            #expect(screen.handle(.character("q")) == .none && screen.handle(.enter) == .none, "only y or n answer")
            #expect(screen.handle(.character("n")) == .redraw)
            #expect(screen.prompt == .exportPath && screen.promptText == "scans.csv", "back to the name, as typed")
            #expect(screen.notice?.text == "Not saved: /home/ana/scans.csv was kept. Change the name, or Esc to stop.")
            _ = screen.handle(.enter)
            _ = screen.handle(.escape)
            #expect(screen.prompt == .exportPath)
            _ = screen.handle(.enter)
            #expect(screen.handle(.character("y")) == .redraw)
            #expect(services.exports.map(\.overwrite) == [false, false, false, true])
            #expect(screen.prompt == nil && screen.notice?.text == "Saved 11 rows to /home/ana/scans.csv")
            canvas = Fixtures.render(screen)
            #expect(canvas.line(23).hasPrefix("[ ] day"))
        }
    }

    @Test func aBadFolderIsSaidAndThePathStaysToBeCorrected() {
        withScreen(Self.mondayScans, configure: {
            $0.exportError = .refused("the folder /nope does not exist; create it or choose another")
        }) { screen, _, _ in
            _ = screen.handle(.character("e"))
            _ = screen.handle(.control("u"))
            Fixtures.type("/nope/scans.csv", into: screen)
            _ = screen.handle(.enter)
            #expect(screen.prompt == .exportPath && screen.promptText == "/nope/scans.csv")
            #expect(screen.notice == HistoryScreen.Notice(
                kind: .error, text: "Could not save the CSV. Refused: the folder /nope does not exist; create it or choose another."))
            #expect(screen.handle(.escape) == .redraw)
            #expect(screen.prompt == nil && screen.notice?.text == "Export cancelled: nothing was saved.")
        }
    }

    @Test func exportPathsAreResolvedAgainstTheInjectedHomeFolder() {
        func resolve(_ typed: String, home: String = "/home/ana") -> String {
            switch HistoryScreen.resolve(path: typed, home: home) {
            case .success(let path): path
            case .failure(let error): "error: " + error.message
            }
        }
        #expect(resolve("~/x.csv") == "/home/ana/x.csv")
        #expect(resolve("~/x.csv", home: "/home/ana/") == "/home/ana/x.csv")
        #expect(resolve("x.csv") == "/home/ana/x.csv")
        #expect(resolve("  /tmp/x.csv ") == "/tmp/x.csv")
        #expect(resolve("~") == "/home/ana/")
        #expect(resolve("~/x.csv", home: "/") == "/x.csv")
        #expect(resolve("~root/x.csv") == "error: Only ~/ is understood here, not ~user: type the full path instead.")
        #expect(resolve("") == "error: Type a file name, like ~/gatepass-scans.csv.")
        #expect(resolve("~/x.csv", home: "") == "error: Your home folder is not known here: type a full path, starting with /.")
        withScreen { screen, services, _ in
            _ = screen.handle(.character("e"))
            _ = screen.handle(.control("u"))
            #expect(screen.handle(.enter) == .redraw)
            #expect(screen.notice?.text == "Type a file name, like ~/gatepass-scans.csv." && services.exports.isEmpty)
        }
    }

    @Test func theExportNameOfARangeHasNoDots() {
        withScreen { screen, _, _ in
            _ = screen.handle(.character("d"))
            _ = screen.handle(.control("u"))
            Fixtures.type("2026-11-01..2026-11-30", into: screen)
            _ = screen.handle(.enter)
            _ = screen.handle(.character("e"))
            #expect(screen.promptText == "~/gatepass-scans-2026-11-01_2026-11-30.csv")
        }
    }

    // MARK: - Help and sizes

    @Test func keyHelpListsEveryKey() {
        withScreen { screen, _, _ in
            #expect(screen.keyHelp.map(\.key) == ["Up, k", "Down, j", "PgUp, PgDn", "Home, End", "Enter", "[, ]", "t", "d", "r",
                                                  "c", "e", "g, R", "Esc"])
            #expect(screen.title == "History")
        }
    }

    @Test func rendersAt80x24And20x5AndTinyAreasWithoutSpillingOver() {
        withScreen(Self.mondayScans, configure: { $0.fromCache = true; $0.updatedAt = Self.monday.addingTimeInterval(-60) }) { screen, _, _ in
            let full = Fixtures.render(screen, width: 80, height: 24)
            #expect((0..<24).allSatisfy { full.line($0).count <= 80 })
            let small = Fixtures.render(screen, width: 20, height: 5)
            #expect(small.line(0) == "Scan history — 2026…")
            #expect(small.line(4) == "[ ] day · t today ·…")
            for promptKey in [nil, Key.character("d"), Key.character("e")] {
                if let promptKey { _ = screen.handle(promptKey) }
                for width in 0...24 {
                    for height in 0...12 {
                        var canvas = Canvas(width: 26, height: 14)
                        screen.render(into: &canvas, area: Area(x: 1, y: 1, width: width, height: height))
                        for y in 0..<14 {
                            let line = canvas.line(y)
                            #expect(line.count <= 1 + width, "row \(y) spills out of a \(width)×\(height) area")
                            if y == 0 || y > height { #expect(line.isEmpty) }
                        }
                    }
                }
                _ = screen.handle(.escape)
            }
        }
    }

    // MARK: - Through the client core

    /// Answers each request with `answer`.
    struct RoutedTransport: HTTPTransport {
        let answer: @Sendable (HTTPRequest) throws(HTTPTransportError) -> HTTPResponse
        func perform(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse { try answer(request) }
        func separateHandle() -> any HTTPTransport { self }
    }

    static let owner = Profile(id: "u1", email: "ana@example.com", name: "Ana Pop", role: .owner, organizationId: "org-1",
                               canScanCheckpoint: false)

    /// Client-core services over a fresh state folder with Ana logged in to http://gate.test.
    func withCoreServices(loggedIn: Bool = true, _ answer: @escaping @Sendable (HTTPRequest) throws(HTTPTransportError) -> HTTPResponse,
                          _ body: (ClientCoreServices, ClientCore, String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("console-history-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let transport = RoutedTransport(answer: answer)
        let core = try ClientCore(directory: StateDirectory(path: folder + "/state"), transport: transport)
        if loggedIn {
            try core.store.saveSession(Session(server: "http://gate.test", token: "login-token",
                                               expiresAt: Timestamp(Date().addingTimeInterval(3600)), user: Self.owner, scanner: nil))
        }
        try body(ClientCoreServices(core: core, transport: transport, defaultServer: nil), core, folder)
    }

    static let csv = "id,shortId,raw,result,visitorId,checkpointId,scannedBy,scannedAt,receivedAt,offline,offlineDecision\r\n"
        + "s1,K7Q2M9XD,GP1:K7Q2M9XD,CHECKED_IN,v1,c1,u1,2026-11-30T09:00:00Z,2026-11-30T09:00:00Z,false,\r\n"
        + "s2,,\"two\r\nlines\",INVALID,,c1,u1,2026-11-30T09:01:00Z,2026-11-30T09:01:00Z,false,\r\n"

    func mode(_ path: String) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func throughTheClientCoreTheCSVIsWrittenWithMode0600AndNeverOverAFileUnlessAsked() throws {
        let requests = Locked<[String]>([])
        try withCoreServices({ request in
            requests.withLock { $0.append(request.url) }
            return HTTPResponse(status: 200, headers: ["content-type": "text/csv"], body: Array(Self.csv.utf8))
        }) { services, _, folder in
            let path = folder + "/scans.csv"
            let filter = ScanHistoryFilter(from: Fixtures.instant("2026-11-30T00:00:00Z"), result: .checkedIn)
            #expect(try services.exportScanHistoryCSV(filter: filter, toPath: path, overwrite: false) == .saved(rows: 2, path: path))
            #expect(try String(contentsOfFile: path, encoding: .utf8) == Self.csv)
            #expect(try mode(path) == 0o600)
            let url = try #require(requests.withLock { $0.first })
            #expect(url.hasPrefix("http://gate.test/api/admin/scan-history.csv?"))
            #expect(url.contains("from=2026-11-30T00:00:00Z") && url.contains("result=CHECKED_IN"))
            // An existing file is refused before anything is fetched.
            try Data("keep me".utf8).write(to: URL(fileURLWithPath: path))
            chmod(path, 0o644)
            #expect(try services.exportScanHistoryCSV(filter: filter, toPath: path, overwrite: false) == .fileExists(path: path))
            #expect(requests.withLock { $0.count } == 1)
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "keep me")
            // Asked to, it replaces the file, private again.
            #expect(try services.exportScanHistoryCSV(filter: filter, toPath: path, overwrite: true) == .saved(rows: 2, path: path))
            #expect(try String(contentsOfFile: path, encoding: .utf8) == Self.csv)
            #expect(try mode(path) == 0o600)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["scans.csv", "state"],
                    "no temporary file is left behind")
        }
    }

    /// api.md's scan-history has no checkpoint parameter: the gate chosen is kept on this side.
    @Test func throughTheClientCoreTheCheckpointFilterIsAppliedHereNotSent() throws {
        let requests = Locked<[String]>([])
        let at = Fixtures.instant("2026-11-30T09:00:00Z")
        let page = Page(items: [Fixtures.scan("s1", at: at, checkpoint: "c1"), Fixtures.scan("s2", at: at, checkpoint: "c2"),
                                Fixtures.scan("s3", at: at, checkpoint: "c1")], nextCursor: nil)
        let body = try JSONEncoder().encode(page)
        try withCoreServices({ request in
            requests.withLock { $0.append(request.url) }
            return HTTPResponse(status: 200, headers: ["content-type": "application/json"], body: Array(body))
        }) { services, _, _ in
            let read = try services.scanHistory(filter: ScanHistoryFilter(checkpointId: "c1"), limit: 100)
            #expect(read.value.scans.map(\.id) == ["s1", "s3"])
            let url = try #require(requests.withLock { $0.first })
            #expect(url.hasPrefix("http://gate.test/api/visitor-scanner/scan-history") && !url.contains("checkpointId"))
            #expect(try services.scanHistory(filter: ScanHistoryFilter(), limit: 100).value.scans.count == 3)
        }
    }

    @Test func throughTheClientCoreBadPathsAreRefusedInWords() throws {
        try withCoreServices({ _ in HTTPResponse(status: 200, headers: [:], body: Array(Self.csv.utf8)) }) { services, _, folder in
            let filter = ScanHistoryFilter()
            #expect(throws: ConsoleError.refused("the folder \(folder)/missing does not exist; create it or choose another")) {
                try services.exportScanHistoryCSV(filter: filter, toPath: folder + "/missing/scans.csv", overwrite: false)
            }
            #expect(throws: ConsoleError.refused("\(folder)/state is a folder; add a file name")) {
                try services.exportScanHistoryCSV(filter: filter, toPath: folder + "/state", overwrite: true)
            }
            #expect(throws: ConsoleError.refused("the path must start with / (it was scans.csv)")) {
                try services.exportScanHistoryCSV(filter: filter, toPath: "scans.csv", overwrite: false)
            }
            try FileManager.default.createSymbolicLink(atPath: folder + "/link.csv", withDestinationPath: folder + "/target.csv")
            #expect(throws: ConsoleError.refused("\(folder)/link.csv is a symbolic link; type the path of the file itself")) {
                try services.exportScanHistoryCSV(filter: filter, toPath: folder + "/link.csv", overwrite: true)
            }
            #expect(!FileManager.default.fileExists(atPath: folder + "/target.csv"), "nothing is written through a link")
            // Root may write anywhere, so a read-only folder only refuses other users.
            let locked = folder + "/locked"
            try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false,
                                                    attributes: [.posixPermissions: 0o500])
            if getuid() != 0 {
                #expect(throws: ConsoleError.refused("no permission to write \(locked)/scans.csv; choose a folder of yours")) {
                    try services.exportScanHistoryCSV(filter: filter, toPath: locked + "/scans.csv", overwrite: false)
                }
            }
            #expect(PrivateFile.refusal(EACCES, folder: locked, path: locked + "/x.csv")
                == .refused("no permission to write \(locked)/x.csv; choose a folder of yours"))
            #expect(PrivateFile.refusal(EROFS, folder: "/media/cd", path: "/media/cd/x.csv")
                == .refused("/media/cd is on a read-only file system"))
        }
    }

    @Test func csvRowsAreCountedWithoutTheHeaderOrQuotedLineBreaks() {
        #expect(PrivateFile.csvRowCount("") == 0)
        #expect(PrivateFile.csvRowCount("id,result\r\n") == 0)
        #expect(PrivateFile.csvRowCount(Self.csv) == 2)
        #expect(PrivateFile.csvRowCount("a\nb\nc") == 2)
    }

    /// A server of `total` scans that pages them by an offset cursor.
    static func pagingServer(total: Int, limits: Locked<[Int]>) -> @Sendable (HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
        { request in
            let query = URLComponents(string: request.url)?.queryItems ?? []
            let limit = Int(query.first { $0.name == "limit" }?.value ?? "50") ?? 50
            let offset = Int(query.first { $0.name == "cursor" }?.value ?? "0") ?? 0
            limits.withLock { $0.append(limit) }
            let items = (offset..<min(total, offset + limit)).map {
                Fixtures.scan("s\($0)", at: Fixtures.instant("2026-11-30T12:00:00Z").addingTimeInterval(Double(-$0)))
            }
            let next = offset + limit < total ? String(offset + limit) : nil
            let body = try! JSONEncoder().encode(Page(items: items, nextCursor: next))
            return HTTPResponse(status: 200, headers: ["content-type": "application/json"], body: Array(body))
        }
    }

    @Test func throughTheClientCoreTheHistoryFollowsPagesUpToTheCapAndFallsBackToTheCache() throws {
        let limits = Locked<[Int]>([])
        let unreachable = Locked(false)
        let server = Self.pagingServer(total: 1_200, limits: limits)
        try withCoreServices({ request throws(HTTPTransportError) in
            if unreachable.withLock({ $0 }) { throw .cannotConnect(url: request.url, detail: "connection refused") }
            return try server(request)
        }) { services, _, _ in
            let day = ScanHistoryFilter(from: Fixtures.instant("2026-11-30T00:00:00Z"), to: Fixtures.instant("2026-12-01T00:00:00Z"))
            let all = try services.scanHistory(filter: day, limit: 5_000)
            #expect(all.value.scans.count == 1_200 && !all.value.isCapped && !all.fromCache)
            #expect(limits.withLock { $0 } == [500, 500, 500])
            limits.withLock { $0 = [] }
            let capped = try services.scanHistory(filter: day, limit: 700)
            #expect(capped.value.scans.count == 700 && capped.value.isCapped)
            #expect(capped.value.scans.first?.id == "s0" && capped.value.scans.last?.id == "s699")
            #expect(limits.withLock { $0 } == [500, 200])
            // Offline: the same filter answers from the cache; another filter has nothing.
            unreachable.withLock { $0 = true }
            let cached = try services.scanHistory(filter: day, limit: 700)
            #expect(cached.fromCache && cached.value.scans.count == 700 && cached.value.isCapped)
            #expect(throws: ConsoleError.offline("connection refused")) {
                try services.scanHistory(filter: ScanHistoryFilter(result: .rejected), limit: 700)
            }
            #expect(services.historyCheckpointNames().isEmpty)
            #expect(services.historyVisitorNames(ids: ["v1"]).isEmpty)
        }
    }

    @Test func throughTheClientCoreNamesComeFromCheckpointsAndTheNewestVisitors() throws {
        let paths = Locked<[String]>([])
        try withCoreServices({ request in
            let path = URLComponents(string: request.url)?.path ?? ""
            paths.withLock { $0.append(path) }
            let body: Data
            if path == "/api/checkpoints" {
                body = try! JSONEncoder().encode(Page(items: [Checkpoint(id: "c1", name: "Main gate", organizationId: "org-1",
                                                                         isDefault: true, createdAt: Timestamp(Fixtures.now))],
                                                      nextCursor: nil))
            } else {
                body = try! JSONEncoder().encode(Page(items: [Fixtures.visitor(1, name: "Ana Pop")], nextCursor: nil))
            }
            return HTTPResponse(status: 200, headers: [:], body: Array(body))
        }) { services, _, _ in
            #expect(services.historyCheckpointNames() == ["c1": "Main gate"])
            #expect(services.historyVisitorNames(ids: ["v1", "v9"]) == ["v1": "Ana Pop"])
            #expect(services.historyVisitorNames(ids: ["v1", "v9"]) == ["v1": "Ana Pop"])
            #expect(paths.withLock { $0 } == ["/api/checkpoints", "/api/visitors"], "an unknown id does not cost a request each time")
        }
    }
}
