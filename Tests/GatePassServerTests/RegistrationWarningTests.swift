import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

/// Where a registration mistake is likely the server says so: a visitor who matches the
/// blocklist is refused with `BLOCKLIST_MATCH` until the request confirms it (api.md
/// "Blocklist"), a blocked visitor is never mailed an invitation, and a window that ended
/// more than a day before the request is refused. A HOST who names no host is the host.
@Suite struct RegistrationWarningTests {
    static let blocked = "Ion Ionescu"

    func visitorCount(_ server: TestServer, _ token: String) throws -> Int {
        try server.get("/api/visitors?limit=500", token: token).items.count
    }

    /// The invitations in the mail log (the log holds login codes too).
    func invitations(_ server: TestServer, _ token: String) throws -> [[String: Any]] {
        try server.get("/api/admin/mail?limit=500", token: token).items.filter { $0["kind"] as? String == "invitation" }
    }

    /// The 409 of api.md: `BLOCKLIST_MATCH` with `blocked` true, the entry's id only when
    /// `entryId` is given, and never the reason.
    func isBlocklistMatch(_ answer: HTTPAnswer, entryId: String?) -> Bool {
        guard answer.status == 409, let error = answer.error, error["code"] as? String == "BLOCKLIST_MATCH",
              error["blocked"] as? Bool == true, !answer.errorMessage.isEmpty,
              !answer.text.contains(BlocklistRouteTests.reason)
        else { return false }
        return error["entryId"] as? String == entryId
    }

    // MARK: - Blocklist on registration

    @Test(arguments: Backend.available)
    func creatingAMatchingVisitorIsRefusedUntilConfirmed(_ backend: Backend) throws {
        try withServer(on: backend) { server in
            let site = try server.makeSite()
            let host = try server.addUser("hal@acme.test", role: .host, name: "Hal Host")
            let hostToken = try server.login(host.email)
            let entry = try server.block(site.ownerToken, ["name": Self.blocked])
            let entryId = entry["id"] as! String
            // Accents, case and spacing do not slip past the entry.
            let body: [String: Any] = ["name": "  ion IONESCU", "email": "ion@visitors.test"]
            #expect(isBlocklistMatch(try server.post("/api/visitors", token: site.ownerToken, body), entryId: entryId))
            #expect(isBlocklistMatch(try server.post("/api/visitors", token: site.adminToken, ["name": "Ión Ionescu"]),
                                     entryId: entryId))
            // Others learn that the visitor is blocked, not which entry.
            let asHost = try server.post("/api/visitors", token: hostToken, body)
            #expect(isBlocklistMatch(asHost, entryId: nil), "\(asHost.text)")
            #expect(try visitorCount(server, site.ownerToken) == 0)
            // An explicit false is no confirmation.
            var declined = body; declined["confirmBlocked"] = false
            #expect(isBlocklistMatch(try server.post("/api/visitors", token: site.ownerToken, declined), entryId: entryId))
            #expect(try visitorCount(server, site.ownerToken) == 0)

