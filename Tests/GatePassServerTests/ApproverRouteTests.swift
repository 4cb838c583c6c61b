import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

/// api.md "Approver (APPROVER)": every route end to end.
@Suite struct ApproverRouteTests {
    @Test func meIsTheProfileWithCanScanCheckpoint() throws {
        try withSite { server, site in
            let me = try server.get("/api/approver/me", token: site.approverToken)
            #expect(me.status == 200 && me.keys == Shape.profile)
            #expect(me.string("id") == site.approver.id && me.string("role") == "APPROVER")
            #expect(me.json?["canScanCheckpoint"] as? Bool == true)
            #expect(me.string("email") == "approver@acme.test" && me.string("name") == "Ana Approver")
            let desk = try server.get("/api/approver/me", token: site.deskToken)
            #expect(desk.json?["canScanCheckpoint"] as? Bool == false)
        }
    }

    @Test func queueIsNewestRequestFirst() throws {
        try withSite { server, site in
            var visitors: [[String: Any]] = []
            for index in 0..<4 {
                visitors.append(try server.createVisitor(site.ownerToken, ["name": "Queue \(index)", "requiresApproval": true]))
            }
            // Asked in the order 2, 0, 3; visitor 1 is never asked.
            for index in [2, 0, 3] {
                server.clock.advance(by: 10)
                #expect(try server.checkIn(site.scanner, visitors[index]["shortId"] as! String,
                                           ["confirmApprovalRequest": true]).string("result") == "AWAITING_APPROVAL")
            }
            let expected = [3, 0, 2].map { visitors[$0]["id"] as! String }
            let queue = try server.get("/api/approver/visitors?status=AWAITING_APPROVAL", token: site.approverToken)
            #expect(queue.status == 200 && queue.keys == Shape.list)
            #expect(ids(queue.items) == expected)
            for item in queue.items { #expect(Set(item.keys) == Shape.visitor) }
            let times = queue.items.compactMap { date($0["approvalRequestedAt"]) }
            #expect(times.count == 3 && times == times.sorted(by: >))
            // The status defaults to AWAITING_APPROVAL; pages keep the order.
            #expect(ids(try server.get("/api/approver/visitors", token: site.deskToken).items) == expected)
            #expect(ids(try server.allPages("/api/approver/visitors", token: site.approverToken, limit: 1).items) == expected)
            // A decided visitor leaves the queue; other statuses can be asked for.
            #expect(try server.post("/api/approver/visitors/\(expected[1])/approve", token: site.approverToken).status == 200)
            #expect(ids(try server.get("/api/approver/visitors", token: site.approverToken).items) == [expected[0], expected[2]])
            #expect(ids(try server.get("/api/approver/visitors?status=APPROVED", token: site.approverToken).items) == [expected[1]])
            let bad = try server.get("/api/approver/visitors?status=WAITING", token: site.approverToken)
            #expect(bad.isError(400, "BAD_REQUEST") && bad.errorMessage.contains("status"))
        }
    }

    @Test func getShowsTheVisitorWithContext() throws {
        try withSite { server, site in
            let north = try server.post("/api/checkpoints", token: site.ownerToken, ["name": "North gate"])
            let northId = try #require(north.string("id"))
            let northScanner = try server.scannerToken(site.ownerToken, checkpointId: northId)
            // Two earlier visits of the same person (same email), checked in at different times.
            var lastVisit = Date.distantPast
            for _ in 0..<2 {
                let earlier = try server.createVisitor(site.ownerToken, ["name": "Repeat Guest", "email": "repeat@guest.test"])
                server.clock.advance(by: 600)
                #expect(try server.checkIn(site.scanner, earlier["shortId"] as! String).string("result") == "CHECKED_IN")
                lastVisit = server.clock.now()
                #expect(try server.checkOut(site.scanner, earlier["shortId"] as! String).string("result") == "CHECKED_OUT")
            }
            // One that never came does not count.
            _ = try server.createVisitor(site.ownerToken, ["name": "Repeat Guest", "email": "repeat@guest.test"])
            let today = try server.createVisitor(site.ownerToken, ["name": "Repeat Guest", "email": "repeat@guest.test",
                                                                   "requiresApproval": true])
            server.clock.advance(by: 600)
            #expect(try server.checkIn(northScanner, today["shortId"] as! String, ["confirmApprovalRequest": true])
                .string("result") == "AWAITING_APPROVAL")
            let answer = try server.get("/api/approver/visitors/\(today["id"] as! String)", token: site.approverToken)
            #expect(answer.status == 200 && answer.keys == ["visitor", "context"])
            #expect(Set(answer.visitor.keys) == Shape.visitor)
            #expect(answer.visitor["status"] as? String == "AWAITING_APPROVAL")
            #expect(answer.visitor["approvalRequestedAt"] as? String == iso(server.clock.now()))
            let context = try #require(answer.json?["context"] as? [String: Any])
            #expect(Set(context.keys) == ["previousVisits", "lastVisitAt", "requestedAtCheckpoint"])
            #expect(context["previousVisits"] as? Int == 2)
            #expect(context["lastVisitAt"] as? String == iso(lastVisit))
            let checkpoint = try #require(context["requestedAtCheckpoint"] as? [String: Any])
            #expect(checkpoint["id"] as? String == northId && checkpoint["name"] as? String == "North gate")

            // A first-time visitor not yet at any gate.
            let fresh = try server.createVisitor(site.ownerToken, ["name": "New Face", "requiresApproval": true])
            let freshAnswer = try server.get("/api/approver/visitors/\(fresh["id"] as! String)", token: site.deskToken)
            let freshContext = try #require(freshAnswer.json?["context"] as? [String: Any])
            #expect(freshContext["previousVisits"] as? Int == 0)
            #expect(freshContext["lastVisitAt"] is NSNull && freshContext["requestedAtCheckpoint"] is NSNull)
            #expect(try server.get("/api/approver/visitors/unknown", token: site.deskToken).isError(404, "NOT_FOUND"))
        }
    }

    @Test func approveAndReject() throws {
        try withSite { server, site in
            let first = try server.createVisitor(site.ownerToken, ["requiresApproval": true, "approverId": site.desk.id])
            let second = try server.createVisitor(site.ownerToken, ["requiresApproval": true])
            #expect(try server.checkIn(site.scanner, second["shortId"] as! String, ["confirmApprovalRequest": true])
                .string("result") == "AWAITING_APPROVAL")
            server.clock.advance(by: 30)
            let approved = try server.post("/api/approver/visitors/\(first["id"] as! String)/approve", token: site.deskToken,
                                           ["note": "Expected by Ion"])
            #expect(approved.status == 200 && approved.keys == Shape.visitor)
            #expect(approved.string("status") == "APPROVED" && approved.string("decidedBy") == site.desk.id)
            #expect(approved.string("decisionNote") == "Expected by Ion")
            #expect(approved.string("decidedAt") == iso(server.clock.now()))
            let rejected = try server.post("/api/approver/visitors/\(second["id"] as! String)/reject", token: site.deskToken)
            #expect(rejected.status == 200 && rejected.string("status") == "REJECTED")
            #expect(rejected.json?["decisionNote"] is NSNull)
            // The gate sees the decisions.
            #expect(try server.checkIn(site.scanner, first["shortId"] as! String).string("result") == "CHECKED_IN")
            #expect(try server.checkIn(site.scanner, second["shortId"] as! String).string("result") == "REJECTED")
            // Decided is decided.
            let twice = try server.post("/api/approver/visitors/\(second["id"] as! String)/approve", token: site.deskToken)
            #expect(twice.isError(409, "CONFLICT") && twice.errorMessage.contains("REJECTED"))
            let plain = try server.createVisitor(site.ownerToken)
            let notDecidable = try server.post("/api/approver/visitors/\(plain["id"] as! String)/reject", token: site.deskToken)
            #expect(notDecidable.isError(409, "CONFLICT") && notDecidable.errorMessage.contains("EXPECTED"))
        }
    }

    @Test func approverDevicesRegisterAndUnregister() throws {
        try withSite { server, site in
            let registered = try server.post("/api/approver/devices/register", token: site.approverToken,
                                             ["token": "apns-abc", "platform": "ios"])
            #expect(registered.status == 200 && registered.keys == Shape.device)
            #expect(registered.string("userId") == site.approver.id && registered.string("platform") == "ios")
            let created = registered.string("createdAt")
            server.clock.advance(by: 60)
            let rebound = try server.post("/api/approver/devices/register", token: site.deskToken,
                                          ["token": "apns-abc", "platform": "android"])
            #expect(rebound.string("userId") == site.desk.id && rebound.string("createdAt") == created)
            #expect(try server.post("/api/approver/devices/unregister", token: site.approverToken, ["token": "apns-abc"]).status == 204)
            let kept = try server.post("/api/approver/devices/register", token: site.deskToken,
                                       ["token": "apns-abc", "platform": "android"])
            #expect(kept.string("createdAt") == created)
            #expect(try server.post("/api/approver/devices/unregister", token: site.deskToken, ["token": "apns-abc"]).status == 204)
            server.clock.advance(by: 60)
            let fresh = try server.post("/api/approver/devices/register", token: site.deskToken,
                                        ["token": "apns-abc", "platform": "android"])
            #expect(fresh.string("createdAt") == iso(server.clock.now()))
        }
    }
}
