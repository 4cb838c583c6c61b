import Foundation
import GatePassCore
import Testing
@testable import GatePassConsole

/// A visitor's management keys for owners and admins, and the pass drawn in the terminal.
@Suite struct VisitorManagementTests {
    func withDetail(_ visitor: Visitor, management: Bool = true,
                    _ body: (VisitorDetailScreen, FakeVisitorsServices, FakeConsoleServices) throws -> Void) rethrows {
        let console = FakeConsoleServices()
        console.details[visitor.id] = .success(ConsoleRead(value: VisitorDetail(visitor: visitor, context: nil),
                                                           updatedAt: Fixtures.now, fromCache: false))
        let services = FakeVisitorsServices()
        let screen = VisitorDetailScreen(visitor: visitor, services: console, clock: { Fixtures.now },
                                         siteClock: SiteClock(zoneNamed: "UTC")!, management: management ? services : nil)
        _ = screen.appear()
        try body(screen, services, console)
    }

    static let expected = Fixtures.listed(1, name: "Ana Pop")
    static var inside: Visitor { Fixtures.inside(2, name: "Dan Ene") }

    func footer(_ screen: VisitorDetailScreen, width: Int = 120, height: Int = 24) -> [String] {
        let canvas = Fixtures.render(screen, width: width, height: height)
        return [canvas.line(height - 3), canvas.line(height - 2), canvas.line(height - 1)]
    }