            var confirmed = body; confirmed["confirmBlocked"] = true
            let created = try server.post("/api/visitors", token: hostToken, confirmed)
            #expect(created.status == 201 && created.string("name") == "ion IONESCU", "\(created.text)")
            #expect(created.json?["confirmBlocked"] == nil)
            // Someone not on the list is registered as before, with or without the flag.
            #expect(try server.post("/api/visitors", token: site.ownerToken, ["name": "Ana Pop"]).status == 201)
            #expect(try server.post("/api/visitors", token: site.ownerToken,
                                    ["name": "Eva Pop", "confirmBlocked": true]).status == 201)
            #expect(try visitorCount(server, site.ownerToken) == 3)
        }
    }

    @Test func confirmBlockedMustBeABoolean() throws {
        try withSite { server, site in
            try server.block(site.ownerToken, ["email": "ion@visitors.test"])
            let hostile: [Any] = ["true", 1, "yes", ["nested": true], [true], NSNull(), String(repeating: "t", count: 60_000)]
            for value in hostile {
                let created = try server.post("/api/visitors", token: site.ownerToken,
                                              ["name": "Ion", "email": "ion@visitors.test", "confirmBlocked": value])
                let refused = value is NSNull ? created.status == 409 : created.isError(400, "BAD_REQUEST")
                #expect(refused, "\(value): \(created.status) \(created.text.prefix(200))")
            }
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Clean Guest"])
            for value in hostile where !(value is NSNull) {
                let patched = try server.patch("/api/visitors/\(visitor["id"] as! String)", token: site.ownerToken,
                                               ["email": "ion@visitors.test", "confirmBlocked": value])
                #expect(patched.isError(400, "BAD_REQUEST"), "\(value): \(patched.status)")
            }
            #expect(try server.visitor(visitor["id"], site.ownerToken)["email"] is NSNull)
            #expect(try visitorCount(server, site.ownerToken) == 1)
        }
    }

    @Test(arguments: Backend.available)
    func editingAMatchingFieldIsRefusedUntilConfirmed(_ backend: Backend) throws {
        try withServer(on: backend) { server in
            let site = try server.makeSite()
            let entry = try server.block(site.ownerToken, ["phone": "+40 711 000 111"])
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Clean Guest", "purpose": "Audit"])
            let id = visitor["id"] as! String
            let refused = try server.patch("/api/visitors/\(id)", token: site.ownerToken, ["phone": "+40-711-000-111"])
            #expect(isBlocklistMatch(refused, entryId: entry["id"] as? String), "\(refused.text)")
            // Nothing stored: not the phone, not the purpose sent with it.
            let bothRefused = try server.patch("/api/visitors/\(id)", token: site.ownerToken,
                                               ["phone": "+40711000111", "purpose": "Changed"])
            #expect(bothRefused.status == 409)
            let stored = try server.visitor(id, site.ownerToken)
            #expect(stored["phone"] is NSNull && stored["purpose"] as? String == "Audit")

            let confirmed = try server.patch("/api/visitors/\(id)", token: site.ownerToken,
                                             ["phone": "+40711000111", "confirmBlocked": true])
            #expect(confirmed.status == 200 && confirmed.string("phone") == "+40711000111", "\(confirmed.text)")
            // Once confirmed, edits of other fields are not judged again.
            let purpose = try server.patch("/api/visitors/\(id)", token: site.ownerToken, ["purpose": "Meeting"])
            #expect(purpose.status == 200 && purpose.string("purpose") == "Meeting", "\(purpose.text)")
        }
    }

    @Test func aBlockedVisitorIsNeverMailedAnInvitation() throws {
        try withSite { server, site in
            let entry = try server.block(site.ownerToken, ["email": "ion@visitors.test"])
            let entryId = entry["id"] as? String
            // Registered by a confirmed request, the invitation with it is refused and nothing is stored.
            let withInvite = try server.post("/api/visitors", token: site.ownerToken,
                                             ["name": "Ion", "email": "ion@visitors.test", "invite": true,
                                              "confirmBlocked": true])
            #expect(isBlocklistMatch(withInvite, entryId: entryId), "\(withInvite.text)")
            #expect(try visitorCount(server, site.ownerToken) == 0)

            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ion", "email": "ion@visitors.test",
                                                                     "confirmBlocked": true])
            let id = visitor["id"] as! String
            let invite = try server.post("/api/visitors/\(id)/invite", token: site.ownerToken)
            #expect(isBlocklistMatch(invite, entryId: entryId), "\(invite.text)")
            // A body cannot talk the invitation through.
            let insisted = try server.post("/api/visitors/\(id)/invite", token: site.ownerToken, ["confirmBlocked": true])
            #expect(insisted.status == 409)
            #expect(try invitations(server, site.ownerToken).isEmpty)

            // Blocked after it was invited: a re-issued pass is not mailed either.
            let later = try server.createVisitor(site.ownerToken, ["name": "Later Blocked", "email": "later@visitors.test"])
            let laterId = later["id"] as! String
            #expect(try server.post("/api/visitors/\(laterId)/invite", token: site.ownerToken).status == 202)
            try server.block(site.ownerToken, ["email": "later@visitors.test"])
            let until = Timestamp(server.clock.now().addingTimeInterval(7200)).description
            let reissued = try server.patch("/api/visitors/\(laterId)", token: site.ownerToken, ["validUntil": until])
            #expect(reissued.status == 200, "\(reissued.text)")
            #expect(try invitations(server, site.ownerToken).count == 1)
            // Once the entry is removed, the invitation goes out.
            let removed = try server.client().send("DELETE", "/api/blocklist/\(entryId!)",
                                                   headers: ["Authorization": "Bearer \(site.ownerToken)"])
            #expect(removed.status == 204)
            #expect(try server.post("/api/visitors/\(id)/invite", token: site.ownerToken).status == 202)
        }
    }

    // MARK: - Windows in the past

    @Test func aWindowThatEndedMoreThanADayAgoIsRefused() throws {
        try withSite { server, site in
            let now = server.clock.now()
            func stamp(_ offset: TimeInterval) -> String { Timestamp(now.addingTimeInterval(offset)).description }
            // Ended 24 h and one second ago: refused, naming validUntil, nothing stored.
            let stale = try server.post("/api/visitors", token: site.ownerToken,
                                        ["name": "Yesterday", "validFrom": stamp(-90_000), "validUntil": stamp(-86_401)])
            #expect(stale.isError(400, "BAD_REQUEST") && stale.errorMessage.contains("validUntil"), "\(stale.text)")
            let onlyFrom = try server.post("/api/visitors", token: site.ownerToken,
                                           ["name": "Last week", "validFrom": stamp(-7 * 86_400)])
            #expect(onlyFrom.isError(400, "BAD_REQUEST") && onlyFrom.errorMessage.contains("validUntil"), "\(onlyFrom.text)")
            #expect(try visitorCount(server, site.ownerToken) == 0)
            // Ended exactly 24 h ago, or an hour ago: an outbox replay across midnight gets through.
            #expect(try server.post("/api/visitors", token: site.ownerToken,
                                    ["name": "Replayed", "validFrom": stamp(-90_000), "validUntil": stamp(-86_400)]).status == 201)
            #expect(try server.post("/api/visitors", token: site.ownerToken,
                                    ["name": "This morning", "validFrom": stamp(-7200), "validUntil": stamp(-3600)]).status == 201)

            // PATCH: a changed window is judged, an unchanged one is not.
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ana Pop"])
            let id = visitor["id"] as! String
            let moved = try server.patch("/api/visitors/\(id)", token: site.ownerToken,
                                         ["validFrom": stamp(-5 * 86_400), "validUntil": stamp(-4 * 86_400)])
            #expect(moved.isError(400, "BAD_REQUEST") && moved.errorMessage.contains("validUntil"), "\(moved.text)")
            #expect(try server.visitor(id, site.ownerToken)["validUntil"] as? String == visitor["validUntil"] as? String)
            // Two days on, the visitor's own window has long ended; editing its purpose still works.
            server.clock.advance(by: 3 * 86_400)
            let owner = try server.login(site.owner.email)
            let purpose = try server.patch("/api/visitors/\(id)", token: owner, ["purpose": "Paperwork"])
            #expect(purpose.status == 200 && purpose.string("purpose") == "Paperwork", "\(purpose.text)")
            // Sending the same window back unchanged is not a change either.
            let same = try server.patch("/api/visitors/\(id)", token: owner,
                                        ["validUntil": visitor["validUntil"] as! String, "purpose": "Filing"])
            #expect(same.status == 200, "\(same.text)")
            let shortened = try server.patch("/api/visitors/\(id)", token: owner,
                                             ["validUntil": Timestamp(date(visitor["validUntil"])!.addingTimeInterval(-60)).description])
            #expect(shortened.isError(400, "BAD_REQUEST") && shortened.errorMessage.contains("validUntil"), "\(shortened.text)")
        }
    }

    // MARK: - A HOST is its visitors' host

    @Test func aHostWhoNamesNoHostIsTheHost() throws {
        try withSite { server, site in
            let host = try server.addUser("ion@acme.test", role: .host, name: "Ion Host")
            let token = try server.login(host.email)
            let own = try server.createVisitor(token, ["name": "Guest One", "email": "guest@visitors.test"])
            #expect(own["hostName"] as? String == "Ion Host" && own["hostEmail"] as? String == "ion@acme.test")
            // One named: the other is not guessed from the HOST.
            let named = try server.createVisitor(token, ["name": "Guest Two", "hostName": "Eva"])
            #expect(named["hostName"] as? String == "Eva" && named["hostEmail"] as? String == "ion@acme.test")
            let forEva = try server.createVisitor(token, ["name": "Guest Three", "hostEmail": "eva@acme.test"])
            #expect(forEva["hostName"] is NSNull && forEva["hostEmail"] as? String == "eva@acme.test")
            // Other roles register for someone else: nothing is filled in.
            let desk = try server.createVisitor(site.ownerToken, ["name": "Guest Four"])
            #expect(desk["hostName"] is NSNull && desk["hostEmail"] is NSNull)

            // The pass, the pass page and the invitation carry the name.
            let id = own["id"] as! String
            #expect(try server.get("/api/visitors/\(id)/pass.svg", token: token).text.contains("Ion Host"))
            let invitation = try server.post("/api/visitors/\(id)/invite", token: token)
            let page = try server.get(passPath(try #require(invitation.string("passURL"))))
            #expect(page.status == 200 && page.text.contains("Ion Host"), "\(page.text.prefix(300))")
            let application = server.server.application
            let mail = try server.store.read { tx in
                try tx.mail.due(at: server.clock.now().addingTimeInterval(86_400), limit: 10).first.map {
                    try application.composer.message(for: $0, tx)
                }
            }
            #expect(try #require(mail).text.contains("Your host: Ion Host"))
        }
    }
}
