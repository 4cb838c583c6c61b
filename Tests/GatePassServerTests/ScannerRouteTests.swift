import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

/// api.md "Scanner (scanner token)": token, stats, history, check-out, lookup, walk-ins,
/// on-site and the offline feed (check-in itself is in CheckInRouteTests).
@Suite struct ScannerRouteTests {
    @Test func scannerTokenBindsTheDefaultOrTheNamedCheckpoint() throws {
        try withServer { server in
            let site = try server.makeSite()
            let other = try server.makeSite("Globex", domain: "globex.test")
            let answer = try server.post("/api/visitor-scanner/token", token: site.ownerToken)
            #expect(answer.status == 201)
            #expect(answer.keys == ["scannerToken", "checkpoint", "expiresAt"])
            let checkpoint = try #require(answer.json?["checkpoint"] as? [String: Any])
            #expect(Set(checkpoint.keys) == ["id", "name"])
            #expect(checkpoint["name"] as? String == "Main gate" && checkpoint["id"] as? String == site.mainGate)
            #expect(answer.string("expiresAt") == iso(server.clock.now().addingTimeInterval(30 * 86_400)))
            #expect(answer.string("scannerToken") != site.ownerToken)

            let north = try server.post("/api/checkpoints", token: site.adminToken, ["name": "North gate"])
            let northId = try #require(north.string("id"))
            let bound = try server.scannerTokenAnswer(site.approverToken, checkpointId: northId)
            #expect((bound["checkpoint"] as? [String: Any])?["name"] as? String == "North gate")
            for unknown in ["no-such-checkpoint", other.mainGate] {
                let missing = try server.post("/api/visitor-scanner/token", token: site.ownerToken, ["checkpointId": unknown])
                #expect(missing.isError(404, "NOT_FOUND"), "\(unknown)")
            }
            // The scans of a bound token carry its checkpoint.
            let visitor = try server.createVisitor(site.ownerToken)
            let northScanner = try #require(bound["scannerToken"] as? String)
            let scan = try server.checkIn(northScanner, visitor["shortId"] as! String)
            #expect(scan.visitor["checkpointId"] as? String == northId)
            let recorded = try server.history(site.ownerToken).first
            #expect(recorded?["checkpointId"] as? String == northId && recorded?["scannedBy"] as? String == site.approver.id)
        }
    }

