import Foundation
import GatePassCore
import Testing
@testable import GatePassConsole

@Suite struct VisitorDetailScreenTests {
    static let context = ApprovalContext(previousVisits: 3, lastVisitAt: Timestamp(Fixtures.now.addingTimeInterval(-7 * 86_400)),
                                         requestedAtCheckpoint: CheckpointSummary(id: "c1", name: "Main gate"))
    static let utc = TimeZone(identifier: "UTC")!

    /// A detail screen over visitor 1 with its context loaded; decisions are recorded.
    func withScreen(_ visitor: Visitor = Fixtures.visitor(1, name: "Ana Pop"), context: ApprovalContext? = Self.context,
                    fromCache: Bool = false,
                    _ body: (VisitorDetailScreen, FakeConsoleServices, Recorder) throws -> Void) rethrows {
        let services = FakeConsoleServices()
        services.details[visitor.id] = .success(ConsoleRead(value: VisitorDetail(visitor: visitor, context: context),
                                                            updatedAt: Fixtures.now.addingTimeInterval(fromCache ? -600 : 0),
                                                            fromCache: fromCache))
        let recorder = Recorder()
        let screen = VisitorDetailScreen(visitor: visitor, services: services, clock: TestClock().function, siteClock: SiteClock(zoneNamed: "UTC")!,
                                         onDecision: { recorder.outcomes.append(($0, $1)) })
        #expect(screen.appear() == .redraw)
        try body(screen, services, recorder)
    }

    final class Recorder { var outcomes: [(String, DecisionOutcome)] = [] }

    @Test func showsEverythingAboutTheVisitorAndTheApprovalContext() {
        withScreen { screen, services, _ in
            #expect(services.calls == ["visitorDetail v1"])
            let canvas = Fixtures.render(screen, width: 70, height: 24)
            let lines = (0..<24).map(canvas.line)
            #expect(lines[0] == "Ana Pop — awaiting approval")
            #expect(canvas[0, 0].style == .title)
            #expect(lines[1] == "Short id        K7Q2M9XD")
            #expect(lines.contains("Company         Acme"))
            #expect(lines.contains("Purpose         Delivery"))
            #expect(lines.contains("Host            Ion"))
            #expect(lines.contains("Email           v1@example.com"))
            #expect(lines.contains("Phone           +407000001"))
            #expect(lines.contains("Walk-in         no"))
            #expect(lines.contains("Requested       15 Jun 2025 15:01 (5 min ago)"))
            #expect(lines.contains("Previous visits 3 (last 08 Jun 2025 15:06)"))
            #expect(lines.contains("Requested at    Main gate"))
            #expect(lines.contains("Valid           15 Jun 2025 14:06–16:06 (UTC)"))
            #expect(lines[23] == "a: approve · r: reject · Esc: back")
        }
    }

    @Test func withoutAContextTheVisitorAloneIsShown() {
        withScreen(context: nil) { screen, _, _ in
            let text = Fixtures.render(screen, width: 70, height: 24).text
            #expect(!text.contains("Previous visits") && text.contains("Company         Acme"))
        }
    }

    @Test func offlineTheDetailSaysHowOldItIs() {
        withScreen(fromCache: true) { screen, _, _ in
            let canvas = Fixtures.render(screen, width: 70, height: 24)
            #expect(canvas.line(1) == "Offline: showing what was known 10 min ago.")
            #expect(canvas[0, 1].style.role == .warning)
        }
    }

    @Test func aDetailThatCannotBeReadStillShowsTheListsVisitorAndSaysWhy() {
        let services = FakeConsoleServices()
        services.details["v1"] = .failure(.offline("connection refused"))
        let screen = VisitorDetailScreen(visitor: Fixtures.visitor(1, name: "Ana Pop"), services: services,
                                         clock: TestClock().function, siteClock: SiteClock(zoneNamed: "UTC")!)
        _ = screen.appear()
        let canvas = Fixtures.render(screen, width: 140, height: 24)
        #expect(canvas.line(0) == "Ana Pop — awaiting approval")
        #expect(canvas.line(1) == "Could not load everything about this visitor. The server cannot be reached (connection refused); try again when it is back.")
        #expect(canvas[0, 1].style.role == .danger)
        #expect(canvas.text.contains("Company         Acme"))
    }

