import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

extension TestServer {
    func notifications(_ token: String, _ query: String = "") throws -> HTTPAnswer {
        try get("/api/notifications" + query, token: token)
    }

    func delete(_ path: String, token: String) throws -> HTTPAnswer {
        try client().send("DELETE", path, headers: ["Authorization": "Bearer \(token)"])
    }
}

/// api.md "Notifications (any user)": each event that concerns a user lands in their list.
@Suite struct NotificationTests {
    @Test func theListIsNewestFirstWithEveryKey() throws {
        try withSite { server, site in
            try server.awaitingVisitor(site, ["name": "First"])
            try server.awaitingVisitor(site, ["name": "Second"])
            let list = try server.notifications(site.ownerToken)
            #expect(list.status == 200 && list.keys == Shape.list)
            #expect(list.items.map { $0["title"] as? String } == ["Second is waiting for approval", "First is waiting for approval"])
            for item in list.items {
                #expect(Set(item.keys) == ["id", "kind", "title", "visitorId", "createdAt", "readAt"])
                #expect(item["kind"] as? String == "visitor.awaiting" && item["readAt"] is NSNull)
            }
            // Pages of one keep the order.
            let pages = try server.allPages("/api/notifications", token: site.ownerToken, limit: 1)
            #expect(ids(pages.items) == ids(list.items) && pages.pages == 2)
        }
    }

    @Test func readMarksOnceAndUnreadFilters() throws {
        try withSite { server, site in
            try server.awaitingVisitor(site, ["name": "One"])
            try server.awaitingVisitor(site, ["name": "Two"])
            let items = try server.notifications(site.approverToken).items
            let newest = try #require(items.first?["id"] as? String)
            let stream = try server.stream(site.approverToken)
            let read = try server.post("/api/notifications/\(newest)/read", token: site.approverToken)
            #expect(read.status == 200 && read.string("id") == newest && date(read.json?["readAt"]) != nil)
            #expect(kinds(stream.events(1)) == ["notification.read"])
            // Reading again keeps the first time and tells nobody.
            server.clock.advance(by: 60)
            let again = try server.post("/api/notifications/\(newest)/read", token: site.approverToken)
            #expect(again.json?["readAt"] as? String == read.json?["readAt"] as? String)
            #expect(stream.drain(for: 0.3).isEmpty)
            #expect(ids(try server.notifications(site.approverToken, "?unread=true").items) == [items[1]["id"] as! String])
            #expect(ids(try server.notifications(site.approverToken, "?unread=false").items) == ids(items))
            // Read state is per user: the owner still has both unread.
            #expect(try server.notifications(site.ownerToken, "?unread=true").items.count == 2)
        }
    }

    @Test func deleteRemovesItForThatUserOnly() throws {
        try withSite { server, site in
            try server.awaitingVisitor(site)
            let id = try #require(try server.notifications(site.adminToken).items.first?["id"] as? String)
            let stream = try server.stream(site.adminToken)
            #expect(try server.delete("/api/notifications/\(id)", token: site.adminToken).status == 204)
            let deleted = stream.events(1)
            #expect(kinds(deleted) == ["notification.deleted"] && deleted.first?.json?["id"] as? String == id)
            #expect(try server.notifications(site.adminToken).items.isEmpty)
            #expect(try server.delete("/api/notifications/\(id)", token: site.adminToken).isError(404, "NOT_FOUND"))
            #expect(try server.post("/api/notifications/\(id)/read", token: site.adminToken).isError(404, "NOT_FOUND"))
            #expect(try server.notifications(site.ownerToken).items.count == 1)
        }
    }

    /// The list follows the stream's audience: an approver never sees another approver's
    /// visitor, not even by id; PLATFORM_ADMIN's list is empty; other organizations see nothing.
    @Test func theListFollowsTheAudienceRules() throws {
        try withServer { server in
            let site = try server.makeSite("Acme", domain: "acme.test")
            let other = try server.makeSite("Globex", domain: "globex.test")
            try server.addUser("platform@gatepass.test", role: .platformAdmin, organization: "Platform")
            let platform = try server.login("platform@gatepass.test")
            try server.awaitingVisitor(site, ["name": "Desk's", "approverId": site.desk.id])
            let deskItem = try #require(try server.notifications(site.deskToken).items.first?["id"] as? String)
            #expect(try server.notifications(site.approverToken).items.isEmpty)
            #expect(try server.post("/api/notifications/\(deskItem)/read", token: site.approverToken).isError(404, "NOT_FOUND"))
            #expect(try server.delete("/api/notifications/\(deskItem)", token: site.approverToken).isError(404, "NOT_FOUND"))
            #expect(try server.notifications(site.ownerToken).items.count == 1)
            #expect(try server.notifications(other.ownerToken).items.isEmpty)
            #expect(try server.post("/api/notifications/\(deskItem)/read", token: other.ownerToken).isError(404, "NOT_FOUND"))
            #expect(try server.notifications(platform).items.isEmpty)
            // Scanner tokens keep no list.
            #expect(try server.notifications(site.scanner).isError(403, "FORBIDDEN"))
        }
    }

