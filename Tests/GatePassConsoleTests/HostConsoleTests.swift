import Foundation
import GatePassCore
import Testing
@testable import GatePassConsole

/// What a HOST's console offers (only what the server lets a HOST do), and the On site line
/// about the automatic check-out.
@Suite struct HostConsoleTests {
    static let hostRights = VisitorDetailScreen.Rights(decides: false, checksOut: false)

    @Test func aHostsVisitorDetailOffersNeitherDecisionsNorCheckOut() {
        let console = FakeConsoleServices()
        var visitor = Fixtures.inside(2, name: "Dan Ene")
        visitor.requiresApproval = true
        let services = FakeVisitorsServices()
        let screen = VisitorDetailScreen(visitor: visitor, services: console, clock: { Fixtures.now },
                                         siteClock: SiteClock(zoneNamed: "UTC")!, management: services, rights: Self.hostRights)
        _ = screen.appear()
        #expect(screen.handle(.character("o")) == .none && screen.confirmation == nil)
        #expect(screen.handle(.character("a")) == .none && screen.prompt == nil)
        #expect(screen.handle(.character("r")) == .none && screen.prompt == nil)
        let keys = screen.keyHelp.map(\.key)
        #expect(!keys.contains("a") && !keys.contains("r") && !keys.contains("o") && keys.contains("c") && keys.contains("p"))
        let canvas = Fixtures.render(screen, width: 120, height: 24)
        #expect(canvas.line(23) == "c: cancel · i: invitation · p: pass · Esc: back")
        // Cancel is a HOST's right, for its own visitors: still asked and sent.
        var expected = Fixtures.listed(1, name: "Ana Pop")
        expected.requiresApproval = true
        let other = VisitorDetailScreen(visitor: expected, services: console, clock: { Fixtures.now },
                                        siteClock: SiteClock(zoneNamed: "UTC")!, management: services, rights: Self.hostRights)
        #expect(other.handle(.character("c")) == .redraw && other.confirmation == .cancel)
    }

    @Test func aHostsRegistrationFormDoesNotReadTheUsers() {
        let services = FakeVisitorsServices()
        let screen = VisitorsScreen(services: services, clock: { Fixtures.now }, fallbackZone: TimeZone(identifier: "UTC")!,
                                    choosesApprover: false)
        _ = screen.appear()
        _ = screen.handle(.character("n"))
        #expect(screen.form != nil && screen.form?.approversProblem == nil)
        #expect(!services.calls.contains("approvers"))
        #expect(Fixtures.render(screen, width: 100, height: 20).text.contains("< any approver >"))
    }

    @Test func onSiteSaysWhenVisitorsStillInsideAreCheckedOut() {
        let services = FakeVisitorsServices()
        var site = FakeVisitorsServices.site
        site.autoCheckoutAt = "19:30"
        services.siteResult = .success(ConsoleRead(value: site, updatedAt: Fixtures.now, fromCache: false))
        let screen = OnSiteScreen(services: services, clock: { Fixtures.now }, fallbackZone: TimeZone(identifier: "UTC")!)
        _ = screen.appear()
        #expect(Fixtures.render(screen, width: 80, height: 8).line(1) == "Visitors still inside at 19:30 are checked out automatically.")
        site.autoCheckoutAt = nil
        services.siteResult = .success(ConsoleRead(value: site, updatedAt: Fixtures.now, fromCache: false))
        let off = OnSiteScreen(services: services, clock: { Fixtures.now }, fallbackZone: TimeZone(identifier: "UTC")!)
        _ = off.appear()
        #expect(!Fixtures.render(off, width: 80, height: 8).text.contains("checked out automatically"))
    }
}