    @Test func approveAsksForANoteThenSendsItAndShowsTheResult() {
        withScreen { screen, services, recorder in
            var approved = Fixtures.visitor(1, name: "Ana Pop", status: .approved)
            approved.decisionNote = "welcome"
            services.decision = .applied(approved)
            #expect(!screen.isCapturingText)
            #expect(screen.handle(.character("a")) == .redraw)
            #expect(screen.isCapturingText && screen.prompt?.decision == .approve)
            var canvas = Fixtures.render(screen, width: 70, height: 24)
            #expect(canvas.line(22) == "Approve Ana Pop? Note (optional): _")
            #expect(canvas.line(23) == "Enter: send · Esc: cancel")
            Fixtures.type("welcomeX", into: screen)
            #expect(screen.handle(.backspace) == .redraw)
            #expect(screen.prompt?.noteText == "welcome")
            #expect(Fixtures.render(screen, width: 70, height: 24).line(22) == "Approve Ana Pop? Note (optional): welcome_")
            #expect(screen.handle(.enter) == .redraw)
            #expect(services.decisions.count == 1)
            #expect(services.decisions.first?.decision == .approve && services.decisions.first?.note == "welcome")
            #expect(services.decisions.first?.visitorId == "v1")
            #expect(screen.prompt == nil && !screen.isCapturingText)
            #expect(screen.visitor.status == .approved)
            #expect(recorder.outcomes.map(\.0) == ["v1"] && recorder.outcomes.first?.1 == .applied(approved))
            canvas = Fixtures.render(screen, width: 70, height: 24)
            #expect(canvas.line(0) == "Ana Pop — approved")
            #expect(canvas.line(22) == "Approved.")
            #expect(canvas[0, 22].style.role == .ok)
            #expect(canvas.line(23) == "Esc: back")
            #expect(canvas.text.contains("Note            welcome"))
        }
    }

    @Test func enterAcceptsAnEmptyNote() {
        withScreen { screen, services, _ in
            services.decision = .applied(Fixtures.visitor(1, status: .rejected))
            _ = screen.handle(.character("r"))
            Fixtures.type("   ", into: screen)
            #expect(screen.handle(.enter) == .redraw)
            #expect(services.decisions.count == 1 && services.decisions.first?.decision == .reject)
            #expect(services.decisions.first?.note == nil)
            #expect(Fixtures.render(screen, width: 70, height: 24).line(22) == "Rejected.")
        }
    }

    @Test func escClosesThePromptWithoutSendingAndThenGoesBack() {
        withScreen { screen, services, recorder in
            _ = screen.handle(.character("r"))
            Fixtures.type("no", into: screen)
            #expect(screen.handle(.escape) == .redraw)
            #expect(screen.prompt == nil && services.decisions.isEmpty && recorder.outcomes.isEmpty)
            #expect(Fixtures.render(screen, width: 70, height: 24).line(22) == "Cancelled: nothing was sent.")
            #expect(screen.handle(.escape) == .back)
        }
    }

    @Test func offlineTheDecisionQueues() {
        withScreen { screen, services, recorder in
            services.decision = .queued
            _ = screen.handle(.character("r"))
            _ = screen.handle(.enter)
            let canvas = Fixtures.render(screen, width: 70, height: 24)
            #expect(canvas.line(22) == "Queued, will be sent when the server is back.")
            #expect(canvas[0, 22].style.role == .warning)
            #expect(recorder.outcomes.first?.1 == .queued)
            #expect(screen.visitor.status == .awaitingApproval)
        }
    }

