import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

extension TestServer {
    func patch(_ path: String, token: String?, _ body: Any) throws -> HTTPAnswer {
        try client().send("PATCH", path, token: token, json: body)
    }
}

/// The host's routes of api.md "Visitors, passes and mail": edits, the list by days, short
/// ids in paths, check-out from the office, invitations, the organization and its users.
@Suite struct HostRouteTests {
    // MARK: - Short ids in paths

    @Test func aPathNamesAVisitorByIdOrShortIdInAnySpelling() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ana Pop"])
            let id = visitor["id"] as! String
            let shortId = visitor["shortId"] as! String
            // Lower case, with a hyphen, and the Crockford aliases (O for 0, I and L for 1).
            let aliased = String(shortId.lowercased().map { $0 == "0" ? "o" : $0 == "1" ? "l" : $0 })
            let spellings = [id, shortId, shortId.lowercased(), String(shortId.prefix(4)) + "-" + shortId.suffix(4), aliased]
            for spelling in spellings {
                let answer = try server.get("/api/visitors/\(spelling)", token: site.ownerToken)
                #expect(answer.status == 200 && answer.string("id") == id, "\(spelling): \(answer.text)")
            }
            // Another organization's short id is 404, like an unknown one.
            let other = try server.makeSite("Globex", domain: "globex.test")
            #expect(try server.get("/api/visitors/\(shortId)", token: other.ownerToken).isError(404, "NOT_FOUND"))
            #expect(try server.get("/api/visitors/ZZZZZZZZ", token: site.ownerToken).isError(404, "NOT_FOUND"))
            // Every visitor route takes the short id: cancel by it.
            let cancelled = try server.post("/api/visitors/\(shortId.lowercased())/cancel", token: site.ownerToken)
            #expect(cancelled.status == 200 && cancelled.string("status") == "CANCELLED", "\(cancelled.text)")
        }
    }

    // MARK: - Create

    @Test func createTakesHostEmailAndRefusesABadOne() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["hostEmail": "  Ion@Acme.TEST "])
            #expect(visitor["hostEmail"] as? String == "ion@acme.test")
            for bad in ["not-an-address", "a@b", "x\r\nBcc: evil@x.test", "<a@b.test>", String(repeating: "a", count: 300) + "@x.test"] {
                let answer = try server.post("/api/visitors", token: site.ownerToken, ["name": "X", "hostEmail": bad])
                #expect(answer.isError(400, "BAD_REQUEST") && answer.errorMessage.contains("hostEmail"), "\(bad): \(answer.text)")
            }
            #expect(try server.get("/api/visitors", token: site.ownerToken).items.count == 1)
        }
    }

    @Test func createWithInviteNeedsAnEmailAndOtherwiseCreatesNothing() throws {
        try withSite { server, site in
            let refused = try server.post("/api/visitors", token: site.ownerToken, ["name": "No Mail", "invite": true])
            #expect(refused.isError(409, "CONFLICT") && refused.errorMessage.contains("email"), "\(refused.text)")
            #expect(try server.get("/api/visitors", token: site.ownerToken).items.isEmpty)
            let invited = try server.post("/api/visitors", token: site.ownerToken,
                                          ["name": "With Mail", "email": "ana@visitors.test", "invite": true])
            #expect(invited.status == 201, "\(invited.text)")
            let log = try server.get("/api/admin/mail", token: site.ownerToken)
            // The site's logins are in the log too (kind otp); the creation queued one invitation.
            let invitations = log.items.filter { $0["kind"] as? String == "invitation" }
            #expect(invitations.count == 1 && invitations.first?["to"] as? String == "ana@visitors.test")
        }
    }

    // MARK: - PATCH

    @Test func patchChangesOnlyTheFieldsGivenAndNullClearsThem() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, [
                "name": "Ana Pop", "email": "ana@visitors.test", "company": "Acme", "phone": "+40 712 345 678",
            ])
            let id = visitor["id"] as! String
            let edited = try server.patch("/api/visitors/\(id)", token: site.ownerToken,
                                          ["company": "Globex", "phone": NSNull(), "hostEmail": "ion@acme.test"])
            #expect(edited.status == 200, "\(edited.text)")
            #expect(edited.keys == Shape.visitor)
            #expect(edited.string("company") == "Globex")
            #expect(edited.json?["phone"] is NSNull)
            #expect(edited.string("hostEmail") == "ion@acme.test")
            #expect(edited.string("name") == "Ana Pop" && edited.string("email") == "ana@visitors.test")
            // The window did not change: the same short id.
            #expect(edited.string("shortId") == visitor["shortId"] as? String)
            // What GET shows is what PATCH answered.
            let read = try server.visitor(id, site.ownerToken)
            #expect(read["company"] as? String == "Globex" && read["phone"] is NSNull)
            // The search text follows the edit.
            #expect(ids(try server.get("/api/visitors?q=globex", token: site.ownerToken).items) == [id])
            #expect(try server.get("/api/visitors?q=acme", token: site.ownerToken).items.isEmpty)
        }
    }

    @Test func aChangedWindowReissuesThePassWithANewShortId() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ana Pop"])
            let id = visitor["id"] as! String
            let oldShortId = visitor["shortId"] as! String
            let from = testStart.addingTimeInterval(3600), until = testStart.addingTimeInterval(7200)
            let edited = try server.patch("/api/visitors/\(oldShortId)", token: site.ownerToken,
                                          ["validFrom": iso(from), "validUntil": iso(until)])
            #expect(edited.status == 200, "\(edited.text)")
            let newShortId = try #require(edited.string("shortId"))
            #expect(newShortId != oldShortId)
            #expect(date(edited.json?["validFrom"]) == from && date(edited.json?["validUntil"]) == until)
            // The old pass text stops working at the gate; the new one is the visitor.
            #expect(try server.checkIn(site.scanner, "GP1:\(oldShortId)").isError(404, "NOT_FOUND"))
            server.clock.advance(by: 3700)
            let admitted = try server.checkIn(site.scanner, "GP1:\(newShortId)")
            #expect(admitted.string("result") == "CHECKED_IN" && admitted.visitor["id"] as? String == id)
        }
    }

    @Test func patchIsRefusedOnceTheVisitHappenedOrWasCalledOff() throws {
        try withSite { server, site in
            let cancelled = try server.createVisitor(site.ownerToken, ["name": "Off"])
            _ = try server.post("/api/visitors/\(cancelled["id"] as! String)/cancel", token: site.ownerToken)
            let inside = try server.createVisitor(site.ownerToken, ["name": "Inside"])
            #expect(try server.checkIn(site.scanner, inside["shortId"] as! String).string("result") == "CHECKED_IN")
            for (visitor, status) in [(cancelled, "CANCELLED"), (inside, "CHECKED_IN")] {
                let answer = try server.patch("/api/visitors/\(visitor["id"] as! String)", token: site.ownerToken, ["name": "New"])
                #expect(answer.isError(409, "CONFLICT") && answer.errorMessage.contains(status), "\(answer.text)")
            }
            // AWAITING_APPROVAL may still be edited (a host corrects the company while the approver looks).
            let waiting = try server.createVisitor(site.ownerToken, ["name": "Waiting", "requiresApproval": true])
            _ = try server.checkIn(site.scanner, waiting["shortId"] as! String, ["confirmApprovalRequest": true])
            let edited = try server.patch("/api/visitors/\(waiting["id"] as! String)", token: site.ownerToken, ["company": "Fixed"])
            #expect(edited.status == 200 && edited.string("status") == "AWAITING_APPROVAL", "\(edited.text)")
        }
    }

    @Test func patchWithBadFieldsNamesTheFieldAndChangesNothing() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ana Pop", "company": "Acme"])
            let path = "/api/visitors/\(visitor["id"] as! String)"
            let cases: [([String: Any], String)] = [
                (["name": NSNull()], "name"), (["name": "   "], "name"), (["name": String(repeating: "x", count: 201)], "name"),
                (["name": "Ana\u{1B}[2J"], "name"), (["email": "nope"], "email"), (["hostEmail": "a@b"], "hostEmail"),
                (["phone": "call me"], "phone"), (["company": String(repeating: "é", count: 201)], "company"),
                (["purpose": String(repeating: "p", count: 501)], "purpose"), (["requiresApproval": NSNull()], "requiresApproval"),
                (["validFrom": NSNull()], "validFrom"), (["validFrom": "yesterday"], "validFrom"),
                (["validFrom": iso(testStart), "validUntil": iso(testStart.addingTimeInterval(-1))], "validUntil"),
                (["validUntil": iso(testStart.addingTimeInterval(400 * 86_400))], "366 days"),
                (["approverId": "someone-else"], "approverId"), (["approverId": site.owner.id], "approverId"),
                (["company": 42], "company"),
            ]
            for (body, field) in cases {
                let answer = try server.patch(path, token: site.ownerToken, body)
                #expect(answer.isError(400, "BAD_REQUEST") && answer.errorMessage.contains(field), "\(body): \(answer.text)")
            }
            let unchanged = try server.visitor(visitor["id"], site.ownerToken)
            #expect(unchanged["name"] as? String == "Ana Pop" && unchanged["company"] as? String == "Acme")
            #expect(unchanged["shortId"] as? String == visitor["shortId"] as? String)
            // Malformed and oversized bodies.
            let notJSON = try server.client().send("PATCH", path, headers: ["Content-Type": "application/json",
                                                                             "Authorization": "Bearer \(site.ownerToken)"],
                                                   body: Array("{\"name\":".utf8))
            #expect(notJSON.isError(400, "BAD_REQUEST"))
            let huge = try server.patch(path, token: site.ownerToken, ["name": String(repeating: "x", count: 70_000)])
            #expect(huge.isError(413, "PAYLOAD_TOO_LARGE"))
            // An approver of this site may be assigned; the empty object changes nothing.
            let assigned = try server.patch(path, token: site.ownerToken, ["approverId": site.desk.id])
            #expect(assigned.string("approverId") == site.desk.id)
            #expect(try server.patch(path, token: site.ownerToken, [String: Any]()).string("approverId") == site.desk.id)
        }
    }

    @Test func patchIsIdempotentWithAKey() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ana Pop"])
            let path = "/api/visitors/\(visitor["id"] as! String)"
            let headers = ["Idempotency-Key": "patch-1", "Content-Type": "application/json",
                           "Authorization": "Bearer \(site.ownerToken)"]
            let body = Array(#"{"validUntil":"2026-11-29T20:00:00Z"}"#.utf8)
            let first = try server.client().send("PATCH", path, headers: headers, body: body)
            let replay = try server.client().send("PATCH", path, headers: headers, body: body)
            #expect(first.status == 200 && replay.status == 200)
            #expect(replay.headers["idempotent-replayed"] == "true")
            // Applied once: one re-issue, one short id.
            #expect(first.string("shortId") == replay.string("shortId"))
            #expect(try server.visitor(visitor["id"], site.ownerToken)["shortId"] as? String == first.string("shortId"))
        }
    }

    // MARK: - The list by days

    @Test func fromAndToSelectVisitorsWhoseValidityOverlapsTheDays() throws {
        try withSite { server, site in
            func visitor(_ name: String, _ from: String, _ until: String) throws -> String {
                try server.createVisitor(site.ownerToken, ["name": name, "validFrom": from, "validUntil": until])["id"] as! String
            }
            let today = try visitor("Today", "2026-11-29T08:00:00Z", "2026-11-29T17:00:00Z")
            let tomorrow = try visitor("Tomorrow", "2026-11-30T08:00:00Z", "2026-11-30T17:00:00Z")
            let week = try visitor("Week", "2026-11-28T00:00:00Z", "2026-12-04T23:59:59Z")
            let later = try visitor("Later", "2026-12-10T08:00:00Z", "2026-12-10T17:00:00Z")
            func list(_ query: String) throws -> Set<String> {
                let answer = try server.get("/api/visitors?\(query)", token: site.ownerToken)
                #expect(answer.status == 200, "\(query): \(answer.text)")
                return Set(ids(answer.items))
            }
            #expect(try list("from=2026-11-29&to=2026-11-29") == [today, week])
            // One end alone leaves the other open: from a day on, or up to a day.
            #expect(try list("from=2026-11-30") == [tomorrow, week, later])
            #expect(try list("from=2026-12-05") == [later])
            #expect(try list("from=2026-11-29&to=2026-12-31") == [today, tomorrow, week, later])
            #expect(try list("to=2026-11-28") == [week])
            #expect(try list("from=2026-11-30&status=EXPECTED&q=tomorrow") == [tomorrow])
            for bad in ["from=2026-13-01", "from=2026-02-30", "from=tomorrow", "from=2026-1-1", "to=%00", "from=20261129",
                        "from=2026-12-02&to=2026-12-01", "from=" + String(repeating: "9", count: 5000)] {
                let answer = try server.get("/api/visitors?\(bad)", token: site.ownerToken)
                #expect(answer.isError(400, "BAD_REQUEST") || answer.status == 414 || answer.status == 431, "\(bad.prefix(40)): \(answer.text.prefix(200))")
            }
        }
    }

    @Test func theDaysAreTheSitesDays() throws {
        // In Bucharest (UTC+2) the local day 2026-11-30 starts at 2026-11-29T22:00Z.
        try withSite(configure: { $0.timeZone = "Europe/Bucharest" }) { server, site in
            let lateEvening = try server.createVisitor(site.ownerToken, [
                "name": "Late", "validFrom": "2026-11-29T22:30:00Z", "validUntil": "2026-11-29T23:00:00Z",
            ])["id"] as! String
            #expect(ids(try server.get("/api/visitors?from=2026-11-30&to=2026-11-30", token: site.ownerToken).items) == [lateEvening])
            #expect(try server.get("/api/visitors?from=2026-11-29&to=2026-11-29", token: site.ownerToken).items.isEmpty)
            let organization = try server.get("/api/organization", token: site.ownerToken)
            #expect(organization.json?["timeZone"] as? String == "Europe/Bucharest")
        }
    }

    // MARK: - Check-out from the office

    @Test func officeCheckOutEndsTheVisitAndTellsTheStreams() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ana Pop"])
            let id = visitor["id"] as! String
            let early = try server.post("/api/visitors/\(id)/checkout", token: site.ownerToken)
            #expect(early.isError(409, "CONFLICT") && early.errorMessage.contains("EXPECTED"), "\(early.text)")
            #expect(try server.checkIn(site.scanner, visitor["shortId"] as! String).string("result") == "CHECKED_IN")
            server.clock.advance(by: 600)
            let leftAt = server.clock.now()
            let out = try server.post("/api/visitors/\(visitor["shortId"] as! String)/checkout", token: site.adminToken)
            #expect(out.status == 200 && out.keys == Shape.visitor, "\(out.text)")
            #expect(out.string("status") == "CHECKED_OUT")
            #expect(date(out.json?["checkedOutAt"]) == leftAt)
            #expect(try server.get("/api/visitor-scanner/on-site", token: site.scanner).items.isEmpty)
            let again = try server.post("/api/visitors/\(id)/checkout", token: site.ownerToken)
            #expect(again.isError(409, "CONFLICT") && again.errorMessage.contains("CHECKED_OUT"))
            let departed = try server.store.read { tx in try tx.events.events(after: 0, through: nil, limit: 1000) }
                .compactMap { entry -> StoredEvent? in if case .event(let event) = entry { event } else { nil } }
                .filter { $0.kind == .visitorDeparted && $0.data.contains(id) }
            #expect(departed.count == 1)
        }
    }

    // MARK: - Invitations

    @Test func inviteAnswersThePassPageAndRefusesWhatCannotBeInvited() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ana", "email": "ana@visitors.test"])
            let invited = try server.post("/api/visitors/\(visitor["shortId"] as! String)/invite", token: site.ownerToken)
            #expect(invited.status == 202 && invited.keys == ["queued", "passURL"], "\(invited.text)")
            #expect(invited.json?["queued"] as? Bool == true)
            let url = try #require(invited.string("passURL"))
            #expect(url.hasPrefix(server.server.baseURL + "/p/"))
            let token = String(url.split(separator: "/").last!)
            #expect(token.count == 43)
            let noEmail = try server.createVisitor(site.ownerToken, ["name": "No Mail"])
            let refused = try server.post("/api/visitors/\(noEmail["id"] as! String)/invite", token: site.ownerToken)
            #expect(refused.isError(409, "CONFLICT") && refused.errorMessage.contains("email"))
            _ = try server.post("/api/visitors/\(visitor["id"] as! String)/cancel", token: site.ownerToken)
            let cancelled = try server.post("/api/visitors/\(visitor["id"] as! String)/invite", token: site.ownerToken)
            #expect(cancelled.isError(409, "CONFLICT") && cancelled.errorMessage.contains("CANCELLED"))
        }
    }

    /// Without `smtpURL` and `--dev` mail is off. The login code then reaches the user
    /// through `otpDeliveryCommand` (here a script writing it to a file).
    @Test func withoutMailInvitationsAndTestMailsAreConflicts() throws {
        try withTemporaryDirectory { folder in
            let script = try codeDeliveryScript(in: folder)
            try withServer(devMode: false, configure: { $0.otpDeliveryCommand = script }) { server in
                try server.addUser("owner@acme.test", role: .owner)
                #expect(try server.post("/api/auth/send-otp", ["email": "owner@acme.test"]).status == 202)
                let codeFile = folder + "/owner@acme.test.code"
                #expect(eventually { FileManager.default.fileExists(atPath: codeFile) })
                let code = try String(contentsOfFile: codeFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
                let token = try #require(try server.post("/api/auth/verify-otp", ["email": "owner@acme.test", "otp": code])
                    .string("token"))
                let visitor = try server.createVisitor(token, ["name": "Ana", "email": "ana@visitors.test"])
                let invited = try server.post("/api/visitors/\(visitor["id"] as! String)/invite", token: token)
                #expect(invited.isError(409, "CONFLICT") && invited.errorMessage.contains("smtpURL"), "\(invited.text)")
                let created = try server.post("/api/visitors", token: token, ["name": "B", "email": "b@visitors.test", "invite": true])
                #expect(created.isError(409, "CONFLICT"))
                let test = try server.post("/api/admin/mail/test", token: token, ["to": "me@acme.test"])
                #expect(test.isError(409, "CONFLICT") && test.errorMessage.contains("smtpURL"))
                #expect(try server.get("/api/admin/mail", token: token).items.isEmpty)
                #expect(try server.get("/api/visitors", token: token).items.count == 1)
            }
        }
    }

    @Test func testMailNeedsAnAddress() throws {
        try withSite { server, site in
            for bad: Any in ["", "nope", "a\r\nb@x.test", 7] {
                let answer = try server.post("/api/admin/mail/test", token: site.ownerToken, ["to": bad])
                #expect(answer.isError(400, "BAD_REQUEST"), "\(bad): \(answer.text)")
            }
            #expect(try server.post("/api/admin/mail/test", token: site.ownerToken, [String: Any]()).isError(400, "BAD_REQUEST"))
            let queued = try server.post("/api/admin/mail/test", token: site.ownerToken, ["to": "me@acme.test"])
            #expect(queued.status == 202 && queued.json?["queued"] as? Bool == true)
        }
    }

    // MARK: - The organization and its users

    @Test func organizationAndUsersHaveTheirShapes() throws {
        try withSite { server, site in
            let organization = try server.get("/api/organization", token: site.deskToken)
            #expect(organization.keys == ["id", "name", "timeZone", "retentionDays", "autoCheckoutAt"])
            #expect(organization.string("id") == site.organizationId && organization.string("name") == "Acme")
            #expect(organization.string("timeZone") == "UTC")
            let users = try server.get("/api/users", token: site.adminToken)
            #expect(users.keys == Shape.list)
            #expect(Set(users.items.map { Set($0.keys) }) == [Shape.profile.union(["disabled", "lastLoginAt"])])
            #expect(Set(users.items.compactMap { $0["email"] as? String })
                    == ["owner@acme.test", "admin@acme.test", "approver@acme.test", "desk@acme.test"])
            #expect(users.items.allSatisfy { $0["disabled"] as? Bool == false && date($0["lastLoginAt"]) != nil })
            // Pages follow the cursor; another organization's users are never listed.
            _ = try server.makeSite("Globex", domain: "globex.test")
            let pages = try server.allPages("/api/users", token: site.ownerToken, limit: 3)
            #expect(pages.items.count == 4 && pages.pages == 2)
        }
    }
}
