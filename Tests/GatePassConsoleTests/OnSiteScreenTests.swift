import Foundation
import GatePassCore
import Testing
@testable import GatePassConsole

@Suite struct OnSiteScreenTests {
    func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: width - text.count) }

    func withScreen(_ visitors: [Visitor], changes: [OnSiteRoll.LocalChange] = [], fromCache: Bool = false,
                    updatedAt: Date = Fixtures.now,
                    _ body: (OnSiteScreen, FakeVisitorsServices, TestClock) throws -> Void) rethrows {
        let services = FakeVisitorsServices()
        services.onSiteResult = .success(ConsoleRead(value: FakeVisitorsServices.roll(visitors, changes: changes), updatedAt: updatedAt,
                                                     fromCache: fromCache))
        let clock = TestClock()
        let screen = OnSiteScreen(services: services, clock: clock.function, fallbackZone: TimeZone(identifier: "UTC")!)
        #expect(screen.appear() == .redraw)
        try body(screen, services, clock)
    }

    /// The zone is named as the organization names it: a UTC site reads `(UTC)`, not
    /// Foundation's `GMT`, in the heading and in the exported roll.
    @Test func aUTCSiteIsNamedUTC() {
        let services = FakeVisitorsServices()
        services.siteResult = .success(ConsoleRead(value: Organization(id: "org-1", name: "Acme Works", timeZone: "UTC"),
                                                   updatedAt: Fixtures.now, fromCache: false))
        services.onSiteResult = .success(ConsoleRead(value: FakeVisitorsServices.roll(Self.two), updatedAt: Fixtures.now, fromCache: false))
        let screen = OnSiteScreen(services: services, clock: TestClock().function, fallbackZone: TimeZone(identifier: "Europe/Bucharest")!)
        #expect(screen.appear() == .redraw)
        #expect(Fixtures.render(screen).line(0) == "On site now: 2 people · Acme Works · 15 Jun 2025 15:06 (UTC)")
        #expect(screen.rollText().hasPrefix("On site at Acme Works — 15 Jun 2025 15:06 (UTC)\n"), "\(screen.rollText())")
    }

    static let two = [Fixtures.inside(1, name: "Zoe Lung", gate: "c2", minutesAgo: 90),
                      Fixtures.inside(2, name: "ana Pop", minutesAgo: 10)]

    @Test func listsEveryoneInsideByNameWithHostGateAndTimeInAndTheCount() {
        withScreen(Self.two + [Fixtures.visitor(3, status: .checkedOut)]) { screen, _, _ in
            #expect(screen.visitors.map(\.id) == ["v2", "v1"], "by name, and only who is checked in")
            let canvas = Fixtures.render(screen, width: 80, height: 8)
            #expect(canvas.line(0) == "On site now: 2 people · Acme Works · 15 Jun 2025 18:06 (Europe/Bucharest)")
            // 80 columns: time 11, then name 20, company 13, host 17, gate 19.
            #expect(canvas.line(1) == pad("Name", 20) + pad("Company", 13) + pad("Host", 16) + pad("Gate", 18) + "In")
            #expect(canvas.line(2) == pad("ana Pop", 20) + pad("Acme", 13) + pad("Ion", 16) + pad("Main gate", 18) + "17:56")
            #expect(canvas.line(3) == pad("Zoe Lung", 20) + pad("Acme", 13) + pad("Ion", 16) + pad("Dock", 18) + "16:36")
            #expect(canvas.line(7) == "Enter: open · e: export to a text file · r: reload")
            #expect(screen.handle(.down) == .redraw)
            #expect(screen.handle(.enter) == .openVisitor(id: "v1"))
        }
        withScreen([Fixtures.inside(1, name: "Solo", gate: "c-unknown-gate-id")]) { screen, _, _ in
            let canvas = Fixtures.render(screen, width: 80, height: 8)
            #expect(canvas.line(0).hasPrefix("On site now: 1 person · "))
            #expect(canvas.line(2).contains("c-unknow "), "an unknown gate shows its id, shortened")
        }
        withScreen([]) { screen, _, _ in
            #expect(Fixtures.render(screen, width: 80, height: 8).line(1) == "Nobody is checked in.")
            #expect(screen.handle(.enter) == .none)
        }
    }

    @Test func arrivalsAndDeparturesOnTheStreamChangeTheRollAndItsOfflineCopy() {
        withScreen(Self.two) { screen, services, _ in
            let arriving = Fixtures.inside(5, name: "Bob Ionescu", gate: "c9", minutesAgo: 0)
            let gateReads = services.calls.filter { $0 == "gateNames" }.count
            #expect(screen.receive(Fixtures.event(.visitorArrived, arriving)) == .redraw)
            #expect(screen.visitors.map(\.id) == ["v2", "v5", "v1"])
            #expect(services.calls.filter { $0 == "gateNames" }.count == gateReads + 1, "a gate not known yet: names read again")
            #expect(Fixtures.render(screen, width: 80, height: 8).line(0).hasPrefix("On site now: 3 people"))
            var leaving = Self.two[0]
            leaving.status = .checkedOut
            #expect(screen.receive(Fixtures.event(.visitorDeparted, leaving)) == .redraw)
            #expect(screen.visitors.map(\.id) == ["v2", "v5"])
            // A departure of someone not shown changes nothing, here or in the offline copy.
            #expect(screen.receive(Fixtures.event(.visitorDeparted, Fixtures.visitor(8, status: .checkedOut))) == .none)
            // Decisions about people outside change nothing.
            #expect(screen.receive(Fixtures.event(.visitorDecided, Fixtures.visitor(9, status: .approved))) == .none)
            #expect(services.liveOnSite == [.arrived(arriving), .left(visitorId: "v1")])
            let reads = services.calls.filter { $0 == "onSite" }.count
            _ = screen.receive(ServerEvent(id: 3, kindName: EventKind.streamGap.rawValue, data: "{}"))
            #expect(services.calls.filter { $0 == "onSite" }.count == reads + 1)
        }
    }

    @Test func theSelectionStaysOnItsPersonWhenOthersComeAndGo() {
        withScreen(Self.two) { screen, _, _ in
            _ = screen.handle(.down)
            #expect(screen.selectedVisitor?.id == "v1")
            _ = screen.receive(Fixtures.event(.visitorArrived, Fixtures.inside(6, name: "Aaron", minutesAgo: 0)))
            #expect(screen.selectedVisitor?.id == "v1")
        }
    }

    @Test func offlineTheRollSaysHowOldAndAFailureKeepsIt() {
        withScreen(Self.two, fromCache: true, updatedAt: Fixtures.now.addingTimeInterval(-7200)) { screen, services, _ in
            #expect(Fixtures.render(screen, width: 80, height: 8).line(1) == "Offline: showing the server's roll as it was 2 h ago.")
            services.onSiteResult = .failure(.offline("connection refused"))
            _ = screen.handle(.character("r"))
            #expect(screen.visitors.count == 2)
            #expect(Fixtures.render(screen, width: 200, height: 8).line(2).hasPrefix("Could not load the roll. The server cannot be reached"))
            #expect(screen.rollText().contains("OFFLINE: the server's roll as it was 2 h ago (15 Jun 2025 16:06 (Europe/Bucharest)"), "\(screen.rollText())")
            #expect(screen.rollText().contains("); check at the gates."))
        }
    }

    @Test func theExportIsPlainEscapedTextWithEveryoneAndThePathIsShown() {
        let hostile = Fixtures.inside(3, name: "Eve\u{1B}[2J\u{202E}" + Fixtures.wide, gate: "c1", minutesAgo: 5)
        withScreen(Self.two + [hostile]) { screen, services, _ in
            #expect(screen.handle(.character("e")) == .redraw)
            #expect(services.savedRolls.count == 1)
            let text = services.savedRolls[0]
            #expect(text == """
                On site at Acme Works — 15 Jun 2025 18:06 (Europe/Bucharest)
                3 people checked in

                Name                    Company  Host  Gate       In
                ana Pop                 Acme     Ion   Main gate  15 Jun 2025 17:56
                Eve\\x1b[2J<U+202E>李小龍🙂  Acme     Ion   Main gate  15 Jun 2025 18:01
                Zoe Lung                Acme     Ion   Dock       15 Jun 2025 16:36

                """)
            #expect(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
            #expect(Fixtures.render(screen, width: 120, height: 8).line(6)
                    == "Exported 3 people to /work/here/gatepass-on-site.txt (readable by you only).")
            services.saveRollResult = .failure(.refused("no permission to write /work/here/x.txt; choose a folder of yours"))
            _ = screen.handle(.character("e"))
            #expect(screen.notice == .init(.error, "Not exported: Refused: no permission to write /work/here/x.txt; choose a folder of yours."))
        }
        let services = FakeVisitorsServices()
        services.onSiteResult = .failure(.offline("down"))
        let screen = OnSiteScreen(services: services, clock: { Fixtures.now })
        _ = screen.appear()
        _ = screen.handle(.character("e"))
        #expect(services.savedRolls.isEmpty)
        #expect(screen.notice?.text == "Nothing to export: the roll has not been read yet.")
    }

    @Test func aLongRollScrollsAndNothingOverflows() {
        let many = (1...60).map { Fixtures.inside($0, name: String(format: "Person %02d", $0) + Fixtures.combiningStack) }
        withScreen(many) { screen, _, _ in
            _ = screen.handle(.end)
            let canvas = Fixtures.render(screen, width: 80, height: 10)
            #expect(canvas.line(8).hasPrefix("Person 60"))
            for (width, height) in [(80, 10), (12, 3), (1, 1), (0, 0)] {
                let small = Fixtures.render(screen, width: width, height: height)
                for y in 0..<height { #expect(small.line(y).count <= width) }
            }
        }
    }

    /// What this device did since the server's roll is on it: a pass admitted by its signature
    /// alone (no name known here: its short id), and a person checked out here taken off.
    @Test func theRollCountsWhatThisDeviceAdmittedAndCheckedOutSince() throws {
        let signed = ShortID("K7Q2M9XD")!
        let changes = [OnSiteRoll.LocalChange(shortId: Self.two[0].shortId, visitor: nil, inside: false, at: Fixtures.now),
                       OnSiteRoll.LocalChange(shortId: signed, visitor: nil, inside: true, at: Fixtures.now.addingTimeInterval(-60))]
        withScreen(Self.two, changes: changes, fromCache: true, updatedAt: Fixtures.now.addingTimeInterval(-600)) { screen, _, _ in
            #expect(screen.entries.map(\.shortId) == [Self.two[1].shortId, signed])
            let text = Fixtures.render(screen, width: 160, height: 10).text
            #expect(text.contains("On site now: 2 people"))
            #expect(text.contains("Includes 1 admitted and 1 checked out at this device since the server's roll."))
            #expect(text.contains("Offline: showing the server's roll as it was 10 min ago."))
            #expect(text.contains("K7Q2M9XD (admitted here by signature)"))
            #expect(!text.contains("Zoe Lung"))
            _ = screen.handle(.down)
            #expect(screen.selectedVisitor == nil && screen.handle(.enter) == .none, "nothing to open for a pass known by signature")
            #expect(screen.rollText().contains("K7Q2M9XD (admitted here by signature)"))
        }
    }
}
