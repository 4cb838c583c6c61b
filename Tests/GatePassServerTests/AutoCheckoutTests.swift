import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

private func at(_ text: String) -> Date { Timestamp.parse(text)! }
private let berlin = TimeZone(identifier: "Europe/Berlin")!
/// The tests move the clock by days and months: logins that outlast the moves.
private func longLogins(_ configuration: inout ServerConfiguration) { configuration.tokenLifetimeSeconds = 400 * 86_400 }

/// api.md `autoCheckoutAt`: when the check-out is due (the domain), and the job on the server's
/// clock: once a day, across midnight and the DST changes, catching up after downtime.
@Suite struct AutoCheckoutTests {
    // MARK: - When it is due

    @Test func theLatestDueMomentFollowsTheSitesClock() {
        func due(_ time: String, _ now: String, _ zone: TimeZone = berlin) -> AutoCheckout.Due? {
            AutoCheckout.latestDue(clockTime: time, zone: zone, now: at(now))
        }
        // Winter (UTC+1) and summer (UTC+2) on the two days of the March change.
        #expect(due("18:00", "2026-03-28T17:30:00Z") == .init(day: "2026-03-28", instant: at("2026-03-28T17:00:00Z")))
        #expect(due("18:00", "2026-03-29T16:30:00Z") == .init(day: "2026-03-29", instant: at("2026-03-29T16:00:00Z")))
        #expect(due("18:00", "2026-03-29T15:59:59Z") == .init(day: "2026-03-28", instant: at("2026-03-28T17:00:00Z")))
        // October: back to winter time.
        #expect(due("18:00", "2026-10-25T16:30:00Z") == .init(day: "2026-10-24", instant: at("2026-10-24T16:00:00Z")))
        #expect(due("18:00", "2026-10-25T17:00:00Z") == .init(day: "2026-10-25", instant: at("2026-10-25T17:00:00Z")))
        // 02:30 does not exist on 29 March: the first moment after the gap (03:00 CEST).
        let skipped = due("02:30", "2026-03-29T02:00:00Z")
        #expect(skipped?.day == "2026-03-29")
        #expect(skipped.map { $0.instant >= at("2026-03-29T01:00:00Z") && $0.instant <= at("2026-03-29T01:30:00Z") } == true,
                "\(String(describing: skipped))")
        // 02:30 happens twice on 25 October: the first time, and the second is the same day.
        #expect(due("02:30", "2026-10-25T00:45:00Z") == .init(day: "2026-10-25", instant: at("2026-10-25T00:30:00Z")))
        #expect(due("02:30", "2026-10-25T01:45:00Z") == .init(day: "2026-10-25", instant: at("2026-10-25T00:30:00Z")))
        // Across midnight: 00:15 local is 23:15Z the day before.
        #expect(due("00:15", "2026-11-29T23:30:00Z") == .init(day: "2026-11-30", instant: at("2026-11-29T23:15:00Z")))
        #expect(due("00:15", "2026-11-29T23:00:00Z") == .init(day: "2026-11-29", instant: at("2026-11-28T23:15:00Z")))
        #expect(due("23:59", "2026-01-01T00:00:00Z", TimeZone(identifier: "UTC")!)
                == .init(day: "2025-12-31", instant: at("2025-12-31T23:59:00Z")))
        for bad in ["24:00", "7:00", "18:60", "", "18:00:00", "１８:００"] { #expect(due(bad, "2026-03-28T17:30:00Z") == nil, "\(bad)") }
    }

    // MARK: - The job

    @Test func visitorsStillInsideAreCheckedOutOnceADayAcrossMidnight() throws {
        try withSite(configure: longLogins) { server, site in
            let app = server.server.application
            try setEndOfDay(server, site, "18:00")
            let first = try checkedInVisitor(server, site)
            let stream = try server.stream(site.ownerToken)
            let hub = app.eventHub
            #expect(hub.changes.wait { hub.streamCount == 1 })
            #expect(app.runAutoCheckout() == 0, "13:00 in Berlin: not yet")

            server.clock.set(at("2026-11-29T17:00:30Z"))
            #expect(app.runAutoCheckout() == 1)
            let visitor = try server.visitor(first, site.ownerToken)
            #expect(visitor["status"] as? String == "CHECKED_OUT")
            #expect(visitor["checkedOutAt"] as? String == "2026-11-29T17:00:00Z", "checked out at the due time")
            let departed = try #require(stream.events(1).first)
            #expect(departed.event == "visitor.departed")
            #expect(departed.json?["checkpointId"] == nil || departed.json?["checkpointId"] is NSNull, "\(departed.data)")
            let entries = try server.auditEntries(.visitorCheckOut)
            #expect(entries.count == 1 && entries.first?.actorKind == .system && entries.first?.actorId == nil)
            #expect(entries.first?.entityId == first && entries.first?.after?.contains("CHECKED_OUT") == true)

            // The same day never again, however the clock moves; a visitor who came later stays.
            let second = try checkedInVisitor(server, site)
            server.clock.advance(by: 3600)
            #expect(app.runAutoCheckout() == 0)
            server.clock.set(at("2026-11-29T16:00:00Z"))
            #expect(app.runAutoCheckout() == 0)
            server.clock.set(at("2026-11-29T23:30:00Z"))
            #expect(app.runAutoCheckout() == 0, "past midnight in Berlin, before 18:00")
            #expect(try server.visitor(second, site.ownerToken)["status"] as? String == "CHECKED_IN")
            server.clock.set(at("2026-11-30T17:00:00Z"))
            #expect(app.runAutoCheckout() == 1)
            #expect(try server.visitor(second, site.ownerToken)["status"] as? String == "CHECKED_OUT")
            #expect(try server.auditEntries(.visitorCheckOut).count == 2)
        }
    }

    @Test func theJobFollowsTheSummerAndWinterTimeChanges() throws {
        try withSite(configure: longLogins) { server, site in
            try setEndOfDay(server, site, "18:00")
            /// Checks a visitor in at `arrival`, then runs the job just before and at `due`: the
            /// visitor leaves at `due` and not a minute earlier.
            func expectCheckOut(arrival: String, due: String) throws {
                server.clock.set(at(arrival))
                let visitor = try checkedInVisitor(server, site)
                server.clock.set(at(due).addingTimeInterval(-60))
                #expect(server.server.application.runAutoCheckout() == 0, "a minute before \(due)")
                server.clock.set(at(due))
                #expect(server.server.application.runAutoCheckout() == 1, "at \(due)")
                #expect(try server.visitor(visitor, site.ownerToken)["checkedOutAt"] as? String == due)
            }
            // March: 18:00 is 17:00Z on Saturday (winter time), 16:00Z on Sunday (summer time).
            try expectCheckOut(arrival: "2026-03-28T10:00:00Z", due: "2026-03-28T17:00:00Z")
            try expectCheckOut(arrival: "2026-03-29T10:00:00Z", due: "2026-03-29T16:00:00Z")
            // October: 16:00Z on Saturday, 17:00Z on Sunday.
            try expectCheckOut(arrival: "2026-10-24T10:00:00Z", due: "2026-10-24T16:00:00Z")
            try expectCheckOut(arrival: "2026-10-25T10:00:00Z", due: "2026-10-25T17:00:00Z")
        }
    }

    @Test func offMeansOffAndEachSiteHasItsOwnZone() throws {
        try withSite(configure: longLogins) { server, site in
            let app = server.server.application
            let inside = try checkedInVisitor(server, site)
            server.clock.set(at("2026-11-29T22:00:00Z"))
            #expect(app.runAutoCheckout() == 0, "autoCheckoutAt is null by default")
            // A site in Tokyo (UTC+9): 08:00 local on the 30th is 23:00Z on the 29th.
            let tokyo = try server.makeSite("Kansai", domain: "kansai.test")
            #expect(try server.patch("/api/organization", token: tokyo.ownerToken,
                                     ["timeZone": "Asia/Tokyo", "autoCheckoutAt": "08:00"]).status == 200)
            let tokyoVisitor = try checkedInVisitor(server, tokyo)
            server.clock.set(at("2026-11-30T00:00:00Z"))
            #expect(app.runAutoCheckout() == 1)
            #expect(try server.visitor(tokyoVisitor, tokyo.ownerToken)["status"] as? String == "CHECKED_OUT")
            #expect(try server.visitor(inside, site.ownerToken)["status"] as? String == "CHECKED_IN")
        }
    }

    /// Down at 18:00, started at 19:00: the visitors are checked out as the server starts.
    @Test func aServerStartedAfterTheTimeCatchesUp() throws {
        try withTemporaryDirectory { directory in
            var configuration = ServerConfiguration()
            configuration.database = directory + "/gatepass.db"
            configuration.port = 0
            configuration.timeZone = "UTC"
            configuration.sqliteSynchronous = "NORMAL"
            let clock = TestClock(at("2026-11-29T12:00:00Z"))
            let visitorId: String
            do {
                let server = try GatePassServer(configuration: configuration, devMode: true, clock: clock, logSink: RecordingLog())
                defer { server.stop(grace: .seconds(2)) }
                let test = TestServer(server: server, clock: clock, log: RecordingLog(), directory: directory)
                let site = try test.makeSite()
                try setEndOfDay(test, site, "18:00")
                visitorId = try checkedInVisitor(test, site)
            }
            clock.set(at("2026-11-29T18:00:00Z"))
            let restarted = try GatePassServer(configuration: configuration, devMode: true, clock: clock, logSink: RecordingLog())
            defer { restarted.stop(grace: .seconds(2)) }
            let status = try restarted.store.read { tx in try tx.visitors.find(id: visitorId)?.visitor.status }
            #expect(status == .checkedOut)
            #expect(restarted.application.runAutoCheckout() == 0)
        }
    }

    // MARK: - Helpers

    private func setEndOfDay(_ server: TestServer, _ site: Site, _ time: String) throws {
        let answer = try server.patch("/api/organization", token: site.ownerToken, ["timeZone": "Europe/Berlin", "autoCheckoutAt": time])
        guard answer.status == 200 else { throw TestFailure("organization answered \(answer.status): \(answer.text)") }
    }

    /// A visitor registered and checked in now; its id.
    private func checkedInVisitor(_ server: TestServer, _ site: Site) throws -> String {
        let visitor = try server.createVisitor(site.ownerToken)
        let answer = try server.checkIn(site.scanner, visitor["shortId"] as? String ?? "")
        guard answer.string("result") == "CHECKED_IN", let id = visitor["id"] as? String else {
            throw TestFailure("check-in answered \(answer.status): \(answer.text)")
        }
        return id
    }
}