    @Test func theKeyHintAndHelpNameTheManagementKeysOnlyForOwnersAndAdmins() {
        withDetail(Self.expected) { screen, _, _ in
            #expect(footer(screen).last == "c: cancel · o: check out · i: invitation · p: pass · Esc: back")
            let keys = screen.keyHelp.map(\.key)
            for key in ["c", "o", "i", "p"] { #expect(keys.contains(key)) }
        }
        withDetail(Self.expected, management: false) { screen, services, _ in
            #expect(footer(screen).last == "Esc: back")
            for key in ["c", "o", "i", "p"] { #expect(screen.handle(.character(Character(key))) == .none) }
            #expect(services.calls.isEmpty)
            #expect(!screen.keyHelp.map(\.key).contains("p"))
        }
    }

    @Test func cancelAsksYesOrNoAndSendsOnlyOnYes() {
        withDetail(Self.expected) { screen, services, _ in
            #expect(screen.handle(.character("c")) == .redraw)
            #expect(screen.confirmation == .cancel && screen.isCapturingText)
            #expect(footer(screen)[1] == "Cancel the visit of Ana Pop? The pass stops working. y/n")
            #expect(screen.handle(.character("x")) == .none)
            #expect(screen.handle(.character("n")) == .redraw)
            #expect(screen.result?.text == "Nothing was sent." && !services.calls.contains("cancel v1"))
            _ = screen.handle(.character("c"))
            _ = screen.handle(.escape)
            #expect(screen.confirmation == nil && !services.calls.contains("cancel v1"))
            var cancelled = Self.expected
            cancelled.status = .cancelled
            services.actionResult = .success(cancelled)
            _ = screen.handle(.character("c"))
            #expect(screen.handle(.character("y")) == .redraw)
            #expect(services.calls.contains("cancel v1"))
            #expect(screen.visitor.status == .cancelled)
            #expect(screen.result == .init(kind: .ok, text: "Cancelled: the pass no longer admits."))
            #expect(Fixtures.render(screen).line(0) == "Ana Pop — cancelled")
            _ = screen.handle(.character("c"))
            #expect(screen.confirmation == nil && screen.result?.text == "Nothing to cancel: the visitor is cancelled.")
        }
    }

    @Test func checkOutIsOnlyForVisitorsInsideAndAFailureIsSaid() {
        withDetail(Self.expected) { screen, services, _ in
            _ = screen.handle(.character("o"))
            #expect(screen.confirmation == nil)
            #expect(screen.result == .init(kind: .warning, text: "Only a visitor who is checked in can be checked out; this one is expected."))
            _ = screen.handle(.character("c"))
            #expect(screen.confirmation == .cancel, "the expected visitor can be cancelled")
            _ = screen.handle(.character("n"))
            #expect(services.calls.filter { $0.hasPrefix("checkOut") }.isEmpty)
        }
        withDetail(Self.inside) { screen, services, _ in
            _ = screen.handle(.character("c"))
            #expect(screen.result?.text == "The visitor is inside: check them out (o) instead of cancelling.")
            services.actionResult = .failure(.refused("the visitor is not checked in"))
            _ = screen.handle(.character("o"))
            #expect(footer(screen)[1] == "Check Dan Ene out now? y/n")
            #expect(screen.handle(.character("Y")) == .alert)
            #expect(screen.result == .init(kind: .error, text: "Not checked out: Refused: the visitor is not checked in."))
            var out = Self.inside
            out.status = .checkedOut
            services.actionResult = .success(out)
            _ = screen.handle(.character("o"))
            _ = screen.handle(.character("y"))
            #expect(screen.result?.text == "Checked out." && screen.visitor.status == .checkedOut)
        }
    }

    @Test func theInvitationNeedsAnEmailAndSaysWhereThePassPageIs() {
        withDetail(Fixtures.listed(3, name: "No Mail", email: nil)) { screen, services, _ in
            _ = screen.handle(.character("i"))
            #expect(screen.result?.text == "No invitation without the visitor's email; this visitor has none.")
            #expect(!services.calls.contains("invite v3"))
        }
        withDetail(Self.expected) { screen, services, _ in
            _ = screen.handle(.character("i"))
            #expect(footer(screen, width: 200)[1] == "Send the invitation to v@example.com? A new pass page; an earlier one stops working. y/n")
            _ = screen.handle(.character("y"))
            #expect(screen.result == .init(kind: .ok, text: "Invitation queued for v@example.com; pass page http://gate.test/p/tok"))
            services.inviteResult = .failure(.offline("connection refused"))
            _ = screen.handle(.character("i"))
            _ = screen.handle(.character("y"))
            #expect(screen.result?.text == "Not sent: The server cannot be reached (connection refused); try again when it is back.")
            #expect(services.calls.filter { $0 == "invite v1" }.count == 2)
        }
    }

    @Test func whoDecidedIsShownByNameWhenTheUsersListNamesThem() {
        var decided = Self.expected
        decided.status = .approved
        decided.decidedAt = Fixtures.now.addingTimeInterval(-600)
        decided.decidedBy = "u7"
        decided.decisionNote = "ok \u{1B}[31m"
        decided.requiresApproval = true
        decided.approverId = "u8"
        decided.checkpointId = "c2"
        withDetail(decided) { screen, services, _ in
            let canvas = Fixtures.render(screen, width: 100, height: 30)
            let row = Fixtures.row(canvas, containing: "Decided by").map(canvas.line)
            #expect(row == "Decided by      Ion Ene")
            #expect(Fixtures.row(canvas, containing: "Approval ").map(canvas.line) == "Approval        an approver decides at the gate")
            #expect(Fixtures.row(canvas, containing: "Approver").map(canvas.line) == "Approver        u8", "not named: the id")
            #expect(Fixtures.row(canvas, containing: "Gate").map(canvas.line) == "Gate            Dock")
            _ = screen.receive(Fixtures.event(.visitorArrived, decided))
            _ = screen.appear()
            #expect(services.calls.filter { $0 == "userNames" }.count == 1, "looked up once, even for the id it could not name")
            #expect(services.calls.filter { $0 == "gateNames" }.count == 1)
            #expect(Fixtures.row(canvas, containing: "ok \\x1b[31m") != nil, "the note is spelled out")
        }
        decided.decidedBy = "u99"
        withDetail(decided) { screen, _, _ in
            let canvas = Fixtures.render(screen, width: 100, height: 30)
            #expect(Fixtures.row(canvas, containing: "Decided by").map(canvas.line) == "Decided by      u99")
        }
    }

    // MARK: - The pass

    @Test func thePassIsDrawnWithHalfBlocksInsideAQuietZoneOfFour() {
        // The 3×3 code: rows 1 0 1 / 0 1 0 / 1 1 0, in a 11×11 square with the quiet zone.
        let rows = FakeVisitorsServices.smallCode.halfBlockRows()
        #expect(rows.count == 6, "11 modules high, two per row: 6 rows, the last half light")
        #expect(rows.allSatisfy { $0.count == 11 })
        #expect(rows[0] == String(repeating: " ", count: 11))
        #expect(rows[1] == String(repeating: " ", count: 11))
        // Module rows 4 and 5 (code rows 0 and 1): ▀ where only the top is dark, ▄ only the bottom.
        #expect(rows[2] == "    ▀▄▀    ")
        // Module rows 6 and 7: code row 2 over the quiet zone.
        #expect(rows[3] == "    ▀▀     ")
        #expect(rows[4] == String(repeating: " ", count: 11) && rows[5] == rows[4])
        let full = PassCode(text: "x", size: 2, modules: [true, true, true, true]).halfBlockRows(quietZone: 0)
        #expect(full == ["██"], "two modules high: one row")
    }

    @Test func pShowsThePassBlackOnWhiteCentredWithTheShortIdAndEscGoesBack() {
        withDetail(Self.expected) { screen, services, _ in
            #expect(screen.handle(.character("p")) == .redraw)
            #expect(services.calls.contains("passCode v1"))
            #expect(screen.isCapturingText)
            let canvas = Fixtures.render(screen, width: 41, height: 12)
            #expect(canvas.line(0) == "Pass of Ana Pop · valid 15 Jun 2025 15:0…")
            // 11 columns centred in 41: from column 15.
            #expect(canvas.line(3) == String(repeating: " ", count: 19) + "▀▄▀")
            #expect((15..<26).allSatisfy { canvas[$0, 1].style.role == .code }, "the quiet zone is drawn light too")
            #expect(canvas[14, 1].style.role != .code)
            #expect(canvas.line(7) == String(repeating: " ", count: 16) + "K7Q2M9XD")
            #expect(canvas.line(11) == "s: save the pass as PNG in the current f…")
            #expect(screen.keyHelp.map(\.key) == ["s", "Esc"])
            #expect(screen.handle(.escape) == .redraw)
            #expect(screen.pass == nil && Fixtures.render(screen).line(0) == "Ana Pop — expected")
        }
    }

    @Test func aTerminalTooSmallForTheCodeSaysSoAndOffersThePNG() {
        withDetail(Self.expected) { screen, services, _ in
            _ = screen.handle(.character("p"))
            let canvas = Fixtures.render(screen, width: 200, height: 8)
            #expect(canvas.line(1) == "The terminal is too small for the pass code: it needs 11 columns and 9 rows, this one has 200×8.")
            #expect(canvas.line(2) == "Make the terminal larger, or press s to save the pass as a PNG in the current folder.")
            #expect(canvas.line(3) == "Short id: K7Q2M9XD")
            #expect(!canvas.text.contains("▀"))
            let narrow = Fixtures.render(screen, width: 10, height: 30)
            #expect(narrow.line(1) == "The termi…" && !narrow.text.contains("▀"), "too narrow: said, not drawn")
            #expect(screen.handle(.character("s")) == .redraw)
            #expect(services.calls.contains("savePassPNG v1"))
            #expect(Fixtures.render(screen, width: 200, height: 8).line(6)
                    == "Saved /work/here/gatepass-pass-K7Q2M9XD.png (readable by you only).")
            services.savePassResult = .failure(.refused("no permission to write /work/here/gatepass-pass-K7Q2M9XD.png; choose a folder of yours"))
            _ = screen.handle(.character("s"))
            #expect(screen.pass?.saved?.text == "Not saved: Refused: no permission to write /work/here/gatepass-pass-K7Q2M9XD.png; choose a folder of yours.")
            #expect(screen.handle(.character("q")) == .redraw && screen.pass == nil)
        }
    }

    @Test func aCancelledPassSaysItNoLongerAdmitsAndACodeThatCannotBeDrawnIsSaid() {
        var cancelled = Self.expected
        cancelled.status = .cancelled
        withDetail(cancelled) { screen, services, _ in
            services.passCodeResult = .failure(.failed("libqrencode could not encode 12 bytes"))
            _ = screen.handle(.character("p"))
            let canvas = Fixtures.render(screen, width: 120, height: 20)
            #expect(canvas.line(1) == "This pass no longer admits: the visitor is cancelled.")
            #expect(canvas.line(2) == "The pass code could not be drawn: Failed: libqrencode could not encode 12 bytes.")
        }
    }

    @Test func thePassViewSurvivesEveryTerminalSize() {
        withDetail(Self.expected) { screen, _, _ in
            _ = screen.handle(.character("p"))
            for (width, height) in [(0, 0), (1, 1), (11, 9), (11, 8), (10, 9), (300, 100)] {
                let canvas = Fixtures.render(screen, width: width, height: height)
                for y in 0..<height { #expect(canvas.line(y).count <= width) }
            }
            #expect(Fixtures.render(screen, width: 11, height: 9).text.contains("▀▄▀"), "exactly enough room")
            #expect(!Fixtures.render(screen, width: 11, height: 8).text.contains("▀▄▀"))
        }
    }
}
