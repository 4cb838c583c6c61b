import Foundation
import GatePassCore
import LoopbackHTTP
import QRCode
import Testing
@testable import GatePassServer

/// api.md "Visitors (OWNER / ADMIN)": every route end to end with its exact shapes.
@Suite struct VisitorRouteTests {
    static let crockford = Set("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    @Test func createAnswersTheFullVisitorAndGetReturnsIt() throws {
        try withSite { server, site in
            let body: [String: Any] = [
                "name": "Ana Pop", "email": "Ana@Example.com", "phone": "+40 721 000 111", "company": "Acme",
                "purpose": "Delivery", "hostName": "Ion", "approverId": site.approver.id, "requiresApproval": true,
                "validFrom": "2026-11-29T08:00:00Z", "validUntil": "2026-11-30T18:00:00Z",
            ]
            let created = try server.post("/api/visitors", token: site.ownerToken, body)
            #expect(created.status == 201)
            #expect(created.headers["content-type"]?.hasPrefix("application/json") == true)
            let visitor = try #require(created.json)
            #expect(Set(visitor.keys) == Shape.visitor)
            let shortId = try #require(visitor["shortId"] as? String)
            #expect(shortId.count == 8 && shortId.allSatisfy { Self.crockford.contains($0) })
            #expect(UUID(uuidString: visitor["id"] as? String ?? "") != nil)
            #expect(visitor["name"] as? String == "Ana Pop")
            #expect(visitor["email"] as? String == "ana@example.com")
            #expect(visitor["phone"] as? String == "+40 721 000 111")
            #expect(visitor["company"] as? String == "Acme" && visitor["purpose"] as? String == "Delivery")
            #expect(visitor["hostName"] as? String == "Ion" && visitor["approverId"] as? String == site.approver.id)
            #expect(visitor["requiresApproval"] as? Bool == true && visitor["walkIn"] as? Bool == false)
            #expect(visitor["status"] as? String == "EXPECTED")
            #expect(visitor["validFrom"] as? String == "2026-11-29T08:00:00Z")
            #expect(visitor["validUntil"] as? String == "2026-11-30T18:00:00Z")
            #expect(visitor["createdAt"] as? String == iso(server.clock.now()))
            for key in ["approvalRequestedAt", "decidedAt", "decidedBy", "decisionNote", "checkedInAt", "checkedOutAt",
                        "checkpointId"] {
                #expect(visitor[key] is NSNull, "\(key)")
            }
            let fetched = try server.get("/api/visitors/\(visitor["id"] as! String)", token: site.adminToken)
            #expect(fetched.status == 200)
            #expect(NSDictionary(dictionary: fetched.json ?? [:]) == NSDictionary(dictionary: visitor))
            // Optional fields left out are null, and unknown ids are 404.
            let minimal = try server.createVisitor(site.ownerToken, ["name": "Min"])
            for key in ["email", "phone", "company", "purpose", "hostName", "approverId"] { #expect(minimal[key] is NSNull) }
            #expect(minimal["requiresApproval"] as? Bool == false)
            #expect(try server.get("/api/visitors/00000000-0000-0000-0000-000000000000", token: site.ownerToken)
                .isError(404, "NOT_FOUND"))
        }
    }

