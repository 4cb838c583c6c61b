import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// `gatepass visitor …` and `gatepass mail …` end to end against an in-process server, as a
/// site admin types them: every field, short ids in every spelling, and hostile input in every
/// field refused before anything is created.
@Suite(.serialized) struct OfficeCommandTests {
    typealias Setup = ClientCommandTests.Setup

    struct Run {
        var status: Int32
        var out: String
        var err: String
        /// The JSON object printed on stdout.
        func object() throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any], "not a JSON object: \(out) \(err)")
        }
        /// The items of a printed page.
        func items() throws -> [[String: Any]] { try #require(try object()["items"] as? [[String: Any]]) }
    }

    /// A server whose site is not in UTC (nor, likely, in the zone of the computer the tests run
    /// on), so a site-local time read in the wrong zone shows; logged in as its OWNER.
    func withOwner(_ body: (Setup) throws -> Void) throws {
        try ClientCommandTests().withSetup(configure: { $0.timeZone = "Asia/Kathmandu" }) { setup in
            _ = try LoopbackHTTPClient(port: setup.server.port).send("POST", "/api/auth/send-otp", json: ["email": "owner@demo.gatepass"])
            let login = setup.gatepass("login", "--server", setup.url, "--email", "owner@demo.gatepass",
                                       "--otp", try setup.code("owner@demo.gatepass"))
            try #require(login.status == 0, "\(login.err)")
            try body(setup)
        }
    }

    func gatepass(_ setup: Setup, _ arguments: [String]) -> Run {
        let terminal = RecordingTerminal()
        let status = GatePassCLI.main(["gatepass"] + arguments, terminal: terminal, environment: setup.environment)
        return Run(status: status, out: terminal.stdout, err: terminal.stderr)
    }

    /// A login of `email` made over HTTP (the command line's own session is left alone): the
    /// verify answer, with `token` and the profile under the role's key.
    func verify(_ setup: Setup, _ email: String) throws -> [String: Any] {
        let http = LoopbackHTTPClient(port: setup.server.port)
        _ = try http.send("POST", "/api/auth/send-otp", json: ["email": email])
        return try #require(try http.send("POST", "/api/auth/verify-otp", json: ["email": email, "otp": try setup.code(email)]).json)
    }

    /// The organization's zone, and its name as the organization spells it.
    func siteZone(_ setup: Setup) throws -> (zone: TimeZone, name: String) {
        let token = try #require(try verify(setup, "admin@demo.gatepass")["token"] as? String)
        let organization = try LoopbackHTTPClient(port: setup.server.port).get("/api/organization", token: token)
        let name = try #require(organization.json?["timeZone"] as? String, "GET /api/organization: \(organization.status) \(organization.text)")
        return (try #require(TimeZone(identifier: name)), name)
    }

    /// What the server should store for a wall-clock time at the site on a day of February 2027
    /// (after any demo visit), computed apart from `SiteTime`.
    func instant(_ zone: TimeZone, _ day: Int, _ hour: Int, _ minute: Int = 0) throws -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let date = try #require(calendar.date(from: DateComponents(year: 2027, month: 2, day: day, hour: hour, minute: minute)))
        return Timestamp.format(date)
    }

    /// `K7Q2M9XD` as a person might type it: lower case, a hyphen, `o` for 0 and `l` for 1.
    func spelledLoosely(_ shortId: String) -> String {
        let loose = String(shortId.lowercased().map { $0 == "0" ? "o" : $0 == "1" ? "l" : $0 })
        return String(loose.prefix(4)) + "-" + String(loose.dropFirst(4))
    }

    func visitorCount(_ setup: Setup) throws -> Int {
        let list = gatepass(setup, ["visitor", "list", "--limit", "500", "--json"])
        try #require(list.status == 0, "\(list.err)")
        return try list.items().count
    }

    /// Registers a visitor valid today (the server's default window), answering its JSON.
    func addToday(_ setup: Setup, _ extra: [String] = []) throws -> [String: Any] {
        let add = gatepass(setup, ["visitor", "add", "--name", "Tess Today", "--email", "tess@example.com", "--json"] + extra)
        try #require(add.status == 0, "\(add.err)")
        return try add.object()
    }

    // MARK: - The life of a registration

    @Test func registerShowListEditInviteAndCancel() throws {
        try withOwner { setup in
            let (zone, zoneName) = try siteZone(setup)
            #expect(zoneName == "Asia/Kathmandu")
            let approverId = try #require((try verify(setup, "approver@demo.gatepass")["approver"] as? [String: Any])?["id"] as? String)
            let add = gatepass(setup, ["visitor", "add", "--name", "Ana Visitor", "--email", "Ana@Example.com",
                                       "--phone", "+40 711 000 000", "--company", "Acme", "--purpose", "Delivery",
                                       "--host", "Ion Host", "--host-email", "ion@example.com",
                                       "--approver", "APPROVER@demo.gatepass", "--requires-approval",
                                       "--valid-from", "2027-02-02 09:00", "--valid-until", "2027-02-02T17:00", "--json"])
            #expect(add.status == 0, "\(add.err)")
            let created = try add.object()
            #expect(created["name"] as? String == "Ana Visitor")
            #expect(created["email"] as? String == "ana@example.com")
            #expect(created["phone"] as? String == "+40 711 000 000")
            #expect(created["company"] as? String == "Acme")
            #expect(created["purpose"] as? String == "Delivery")
            #expect(created["hostName"] as? String == "Ion Host")
            #expect(created["hostEmail"] as? String == "ion@example.com")
            #expect(created["approverId"] as? String == approverId)
            #expect(created["requiresApproval"] as? Bool == true)
            #expect(created["status"] as? String == "EXPECTED")
            #expect(created["validFrom"] as? String == (try instant(zone, 2, 9)))
            #expect(created["validUntil"] as? String == (try instant(zone, 2, 17)))
            let id = try #require(created["id"] as? String)
            var shortId = try #require(created["shortId"] as? String)

            let show = gatepass(setup, ["visitor", "show", spelledLoosely(shortId)])
            #expect(show.status == 0, "\(show.err)")
            #expect(show.out.hasPrefix("\(shortId)  Ana Visitor\n"))
            #expect(show.out.contains("valid: 02 Feb 2027 09:00–17:00 (\(zoneName))"))
            #expect(show.out.contains("host: Ion Host <ion@example.com>"))
            #expect(show.out.contains("status: EXPECTED, approval required"))
            #expect(show.out.contains("id: \(id)"))
            #expect(try gatepass(setup, ["visitor", "show", id.uppercased(), "--json"]).object()["shortId"] as? String == shortId)

            func listed(_ arguments: [String]) throws -> [String] {
                let list = gatepass(setup, ["visitor", "list", "--json"] + arguments)
                try #require(list.status == 0, "\(arguments): \(list.err)")
                return try list.items().compactMap { $0["id"] as? String }
            }
            #expect(try listed(["--day", "2027-02-02"]).contains(id))
            #expect(try !listed(["--day", "2027-02-03"]).contains(id))
            #expect(try !listed(["--day", "2027-02-01"]).contains(id))
            #expect(try listed(["--from", "2027-02-01", "--to", "2027-02-02"]).contains(id))
            #expect(try listed(["--from", "2027-02-02"]).contains(id))
            #expect(try !listed(["--from", "2027-02-03"]).contains(id))
            #expect(try listed(["--search", "ANA VIS"]) == [id])
            #expect(try listed(["--search", shortId.lowercased()]) == [id])
            #expect(try listed(["--status", "expected", "--day", "2027-02-02"]) == [id])
            #expect(try listed(["--status", "CANCELLED", "--day", "2027-02-02"]).isEmpty)
            let text = gatepass(setup, ["visitor", "list", "--day", "2027-02-02"])
            #expect(text.status == 0, "\(text.err)")
            #expect(text.out.contains("\(shortId)  Ana Visitor  Acme  host Ion Host  EXPECTED  valid 02 Feb 2027 09:00–17:00 (Asia/Kathmandu)  id \(id)"))
            #expect(gatepass(setup, ["visitor", "list", "--day", "2030-01-01"]).out == "no visitors match")
            let one = gatepass(setup, ["visitor", "list", "--limit", "1"])
            #expect(one.out.split(separator: "\n").count == 1)
            #expect(one.out.hasPrefix(shortId)) // newest registration first
            #expect(one.err == "more visitors match than the 1 shown; raise --limit (at most 500) or narrow the list")

            let edit = gatepass(setup, ["visitor", "edit", spelledLoosely(shortId), "--clear-company", "--clear-approver",
                                        "--no-requires-approval", "--purpose", "Audit", "--valid-until", "2027-02-02 18:30",
                                        "--json"])
            #expect(edit.status == 0, "\(edit.err)")
            let edited = try edit.object()
            #expect(edited["company"] is NSNull)
            #expect(edited["approverId"] is NSNull)
            #expect(edited["requiresApproval"] as? Bool == false)
            #expect(edited["purpose"] as? String == "Audit")
            #expect(edited["validUntil"] as? String == (try instant(zone, 2, 18, 30)))
            #expect(edited["validFrom"] as? String == (try instant(zone, 2, 9)))
            #expect(edited["name"] as? String == "Ana Visitor")
            #expect(edited["email"] as? String == "ana@example.com")
            #expect(edited["id"] as? String == id)
            // The new window re-issued the pass: a new short id, and the old one is gone.
            let oldShortId = shortId
            shortId = try #require(edited["shortId"] as? String)
            #expect(shortId != oldShortId)
            #expect(edit.err.contains("the pass was re-issued for the new window: the short id is now \(shortId) and \(oldShortId) no longer works"))
            #expect(gatepass(setup, ["visitor", "show", oldShortId]).err.contains("NOT_FOUND"))
            let editText = gatepass(setup, ["visitor", "edit", id, "--clear-host-email", "--approver", "approver@demo.gatepass"])
            #expect(editText.status == 0, "\(editText.err)")
            #expect(editText.out.contains("host: Ion Host\n"))
            #expect(editText.out.contains("approver: Ana Approver\n"))

            let invite = gatepass(setup, ["visitor", "invite", shortId.lowercased()])
            #expect(invite.status == 0, "\(invite.err)")
            #expect(invite.out.contains("invitation queued"))
            #expect(invite.out.contains("/p/"))
            let mail = gatepass(setup, ["mail", "list", "--json"])
            #expect(mail.status == 0, "\(mail.err)")
            #expect(try mail.items().contains { $0["kind"] as? String == "invitation" && $0["to"] as? String == "ana@example.com" })

            let cancel = gatepass(setup, ["visitor", "cancel", spelledLoosely(shortId)])
            #expect(cancel.status == 0, "\(cancel.err)")
            #expect(cancel.out == "CANCELLED  Ana Visitor (\(shortId))")
            for again in [["visitor", "cancel", shortId], ["visitor", "edit", shortId, "--name", "Late"],
                          ["visitor", "invite", shortId]] {
                let refused = gatepass(setup, again)
                #expect(refused.status == 1, "\(again)")
                #expect(refused.err.contains("CONFLICT"), "\(again): \(refused.err)")
            }
        }
    }

    @Test func todayAndTomorrowAreTheSitesDays() throws {
        try withOwner { setup in
            // The server's default window is the site's today.
            let id = try #require(try addToday(setup)["id"] as? String)
            func listed(_ arguments: [String]) throws -> [String] {
                let list = gatepass(setup, ["visitor", "list", "--json", "--limit", "500"] + arguments)
                try #require(list.status == 0, "\(arguments): \(list.err)")
                return try list.items().compactMap { $0["id"] as? String }
            }
            #expect(try listed(["--day", "today"]).contains(id))
            #expect(try listed(["--day", "TODAY"]).contains(id))
            #expect(try !listed(["--day", "tomorrow"]).contains(id))
            #expect(try listed(["--from", "today", "--to", "tomorrow"]).contains(id))
            #expect(try !listed(["--from", "tomorrow"]).contains(id))
            let backwards = gatepass(setup, ["visitor", "list", "--from", "tomorrow", "--to", "today"])
            #expect(backwards.status == 2)
            #expect(backwards.err.contains("is before --from"))
        }
    }

    @Test func addWithInviteQueuesTheInvitation() throws {
        try withOwner { setup in
            let visitor = try addToday(setup, ["--invite"])
            #expect(visitor["email"] as? String == "tess@example.com")
            let text = gatepass(setup, ["visitor", "add", "--name", "Tom Text", "--email", "tom@example.com", "--invite"])
            #expect(text.status == 0, "\(text.err)")
            #expect(text.out.hasSuffix("\ninvitation queued (see gatepass mail list)"))
            let mail = gatepass(setup, ["mail", "list"])
            #expect(mail.status == 0, "\(mail.err)")
            #expect(mail.out.contains("invitation"))
            #expect(mail.out.contains("tess@example.com"))
            #expect(mail.out.contains("tom@example.com"))
        }
    }

    @Test func theTextOfARegistrationShowsItsWindowInSiteTime() throws {
        try withOwner { setup in
            let zoneName = try siteZone(setup).name
            let add = gatepass(setup, ["visitor", "add", "--name", "Ana\u{202E}poP", "--valid-from", "2099-12-02 09:00",
                                       "--valid-until", "2099-12-03 10:00"])
            #expect(add.status == 0, "\(add.err)")
            // A name may hold a bidi override (it is no control character); the terminal sees it spelled out.
            #expect(add.out.contains("Ana<U+202E>poP"))
            #expect(!add.out.unicodeScalars.contains("\u{202E}"))
            #expect(add.out.contains("valid: 02 Dec 2099 09:00 – 03 Dec 2099 10:00 (\(zoneName))"))
        }
    }

    // MARK: - Check-out, approvals and short ids

    @Test func checkOutFromTheOfficeTakesAShortIdInAnySpelling() throws {
        try withOwner { setup in
            let shortId = try #require(try addToday(setup)["shortId"] as? String)
            #expect(gatepass(setup, ["visitor", "checkout", shortId]).err.contains("CONFLICT")) // not inside yet
            let checkIn = gatepass(setup, ["checkin", shortId])
            #expect(checkIn.status == 0, "\(checkIn.err)")
            #expect(checkIn.out.hasPrefix("CHECKED_IN"))
            let checkOut = gatepass(setup, ["visitor", "checkout", spelledLoosely(shortId), "--json"])
            #expect(checkOut.status == 0, "\(checkOut.err)")
            #expect(try checkOut.object()["status"] as? String == "CHECKED_OUT")
            let again = gatepass(setup, ["visitor", "checkout", shortId])
            #expect(again.status == 1)
            #expect(again.err.contains("CONFLICT"))
            let unknown = gatepass(setup, ["visitor", "checkout", "ZZZZZZZZ"])
            #expect(unknown.status == 1)
            #expect(unknown.err.contains("NOT_FOUND"))
        }
    }

    @Test func approveAndRejectTakeShortIdsInAnySpelling() throws {
        try withOwner { setup in
            var shortIds: [String] = []
            for _ in 0..<3 {
                let shortId = try #require(try addToday(setup, ["--requires-approval"])["shortId"] as? String)
                let ask = gatepass(setup, ["checkin", shortId, "--confirm-approval"])
                #expect(ask.out.hasPrefix("AWAITING_APPROVAL"), "\(ask.out) \(ask.err)")
                shortIds.append(shortId)
            }
            let approve = gatepass(setup, ["approve", spelledLoosely(shortIds[0]), "--note", "expected"])
            #expect(approve.status == 0, "\(approve.err)")
            #expect(approve.out == "APPROVED  Tess Today (\(shortIds[0]))")
            let reject = gatepass(setup, ["reject", shortIds[1].lowercased(), "--json"])
            #expect(reject.status == 0, "\(reject.err)")
            #expect(try reject.object()["status"] as? String == "REJECTED")
            let shown = try gatepass(setup, ["visitor", "show", shortIds[0], "--json"]).object()
            #expect(shown["decisionNote"] as? String == "expected")

            // An APPROVER decides on its own routes (/api/approver/visitors/:id/approve): a short id there too.
            _ = try LoopbackHTTPClient(port: setup.server.port).send("POST", "/api/auth/send-otp", json: ["email": "approver@demo.gatepass"])
            let login = gatepass(setup, ["login", "--email", "approver@demo.gatepass", "--otp", try setup.code("approver@demo.gatepass")])
            try #require(login.status == 0, "\(login.err)")
            let byApprover = gatepass(setup, ["approve", spelledLoosely(shortIds[2])])
            #expect(byApprover.status == 0, "\(byApprover.err)")
            #expect(byApprover.out == "APPROVED  Tess Today (\(shortIds[2]))")
        }
    }

    /// Every command that names a visitor refuses what is no id and no short id, before any
    /// request, and never prints it raw.
    @Test func everyCommandThatNamesAVisitorRefusesWhatIsNoId() throws {
        let commands: [[String]] = [["visitor", "show"], ["visitor", "cancel"], ["visitor", "checkout"], ["visitor", "invite"],
                                    ["visitor", "edit", "--name", "X"], ["visitor", "pass", "--svg", "/tmp/never.svg"],
                                    ["approve"], ["reject"]]
        let ids = ["\u{1B}]0;pwned\u{7}", String(repeating: "A", count: 10_000), "../../api/admin/mail", "K7Q2M9X", "K7Q2M9XDU",
                   "K7Q2M9XD/cancel", "", "0190e5c2-7b1a-7c3d-8e4f-5a6b7c8d9e0"]
        for command in commands {
            for id in ids {
                // The id goes right after the subcommand's words.
                let words = command.prefix(while: { !$0.hasPrefix("--") })
                let arguments = Array(words) + [id] + command.dropFirst(words.count)
                let terminal = RecordingTerminal()
                #expect(GatePassCLI.main(["gatepass"] + arguments, terminal: terminal, environment: [:]) == 2, "\(command)")
                #expect(terminal.stderr.contains("ID must be a visitor's id"), "\(command): \(terminal.stderr)")
                #expect(!terminal.stderr.unicodeScalars.contains("\u{1B}"))
                #expect(terminal.stderr.utf8.count < 400)
            }
        }
    }

    // MARK: - Hostile and oversized input

    static let hugeText = String(repeating: "Ana ", count: 2_600)

    /// `visitor add` arguments that are refused before anything is sent (exit 2), each with a
    /// fragment of the error.
    static let refusedRegistrations: [([String], String)] = {
        var cases: [([String], String)] = []
        for option in ["--name", "--company", "--purpose", "--host"] {
            let prefix = option == "--name" ? [] : ["--name", "Ana Pop"]
            cases += [(prefix + [option, "Ana\u{1B}[2J"], "\(option) must not contain control characters"),
                      (prefix + [option, "Ana\u{0}Pop"], "\(option) must not contain control characters"),
                      (prefix + [option, "Ana\rPop"], "\(option) must not contain control characters"),
                      (prefix + [option, hugeText], "\(option) must be at most"),
                      (prefix + [option, "   "], "\(option)")]
        }
        for option in ["--email", "--host-email", "--approver"] {
            for bad in ["not-an-email", "ana@example.com\r\nBcc: all@example.com", "ana@localhost", "<ana@example.com>",
                        "ana pop@example.com", "\"ana\"@example.com", String(repeating: "a", count: 10_000) + "@example.com",
                        "ana@example.com\u{1B}[2J"] {
                cases.append((["--name", "Ana Pop", option, bad], option))
            }
        }
        for bad in ["call me", "+40\u{7}711 000", String(repeating: "1", count: 10_000), "+40 711 <script>"] {
            cases.append((["--name", "Ana Pop", "--phone", bad], "--phone"))
        }
        for option in ["--valid-from", "--valid-until"] {
            for bad in ["2026-13-45 09:00", "tomorrow", "2026-02-30T09:00", "2026-12-02", "09:00", "2026-12-02 25:00",
                        "2026-12-02T09:00:00+25:00", String(repeating: "2026-12-02 09:00", count: 640), "2026-12-02\u{1B}09:00"] {
                cases.append((["--name", "Ana Pop", option, bad], option))
            }
        }
        cases += [([], "--name is required"),
                  (["--name", ""], "--name"),
                  (["--name", "Ana Pop", "--invite"], "--invite needs --email"),
                  (["--name", "Ana Pop", "--valid-from", "2026-12-02T10:00:00Z", "--valid-until", "2026-12-02T09:00:00Z"],
                   "--valid-until (02 Dec 2026 14:45) is before --valid-from (02 Dec 2026 15:45) in Asia/Kathmandu"),
                  (["--name", "Ana Pop", "--frobnicate"], "unknown option --frobnicate"),
                  (["--name", "Ana Pop", "--requires-approval=yes"], "--requires-approval takes no value"),
                  (["--name", "Ana Pop", "--name", "Bob"], "--name was given more than once")]
        return cases
    }()

    @Test func hostileAndOversizedRegistrationsAreRefusedAndCreateNothing() throws {
        try withOwner { setup in
            let before = try visitorCount(setup)
            for (arguments, fragment) in Self.refusedRegistrations {
                let add = gatepass(setup, ["visitor", "add"] + arguments)
                #expect(add.status == 2, "\(arguments.map { $0.prefix(40) })")
                #expect(add.err.contains(fragment), "\(arguments.map { $0.prefix(40) }): \(add.err)")
                #expect(!add.err.unicodeScalars.contains("\u{1B}"))
                #expect(add.err.utf8.count < 600, "the error echoes the input: \(add.err.prefix(200))")
                #expect(add.out.isEmpty)
            }
            // Refused by the server or its directory: one sentence, exit 1.
            let runtime: [([String], String)] = [
                (["--name", "Ana Pop", "--approver", "nobody@example.com"], "no user of this organization has the email nobody@example.com"),
                (["--name", "Ana Pop", "--approver", "admin@demo.gatepass"], "admin@demo.gatepass is ADMIN, not an APPROVER"),
                (["--name", "Ana Pop", "--valid-from", "2026-12-02T09:00:00Z", "--valid-until", "2028-12-02T09:00:00Z"], "BAD_REQUEST"),
            ]
            for (arguments, fragment) in runtime {
                let add = gatepass(setup, ["visitor", "add"] + arguments)
                #expect(add.status == 1, "\(arguments)")
                #expect(add.err.contains(fragment), "\(arguments): \(add.err)")
            }
            #expect(try visitorCount(setup) == before)
        }
    }

    @Test func hostileEditsAreRefusedAndChangeNothing() throws {
        try withOwner { setup in
            let original = try addToday(setup, ["--company", "Acme"])
            let shortId = try #require(original["shortId"] as? String)
            var cases = Self.refusedRegistrations.filter { arguments, _ in
                // The registration's refusals without their --name (an edit needs none); --invite is
            // not an edit option, and a second --name is a first one here.
                arguments.first == "--name" && arguments.count > 2 && !arguments.contains("--invite")
                    && !arguments.dropFirst(2).contains("--name")
            }.map { (Array($0.0.dropFirst(2)), $0.1) }
            cases += [(["--name", "Ana\u{1B}[2J"], "--name must not contain control characters"),
                      (["--name", Self.hugeText], "--name must be at most"),
                      ([], "give at least one change"),
                      (["--email", "ana@example.com", "--clear-email"], "choose one of --email and --clear-email"),
                      (["--company", "X", "--clear-company"], "choose one of --company and --clear-company"),
                      (["--approver", "approver@demo.gatepass", "--clear-approver"], "choose one of --approver and --clear-approver"),
                      (["--requires-approval", "--no-requires-approval"], "choose one of --requires-approval and --no-requires-approval"),
                      (["--clear-name"], "unknown option --clear-name"),
                      (["--clear-email=yes"], "--clear-email takes no value")]
            for (arguments, fragment) in cases {
                let edit = gatepass(setup, ["visitor", "edit", shortId] + arguments)
                #expect(edit.status == 2, "\(arguments.map { $0.prefix(40) })")
                #expect(edit.err.contains(fragment), "\(arguments.map { $0.prefix(40) }): \(edit.err)")
                #expect(!edit.err.unicodeScalars.contains("\u{1B}"))
            }
            let unknownApprover = gatepass(setup, ["visitor", "edit", shortId, "--approver", "nobody@example.com"])
            #expect(unknownApprover.status == 1)
            #expect(unknownApprover.err.contains("no user of this organization has the email nobody@example.com"))
            let after = try gatepass(setup, ["visitor", "show", shortId, "--json"]).object()
            #expect(NSDictionary(dictionary: after) == NSDictionary(dictionary: original))
        }
    }

    /// A walk-in takes the same fields with the same rules: a bad value is refused while the
    /// person is at the gate, never queued to be refused by the server later.
    @Test func hostileWalkInsAreRefusedAndNeverQueued() throws {
        try withOwner { setup in
            let walkIns = Self.refusedRegistrations.filter { arguments, _ in
                !arguments.contains { ["--invite", "--host-email", "--approver", "--valid-from", "--valid-until", "--requires-approval=yes"].contains($0) }
            }
            #expect(walkIns.count > 30)
            for (arguments, fragment) in walkIns {
                let walkIn = gatepass(setup, ["walk-in"] + arguments)
                #expect(walkIn.status == 2, "\(arguments.map { $0.prefix(40) })")
                #expect(walkIn.err.contains(fragment), "\(arguments.map { $0.prefix(40) }): \(walkIn.err)")
            }
            #expect(gatepass(setup, ["outbox", "list"]).out == "the outbox is empty")
            #expect(gatepass(setup, ["outbox", "dead"]).status == 0)
            #expect(!gatepass(setup, ["outbox", "dead", "--json"]).out.contains("walk-in"))
        }
    }

    @Test func listFiltersAreChecked() throws {
        let cases: [([String], String)] = [
            (["--day", "2026-12-32"], "--day must be a day like 2026-12-02, today or tomorrow"),
            (["--day", "yesterday"], "--day must be a day"),
            (["--from", "2026-12-02T09:00"], "--from must be a day"),
            (["--day", "2026-12-02", "--from", "2026-12-01"], "--day is one day"),
            (["--from", "2026-12-03", "--to", "2026-12-02"], "--to (2026-12-02) is before --from (2026-12-03)"),
            (["--status", "BOGUS"], "--status must be one of EXPECTED"),
            (["--status", String(repeating: "X", count: 10_000)], "--status must be one of"),
            (["--limit", "0"], "--limit must be a whole number from 1 to 500"),
            (["--limit", "501"], "--limit must be a whole number from 1 to 500"),
            (["--search", String(repeating: "x", count: 10_000)], "--search must be at most 100 characters"),
            (["--search", "a\u{1B}[2J"], "--search must not contain control characters"),
        ]
        for (arguments, fragment) in cases {
            let terminal = RecordingTerminal()
            #expect(GatePassCLI.main(["gatepass", "visitor", "list"] + arguments, terminal: terminal, environment: [:]) == 2)
            #expect(terminal.stderr.contains(fragment), "\(arguments.map { $0.prefix(30) }): \(terminal.stderr)")
            #expect(terminal.stderr.utf8.count < 600)
        }
    }

    // MARK: - Passes

    func withPassFolder(_ body: (String) throws -> Void) throws {
        let folder = temporaryPath("passes")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try body(folder)
    }

    func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) & 0o777
    }

    @Test func theSVGPassIsSavedPrivatelyAndReplacesAFileWhole() throws {
        try withOwner { setup in
            try withPassFolder { folder in
                let shortId = try #require(try addToday(setup)["shortId"] as? String)
                let path = folder + "/pass.svg"
                try Data("old, world-readable".utf8).write(to: URL(fileURLWithPath: path))
                try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
                let save = gatepass(setup, ["visitor", "pass", spelledLoosely(shortId), "--svg", path])
                #expect(save.status == 0, "\(save.err)")
                #expect(save.out.contains("saved the pass of \(shortId) to \(path)"))
                let svg = try String(contentsOfFile: path, encoding: .utf8)
                #expect(svg.contains("<svg"))
                #expect(!svg.contains("old, world-readable"))
                #expect(try mode(path) == 0o600)
                // Nothing but the pass is left in the folder (the temporary file was renamed into place).
                #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["pass.svg"])
            }
        }
    }

    @Test func thePNGPassIsSavedPrivately() throws {
        try withOwner { setup in
            try withPassFolder { folder in
                let shortId = try #require(try addToday(setup)["shortId"] as? String)
                let path = folder + "/pass.png"
                let save = gatepass(setup, ["visitor", "pass", shortId, "--png", path])
                #expect(save.status == 0, "\(save.err)")
                let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
                #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
                #expect(try mode(path) == 0o600)
            }
        }
    }

    @Test func aPassIsNeverWrittenWhereItShouldNotBe() throws {
        try withOwner { setup in
            try withPassFolder { folder in
                let shortId = try #require(try addToday(setup)["shortId"] as? String)
                let usage: [([String], String)] = [
                    ([], "give --png FILE or --svg FILE"),
                    (["--png", folder + "/a.png", "--svg", folder + "/a.svg"], "choose one of --png FILE and --svg FILE"),
                    (["--svg", ""], "the file name is empty"),
                    (["--svg", folder + "/a\u{1B}[2J.svg"], "the file name must not contain control or invisible characters"),
                ]
                for (arguments, fragment) in usage {
                    let save = gatepass(setup, ["visitor", "pass", shortId] + arguments)
                    #expect(save.status == 2, "\(arguments)")
                    #expect(save.err.contains(fragment), "\(arguments): \(save.err)")
                }
                let target = folder + "/target.svg"
                try Data("kept".utf8).write(to: URL(fileURLWithPath: target))
                try FileManager.default.createSymbolicLink(atPath: folder + "/link.svg", withDestinationPath: target)
                let failures: [([String], String)] = [
                    (["--svg", folder + "/missing/pass.svg"], "does not exist"),
                    (["--svg", folder + "/link.svg"], "symbolic link"),
                    (["--svg", folder], "is a folder"),
                ]
                for (arguments, fragment) in failures {
                    let save = gatepass(setup, ["visitor", "pass", shortId] + arguments)
                    #expect(save.status == 1, "\(arguments)")
                    #expect(save.err.contains(fragment), "\(arguments): \(save.err)")
                }
                #expect(try String(contentsOfFile: target, encoding: .utf8) == "kept")
                let unknown = gatepass(setup, ["visitor", "pass", "ZZZZZZZZ", "--svg", folder + "/unknown.svg"])
                #expect(unknown.status == 1)
                #expect(unknown.err.contains("NOT_FOUND"))
                #expect(!FileManager.default.fileExists(atPath: folder + "/unknown.svg"))
            }
        }
    }

    // MARK: - Mail

    @Test func aTestMailIsQueuedAndShowsInTheLog() throws {
        try withOwner { setup in
            let test = gatepass(setup, ["mail", "test", "--to", "Ops@Example.com"])
            #expect(test.status == 0, "\(test.err)")
            #expect(test.out == "a test mail to ops@example.com is queued; see gatepass mail list for how it went")
            let log = gatepass(setup, ["mail", "list", "--limit", "10", "--json"])
            #expect(log.status == 0, "\(log.err)")
            let mail = try #require(try log.items().first { $0["kind"] as? String == "test" })
            #expect(mail["to"] as? String == "ops@example.com")
            #expect(["queued", "sent", "failed"].contains(mail["status"] as? String ?? ""))
            #expect(mail["body"] == nil)
            let text = gatepass(setup, ["mail", "list"])
            #expect(text.out.contains("  test  "))
            #expect(text.out.contains("ops@example.com"))

            for (arguments, fragment) in [([String](), "--to is required"), (["--to", "nobody"], "--to must be an email address"),
                                          (["--to", "a@example.com\r\nBcc: b@example.com"], "--to"),
                                          (["--to", String(repeating: "a", count: 10_000) + "@example.com"], "--to")] {
                let refused = gatepass(setup, ["mail", "test"] + arguments)
                #expect(refused.status == 2, "\(arguments.map { $0.prefix(30) })")
                #expect(refused.err.contains(fragment), "\(refused.err)")
            }
            #expect(gatepass(setup, ["mail", "list", "--limit", "501"]).status == 2)
            #expect(gatepass(setup, ["mail", "frobnicate"]).status == 2)
        }
    }

    @Test func aGroupWithoutItsSubcommandShowsItsHelp() {
        for group in ["visitor", "mail"] {
            let bare = RecordingTerminal()
            #expect(GatePassCLI.main(["gatepass", group], terminal: bare, environment: [:]) == 2)
            #expect(bare.stderr.hasPrefix("OVERVIEW: "))
            #expect(bare.stderr.contains("SUBCOMMANDS:"))
            let help = RecordingTerminal()
            #expect(GatePassCLI.main(["gatepass", group, "help"], terminal: help, environment: [:]) == 0)
            #expect(help.stdout == bare.stderr)
            let unknown = RecordingTerminal()
            #expect(GatePassCLI.main(["gatepass", group, "\u{1B}[2Jfrob"], terminal: unknown, environment: [:]) == 2)
            #expect(unknown.stderr.hasPrefix("error: unknown subcommand \(group) \\x1b[2Jfrob; one of: "))
        }
    }

    @Test func officeCommandsNeedALogin() {
        let directory = temporaryPath("no-login")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let terminal = RecordingTerminal()
        #expect(GatePassCLI.main(["gatepass", "visitor", "list"], terminal: terminal,
                                 environment: ["GATEPASS_STATE_DIR": directory]) == 1)
        #expect(terminal.stderr.contains("no one is logged in on this device"))
    }
}