    @Test func statsCountTodayAndNarrowByCheckpoint() throws {
        try withSite { server, site in
            let northId = try #require(try server.post("/api/checkpoints", token: site.ownerToken, ["name": "North"]).string("id"))
            let north = try server.scannerToken(site.ownerToken, checkpointId: northId)
            let inNorth = try server.createVisitor(site.ownerToken, ["name": "In North"])
            let inAndOut = try server.createVisitor(site.ownerToken, ["name": "In And Out"])
            let waiting = try server.createVisitor(site.ownerToken, ["name": "Waiting", "requiresApproval": true])
            _ = try server.createVisitor(site.ownerToken, ["name": "Expected"])
            let approved = try server.createVisitor(site.ownerToken, ["name": "Approved", "requiresApproval": true])
            _ = try server.createVisitor(site.ownerToken, ["name": "Tomorrow", "validFrom": "2026-11-30T08:00:00Z",
                                                          "validUntil": "2026-11-30T18:00:00Z"])
            let cancelled = try server.createVisitor(site.ownerToken, ["name": "Cancelled"])
            func stats(_ token: String, _ query: String = "") throws -> [String: Int] {
                let answer = try server.get("/api/visitor-scanner/stats" + query, token: token)
                #expect(answer.status == 200 && answer.keys == Shape.stats, "\(answer.text)")
                return (answer.json ?? [:]).compactMapValues { $0 as? Int }
            }
            // Read before the gate's work: later answers must reflect every write since.
            #expect(try stats(site.scanner) == ["checkedInToday": 0, "checkedOutToday": 0, "awaitingApproval": 0,
                                                "expectedToday": 6, "onSite": 0])
            #expect(try stats(site.scanner, "?checkpointId=\(northId)")["checkedInToday"] == 0)
            #expect(try server.checkIn(north, inNorth["shortId"] as! String).string("result") == "CHECKED_IN")
            #expect(try stats(site.scanner)["onSite"] == 1)
            #expect(try stats(site.scanner, "?checkpointId=\(northId)")["checkedInToday"] == 1)
            #expect(try server.checkIn(site.scanner, inAndOut["shortId"] as! String).string("result") == "CHECKED_IN")
            #expect(try server.checkOut(site.scanner, inAndOut["shortId"] as! String).string("result") == "CHECKED_OUT")
            #expect(try server.checkIn(site.scanner, waiting["shortId"] as! String, ["confirmApprovalRequest": true])
                .string("result") == "AWAITING_APPROVAL")
            #expect(try server.post("/api/visitors/\(approved["id"] as! String)/approve-scan", token: site.ownerToken).status == 200)
            #expect(try server.post("/api/visitors/\(cancelled["id"] as! String)/cancel", token: site.ownerToken).status == 200)

            let all: [String: Int] = ["checkedInToday": 2, "checkedOutToday": 1, "awaitingApproval": 1, "expectedToday": 2,
                                      "onSite": 1]
            #expect(try stats(site.scanner) == all)
            #expect(try stats(north) == all) // a scanner token sees the whole organization
            #expect(try stats(site.ownerToken) == all)
            #expect(try stats(site.adminToken, "?checkpointId=\(northId)") == [
                "checkedInToday": 1, "checkedOutToday": 0, "awaitingApproval": 0, "expectedToday": 2, "onSite": 1])
            #expect(try stats(site.scanner, "?checkpointId=\(site.mainGate)") == [
                "checkedInToday": 1, "checkedOutToday": 1, "awaitingApproval": 1, "expectedToday": 2, "onSite": 0])
            // Tomorrow, today's counts are gone; the visitor still inside stays on site.
            server.clock.advance(by: 86_400)
            #expect(try stats(site.scanner) == ["checkedInToday": 0, "checkedOutToday": 0, "awaitingApproval": 1,
                                                "expectedToday": 1, "onSite": 1])
        }
    }

    @Test func scanHistoryIsNewestFirstAndFilters() throws {
        try withSite { server, site in
            let northId = try #require(try server.post("/api/checkpoints", token: site.ownerToken, ["name": "North"]).string("id"))
            let north = try server.scannerToken(site.adminToken, checkpointId: northId)
            let visitor = try server.createVisitor(site.ownerToken)
            let shortId = visitor["shortId"] as! String
            var scanIds: [String] = []
            func scan(_ token: String, _ text: String) throws {
                server.clock.advance(by: 60)
                let answer = try server.checkIn(token, text)
                if let id = answer.string("scanId") { scanIds.append(id) }
            }
            try scan(site.scanner, shortId) // 12:0x CHECKED_IN at main
            let afterFirst = server.clock.now()
            try scan(north, shortId) // ALREADY_CHECKED_IN at north
            try scan(north, shortId.lowercased()) // ALREADY_CHECKED_IN at north
            try scan(site.scanner, "ZZZZZZZZ") // NOT_FOUND
            try scan(site.scanner, "garbage!") // INVALID
            let last = server.clock.now()

            let all = try server.get("/api/visitor-scanner/scan-history", token: site.scanner)
            #expect(all.status == 200 && all.keys == Shape.list && all.json?["nextCursor"] is NSNull)
            #expect(all.items.count == 5)
            for item in all.items { #expect(Set(item.keys) == Shape.scan) }
            #expect(all.items.map { $0["result"] as? String } == ["INVALID", "NOT_FOUND", "ALREADY_CHECKED_IN",
                                                                  "ALREADY_CHECKED_IN", "CHECKED_IN"])
            #expect(Array(ids(all.items).suffix(3)) == scanIds.reversed())
            let first = try #require(all.items.last)
            #expect(first["shortId"] as? String == shortId && first["raw"] as? String == shortId)
            #expect(first["visitorId"] as? String == visitor["id"] as? String)
            #expect(first["checkpointId"] as? String == site.mainGate && first["scannedBy"] as? String == site.owner.id)
            #expect(first["scannedAt"] as? String == iso(afterFirst) && first["receivedAt"] as? String == iso(afterFirst))
            #expect(first["offline"] as? Bool == false)
            #expect(all.items[2]["raw"] as? String == shortId.lowercased())
            #expect(all.items[2]["shortId"] as? String == shortId)

            func results(_ query: String) throws -> [String?] {
                let answer = try server.get("/api/visitor-scanner/scan-history?\(query)", token: site.ownerToken)
                #expect(answer.status == 200, "\(query): \(answer.text)")
                return answer.items.map { $0["result"] as? String }
            }
            #expect(try results("result=ALREADY_CHECKED_IN") == ["ALREADY_CHECKED_IN", "ALREADY_CHECKED_IN"])
            #expect(try results("checkpointId=\(northId)").count == 2)
            #expect(try results("checkpointId=\(site.mainGate)") == ["INVALID", "NOT_FOUND", "CHECKED_IN"])
            #expect(try results("from=\(iso(afterFirst.addingTimeInterval(1)))").count == 4)
            #expect(try results("to=\(iso(afterFirst))") == ["CHECKED_IN"])
            #expect(try results("from=\(iso(afterFirst))&to=\(iso(afterFirst.addingTimeInterval(60)))").count == 2)
            #expect(try results("from=\(iso(last.addingTimeInterval(1)))").isEmpty)
            #expect(try results("result=CHECKED_IN&checkpointId=\(northId)").isEmpty)
            // Pages of 2 walk all five once.
            let walked = try server.allPages("/api/visitor-scanner/scan-history", token: site.scanner, limit: 2)
            #expect(walked.pages == 3 && ids(walked.items) == ids(all.items))

            for (query, field) in [("result=MAYBE", "result"), ("result=checked_in", "result"), ("from=yesterday", "from"),
                                   ("to=2026-13-01T00:00:00Z", "to"), ("limit=0", "limit")] {
                let answer = try server.get("/api/visitor-scanner/scan-history?\(query)", token: site.ownerToken)
                #expect(answer.isError(400, "BAD_REQUEST") && answer.errorMessage.contains(field), "\(query): \(answer.text)")
            }
        }
    }

    @Test func checkOutAnswersCheckedOutOrNotCheckedIn() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken)
            let shortId = visitor["shortId"] as! String
            let early = try server.checkOut(site.scanner, shortId)
            #expect(early.status == 200 && early.keys == ["result", "visitor"])
            #expect(early.string("result") == "NOT_CHECKED_IN" && early.visitor["status"] as? String == "EXPECTED")
            #expect(try server.checkIn(site.scanner, shortId).string("result") == "CHECKED_IN")
            server.clock.advance(by: 3600)
            let out = try server.checkOut(site.scanner, "GP1:\(shortId.lowercased())")
            #expect(out.status == 200 && out.string("result") == "CHECKED_OUT")
            #expect(Set(out.visitor.keys) == Shape.visitor)
            #expect(out.visitor["status"] as? String == "CHECKED_OUT")
            #expect(out.visitor["checkedOutAt"] as? String == iso(server.clock.now()))
            let twice = try server.checkOut(site.scanner, shortId)
            #expect(twice.string("result") == "NOT_CHECKED_IN" && twice.visitor["checkedOutAt"] as? String == iso(server.clock.now()))
            #expect(try server.visitor(visitor["id"], site.ownerToken)["status"] as? String == "CHECKED_OUT")
            // Check-outs are not scans.
            #expect(try server.history(site.ownerToken).count == 1)
            #expect(try server.checkOut(site.scanner, "ZZZZZZZZ").isError(404, "NOT_FOUND"))
            let garbage = try server.checkOut(site.scanner, "not a pass")
            #expect(garbage.isError(400, "BAD_REQUEST") && garbage.errorMessage.contains("shortId"))
            #expect(try server.history(site.ownerToken).count == 1)
        }
    }

    @Test func lookupFindsByShortIdNamePhoneOrEmailUpToTwenty() throws {
        try withSite { server, site in
            for index in 0..<25 {
                _ = try server.createVisitor(site.ownerToken, ["name": "Lookup Person \(index)"])
            }
            let target = try server.createVisitor(site.ownerToken, ["name": "Zoë Target", "phone": "+40 744 123 456",
                                                                    "email": "zoe@target.test"])
            let shortId = target["shortId"] as! String
            func lookup(_ query: String) throws -> HTTPAnswer {
                let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                return try server.get("/api/visitor-scanner/lookup/\(encoded)", token: site.scanner)
            }
            let many = try lookup("lookup person")
            #expect(many.status == 200 && many.keys == Shape.list && many.json?["nextCursor"] is NSNull)
            #expect(many.items.count == 20)
            for item in many.items { #expect(Set(item.keys) == Shape.visitor) }
            let hyphenated = shortId.prefix(4).lowercased() + "-" + shortId.suffix(4).lowercased()
            for query in [shortId, shortId.lowercased(), hyphenated, "ZOË", "target", "744 123", "ZOE@TARGET", "+40 744"] {
                #expect(ids(try lookup(query).items) == [target["id"] as! String], "\(query)")
            }
            #expect(try lookup("nobody at all").items.isEmpty)
        }
    }

    @Test func walkInWaitsForApproval() throws {
        try withSite { server, site in
            let answer = try server.post("/api/visitor-scanner/walk-in-arrived", token: site.scanner, [
                "name": "Walk In", "phone": "+40 700 000 000", "email": "walk@in.test", "company": "Courier Co",
                "purpose": "Parcel", "hostName": "Reception",
            ])
            #expect(answer.status == 201 && answer.keys == ["result", "visitor"])
            #expect(answer.string("result") == "AWAITING_APPROVAL")
            let visitor = answer.visitor
            #expect(Set(visitor.keys) == Shape.visitor)
            #expect(visitor["walkIn"] as? Bool == true && visitor["requiresApproval"] as? Bool == true)
            #expect(visitor["status"] as? String == "AWAITING_APPROVAL")
            #expect(visitor["approvalRequestedAt"] as? String == iso(server.clock.now()))
            #expect(visitor["validFrom"] as? String == "2026-11-29T00:00:00Z")
            #expect(visitor["validUntil"] as? String == "2026-11-29T23:59:59Z")
            #expect(visitor["company"] as? String == "Courier Co" && visitor["email"] as? String == "walk@in.test")
            #expect(visitor["approverId"] is NSNull)
            let id = visitor["id"] as! String
            // In the approvers' queue, waiting at this scanner's gate; not a scan.
            #expect(ids(try server.get("/api/approver/visitors", token: site.deskToken).items) == [id])
            let detail = try server.get("/api/approver/visitors/\(id)", token: site.deskToken)
            let context = detail.json?["context"] as? [String: Any]
            #expect((context?["requestedAtCheckpoint"] as? [String: Any])?["id"] as? String == site.mainGate)
            #expect(try server.history(site.ownerToken).isEmpty)
            // Approved, the walk-in gets in.
            #expect(try server.post("/api/approver/visitors/\(id)/approve", token: site.deskToken).status == 200)
            #expect(try server.checkIn(site.scanner, visitor["shortId"] as! String).string("result") == "CHECKED_IN")
            let nameless = try server.post("/api/visitor-scanner/walk-in-arrived", token: site.scanner, ["phone": "+40 700"])
            #expect(nameless.isError(400, "BAD_REQUEST") && nameless.errorMessage.contains("name"))
        }
    }

    @Test func onSiteListsWhoIsInside() throws {
        try withSite { server, site in
            var inside: [String] = []
            for index in 0..<3 {
                let visitor = try server.createVisitor(site.ownerToken, ["name": "Inside \(index)"])
                server.clock.advance(by: 60)
                #expect(try server.checkIn(site.scanner, visitor["shortId"] as! String).string("result") == "CHECKED_IN")
                inside.append(visitor["id"] as! String)
                if index == 1 {
                    #expect(try server.checkOut(site.scanner, visitor["shortId"] as! String).string("result") == "CHECKED_OUT")
                    inside.removeLast()
                }
            }
            _ = try server.createVisitor(site.ownerToken, ["name": "Not here"])
            let roll = try server.get("/api/visitor-scanner/on-site", token: site.scanner)
            #expect(roll.status == 200 && roll.keys == Shape.list && roll.json?["nextCursor"] is NSNull)
            #expect(ids(roll.items) == inside.reversed())
            #expect(roll.items.allSatisfy { $0["status"] as? String == "CHECKED_IN" && Set($0.keys) == Shape.visitor })
            #expect(ids(try server.allPages("/api/visitor-scanner/on-site", token: site.scanner, limit: 1).items) == inside.reversed())
        }
    }

    @Test func expectedFeedFollowsChangesSinceItsCursor() throws {
        try withSite { server, site in
            let first = try server.createVisitor(site.ownerToken, ["name": "First"])
            let second = try server.createVisitor(site.ownerToken, ["name": "Second", "requiresApproval": true])
            _ = try server.createVisitor(site.ownerToken, ["name": "Tomorrow", "validFrom": "2026-11-30T08:00:00Z",
                                                          "validUntil": "2026-11-30T18:00:00Z"])
            _ = try server.createVisitor(site.ownerToken, ["name": "Yesterday", "validFrom": "2026-11-28T08:00:00Z",
                                                          "validUntil": "2026-11-28T18:00:00Z"])
            let feed = try server.get("/api/visitor-scanner/expected", token: site.scanner)
            #expect(feed.status == 200 && feed.keys == ["items", "cursor", "revoked"])
            #expect(ids(feed.items) == [first["id"] as! String, second["id"] as! String])
            for item in feed.items { #expect(Set(item.keys) == Shape.visitor) }
            let cursor = try #require(feed.string("cursor"))
            let nothing = try server.get("/api/visitor-scanner/expected?since=\(cursor)", token: site.scanner)
            #expect(nothing.items.isEmpty && nothing.string("cursor") == cursor)
            // A change and a new pass show after the cursor, each once.
            #expect(try server.post("/api/visitors/\(first["id"] as! String)/cancel", token: site.ownerToken).status == 200)
            let third = try server.createVisitor(site.ownerToken, ["name": "Third"])
            let changes = try server.get("/api/visitor-scanner/expected?since=\(cursor)", token: site.scanner)
            #expect(ids(changes.items) == [first["id"] as! String, third["id"] as! String])
            #expect(changes.items.first?["status"] as? String == "CANCELLED")
            let next = try #require(changes.string("cursor"))
            #expect(next != cursor)
            #expect(try server.get("/api/visitor-scanner/expected?since=\(next)", token: site.scanner).items.isEmpty)
            for bad in ["abc", "-1", "1.5"] {
                let answer = try server.get("/api/visitor-scanner/expected?since=\(bad)", token: site.scanner)
                #expect(answer.isError(400, "BAD_REQUEST") && answer.errorMessage.contains("since"), "\(bad)")
            }
        }
    }
}