    @Test func validityDefaultsToTodayInTheServersZone() throws {
        try withServer(configure: { $0.timeZone = "Europe/Bucharest" }) { server in
            let site = try server.makeSite()
            let visitor = try server.createVisitor(site.ownerToken)
            #expect(visitor["validFrom"] as? String == "2026-11-28T22:00:00Z")
            #expect(visitor["validUntil"] as? String == "2026-11-29T21:59:59Z")
        }
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken)
            #expect(visitor["validFrom"] as? String == "2026-11-29T00:00:00Z")
            #expect(visitor["validUntil"] as? String == "2026-11-29T23:59:59Z")
        }
    }

    @Test func createRefusesAnInvertedWindowAndForeignApprovers() throws {
        try withServer { server in
            let site = try server.makeSite()
            let other = try server.makeSite("Globex", domain: "globex.test")
            let inverted = try server.post("/api/visitors", token: site.ownerToken, [
                "name": "X", "validFrom": "2026-11-30T00:00:00Z", "validUntil": "2026-11-29T00:00:00Z",
            ])
            #expect(inverted.isError(400, "BAD_REQUEST") && inverted.errorMessage.contains("validUntil"))
            for approverId in [other.approver.id, site.admin.id, "nobody"] {
                let answer = try server.post("/api/visitors", token: site.ownerToken, ["name": "X", "approverId": approverId])
                #expect(answer.isError(400, "BAD_REQUEST") && answer.errorMessage.contains("approverId"))
            }
            #expect(try server.get("/api/visitors", token: site.ownerToken).items.isEmpty)
        }
    }

    /// A pass text carries its window as unsigned unix seconds (api.md "Offline passes": no
    /// sign), so a window reaching before 1970, or past 9999999999 s, cannot be issued: it is
    /// refused when created and when edited, and nothing is stored.
    @Test func windowsOutsideWhatAPassCanSayAreRefused() throws {
        try withSite { server, site in
            let windows: [([String: Any], String)] = [
                (["validFrom": "1969-12-31T23:00:00Z", "validUntil": "1970-01-01T01:00:00Z"], "validFrom"),
                (["validFrom": "1900-01-01T00:00:00Z", "validUntil": "1900-01-02T00:00:00Z"], "validFrom"),
                (["validFrom": "1969-12-31T00:00:00Z"], "validFrom"),
                (["validFrom": "2286-11-20T17:46:39Z", "validUntil": "2286-11-20T17:46:40Z"], "validUntil"),
                (["validFrom": "9999-12-30T00:00:00Z", "validUntil": "9999-12-31T00:00:00Z"], "validUntil"),
            ]
            for (window, field) in windows {
                let created = try server.post("/api/visitors", token: site.ownerToken, window.merging(["name": "Old Pass"]) { $1 })
                #expect(created.isError(400, "BAD_REQUEST") && created.errorMessage.contains(field), "\(window): \(created.text)")
            }
            #expect(try server.get("/api/visitors", token: site.ownerToken).items.isEmpty)
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ana Pop"])
            for (window, field) in windows {
                let edited = try server.patch("/api/visitors/\(visitor["id"] as! String)", token: site.ownerToken, window)
                #expect(edited.isError(400, "BAD_REQUEST") && edited.errorMessage.contains(field), "\(window): \(edited.text)")
            }
            let unchanged = try server.visitor(visitor["id"], site.ownerToken)
            #expect(unchanged["validFrom"] as? String == visitor["validFrom"] as? String)
            // The edges themselves are windows a pass can carry; the first one has long ended,
            // which is refused as such.
            let epoch = try server.post("/api/visitors", token: site.ownerToken, [
                "name": "Edge", "validFrom": "1970-01-01T00:00:00Z", "validUntil": "1970-01-01T00:00:00Z",
            ])
            #expect(epoch.isError(400, "BAD_REQUEST") && epoch.errorMessage.contains("validUntil ended more than 24 hours ago"),
                    "\(epoch.text)")
            let last = try server.post("/api/visitors", token: site.ownerToken, [
                "name": "Edge", "validFrom": "2286-01-01T00:00:00Z", "validUntil": "2286-11-20T17:46:39Z",
            ])
            #expect(last.status == 201, "\(last.text)")
        }
    }

    @Test func listIsNewestFirstAndFiltersByStatusAndQuery() throws {
        try withSite { server, site in
            let ana = try server.createVisitor(site.ownerToken, ["name": "Ana Pop", "email": "ana@example.com",
                                                                 "phone": "+40 721 000 111", "company": "Acme Corp"])
            server.clock.advance(by: 1)
            let bogdan = try server.createVisitor(site.ownerToken, ["name": "Bogdan Ionescu", "company": "Globex"])
            server.clock.advance(by: 1)
            let carla = try server.createVisitor(site.ownerToken, ["name": "Carla Ştefan", "email": "carla@ACME.test",
                                                                   "company": "acme corporation"])
            let all = try server.get("/api/visitors", token: site.ownerToken)
            #expect(all.status == 200 && all.keys == Shape.list)
            #expect(all.json?["nextCursor"] is NSNull)
            #expect(ids(all.items) == [carla, bogdan, ana].map { $0["id"] as! String })
            for item in all.items { #expect(Set(item.keys) == Shape.visitor) }

            func query(_ q: String) throws -> [String] {
                let encoded = q.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let answer = try server.get("/api/visitors?q=\(encoded)", token: site.ownerToken)
                #expect(answer.status == 200, "\(q): \(answer.text)")
                return ids(answer.items)
            }
            let (a, b, c) = (ana["id"] as! String, bogdan["id"] as! String, carla["id"] as! String)
            // (Queries hold a character no short id has, so a random short id never matches by chance.)
            #expect(try query("ACME CO") == [c, a]) // companies, case-insensitive
            #expect(try query("@acme.") == [c]) // email, stored lowercased
            #expect(try query("pop") == [a]) // name
            #expect(try query("EXAMPLE.COM") == [a]) // email
            #expect(try query("721 000") == [a]) // phone
            #expect(try query("globex") == [b]) // company
            #expect(try query("ştefan") == [c] && query("ŞTEFAN") == [c]) // non-ASCII, case-insensitive
            let shortId = bogdan["shortId"] as! String
            #expect(try query(String(shortId.lowercased().prefix(6))).contains(b)) // short id substring
            #expect(try query(shortId.lowercased()) == [b])
            #expect(try query("nobody-matches-this").isEmpty)

            #expect(try server.post("/api/visitors/\(c)/cancel", token: site.ownerToken).status == 200)
            #expect(ids(try server.get("/api/visitors?status=CANCELLED", token: site.ownerToken).items) == [c])
            #expect(ids(try server.get("/api/visitors?status=EXPECTED", token: site.ownerToken).items) == [b, a])
            #expect(ids(try server.get("/api/visitors?status=EXPECTED&q=acme%20co", token: site.ownerToken).items) == [a])
            #expect(try server.get("/api/visitors?status=CHECKED_IN", token: site.ownerToken).items.isEmpty)
            for bad in ["EXPIRED", "expected", "", "BLOCKED"] {
                let answer = try server.get("/api/visitors?status=\(bad)", token: site.ownerToken)
                #expect(answer.isError(400, "BAD_REQUEST") && answer.errorMessage.contains("status"), "\(bad)")
            }
        }
    }

    @Test func paginationWalksEveryVisitorOnce() throws {
        try withSite { server, site in
            var created: [String] = []
            for index in 0..<11 {
                created.append(try server.createVisitor(site.ownerToken, ["name": "Page \(index)"])["id"] as! String)
                if index % 3 == 0 { server.clock.advance(by: 1) } // some share a createdAt
            }
            let newestFirst = Array(created.reversed())
            for limit in [1, 3, 5, 11, 12, 500] {
                let (items, pages) = try server.allPages("/api/visitors", token: site.ownerToken, limit: limit)
                #expect(ids(items) == newestFirst, "limit \(limit)")
                #expect(pages == max(1, (11 + limit - 1) / limit), "limit \(limit)")
            }
            let first = try server.get("/api/visitors?limit=4", token: site.ownerToken)
            #expect(first.items.count == 4 && first.json?["nextCursor"] is String)
            // A filtered walk keeps its filter across pages.
            let filtered = try server.allPages("/api/visitors?q=page%201", token: site.ownerToken, limit: 1)
            #expect(Set(ids(filtered.items)) == [created[1], created[10]])
        }
    }

    @Test func limitAbove500IsClamped() throws {
        try withSite { server, site in
            let client = server.client()
            for index in 0..<501 {
                let answer = try client.send("POST", "/api/visitors", token: site.ownerToken, json: ["name": "Bulk \(index)"])
                if answer.status != 201 { throw TestFailure("create answered \(answer.status)") }
            }
            let page = try server.get("/api/visitors?limit=100000", token: site.ownerToken)
            #expect(page.status == 200)
            #expect(page.items.count == 500)
            #expect(Set(page.items.compactMap { $0["shortId"] as? String }).count == 500) // short ids are unique
            let cursor = try #require(page.json?["nextCursor"] as? String)
            let rest = try server.get("/api/visitors?limit=1000&cursor=\(cursor)", token: site.ownerToken)
            #expect(rest.items.count == 1 && rest.json?["nextCursor"] is NSNull)
            #expect(try server.get("/api/visitors", token: site.ownerToken).items.count == 50) // the default
        }
    }

    @Test(arguments: ["limit=0", "limit=abc", "limit=-1", "limit=", "limit=1.5", "limit=99999999999999999999"])
    func badLimitsAreBadRequests(_ query: String) throws {
        try withSite { server, site in
            let answer = try server.get("/api/visitors?\(query)", token: site.ownerToken)
            #expect(answer.isError(400, "BAD_REQUEST") && answer.errorMessage.contains("limit"), "\(answer.text)")
        }
    }

    @Test(arguments: ["garbage", "djE6eDp5", "%00", String(repeating: "A", count: 300)])
    func badCursorsAreBadRequests(_ cursor: String) throws {
        try withSite { server, site in
            for path in ["/api/visitors", "/api/visitor-scanner/scan-history", "/api/approver/visitors",
                         "/api/visitor-scanner/on-site"] {
                let token = path.contains("approver") ? site.approverToken : path.contains("scanner") ? site.scanner : site.ownerToken
                let answer = try server.get("\(path)?cursor=\(cursor)", token: token)
                #expect(answer.isError(400, "BAD_REQUEST") && answer.errorMessage.contains("cursor"), "\(path): \(answer.text)")
            }
        }
    }

    @Test func cancelAndItsConflicts() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken)
            let id = visitor["id"] as! String
            let cancelled = try server.post("/api/visitors/\(id)/cancel", token: site.adminToken)
            #expect(cancelled.status == 200 && cancelled.keys == Shape.visitor)
            #expect(cancelled.string("status") == "CANCELLED" && cancelled.string("id") == id)
            let again = try server.post("/api/visitors/\(id)/cancel", token: site.ownerToken)
            #expect(again.isError(409, "CONFLICT") && again.errorMessage.contains("CANCELLED"))
            let inside = try server.createVisitor(site.ownerToken)
            #expect(try server.checkIn(site.scanner, inside["shortId"] as! String).string("result") == "CHECKED_IN")
            let late = try server.post("/api/visitors/\(inside["id"] as! String)/cancel", token: site.ownerToken)
            #expect(late.isError(409, "CONFLICT") && late.errorMessage.contains("CHECKED_IN"))
            #expect(try server.post("/api/visitors/nope/cancel", token: site.ownerToken).isError(404, "NOT_FOUND"))
        }
    }

    @Test func approveAndRejectScan() throws {
        try withSite { server, site in
            let waiting = try server.createVisitor(site.ownerToken, ["requiresApproval": true])
            let id = waiting["id"] as! String
            server.clock.advance(by: 5)
            let approved = try server.post("/api/visitors/\(id)/approve-scan", token: site.ownerToken, ["note": "Known guest"])
            #expect(approved.status == 200 && approved.keys == Shape.visitor)
            #expect(approved.string("status") == "APPROVED")
            #expect(approved.string("decidedBy") == site.owner.id)
            #expect(approved.string("decidedAt") == iso(server.clock.now()))
            #expect(approved.string("decisionNote") == "Known guest")
            #expect(try server.checkIn(site.scanner, waiting["shortId"] as! String).string("result") == "CHECKED_IN")

            let again = try server.post("/api/visitors/\(id)/approve-scan", token: site.ownerToken)
            #expect(again.isError(409, "CONFLICT") && again.errorMessage.contains("CHECKED_IN"))

            // Reject an AWAITING_APPROVAL visitor, with no body at all (note is optional).
            let asked = try server.createVisitor(site.ownerToken, ["requiresApproval": true])
            #expect(try server.checkIn(site.scanner, asked["shortId"] as! String, ["confirmApprovalRequest": true])
                .string("result") == "AWAITING_APPROVAL")
            let rejected = try server.post("/api/visitors/\(asked["id"] as! String)/reject-scan", token: site.adminToken)
            #expect(rejected.status == 200 && rejected.string("status") == "REJECTED")
            #expect(rejected.string("decidedBy") == site.admin.id && rejected.json?["decisionNote"] is NSNull)
            let rejectTwice = try server.post("/api/visitors/\(asked["id"] as! String)/reject-scan", token: site.adminToken)
            #expect(rejectTwice.isError(409, "CONFLICT") && rejectTwice.errorMessage.contains("REJECTED"))

            // A visitor that needs no approval cannot be decided.
            let plain = try server.createVisitor(site.ownerToken)
            for action in ["approve-scan", "reject-scan"] {
                let answer = try server.post("/api/visitors/\(plain["id"] as! String)/\(action)", token: site.ownerToken, ["note": "x"])
                #expect(answer.isError(409, "CONFLICT") && answer.errorMessage.contains("EXPECTED"), "\(action)")
            }
            #expect(try server.visitor(plain["id"], site.ownerToken)["status"] as? String == "EXPECTED")
            let approvedTwice = try server.createVisitor(site.ownerToken, ["requiresApproval": true])
            let path = "/api/visitors/\(approvedTwice["id"] as! String)"
            #expect(try server.post(path + "/approve-scan", token: site.ownerToken).status == 200)
            let rejectApproved = try server.post(path + "/reject-scan", token: site.ownerToken)
            #expect(rejectApproved.isError(409, "CONFLICT") && rejectApproved.errorMessage.contains("APPROVED"))
        }
    }

    /// The pass's content is checked by decoding it (PassRouteTests); here only the answer's form.
    @Test func passIsAnSVGDocument() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken)
            let pass = try server.get("/api/visitors/\(visitor["id"] as! String)/pass.svg", token: site.ownerToken)
            #expect(pass.status == 200)
            #expect(pass.headers["content-type"]?.hasPrefix("image/svg+xml") == true)
            #expect(pass.text.contains("<svg") && pass.text.contains("</svg>"))
            let missing = try server.get("/api/visitors/unknown-id/pass.svg", token: site.ownerToken)
            #expect(missing.isError(404, "NOT_FOUND"))
        }
    }

    @Test func adminMeIsTheProfileWithFlags() throws {
        try withSite { server, site in
            let me = try server.get("/api/visitors/admin-me", token: site.adminToken)
            #expect(me.status == 200)
            #expect(me.keys == Shape.profile.union(["flags"]))
            #expect(me.string("id") == site.admin.id && me.string("role") == "ADMIN")
            #expect(me.string("organizationId") == site.organizationId)
            let flags = try #require(me.json?["flags"] as? [String: Any])
            #expect(!flags.isEmpty && flags.values.allSatisfy { $0 is Bool })
            #expect(flags["canManageVisitors"] as? Bool == true)
            #expect(flags["canScanCheckpoint"] as? Bool == true)
            #expect(flags["devMode"] as? Bool == true)
        }
    }

    @Test func devicesRegisterUpsertsAndUnregisterTouchesOnlyTheCallersOwn() throws {
        try withSite { server, site in
            let body: [String: Any] = ["token": "push-token-1", "platform": "web"]
            let registered = try server.post("/api/visitors/devices/register", token: site.ownerToken, body)
            #expect(registered.status == 200 && registered.keys == Shape.device)
            #expect(registered.string("token") == "push-token-1" && registered.string("platform") == "web")
            #expect(registered.string("userId") == site.owner.id)
            let firstSeen = iso(server.clock.now())
            #expect(registered.string("createdAt") == firstSeen && registered.string("lastSeenAt") == firstSeen)

            // The same token registered by someone else is re-bound to them.
            server.clock.advance(by: 60)
            let rebound = try server.post("/api/visitors/devices/register", token: site.adminToken,
                                          ["token": "push-token-1", "platform": "console"])
            #expect(rebound.status == 200 && rebound.string("userId") == site.admin.id)
            #expect(rebound.string("platform") == "console")
            #expect(rebound.string("createdAt") == firstSeen && rebound.string("lastSeenAt") == iso(server.clock.now()))

            // The owner no longer holds it: unregister answers 204 and changes nothing.
            #expect(try server.post("/api/visitors/devices/unregister", token: site.ownerToken, ["token": "push-token-1"]).status == 204)
            #expect(try server.post("/api/visitors/devices/unregister", token: site.ownerToken, ["token": "never-seen"]).status == 204)
            server.clock.advance(by: 60)
            let stillThere = try server.post("/api/visitors/devices/register", token: site.adminToken,
                                             ["token": "push-token-1", "platform": "console"])
            #expect(stillThere.string("createdAt") == firstSeen) // the row survived

            // The holder's own unregister removes it: registering again starts a new row.
            let removed = try server.post("/api/visitors/devices/unregister", token: site.adminToken, ["token": "push-token-1"])
            #expect(removed.status == 204 && removed.body.isEmpty)
            server.clock.advance(by: 60)
            let fresh = try server.post("/api/visitors/devices/register", token: site.ownerToken, body)
            #expect(fresh.string("createdAt") == iso(server.clock.now()) && fresh.string("userId") == site.owner.id)

            let badPlatform = try server.post("/api/visitors/devices/register", token: site.ownerToken,
                                              ["token": "t", "platform": "blackberry"])
            #expect(badPlatform.isError(400, "BAD_REQUEST") && badPlatform.errorMessage.contains("platform"))
            for platform in ["ios", "android", "web", "console", "kiosk"] {
                #expect(try server.post("/api/visitors/devices/register", token: site.ownerToken,
                                        ["token": "t-\(platform)", "platform": platform]).status == 200)
            }
        }
    }
}
