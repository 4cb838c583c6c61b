import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// What `gatepass visitor …` and `gatepass blocklist …` print for a person is in the
/// organization's zone, on a site east of UTC and one west: validity windows, other times,
/// validation messages; `--json` stays RFC 3339 UTC. People are named, not given by id.
@Suite(.serialized) struct SiteTimeCommandTests {
    static let zones = ["Europe/Bucharest", "America/Los_Angeles"]

    func withOwner(in zoneName: String, _ body: (OfficeCommandTests, ClientCommandTests.Setup) throws -> Void) throws {
        try ClientCommandTests().withSetup(configure: { $0.timeZone = zoneName }) { setup in
            _ = try LoopbackHTTPClient(port: setup.server.port).send("POST", "/api/auth/send-otp", json: ["email": "owner@demo.gatepass"])
            let login = setup.gatepass("login", "--server", setup.url, "--email", "owner@demo.gatepass",
                                       "--otp", try setup.code("owner@demo.gatepass"))
            try #require(login.status == 0, "\(login.err)")
            try body(OfficeCommandTests(), setup)
        }
    }

    @Test(arguments: zones) func aWholeDayPassReadsAsThatDayWithTheApproverByName(_ zoneName: String) throws {
        try withOwner(in: zoneName) { office, setup in
            let add = office.gatepass(setup, ["visitor", "add", "--name", "Dora Day", "--approver", "approver@demo.gatepass",
                                              "--requires-approval", "--valid-from", "2026-12-06 00:00",
                                              "--valid-until", "2026-12-06 23:59:59"])
            #expect(add.status == 0, "\(add.err)")
            let window = "06 Dec 2026 00:00\u{2013}23:59 (\(zoneName))"
            #expect(add.out.contains("valid: \(window)"), "\(add.out)")
            #expect(add.out.contains("approver: Ana Approver"), "\(add.out)")
            let json = try office.gatepass(setup, ["visitor", "list", "--search", "Dora Day", "--json"]).items()
            let approverId = try #require(json.first?["approverId"] as? String)
            #expect(!add.out.contains(approverId), "the approver by name, not by id")
            // --json stays the API's RFC 3339 UTC.
            #expect((json.first?["validFrom"] as? String)?.hasSuffix("Z") == true)

            let list = office.gatepass(setup, ["visitor", "list", "--search", "Dora Day"])
            #expect(list.status == 0, "\(list.err)")
            #expect(list.out.contains("06 Dec 2026 00:00\u{2013}23:59"), "\(list.out)")
        }
    }

    @Test(arguments: zones) func aWindowThatEndsBeforeItStartsIsRefusedInSiteTime(_ zoneName: String) throws {
        try withOwner(in: zoneName) { office, setup in
            let add = office.gatepass(setup, ["visitor", "add", "--name", "Ana Pop", "--valid-from", "2026-12-08T08:00:00Z",
                                              "--valid-until", "2026-12-08T07:00:00Z"])
            #expect(add.status == 2)
            // 07:00Z is 09:00 in Bucharest (UTC+2 in December) and 23:00 the day before in Los Angeles (UTC-8).
            let (until, from) = zoneName == "Europe/Bucharest" ? ("08 Dec 2026 09:00", "08 Dec 2026 10:00")
                                                                : ("07 Dec 2026 23:00", "08 Dec 2026 00:00")
            #expect(add.err.contains("--valid-until (\(until)) is before --valid-from (\(from)) in \(zoneName)"), "\(add.err)")
            #expect(!add.err.contains("T07:00:00Z"), "\(add.err)")
        }
    }

    @Test(arguments: zones) func theBlocklistGivesItsExpiryInSiteTime(_ zoneName: String) throws {
        try withOwner(in: zoneName) { office, setup in
            let add = office.gatepass(setup, ["blocklist", "add", "--name", "Mallory Ex", "--reason", "theft",
                                              "--expires", "2099-12-31 18:00"])
            #expect(add.status == 0, "\(add.err)")
            #expect(add.out.contains("until 31 Dec 2099 18:00 (\(zoneName))"), "\(add.out)")
            let list = office.gatepass(setup, ["blocklist", "list"])
            #expect(list.out.contains("until 31 Dec 2099 18:00 (\(zoneName))"), "\(list.out)")
        }
    }
}
