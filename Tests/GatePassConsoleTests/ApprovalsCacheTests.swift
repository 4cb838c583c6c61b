import Foundation
@testable import GatePassClient
@testable import GatePassConsoleServices
import GatePassCore
import Testing
@testable import GatePassConsole

/// The approvals list offline, through the real client core and its cache: it keeps every
/// visitor it has shown (live arrivals included) and says the age of the oldest data shown.
@Suite struct ApprovalsCacheTests {
    /// A clock both the core and the services read; the test moves it.
    final class MovableClock: WallClock {
        let current = Locked(Fixtures.now)
        func now() -> Date { current.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
    }

    /// Services over a fresh state folder, an owner logged in; `offline` cuts the server off.
    func withServices(_ pending: [Visitor],
                      _ body: (ClientCoreServices, MovableClock, Locked<Bool>) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("console-approvals-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let offline = Locked(false)
        let listJSON = try JSONEncoder().encode(Page(items: pending, nextCursor: nil))
        let transport = HistoryScreenTests.RoutedTransport { request throws(HTTPTransportError) in
            if offline.withLock({ $0 }) { throw .cannotConnect(url: request.url, detail: "connection refused") }
            return HTTPResponse(status: 200, headers: [:], body: Array(listJSON))
        }
        let clock = MovableClock()
        let core = try ClientCore(directory: StateDirectory(path: folder), transport: transport, clock: clock)
        try core.store.saveSession(Session(server: "http://gate.test", token: "login-token",
                                           expiresAt: Timestamp(Date().addingTimeInterval(3600)), user: HistoryScreenTests.owner,
                                           scanner: nil))
        try body(ClientCoreServices(core: core, transport: transport, defaultServer: nil, clock: clock), clock, offline)
    }

    @Test func offlineTheListKeepsLiveArrivalsAndSaysTheAgeOfTheListLoad() throws {
        try withServices([Fixtures.visitor(1, name: "Loaded One", minutesAgo: 10)]) { services, clock, offline in
            let screen = ApprovalsScreen(services: services, clock: { clock.now() })
            _ = screen.appear()
            #expect(screen.visitors.map(\.id) == ["v1"])
            clock.advance(60)
            #expect(screen.receive(Fixtures.event(.visitorAwaiting, Fixtures.visitor(2, name: "Live One", minutesAgo: 0))) == .alert)
            #expect(screen.visitors.map(\.id) == ["v2", "v1"])
            offline.withLock { $0 = true }
            clock.advance(240)
            #expect(screen.handle(.character("r")) == .redraw)
            #expect(screen.visitors.map(\.id) == ["v2", "v1"], "the live arrival is still shown offline")
            let canvas = Fixtures.render(screen, width: 80, height: 10)
            // The list was read 5 min ago; the live arrival is 4 min old; the failed reload is now.
            #expect(canvas.line(1) == "Offline: showing the list as it was 5 min ago.")

            // A console started again offline shows the same.
            let restarted = ApprovalsScreen(services: services, clock: { clock.now() })
            _ = restarted.appear()
            #expect(restarted.visitors.map(\.id) == ["v2", "v1"])
            #expect(Fixtures.render(restarted, width: 80, height: 10).line(1) == "Offline: showing the list as it was 5 min ago.")
        }
    }

    @Test func visitorsDecidedOnTheStreamLeaveTheCachedListToo() throws {
        try withServices([Fixtures.visitor(1), Fixtures.visitor(3)]) { services, clock, offline in
            let screen = ApprovalsScreen(services: services, clock: { clock.now() })
            _ = screen.appear()
            clock.advance(30)
            _ = screen.receive(Fixtures.event(.visitorAwaiting, Fixtures.visitor(2, minutesAgo: 0)))
            _ = screen.receive(Fixtures.event(.visitorDecided, Fixtures.visitor(1, status: .approved)))
            _ = screen.receive(Fixtures.event(.visitorDecided, Fixtures.visitor(2, status: .rejected)))
            offline.withLock { $0 = true }
            _ = screen.handle(.character("r"))
            #expect(screen.visitors.map(\.id) == ["v3"])
        }
    }

    @Test func aDecisionMadeHereLeavesTheCachedListBeforeTheStreamSaysSo() throws {
        try withServices([Fixtures.visitor(1), Fixtures.visitor(3)]) { services, clock, offline in
            let screen = ApprovalsScreen(services: services, clock: { clock.now() })
            _ = screen.appear()
            screen.noteDecision(visitorId: "v1", outcome: .applied(Fixtures.visitor(1, status: .approved)))
            // The stream's visitor.decided then finds it gone from the list.
            _ = screen.receive(Fixtures.event(.visitorDecided, Fixtures.visitor(1, status: .approved)))
            offline.withLock { $0 = true }
            _ = screen.handle(.character("r"))
            #expect(screen.visitors.map(\.id) == ["v3"])
        }
    }

    @Test func aListReadAgainOnlineReplacesWhatArrivedLiveBeforeIt() throws {
        try withServices([Fixtures.visitor(1)]) { services, clock, offline in
            let screen = ApprovalsScreen(services: services, clock: { clock.now() })
            _ = screen.appear()
            clock.advance(30)
            _ = screen.receive(Fixtures.event(.visitorAwaiting, Fixtures.visitor(2, minutesAgo: 0)))
            clock.advance(30)
            // The server's list (v1 only) is newer than the arrival: v2 was decided meanwhile.
            _ = screen.handle(.character("r"))
            #expect(screen.visitors.map(\.id) == ["v1"])
            offline.withLock { $0 = true }
            clock.advance(120)
            _ = screen.handle(.character("r"))
            #expect(screen.visitors.map(\.id) == ["v1"])
            #expect(Fixtures.render(screen, width: 80, height: 10).line(1) == "Offline: showing the list as it was 2 min ago.")
        }
    }

    @Test func onlyLiveArrivalsCachedSayTheAgeOfTheOldestArrival() throws {
        try withServices([]) { services, clock, offline in
            offline.withLock { $0 = true }
            let screen = ApprovalsScreen(services: services, clock: { clock.now() })
            _ = screen.appear()
            #expect(screen.errorLine != nil, "nothing cached yet")
            _ = screen.receive(Fixtures.event(.visitorAwaiting, Fixtures.visitor(2, minutesAgo: 0)))
            clock.advance(180)
            _ = screen.receive(Fixtures.event(.visitorAwaiting, Fixtures.visitor(4, minutesAgo: 0)))
            clock.advance(60)
            _ = screen.handle(.character("r"))
            #expect(screen.visitors.map(\.id) == ["v4", "v2"])
            #expect(Fixtures.render(screen, width: 80, height: 10).line(1) == "Offline: showing the list as it was 4 min ago.")
        }
    }
}

@Suite struct ApprovalsLiveNoticeTests {
    @Test func theScreenHandsEveryStreamChangeOfTheQueueToTheServices() {
        let services = FakeConsoleServices()
        services.approvals = .success(ConsoleRead(value: [Fixtures.visitor(1)], updatedAt: Fixtures.now, fromCache: false))
        let screen = ApprovalsScreen(services: services, clock: { Fixtures.now })
        _ = screen.appear()
        _ = screen.receive(Fixtures.event(.visitorAwaiting, Fixtures.visitor(2)))
        // Not shown: not in the offline copy either, so nothing to tell (every check-in is such an event).
        _ = screen.receive(Fixtures.event(.visitorArrived, Fixtures.visitor(9, status: .checkedIn)))
        _ = screen.receive(Fixtures.event(.visitorDecided, Fixtures.visitor(1, status: .approved)))
        // Not awaiting approval: no arrival.
        _ = screen.receive(Fixtures.event(.visitorAwaiting, Fixtures.visitor(3, status: .approved)))
        #expect(services.liveApprovals == [.arrived(Fixtures.visitor(2)), .left(visitorId: "v1")])
    }
}
