import Foundation
import GatePassCore
import Testing
@testable import GatePassConsole

@Suite struct BlocklistScreenTests {
    func withScreen(_ entries: [BlocklistEntry], _ body: (BlocklistScreen, FakeGovernanceServices, TestClock) throws -> Void) rethrows {
        let services = FakeGovernanceServices()
        services.entries = entries
        let clock = TestClock()
        let screen = BlocklistScreen(services: services, clock: clock.function, fallbackZone: TimeZone(identifier: "UTC")!)
        #expect(screen.appear() == .redraw)
        try body(screen, services, clock)
    }

    static let two = [Fixtures.blocked("b1", name: "Ana Pop", email: "ana@example.com", reason: "threatened staff"),
                      Fixtures.blocked("b2", name: "Dan Ene", phone: "+40700001", company: "Bolt", reason: "stole a laptop",
                                       expiresAt: Fixtures.now.addingTimeInterval(-60))]

    @Test func listsEntriesWithReasonAndExpiryInTheSitesZone() {
        withScreen(Self.two) { screen, _, _ in
            let canvas = Fixtures.render(screen, width: 100, height: 10)
            #expect(canvas.line(0) == "Blocklist · 2 entries, 1 expired · times in Europe/Bucharest")
            #expect(canvas.line(1).hasPrefix("Name") && canvas.line(1).contains("Reason") && canvas.line(1).contains("Expires"))
            let ana = canvas.line(2), dan = canvas.line(3)
            #expect(ana.contains("Ana Pop") && ana.contains("ana@example.com") && ana.contains("threatened staff") && ana.hasSuffix("never"))
            // Expired a minute ago: 18:05 in Bucharest, and drawn dim.
            #expect(dan.contains("+40700001") && dan.contains("Bolt") && dan.hasSuffix("expired 18:05"))
            #expect(canvas[0, 3].style == .dim)
            #expect(canvas.line(9) == "n: add · d: remove · r: reload")
        }
    }

    @Test func emptyListAndServerErrorsAreLinesNotCrashes() {
        withScreen([]) { screen, services, _ in
            #expect(Fixtures.render(screen, width: 80, height: 6).line(1) == "Nobody is blocked. Press n to add an entry.")
            #expect(screen.handle(.character("d")) == .redraw)
            #expect(screen.notice?.text == "Nothing to remove: the list is empty.")
            services.blocklistError = .refused("FORBIDDEN: only OWNER or ADMIN")
            #expect(screen.handle(.character("r")) == .redraw)
            let canvas = Fixtures.render(screen, width: 80, height: 6)
            #expect(canvas.line(1) == "Could not load the blocklist. Refused: FORBIDDEN: only OWNER or ADMIN.")
        }
    }

    @Test func hostileAndOversizedValuesAreEscapedAndCut() {
        let evil = Fixtures.blocked("b1", name: "Evil\u{1B}[2J\u{1B}]0;owned\u{7}" + String(repeating: "N", count: 5_000),
                                    reason: "\u{202E}reversed\n" + String(repeating: "R", count: 5_000))
        withScreen([evil]) { screen, _, _ in
            let canvas = Fixtures.render(screen, width: 80, height: 8)
            #expect(!canvas.text.contains("\u{1B}") && !canvas.text.contains("\u{202E}") && !canvas.text.contains("\u{7}"))
            #expect(canvas.text.split(separator: "\n", omittingEmptySubsequences: false).count == 8, "one row per line")
            #expect(canvas.line(2).contains("Evil") && canvas.line(2).contains("…"))
        }
    }