    @Test func aRefusalRingsAndIsSaidPlainly() {
        withScreen { screen, services, _ in
            services.decision = .refused("the visitor is APPROVED, not AWAITING_APPROVAL")
            _ = screen.handle(.character("a"))
            #expect(screen.handle(.enter) == .alert)
            let canvas = Fixtures.render(screen, width: 80, height: 24)
            #expect(canvas.line(22) == "Not approved: the visitor is APPROVED, not AWAITING_APPROVAL")
            #expect(canvas[0, 22].style.role == .danger)
        }
    }

    @Test func anEndedSessionSaysToLogInAgain() {
        withScreen { screen, services, _ in
            services.decision = .needsLogin("the session has expired")
            _ = screen.handle(.character("a"))
            #expect(screen.handle(.enter) == .redraw)
            #expect(screen.result?.text == "Your session has ended (the session has expired). Log in again; the decision stays queued and is sent after the login.")
        }
    }

    @Test func thePromptTakesEveryPrintableKeyUpToAThousandCharacters() {
        withScreen { screen, services, _ in
            _ = screen.handle(.character("a"))
            Fixtures.type("arq?j", into: screen)
            #expect(screen.prompt?.noteText == "arq?j" && screen.prompt?.decision == .approve)
            #expect(screen.handle(.character("\u{1B}")) == .none && screen.handle(.character("\n")) == .none)
            #expect(screen.handle(.up) == .none && screen.handle(.home) == .none)
            #expect(screen.handle(.control("u")) == .redraw && screen.prompt?.noteText == "")
            #expect(screen.handle(.backspace) == .none)
            Fixtures.type(String(repeating: "n", count: 1_200), into: screen)
            #expect(screen.prompt?.noteText.count == 1_000)
            let line = Fixtures.render(screen, width: 60, height: 24).line(22)
            #expect(line.count == 60 && line.hasSuffix("nnn_") && line.contains("…"))
            #expect(screen.keyHelp.map(\.key) == ["Enter", "Esc", "Backspace"])
            _ = screen.handle(.enter)
            #expect(services.decisions.first?.note?.count == 1_000)
        }
    }

    @Test func aVisitorNoLongerAwaitingCannotBeDecided() {
        withScreen(Fixtures.visitor(1, name: "Ana Pop", status: .checkedIn)) { screen, services, _ in
            #expect(screen.handle(.character("a")) == .redraw)
            #expect(screen.prompt == nil)
            #expect(screen.result?.text == "Nothing to decide: the visitor is checked in.")
            _ = screen.handle(.character("r"))
            #expect(services.decisions.isEmpty)
        }
    }

    @Test func aDecisionMadeElsewhereClosesThePromptAndUpdatesTheVisitor() {
        withScreen { screen, services, _ in
            _ = screen.handle(.character("a"))
            var decided = Fixtures.visitor(1, name: "Ana Pop", status: .rejected)
            decided.decidedBy = "someone"
            #expect(screen.receive(Fixtures.event(.visitorDecided, decided)) == .redraw)
            #expect(screen.prompt == nil && services.decisions.isEmpty)
            #expect(screen.result?.text == "Someone else decided first: the visitor is now rejected.")
            #expect(screen.receive(Fixtures.event(.visitorDecided, Fixtures.visitor(2))) == .none)
            #expect(screen.receive(ServerEvent(id: 9, kindName: "stream.gap", data: "{}")) == .none)
        }
    }

    @Test func upDownHomeAndEndScrollTheDetailsOnASmallScreen() {
        withScreen { screen, _, _ in
            _ = Fixtures.render(screen, width: 60, height: 6)   // title, 3 detail rows, a gap, the hint
            #expect(screen.handle(.up) == .none)
            #expect(screen.handle(.down) == .redraw && screen.scroll == 1)
            #expect(screen.handle(.character("j")) == .redraw && screen.scroll == 2)
            #expect(screen.handle(.character("k")) == .redraw && screen.scroll == 1)
            #expect(screen.handle(.end) == .redraw)
            let end = Fixtures.render(screen, width: 60, height: 6)
            #expect(end.line(3).hasPrefix("Registered") && end.line(4).isEmpty)
            #expect(screen.handle(.down) == .none)
            #expect(screen.handle(.home) == .redraw && screen.scroll == 0)
            #expect(screen.handle(.pageDown) == .redraw && screen.handle(.pageUp) == .redraw && screen.scroll == 0)
            #expect(Fixtures.render(screen, width: 60, height: 6).line(1).hasPrefix("Short id"))
            #expect(screen.handle(.character("x")) == .none && screen.handle(.resize) == .redraw)
            #expect(screen.keyHelp.map(\.key) == ["a", "r", "Up, k / Down, j", "Home, End", "Esc"])
        }
    }

