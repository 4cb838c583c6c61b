import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassCommands

/// Every list command shows one page (`--limit`, default 50). When the list goes on past it,
/// the person reading must be told — a mail log or a scan history cut off without a word
/// looks complete — and told on standard error, so that standard output stays the list
/// itself for whoever pipes it into another program.
@Suite(.serialized) struct ListTruncationTests {
    /// A list command, what it lists, and whether it takes filters (then the note also
    /// suggests narrowing the list).
    struct Listing: CustomStringConvertible {
        let arguments: [String]
        let things: String
        let filtered: Bool
        var description: String { arguments.joined(separator: " ") }
        var note: String {
            filtered ? "more \(things) match than the 1 shown; raise --limit (at most 500) or narrow the list"
                : "more \(things) than the 1 shown; raise --limit (at most 500)"
        }
    }

    static let listings = [
        Listing(arguments: ["user", "list"], things: "users", filtered: false),
        Listing(arguments: ["mail", "list"], things: "mails", filtered: false),
        Listing(arguments: ["blocklist", "list"], things: "blocklist entries", filtered: false),
        Listing(arguments: ["scanner-token", "list"], things: "scanner tokens", filtered: false),
        Listing(arguments: ["history"], things: "scans", filtered: true),
        Listing(arguments: ["visitor", "list"], things: "visitors", filtered: true),
    ]

    @Test func aListCutOffByItsLimitSaysSoOnStandardErrorAndOnlyThen() throws {
        try UserCommandTests().withLogin("owner@demo.gatepass") { setup in
            // At least two of everything: the demo brings users, visitors and scans.
            for address in ["ops@example.com", "desk@example.com"] {
                #expect(setup.gatepass("mail", "test", "--to", address).status == 0)
            }
            for name in ["Ion <b>Blocked</b>", "Second Person"] {
                let added = setup.gatepass("blocklist", "add", "--name", name, "--reason", "test")
                #expect(added.status == 0, "\(added.err)")
            }
            let gates = try UserCommandTests().object(setup.gatepass("checkpoint", "list", "--json").out)
            let gate = try #require((gates["items"] as? [[String: Any]])?.first?["id"] as? String)
            for kiosk in ["North kiosk", "South kiosk"] {
                let code = try UserCommandTests().object(setup.gatepass("kiosk", "enrol-code", "--checkpoint", gate,
                                                                        "--name", kiosk, "--json").out)
                let enrolmentCode = try #require(code["enrolmentCode"] as? String)
                let enrolled = try LoopbackHTTPClient(port: setup.server.port).send("POST", "/api/visitor-scanner/enrol",
                                                                                    json: ["enrolmentCode": enrolmentCode])
                #expect(enrolled.status == 200 || enrolled.status == 201, "\(enrolled.text)")
            }

            for listing in Self.listings {
                let one = setup.gatepass(listing.arguments + ["--limit", "1"])
                #expect(one.status == 0, "\(listing): \(one.err)")
                // A list of times names their zone on its first line (history, scanner tokens).
                let items = one.out.split(separator: "\n").filter { !$0.hasPrefix("times in ") }
                #expect(items.count == 1, "\(listing) printed only its one item: \(one.out)")
                #expect(one.err == listing.note, "\(listing)")

                let whole = setup.gatepass(listing.arguments + ["--limit", "500"])
                #expect(whole.status == 0, "\(listing): \(whole.err)")
                #expect(whole.out.split(separator: "\n").count >= 2, "\(listing)")
                #expect(whole.err.isEmpty, "\(listing): the whole list needs no note, got \(whole.err)")

                // JSON carries the cursor itself; the note would only be noise on standard error.
                let json = setup.gatepass(listing.arguments + ["--limit", "1", "--json"])
                #expect(json.status == 0, "\(listing): \(json.err)")
                #expect(try UserCommandTests().object(json.out)["nextCursor"] is String, "\(listing)")
                #expect(json.err.isEmpty, "\(listing): \(json.err)")
            }
        }
    }

    /// A gate's lookup has no cursor: an answer of the most it brings may have left some out.
    @Test func aFullLookupSaysThereMayBeMore() throws {
        try UserCommandTests().withLogin("owner@demo.gatepass") { setup in
            for index in 1...ListBounds.lookupLimit {
                let added = setup.gatepass("visitor", "add", "--name", "Lina Lookup \(index)", "--email", "lina\(index)@example.com")
                #expect(added.status == 0, "\(added.err)")
            }
            let full = setup.gatepass("lookup", "Lina Lookup")
            #expect(full.status == 0, "\(full.err)")
            #expect(full.out.split(separator: "\n").count == ListBounds.lookupLimit)
            #expect(full.err == "a lookup shows at most 20 visitors; there may be more: type more of the name, or the short id")

            let one = setup.gatepass("lookup", "Lina Lookup 17")
            #expect(one.out.split(separator: "\n").count == 1)
            #expect(one.err.isEmpty, "\(one.err)")
            let json = setup.gatepass("lookup", "Lina Lookup", "--json")
            #expect(json.err.isEmpty, "\(json.err)")
        }
    }
}