    @Test func addFormChecksTheServersRulesThenSendsOnceWithOneKey() throws {
        try withScreen([]) { screen, services, _ in
            #expect(screen.handle(.character("n")) == .redraw)
            #expect(screen.isCapturingText && screen.isFormOpen)
            #expect(Fixtures.render(screen, width: 100, height: 14).line(0).hasPrefix("New blocklist entry · at least one of name, email, phone"))
            // Nothing typed: the first problem is said, its field gets the keyboard, nothing is sent.
            #expect(screen.handle(.control("s")) == .redraw)
            #expect(services.added.isEmpty)
            #expect(screen.form?.notice?.text == "Not sent: reason is required and must not be empty.")
            #expect(screen.form?.focus == BlocklistScreen.Field.reason.rawValue)
            Fixtures.type("threatened staff", into: screen)
            _ = screen.handle(.control("s"))
            #expect(screen.form?.notice?.text == "Not sent: give at least one of name, email and phone.")
            #expect(screen.form?.focus == BlocklistScreen.Field.name.rawValue)
            Fixtures.type("Ana Pop", into: screen)
            _ = screen.handle(.tab)
            Fixtures.type("not-an-email", into: screen)
            let canvas = Fixtures.render(screen, width: 100, height: 14)
            #expect(Fixtures.row(canvas, containing: "! email must be an email address") != nil, "checked as typed")
            _ = screen.handle(.control("u"))
            for _ in 0..<4 { _ = screen.handle(.tab) }
            Fixtures.type("2025-06-14 10:00", into: screen)
            _ = screen.handle(.control("s"))
            #expect(services.added.isEmpty)
            #expect(screen.form?.notice?.text == "Not sent: expires must be in the future (empty: never).")
            _ = screen.handle(.control("u"))
            Fixtures.type("2025-06-20 18:30", into: screen)
            // The server is away: the form stays, and the retry uses the same key.
            services.addError = .offline("connection refused")
            #expect(screen.handle(.enter) == .alert)
            #expect(screen.isFormOpen && screen.form?.notice?.text.hasPrefix("Not added: The server cannot be reached") == true)
            services.addError = nil
            #expect(screen.handle(.control("s")) == .redraw)
            #expect(services.added.count == 2 && services.added[0].key == services.added[1].key)
            let sent = try #require(services.added.last?.entry)
            #expect(sent.name == "Ana Pop" && sent.email == nil && sent.reason == "threatened staff")
            // 18:30 in Bucharest is 15:30 UTC.
            #expect(sent.expiresAt?.description == "2025-06-20T15:30:00Z")
            #expect(!screen.isFormOpen && screen.entries.map(\.id) == ["b1"])
            #expect(screen.notice?.text == "Added Ana Pop: every gate now stops a match.")
        }
    }

    @Test func escClosesAnUntouchedFormAtOnceAndATouchedOneAfterASecondEsc() {
        withScreen([]) { screen, services, _ in
            _ = screen.handle(.character("n"))
            #expect(screen.handle(.escape) == .redraw && !screen.isFormOpen)
            _ = screen.handle(.character("n"))
            Fixtures.type("x", into: screen)
            _ = screen.handle(.escape)
            #expect(screen.isFormOpen && screen.form?.notice?.text.hasPrefix("Press Esc again") == true)
            _ = screen.handle(.escape)
            #expect(!screen.isFormOpen && services.added.isEmpty && screen.notice?.text == "Nothing was added.")
        }
    }

    @Test func removeAsksFirstAndSaysWhatHappened() {
        withScreen(Self.two) { screen, services, _ in
            _ = screen.handle(.down)
            #expect(screen.handle(.character("d")) == .redraw)
            #expect(Fixtures.render(screen, width: 120, height: 8).line(7)
                    == "Remove Dan Ene from the blocklist? The gates stop matching it at once. y/n")
            #expect(screen.handle(.character("n")) == .redraw)
            #expect(services.calls.allSatisfy { !$0.hasPrefix("remove") } && screen.notice?.text == "Kept: nothing was removed.")
            _ = screen.handle(.character("d"))
            services.removeError = .refused("NOT_FOUND: no such entry")
            #expect(screen.handle(.character("y")) == .alert)
            #expect(screen.notice?.text == "Not removed: Refused: NOT_FOUND: no such entry.")
            services.removeError = nil
            _ = screen.handle(.character("d"))
            #expect(screen.handle(.character("y")) == .redraw)
            #expect(services.calls.contains("remove b2") && screen.entries.map(\.id) == ["b1"])
        }
    }

    @Test func securityAlertsBecomeRecentMatchesWithGateAndEntry() {
        withScreen(Self.two) { screen, services, clock in
            let visitor = Fixtures.visitor(4, name: "Ana\u{1B}[31m Pop", status: .checkedIn)
            clock.advance(60)
            #expect(screen.receive(Fixtures.securityAlert(visitor, entryId: "b1", checkpointId: "c2")) == .redraw)
            #expect(screen.receive(Fixtures.event(.visitorArrived, visitor)) == .none, "other events are no match")
            let canvas = Fixtures.render(screen, width: 100, height: 10)
            let heading = Fixtures.row(canvas, containing: "Recent matches at the gates")
            #expect(heading != nil)
            #expect(canvas.line((heading ?? 0) + 1) == "  18:07 Ana\\x1b[31m Pop at Dock (entry Ana Pop)")
            // An unknown gate: the names are read again, and its id is shown.
            let reads = services.calls.filter { $0 == "gateNames" }.count
            _ = screen.receive(Fixtures.securityAlert(visitor, entryId: "gone", checkpointId: "c-new-gate"))
            #expect(services.calls.filter { $0 == "gateNames" }.count == reads + 1)
            #expect(screen.matches.count == 2 && screen.matches[0].checkpointId == "c-new-gate")
            for number in 0..<30 { _ = screen.receive(Fixtures.securityAlert(visitor, entryId: "b1", id: Int64(number))) }
            #expect(screen.matches.count == BlocklistScreen.matchesKept)
        }
    }
}
