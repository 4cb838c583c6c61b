import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// `gatepass site show|set`, `gatepass checkpoint add NAME` over the API and `gate` as the
/// alias of `checkpoint`, end to end against an in-process server, as the demo site's people.
@Suite(.serialized) struct SiteCommandTests {
    func object(_ text: String) throws -> [String: Any] { try UserCommandTests().object(text) }

    @Test func anOwnerReadsAndChangesTheSiteSettings() throws {
        try ClientCommandTests().withSetup(configure: { $0.timeZone = "Europe/Bucharest" }) { setup in
            _ = try LoopbackHTTPClient(port: setup.server.port).send("POST", "/api/auth/send-otp", json: ["email": "owner@demo.gatepass"])
            let login = setup.gatepass("login", "--server", setup.url, "--email", "owner@demo.gatepass", "--otp", try setup.code("owner@demo.gatepass"))
            try #require(login.status == 0, "\(login.err)")

            let shown = setup.gatepass("site", "show")
            #expect(shown.status == 0, "\(shown.err)")
            #expect(shown.out.contains("organization: Demo Site"), "\(shown.out)")
            #expect(shown.out.contains("time zone: Europe/Bucharest"), "\(shown.out)")
            #expect(shown.out.contains("retention: 180 days"), "\(shown.out)")
            #expect(shown.out.contains("automatic check-out: off"), "\(shown.out)")

            let set = setup.gatepass("site", "set", "--time-zone", "America/New_York", "--retention-days", "30",
                                     "--auto-checkout", "18:30")
            #expect(set.status == 0, "\(set.err)")
            #expect(set.out.contains("time zone: America/New_York") && set.out.contains("retention: 30 days")
                    && set.out.contains("automatic check-out: 18:30 (America/New_York)"), "\(set.out)")
            let json = try object(setup.gatepass("site", "show", "--json").out)
            #expect(json["timeZone"] as? String == "America/New_York" && json["retentionDays"] as? Int == 30
                    && json["autoCheckoutAt"] as? String == "18:30")

            let back = setup.gatepass("site", "set", "--retention-days", "default", "--auto-checkout", "off", "--json")
            #expect(back.status == 0, "\(back.err)")
            let answer = try object(back.out)
            #expect(answer["retentionDays"] as? Int == 180 && answer["autoCheckoutAt"] is NSNull, "\(back.out)")