    @Test(arguments: ["abc", "0", "-5", "1.0", "99999999999999999999", "%00", String(repeating: "9", count: 300)])
    func aMalformedIdIs404(_ id: String) throws {
        try withSite { server, site in
            let read = try server.post("/api/notifications/\(id)/read", token: site.ownerToken)
            let deleted = try server.delete("/api/notifications/\(id)", token: site.ownerToken)
            #expect(read.isError(404, "NOT_FOUND") && deleted.isError(404, "NOT_FOUND"), "\(read.text) \(deleted.text)")
        }
    }

    @Test(arguments: ["?unread=yes", "?unread=", "?limit=0", "?limit=abc", "?cursor=not-a-cursor"])
    func aMalformedQueryIs400(_ query: String) throws {
        try withSite { server, site in
            let answer = try server.notifications(site.ownerToken, query)
            #expect(answer.isError(400, "BAD_REQUEST"), "\(query): \(answer.text)")
        }
    }
}

/// The push-token registry: a delivery row per device of each user an event reaches,
/// delivered when a stream that presented the token received it, failed after the set time.
@Suite struct PushDeliveryTests {
    func deliveries(_ server: TestServer, _ site: Site, _ token: String) throws -> [[String: Any]] {
        let answer = try server.get("/api/admin/push-deliveries?token=\(token)", token: site.ownerToken)
        guard answer.status == 200 else { throw TestFailure("deliveries: \(answer.text)") }
        return answer.items
    }

    func waitFor(_ status: String, _ count: Int, _ server: TestServer, _ site: Site, _ token: String) throws -> Bool {
        try server.server.application.eventHub.changes.wait { try deliveries(server, site, token).filter({ $0["status"] as? String == status }).count == count }
    }

    @Test func aConnectedDeviceGetsItsDeliveriesMarkedDelivered() throws {
        try withSite { server, site in
            try server.registerDevice(site.approverToken, "approver-phone", approver: true)
            try server.registerDevice(site.deskToken, "desk-phone", approver: true)
            let stream = try server.stream(site.approverToken, deviceToken: "approver-phone")
            try server.awaitingVisitor(site)   // unassigned: both approvers are in the audience
            #expect(stream.events(2).count == 2)
            #expect(try waitFor("delivered", 2, server, site, "approver-phone"))
            let rows = try deliveries(server, site, "approver-phone")
            #expect(rows.map { $0["kind"] as? String } == ["notification.new", "visitor.awaiting"])
            #expect(rows.allSatisfy { $0["finishedAt"] is String && $0["userId"] as? String == site.approver.id })
            // The desk's phone has no stream: pending.
            #expect(try deliveries(server, site, "desk-phone").map { $0["status"] as? String } == ["pending", "pending"])
        }
    }

    @Test func aStreamCannotConfirmSomeoneElsesDevice() throws {
        try withSite { server, site in
            try server.registerDevice(site.deskToken, "desk-phone", approver: true)
            try server.registerDevice(site.approverToken, "approver-phone", approver: true)
            // The approver presents the desk's token: the stream works, the deliveries stay pending.
            let stream = try server.stream(site.approverToken, deviceToken: "desk-phone")
            // The approver's own phone is the positive signal: the hub records what every open
            // stream handed over, in order. A second change's deliveries to that phone are
            // recorded after what the borrowed token's stream handed over for the first.
            let own = try server.stream(site.approverToken, deviceToken: "approver-phone")
            try server.awaitingVisitor(site)
            #expect(stream.events(2).count == 2)
            #expect(own.events(2).count == 2)
            try server.awaitingVisitor(site)
            #expect(stream.events(2).count == 2)
            #expect(own.events(2).count == 2)
            #expect(try waitFor("delivered", 4, server, site, "approver-phone"))
            #expect(try deliveries(server, site, "desk-phone").allSatisfy { $0["status"] as? String == "pending" })
        }
    }

