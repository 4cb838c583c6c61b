import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// `gatepass audit list` against an in-process server on a site in Europe/Bucharest (east of
/// UTC) and America/New_York (west): times in the site's zone, actors and entities by name,
/// filters checked before they are sent, `--csv` for machines.
@Suite(.serialized) struct AuditListCommandTests {
    func withOwner(zone: String, _ body: (ClientCommandTests.Setup) throws -> Void) throws {
        try ClientCommandTests().withSetup(configure: { $0.timeZone = zone }) { setup in
            _ = try LoopbackHTTPClient(port: setup.server.port).send("POST", "/api/auth/send-otp", json: ["email": "owner@demo.gatepass"])
            let login = setup.gatepass("login", "--server", setup.url, "--email", "owner@demo.gatepass", "--otp", try setup.code("owner@demo.gatepass"))
            try #require(login.status == 0, "\(login.err)")
            try body(setup)
        }
    }

    @Test(arguments: ["Europe/Bucharest", "America/New_York"])
    func theLogReadsInTheSitesTimeWithNames(_ zone: String) throws {
        try withOwner(zone: zone) { setup in
            let added = setup.gatepass("checkpoint", "add", "North door", "--json")
            try #require(added.status == 0, "\(added.err)")
            let gateId = try #require((try JSONSerialization.jsonObject(with: Data(added.out.utf8)) as? [String: Any])?["id"] as? String)
            let list = setup.gatepass("audit", "list")
            #expect(list.status == 0, "\(list.err)")
            #expect(list.out.hasPrefix("times in \(zone)\n"), "\(list.out)")
            let line = try #require(list.out.split(separator: "\n").first { $0.contains("checkpoint.create") }.map(String.init))
            // The site's time of the entry, with seconds, then who and what, by name.
            let entries = try setup.server.store.read { tx in
                try tx.audit.page(AuditFilter(organizationId: nil), after: nil, limit: 500)
            }
            let entry = try #require(entries.map(\.entry).first { $0.action == "checkpoint.create" && $0.entityId == gateId })
            let site = try #require(SiteClock(zoneNamed: zone))
            #expect(line.hasPrefix(site.date(entry.at) + " " + site.timeWithSeconds(entry.at) + "  Olivia Owner  checkpoint.create  checkpoint North door"),
                    "\(line)")
            #expect(!list.out.contains(gateId), "the id only where asked for: \(list.out)")

            // Filters: by action, by actor (email, system), by entity, by time typed in the site's zone.
            let byAction = setup.gatepass("audit", "list", "--action", "checkpoint.create")
            #expect(byAction.status == 0 && byAction.out.split(separator: "\n").dropFirst().allSatisfy { $0.contains("checkpoint.create") }, "\(byAction.out)")
            let byEmail = setup.gatepass("audit", "list", "--actor", "owner@demo.gatepass", "--entity-id", gateId)
            #expect(byEmail.status == 0 && byEmail.out.contains("checkpoint North door"), "\(byEmail.out) \(byEmail.err)")
            let bySystem = setup.gatepass("audit", "list", "--actor", "system", "--entity-id", gateId)
            #expect(bySystem.status == 0 && !bySystem.out.contains("checkpoint.create"), "\(bySystem.out)")
            let later = site.date(entry.at.addingTimeInterval(86_400 * 2))
            let future = setup.gatepass("audit", "list", "--from", String(site.localRFC3339(entry.at.addingTimeInterval(86_400 * 2)).prefix(10)) + " 00:00")
            #expect(future.status == 0 && !future.out.contains("checkpoint.create"), "\(later): \(future.out) \(future.err)")
            let typed = String(site.localRFC3339(entry.at.addingTimeInterval(-60)).prefix(16)).replacingOccurrences(of: "T", with: " ")
            let since = setup.gatepass("audit", "list", "--from", typed, "--action", "checkpoint.create")
            #expect(since.status == 0 && since.out.contains("checkpoint North door"), "from \(typed) in \(zone): \(since.out) \(since.err)")

            // --json is the API's page; --csv is the server's CSV (UTC times).
            let json = setup.gatepass("audit", "list", "--json", "--limit", "2")
            let page = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
            #expect((page["items"] as? [Any])?.count == 2)
            let csv = setup.gatepass("audit", "list", "--csv", "--action", "checkpoint.create")
            #expect(csv.status == 0 && csv.out.contains(Timestamp(entry.at).description) && csv.out.contains(gateId), "\(csv.out)")
        }
    }

    @Test func hostileAndMalformedFiltersAreRefusedBeforeAnythingIsSent() throws {
        try withOwner(zone: "Europe/Bucharest") { setup in
            let cases: [([String], String)] = [
                (["--action", "visitor.explode"], "--action must be one of"),
                (["--action", "visitor.create\u{1B}[2J"], "--action must be one of"),
                (["--actor", "a b"], "--actor must be"),
                (["--actor", "x\u{1B}]0;owned\u{07}"], "--actor must be"),
                (["--actor", String(repeating: "a", count: 300)], "--actor must be"),
                (["--actor", "nobody@demo.gatepass"], "no user of your organization has the email nobody@demo.gatepass"),
                (["--entity-id", "a b"], "--entity-id must be"),
                (["--entity-id", String(repeating: "9", count: 65)], "--entity-id must be"),
                (["--entity-id", ""], "--entity-id must be"),
                (["--from", "yesterday-ish"], "--from"),
                (["--from", "2026-02-30 09:00"], "--from"),
                (["--to", "2026-12-06 25:00"], "--to"),
                (["--from", "2026-12-07 00:00", "--to", "2026-12-06 00:00"], "--to"),
                (["--csv", "--json"], "choose one of --csv and --json"),
                (["--limit", "0"], "--limit must be a whole number"),
            ]
            for (arguments, message) in cases {
                let refused = setup.gatepass(["audit", "list"] + arguments)
                #expect(refused.status != 0 && refused.err.contains(message) && !refused.err.contains("\u{1B}"),
                        "\(arguments): \(refused.status) \(refused.err)")
                #expect(refused.err.split(separator: "\n").first?.hasPrefix("error: ") == true)
            }
        }
    }

    @Test func anApproverIsToldInOneSentence() throws {
        try UserCommandTests().withLogin("approver@demo.gatepass") { setup in
            let refused = setup.gatepass("audit", "list")
            #expect(refused.status == 1 && refused.err.split(separator: "\n").count == 1, "\(refused.err)")
        }
    }
}