            // Checked before anything is sent: usage errors, exit 2, one sentence each.
            let badInputs: [([String], String)] = [
                (["--time-zone", "Europe/Bucharestt"], "--time-zone must be an IANA zone"),
                (["--time-zone", "EST"], "--time-zone must be an IANA zone"),
                (["--time-zone", "GMT+2"], "--time-zone must be an IANA zone"),
                (["--time-zone", "../../etc/passwd"], "--time-zone must be an IANA zone"),
                (["--time-zone", String(repeating: "A/", count: 200)], "--time-zone must be an IANA zone"),
                (["--time-zone", "Europe/\u{1B}[2J"], "--time-zone must be an IANA zone"),
                (["--retention-days", "0"], "--retention-days must be a whole number of days from 1 to 3650"),
                (["--retention-days", "3651"], "--retention-days must be a whole number of days from 1 to 3650"),
                (["--retention-days", "-5"], "--retention-days must be a whole number of days from 1 to 3650"),
                (["--retention-days", "99999999999999999999999"], "--retention-days must be a whole number"),
                (["--retention-days", "1.5"], "--retention-days must be a whole number"),
                (["--auto-checkout", "24:00"], "--auto-checkout must be a site-local time HH:MM"),
                (["--auto-checkout", "9:00"], "--auto-checkout must be a site-local time HH:MM"),
                (["--auto-checkout", "18:30:00"], "--auto-checkout must be a site-local time HH:MM"),
                (["--auto-checkout", "１８:３０"], "--auto-checkout must be a site-local time HH:MM"),
                ([], "give at least one of --time-zone, --retention-days and --auto-checkout"),
            ]
            for (arguments, message) in badInputs {
                let refused = setup.gatepass(["site", "set"] + arguments)
                #expect(refused.status == 2 && refused.err.contains(message) && !refused.err.contains("\u{1B}"),
                        "\(arguments): \(refused.err)")
            }
            // The suggestion for a near miss.
            #expect(setup.gatepass("site", "set", "--time-zone", "Europe/Bucharestt").err.contains("Europe/Bucharest?"))
            #expect(try object(setup.gatepass("site", "show", "--json").out)["timeZone"] as? String == "America/New_York")
        }
    }

    @Test func anAdminMayReadTheSiteButNotChangeIt() throws {
        try UserCommandTests().withLogin("admin@demo.gatepass") { setup in
            #expect(setup.gatepass("site", "show").status == 0)
            let refused = setup.gatepass("site", "set", "--retention-days", "90")
            #expect(refused.status == 1, "\(refused.out) \(refused.err)")
            let lines = refused.err.split(separator: "\n")
            #expect(lines.count == 1 && refused.err.hasPrefix("error: "), "one sentence: \(refused.err)")
        }
    }

    @Test func checkpointAddWorksOverTheAPIAndGateIsItsAlias() throws {
        try UserCommandTests().withLogin("owner@demo.gatepass") { setup in
            let added = setup.gatepass("checkpoint", "add", "North door")
            #expect(added.status == 0, "\(added.err)")
            #expect(added.out.contains("added checkpoint North door; id "), "\(added.out)")
            let viaAlias = setup.gatepass("gate", "add", "South door", "--json")
            #expect(viaAlias.status == 0, "\(viaAlias.err)")
            #expect(try object(viaAlias.out)["name"] as? String == "South door")
            let list = setup.gatepass("gate", "list")
            #expect(list.status == 0 && list.out.contains("North door") && list.out.contains("South door"), "\(list.out)")
            let southId = try #require(try object(viaAlias.out)["id"] as? String)
            #expect(setup.gatepass("gate", "rename", southId, "--name", "South gate").status == 0)
            #expect(setup.gatepass("gate", "retire", southId).out.contains("RETIRED"))
            #expect(setup.gatepass("gate", "--help").out == setup.gatepass("checkpoint", "--help").out)
            #expect(setup.gatepass("gate", "add", "--help").out == setup.gatepass("checkpoint", "add", "--help").out)

            // The server's refusals: one sentence, exit 1.
            let taken = setup.gatepass("checkpoint", "add", "North door")
            #expect(taken.status == 1 && taken.err.contains("already exists"), "\(taken.err)")
            let hostile = setup.gatepass("checkpoint", "add", "North\u{1B}[2J door")
            #expect(hostile.status == 1 && hostile.err.contains("control characters") && !hostile.err.contains("\u{1B}"), "\(hostile.err)")
            let long = setup.gatepass("checkpoint", "add", String(repeating: "x", count: 5_000))
            #expect(long.status == 1 && long.err.split(separator: "\n").count == 1, "\(long.err)")
            // Usage: no name; two names; bootstrap-only options without --db.
            #expect(setup.gatepass("checkpoint", "add").status == 2)
            #expect(setup.gatepass("checkpoint", "add", "A", "--name", "B").status == 2)
            let organization = setup.gatepass("checkpoint", "add", "A", "--organization", "Demo Site")
            #expect(organization.status == 2 && organization.err.contains("--organization"), "\(organization.err)")
            #expect(setup.gatepass("gateway", "list").status == 2)
        }
    }

    @Test func checkpointAddOnADatabaseFileStillBootstraps() throws {
        try ClientCommandTests().withSetup { setup in
            let database = setup.directory + "/boot.db"
            let owner = setup.gatepass("user", "add", "--db", database, "--email", "o@acme.test", "--name", "O",
                                       "--role", "OWNER", "--organization", "Acme")
            #expect(owner.status == 0, "\(owner.err)")
            let added = setup.gatepass("checkpoint", "add", "--db", database, "--organization", "Acme", "--name", "Side gate")
            #expect(added.status == 0 && added.out.contains("added checkpoint Side gate to Acme"), "\(added.err)")
            let positional = setup.gatepass("gate", "add", "Back gate", "--db", database, "--organization", "Acme")
            #expect(positional.status == 0 && positional.out.contains("added checkpoint Back gate to Acme"), "\(positional.err)")
            let noOrganization = setup.gatepass("checkpoint", "add", "--db", database, "--name", "X")
            #expect(noOrganization.status == 2 && noOrganization.err.contains("--organization"), "\(noOrganization.err)")
            let json = setup.gatepass("checkpoint", "add", "--db", database, "--organization", "Acme", "--name", "Y", "--json")
            #expect(json.status == 2, "--json is the API's answer: \(json.err)")
        }
    }
}