    @Test func pendingDeliveriesFailAfterTheConfiguredTime() throws {
        try withSite(configure: { $0.pushFailAfterSeconds = 60 }) { server, site in
            try server.registerDevice(site.ownerToken, "owner-tablet")
            try server.awaitingVisitor(site)
            #expect(try deliveries(server, site, "owner-tablet").allSatisfy { $0["status"] as? String == "pending" })
            server.clock.advance(by: 61)
            #expect(try waitFor("failed", 2, server, site, "owner-tablet"))
            // A stream that comes later replays the events but does not revive failed deliveries.
            let stream = try server.stream(site.ownerToken, lastEventId: 0, deviceToken: "owner-tablet")
            #expect(stream.events(2).count == 2)
            // A new change is the positive signal: its deliveries are recorded after the
            // replayed ones were handed over, so once they read delivered the replay has been
            // accounted for, and the old rows must still read failed.
            try server.awaitingVisitor(site)
            #expect(stream.events(2).count == 2)
            #expect(try waitFor("delivered", 2, server, site, "owner-tablet"))
            let rows = try deliveries(server, site, "owner-tablet")
            #expect(rows.count == 4)
            #expect(rows.filter { $0["status"] as? String == "failed" }.count == 2)
        }
    }

    @Test func aReplayDeliversWhatWasPending() throws {
        try withSite { server, site in
            try server.registerDevice(site.ownerToken, "owner-tablet")
            try server.awaitingVisitor(site)
            let stream = try server.stream(site.ownerToken, lastEventId: 0, deviceToken: "owner-tablet")
            #expect(stream.events(2).count == 2)
            #expect(try waitFor("delivered", 2, server, site, "owner-tablet"))
        }
    }

    @Test func pushTestReportsConnectedAndDisconnectedTokens() throws {
        try withSite { server, site in
            try server.registerDevice(site.ownerToken, "owner-console")
            try server.registerDevice(site.approverToken, "approver-phone", approver: true)
            try server.registerDevice(site.adminToken, "admin-tablet")
            let owner = try server.stream(site.ownerToken, deviceToken: "owner-console")
            // The admin's stream was connected and went away.
            let admin = try server.stream(site.adminToken, deviceToken: "admin-tablet")
            admin.close()
            // The server has seen the admin's stream go (only the owner's is left).
            #expect(server.server.application.eventHub.changes.wait { server.server.application.eventHub.streamCount == 1 })
            let answer = try server.post("/api/admin/push-test", token: site.ownerToken, ["waitSeconds": 2])
            #expect(answer.status == 200)
            var report: [String: String] = [:]
            for item in answer.items { report[item["token"] as! String] = item["status"] as? String }
            #expect(report == ["owner-console": "delivered", "approver-phone": "not connected", "admin-tablet": "not connected"])
            #expect(kinds(owner.events(2)) == ["push.test", "notification.new"])
            // One token; an unknown one is an error outcome.
            let one = try server.post("/api/admin/push-test", token: site.ownerToken, ["token": "owner-console"])
            #expect(one.items.count == 1 && one.items.first?["status"] as? String == "delivered")
            let unknown = try server.post("/api/admin/push-test", token: site.ownerToken, ["token": "nobody's", "waitSeconds": 0])
            #expect(unknown.items.first?["status"] as? String == "error")
            // Another organization's devices are not its business.
            let other = try server.makeSite("Globex", domain: "globex.test")
            let foreign = try server.post("/api/admin/push-test", token: other.ownerToken, ["token": "owner-console", "waitSeconds": 0])
            #expect(foreign.items.first?["status"] as? String == "error")
            #expect(try server.get("/api/admin/push-deliveries?token=owner-console", token: other.ownerToken).items.isEmpty)
        }
    }

    @Test(arguments: [#"{"waitSeconds": 31}"#, #"{"waitSeconds": -1}"#, #"{"waitSeconds": "3"}"#, #"{"token": 5}"#, "[1]", "{"])
    func aMalformedPushTestIs400(_ body: String) throws {
        try withSite { server, site in
            let answer = try server.postRaw("/api/admin/push-test", token: site.ownerToken, body: Array(body.utf8))
            #expect(answer.isError(400, "BAD_REQUEST"), "\(body): \(answer.text)")
        }
    }

    @Test func theDeliveryLogNeedsAToken() throws {
        try withSite { server, site in
            let missing = try server.get("/api/admin/push-deliveries", token: site.ownerToken)
            let long = try server.get("/api/admin/push-deliveries?token=\(String(repeating: "x", count: 600))", token: site.ownerToken)
            #expect(missing.isError(400, "BAD_REQUEST") && long.isError(400, "BAD_REQUEST"))
        }
    }
}
