import Foundation
import GatePassCore
import Testing
@testable import GatePassCommands

/// `gatepass blocklist …` end to end against an in-process server, as a site owner types it,
/// and the gate's commands meeting a blocked visitor: BLOCKED, never the reason.
@Suite(.serialized) struct BlocklistCommandTests {
    typealias Run = OfficeCommandTests.Run
    let office = OfficeCommandTests()
    static let reason = "Stole a laptop from meeting room 3"

    func gatepass(_ setup: ClientCommandTests.Setup, _ arguments: [String]) -> Run { office.gatepass(setup, arguments) }

    func entries(_ setup: ClientCommandTests.Setup) throws -> [[String: Any]] {
        let list = gatepass(setup, ["blocklist", "list", "--json"])
        try #require(list.status == 0, "\(list.err)")
        return try list.items()
    }

    @Test func addListBlockAtTheGateAndRemove() throws {
        try office.withOwner { setup in
            #expect(gatepass(setup, ["blocklist", "list"]).out == "the blocklist is empty")
            let add = gatepass(setup, ["blocklist", "add", "--name", "Ștefan  Dobrescu", "--company", "Globex",
                                       "--email", "Stefan@Example.com", "--phone", "+40 711 000 333",
                                       "--reason", Self.reason, "--expires", "2099-01-01 00:00", "--json"])
            #expect(add.status == 0, "\(add.err)")
            let entry = try add.object()
            let id = try #require(entry["id"] as? String)
            #expect(entry["name"] as? String == "Ștefan  Dobrescu" && entry["company"] as? String == "Globex")
            #expect(entry["email"] as? String == "stefan@example.com" && entry["phone"] as? String == "+40 711 000 333")
            #expect(entry["reason"] as? String == Self.reason)
            // Site-local midnight in Asia/Kathmandu (UTC+05:45) is 18:15 the day before, in UTC.
            #expect(entry["expiresAt"] as? String == "2098-12-31T18:15:00Z")

            let list = gatepass(setup, ["blocklist", "list"])
            #expect(list.status == 0, "\(list.err)")
            #expect(list.out == "\(id)  Ștefan  Dobrescu (Globex) <stefan@example.com> tel +40 711 000 333  until 01 Jan 2099 00:00 (Asia/Kathmandu)  reason: \(Self.reason)")
            #expect(try entries(setup).count == 1)

            // Registering the same person, spelled otherwise, is refused until confirmed.
            let refused = gatepass(setup, ["visitor", "add", "--name", "stefan dobrescu", "--company", "GLOBEX", "--json"])
            #expect(refused.status == 1 && refused.out.isEmpty)
            #expect(refused.err.hasPrefix("error: the visitor matches the blocklist, so nothing was saved; if you mean to register them anyway, run the command again with --confirm-blocked"),
                    "\(refused.err)")
            #expect(!refused.err.contains("laptop") && !refused.err.contains(id))
            // The gate: a pass of the same person, registered anyway, and a walk-in by phone.
            let registered = gatepass(setup, ["visitor", "add", "--name", "stefan dobrescu", "--company", "GLOBEX",
                                              "--confirm-blocked", "--json"])
            try #require(registered.status == 0, "\(registered.err)")
            let visitor = try registered.object()
            let shortId = try #require(visitor["shortId"] as? String)
            let checkIn = gatepass(setup, ["checkin", shortId])
            #expect(checkIn.status == 3, "a refusal decided at the gate: \(checkIn.err)")
            #expect(checkIn.out == "BLOCKED  stefan dobrescu (\(shortId)): entry refused; call security")
            let json = gatepass(setup, ["checkin", shortId, "--json"])
            #expect(json.status == 3)
            #expect(json.out.contains("\"BLOCKED\"") && !json.out.contains("laptop") && !json.out.contains(id))
            let walkIn = gatepass(setup, ["walk-in", "--name", "S. D.", "--phone", "(40) 711.000.333"])
            #expect(walkIn.status == 3, "\(walkIn.err)")
            #expect(walkIn.out.hasPrefix("BLOCKED  S. D. (") && walkIn.out.hasSuffix("): entry refused; call security"))
            #expect(!walkIn.out.contains("laptop"))

            let remove = gatepass(setup, ["blocklist", "remove", id])
            #expect(remove.status == 0 && remove.out == "removed blocklist entry \(id)", "\(remove.err)")
            #expect(try entries(setup).isEmpty)
            #expect(gatepass(setup, ["checkin", shortId]).out.hasPrefix("CHECKED_IN  stefan dobrescu"))
            let again = gatepass(setup, ["blocklist", "remove", id])
            #expect(again.status == 1 && again.err.contains("not found"), "\(again.err)")
        }
    }

    @Test func editingIntoAMatchNeedsConfirmationAndABlockedVisitorIsNeverInvited() throws {
        try office.withOwner { setup in
            #expect(gatepass(setup, ["blocklist", "add", "--email", "mal@example.com", "--reason", Self.reason]).status == 0)
            let added = gatepass(setup, ["visitor", "add", "--name", "Mal Lory", "--json"])
            try #require(added.status == 0, "\(added.err)")
            let id = try #require(try added.object()["id"] as? String)
            let edit = gatepass(setup, ["visitor", "edit", id, "--email", "MAL@example.com"])
            #expect(edit.status == 1 && edit.err.contains("run the command again with --confirm-blocked"), "\(edit.err)")
            #expect(try #require(try gatepass(setup, ["visitor", "show", id, "--json"]).object())["email"] is NSNull)
            let confirmed = gatepass(setup, ["visitor", "edit", id, "--email", "mal@example.com", "--confirm-blocked", "--json"])
            #expect(confirmed.status == 0 && (try? confirmed.object()["email"] as? String) == "mal@example.com", "\(confirmed.err)")
            // Never mailed, whatever is said.
            let invite = gatepass(setup, ["visitor", "invite", id])
            #expect(invite.status == 1 && invite.err.contains("no invitation is mailed to a blocked visitor"), "\(invite.err)")
            let withInvite = gatepass(setup, ["visitor", "add", "--name", "Mal", "--email", "mal@example.com", "--invite",
                                              "--confirm-blocked"])
            #expect(withInvite.status == 1 && withInvite.err.contains("run the command again without --invite"), "\(withInvite.err)")
            let listed = try gatepass(setup, ["visitor", "list", "--json"]).items()
            #expect(listed.compactMap { $0["name"] as? String }.filter { $0.hasPrefix("Mal") } == ["Mal Lory"], "\(listed)")
        }
    }

    static let hugeText = String(repeating: "Ana ", count: 2_600)

    /// Arguments refused before anything is sent (exit 2), with a fragment of the error.
    static let refusedAdditions: [([String], String)] = {
        var cases: [([String], String)] = [
            (["--reason", "r"], "give at least one of --name, --email and --phone"),
            (["--name", "Ana Pop"], "--reason is required"),
            (["--name", "Ana Pop", "--reason", "   "], "--reason"),
            (["--company", "Acme", "--email", "a@b.co", "--reason", "r"], "--company narrows --name: give --name with it"),
            (["--name", "\u{0301}\u{0301}", "--reason", "r"], "--name must hold a letter or digit"),
            (["--name", "Ana Pop", "--reason", String(repeating: "r", count: 501)], "--reason must be at most 500 characters"),
            (["--name", "Ana Pop", "--reason", "r", "--expires", "2020-01-01T00:00:00Z"], "--expires 01 Jan 2020 05:45 (Asia/Kathmandu) is not in the future"),
            (["--name", "Ana Pop", "--reason", "r", "--expires", "tomorrow"], "--expires"),
            (["--name", "Ana Pop", "--reason", "r", "--frobnicate"], "unknown option --frobnicate"),
        ]
        for option in ["--name", "--company", "--reason"] {
            let rest = option == "--reason" ? ["--name", "Ana Pop"] : option == "--company" ? ["--name", "Ana Pop", "--reason", "r"] : ["--reason", "r"]
            cases += [(rest + [option, "Ana\u{1B}[2J"], "\(option) must not contain control characters"),
                      (rest + [option, "Ana\rPop"], "\(option) must not contain control characters"),
                      (rest + [option, hugeText], "\(option) must be at most")]
        }
        for bad in ["not-an-email", "ana@example.com\r\nBcc: all@example.com", "ana@example.com\u{1B}[2J"] {
            cases.append((["--email", bad, "--reason", "r"], "--email"))
        }
        for bad in ["call me", "+40\u{7}711 000", String(repeating: "1", count: 10_000)] {
            cases.append((["--phone", bad, "--reason", "r"], "--phone"))
        }
        return cases
    }()

    @Test func hostileAndOversizedInputIsRefusedAndStoresNothing() throws {
        try office.withOwner { setup in
            for (arguments, fragment) in Self.refusedAdditions {
                let add = gatepass(setup, ["blocklist", "add"] + arguments)
                #expect(add.status == 2, "\(arguments.map { $0.prefix(40) }): \(add.err)")
                #expect(add.err.contains(fragment), "\(arguments.map { $0.prefix(40) }): \(add.err)")
                #expect(!add.err.unicodeScalars.contains("\u{1B}"))
                #expect(add.err.utf8.count < 600, "the error echoes the input: \(add.err.prefix(200))")
                #expect(add.out.isEmpty)
            }
            for id in ["not-an-id", "../../api/visitors", Self.hugeText, "0190f3c2-0000-7000-8000-00000000000\u{1B}"] {
                let remove = gatepass(setup, ["blocklist", "remove", id])
                #expect(remove.status == 2 && remove.err.contains("ID must be an entry id"), "\(id.prefix(40)): \(remove.err)")
                #expect(!remove.err.unicodeScalars.contains("\u{1B}"))
            }
            #expect(gatepass(setup, ["blocklist", "list", "--limit", "0"]).status == 2)
            #expect(gatepass(setup, ["blocklist"]).status == 2)
            #expect(gatepass(setup, ["blocklist", "frobnicate"]).status == 2)
            let stored = try entries(setup)
            #expect(stored.isEmpty)
        }
    }

    /// What the list shows comes from outside (any admin typed it): it is made visible.
    @Test func theListSpellsOutInvisibleText() throws {
        try office.withOwner { setup in
            let add = gatepass(setup, ["blocklist", "add", "--name", "Ana\u{200B}Pop\u{202E}", "--reason", "see\u{2028}file"])
            #expect(add.status == 0, "\(add.err)")
            let list = gatepass(setup, ["blocklist", "list"])
            #expect(!list.out.unicodeScalars.contains { ["\u{200B}", "\u{202E}", "\u{2028}"].contains($0) })
            #expect(list.out.contains("Ana") && list.out.contains("reason: see"))
        }
    }
}