    @Test func hostileVisitorDataStaysOnItsLines() {
        let hostile = Visitor(id: "v1", shortId: ShortID("K7Q2M9XD")!, name: "\u{1B}[31mRed\nName", email: "",
                              company: String(repeating: "C", count: 10_000), purpose: "", hostName: nil,
                              requiresApproval: true, status: .awaitingApproval,
                              validity: ValidityWindow(from: Fixtures.now, until: Fixtures.now), createdAt: Fixtures.now)
        withScreen(hostile, context: nil) { screen, _, _ in
            let canvas = Fixtures.render(screen, width: 40, height: 20)
            // Escapes and line breaks are spelled out (issue 9), never obeyed, never a second line.
            #expect(canvas.line(0) == "\\x1b[31mRed\\nName — awaiting approval")
            let company = (0..<20).map(canvas.line).first { $0.hasPrefix("Company") }
            #expect(company == "Company      " + String(repeating: "C", count: 26) + "…")
            #expect(!canvas.text.contains("Email") && !canvas.text.contains("Purpose"), "empty fields are left out")
            _ = screen.handle(.character("a"))
            #expect(Fixtures.render(screen, width: 40, height: 20).line(18).hasPrefix("Approve \\x1b[31mRed\\nName? No"))
        }
        let nameless = Fixtures.visitor(2, name: "")
        withScreen(nameless) { screen, _, _ in
            #expect(Fixtures.render(screen).line(0) == "(no name) — awaiting approval")
        }
    }

    @Test func tinyAreasNeverCrashAndNeverSpillOver() {
        withScreen(fromCache: true) { screen, services, _ in
            services.decision = .refused(String(repeating: "why ", count: 100))
            for step in 0..<3 {
                if step == 1 { _ = screen.handle(.character("a")); Fixtures.type("note", into: screen) }
                if step == 2 { _ = screen.handle(.enter) }
                for width in 0...10 {
                    for height in 0...10 {
                        var canvas = Canvas(width: 12, height: 12)
                        screen.render(into: &canvas, area: Area(x: 1, y: 1, width: width, height: height))
                        for y in 0..<12 {
                            #expect(canvas.line(y).count <= 1 + width)
                            if y == 0 || y > height { #expect(canvas.line(y).isEmpty) }
                        }
                        if width >= 1, height >= 1 { #expect(!canvas.line(height).isEmpty, "the bottom line is the hint, prompt or result") }
                    }
                }
            }
            #expect(screen.result?.kind == .error)
        }
    }

    @Test func aDetailAlreadyReadIsShownWithoutReadingItAgainOnOpen() {
        let services = FakeConsoleServices()
        let read = ConsoleRead(value: VisitorDetail(visitor: Fixtures.visitor(1, name: "Ana Pop"), context: Self.context),
                               updatedAt: Fixtures.now.addingTimeInterval(-600), fromCache: true)
        services.details["v1"] = .success(read)
        let screen = VisitorDetailScreen(detail: read, services: services, clock: TestClock().function, siteClock: SiteClock(zoneNamed: "UTC")!)
        #expect(screen.appear() == .redraw)
        #expect(services.calls.isEmpty, "opened from a detail the shell had just read")
        #expect(screen.context == Self.context)
        #expect(screen.loaded?.fromCache == true && screen.loaded?.updatedAt == read.updatedAt)
        // Coming back to it later reads it again.
        #expect(screen.appear() == .redraw)
        #expect(services.calls == ["visitorDetail v1"])
    }
}
