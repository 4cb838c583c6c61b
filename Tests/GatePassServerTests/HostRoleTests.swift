import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

/// api.md "Roles and principals": a HOST creates, edits, cancels, invites and reads the
/// visitors it registered or hosts (`hostEmail` = its email), and no others.
@Suite struct HostRoleTests {
    struct Hosts {
        let ion: Profile
        let ionToken: String
        let eva: Profile
        let evaToken: String
    }

    func withHosts(_ body: (TestServer, Site, Hosts) throws -> Void) throws {
        try withSite { server, site in
            let ion = try server.addUser("ion@acme.test", role: .host, name: "Ion Host")
            let eva = try server.addUser("eva@acme.test", role: .host, name: "Eva Host")
            try body(server, site, Hosts(ion: ion, ionToken: try server.login(ion.email),
                                         eva: eva, evaToken: try server.login(eva.email)))
        }
    }

    @Test func aHostSeesAndChangesOnlyItsOwnVisitors() throws {
        try withHosts { server, site, hosts in
            // Its own: registered by it (hostEmail defaults to it), or registered by the desk for it.
            let registered = try server.createVisitor(hosts.ionToken, ["name": "Ion's Guest", "email": "guest@visitors.test"])
            #expect(registered["hostEmail"] as? String == "ion@acme.test")
            let forIon = try server.createVisitor(site.ownerToken, ["name": "Sent To Ion", "hostEmail": "ION@acme.test"])
            // Registered by Ion for Eva: Ion registered it, Eva hosts it; both see it.
            let forEva = try server.createVisitor(hosts.ionToken, ["name": "For Eva", "hostEmail": "eva@acme.test",
                                                                   "email": "shared@visitors.test"])
            // Not Ion's: the owner's own, and Eva's own.
            let owners = try server.createVisitor(site.ownerToken, ["name": "Owner's Guest", "email": "o@visitors.test"])
            let evas = try server.createVisitor(hosts.evaToken, ["name": "Eva's Guest", "email": "e@visitors.test"])

            let ionList = Set(ids(try server.get("/api/visitors?limit=500", token: hosts.ionToken).items))
            #expect(ionList == Set([registered, forIon, forEva].map { $0["id"] as! String }))
            let evaList = Set(ids(try server.get("/api/visitors?limit=500", token: hosts.evaToken).items))
            #expect(evaList == Set([forEva, evas].map { $0["id"] as! String }))
            // Filters narrow within its own, never widen.
            #expect(ids(try server.get("/api/visitors?q=guest", token: hosts.ionToken).items) == [registered["id"] as! String])
            #expect(try server.get("/api/visitors?q=owner", token: hosts.ionToken).items.isEmpty)
            #expect(try server.get("/api/visitors?status=EXPECTED&from=2026-11-29&to=2026-11-29&limit=500",
                                   token: hosts.ionToken).items.count == 3)
            // The owner still sees everyone.
            #expect(try server.get("/api/visitors?limit=500", token: site.ownerToken).items.count == 5)

            for theirs in [owners, evas] {
                let id = theirs["id"] as! String, shortId = theirs["shortId"] as! String
                for path in ["/api/visitors/\(id)", "/api/visitors/\(shortId)", "/api/visitors/\(id)/pass.svg",
                             "/api/visitors/\(id)/pass.png"] {
                    #expect(try server.get(path, token: hosts.ionToken).isError(404, "NOT_FOUND"), "\(path)")
                }
                #expect(try server.patch("/api/visitors/\(id)", token: hosts.ionToken, ["purpose": "Mine now"]).isError(404, "NOT_FOUND"))
                #expect(try server.post("/api/visitors/\(id)/invite", token: hosts.ionToken).isError(404, "NOT_FOUND"))
                #expect(try server.post("/api/visitors/\(id)/cancel", token: hosts.ionToken).isError(404, "NOT_FOUND"))
                let unchanged = try server.visitor(id, site.ownerToken)
                #expect(unchanged["status"] as? String == "EXPECTED" && unchanged["purpose"] is NSNull)
            }
            // Decisions and check-out stay with the site's managers.
            let mineId = registered["id"] as! String
            #expect(try server.post("/api/visitors/\(mineId)/approve-scan", token: hosts.ionToken).isError(403, "FORBIDDEN"))
            #expect(try server.post("/api/visitors/\(mineId)/checkout", token: hosts.ionToken).isError(403, "FORBIDDEN"))

            // Its own: read, pass, edit, invite, cancel.
            for visitor in [registered, forIon, forEva] {
                let id = visitor["id"] as! String
                #expect(try server.visitor(id, hosts.ionToken)["id"] as? String == id)
                #expect(try server.get("/api/visitors/\(id)/pass.svg", token: hosts.ionToken).status == 200)
                let edited = try server.patch("/api/visitors/\(id)", token: hosts.ionToken, ["purpose": "Meeting"])
                #expect(edited.status == 200 && edited.string("purpose") == "Meeting", "\(edited.text)")
            }
            #expect(try server.get("/api/visitors/\(mineId)/pass.png", token: hosts.ionToken).status == 200)
            #expect(try server.post("/api/visitors/\(mineId)/invite", token: hosts.ionToken).status == 202)
            #expect(try server.post("/api/visitors/\(forEva["id"] as! String)/invite", token: hosts.evaToken).status == 202)
            #expect(try server.post("/api/visitors/\(mineId)/cancel", token: hosts.ionToken).string("status") == "CANCELLED")
        }
    }

    /// A HOST that hands a visitor it does not own to someone else no longer sees it; one it
    /// registered stays its own whoever hosts it.
    @Test func handingOverMovesWhatAHostSees() throws {
        try withHosts { server, site, hosts in
            let hosted = try server.createVisitor(site.ownerToken, ["name": "Hosted", "hostEmail": "ion@acme.test"])
            let id = hosted["id"] as! String
            #expect(try server.patch("/api/visitors/\(id)", token: hosts.ionToken, ["hostEmail": "eva@acme.test"]).status == 200)
            #expect(try server.get("/api/visitors/\(id)", token: hosts.ionToken).isError(404, "NOT_FOUND"))
            #expect(try server.visitor(id, hosts.evaToken)["hostEmail"] as? String == "eva@acme.test")
            let registered = try server.createVisitor(hosts.ionToken, ["name": "Registered"])
            let registeredId = registered["id"] as! String
            #expect(try server.patch("/api/visitors/\(registeredId)", token: hosts.ionToken, ["hostEmail": NSNull()]).status == 200)
            #expect(try server.visitor(registeredId, hosts.ionToken)["hostEmail"] is NSNull)
        }
    }

    @Test func theArrivalMailGoesToTheHost() throws {
        try withHosts { server, site, hosts in
            let visitor = try server.createVisitor(hosts.ionToken, ["name": "Arriving Guest"])
            #expect(try server.checkIn(site.scanner, visitor["shortId"] as! String).string("result") == "CHECKED_IN")
            let mail = try server.get("/api/admin/mail?limit=500", token: site.ownerToken).items
            let arrivals = mail.filter { $0["kind"] as? String == "arrival" }
            #expect(arrivals.map { $0["to"] as? String } == ["ion@acme.test"], "\(mail)")
        }
    }

    /// The event log has no audience column for a visitor's host: a HOST's streams and
    /// notification list carry only what is addressed to it alone.
    @Test func aHostGetsNoOrganizationWideEvents() throws {
        try withHosts { server, site, hosts in
            _ = try server.post("/api/visitor-scanner/walk-in-arrived", token: site.scanner, ["name": "Walk In"])
            #expect(try server.get("/api/notifications", token: hosts.ionToken).items.isEmpty)
            #expect(try server.get("/api/notifications", token: site.ownerToken).items.count == 1)
            let principal = Principal(user: hosts.ion, sessionId: "s", sessionExpiresAt: Date.distantFuture, credential: .login)
            let filter = EventStreamFilter(principal: principal, deviceToken: nil)
            let organizationWide = StoredEvent(id: 1, kind: .visitorArrived, audience: EventAudience(organizationId: hosts.ion.organizationId),
                                               data: "{}", createdAt: Date())
            var addressed = organizationWide
            addressed.audience.userId = hosts.ion.id
            #expect(!filter.admits(organizationWide))
            #expect(filter.admits(addressed))
        }
    }

    @Test func aHostCannotScanOrManage() throws {
        try withHosts { server, site, hosts in
            #expect(try server.get("/api/auth/me", token: hosts.ionToken).json?["canScanCheckpoint"] as? Bool == false)
            #expect(try server.post("/api/visitor-scanner/token", token: hosts.ionToken).isError(403, "FORBIDDEN"))
            #expect(try server.get("/api/users", token: hosts.ionToken).isError(403, "FORBIDDEN"))
            let flags = try server.get("/api/visitors/admin-me", token: hosts.ionToken).json?["flags"] as? [String: Bool]
            #expect(flags?["canManageVisitors"] == true && flags?["canDecideVisitors"] == false && flags?["canScanCheckpoint"] == false)
        }
    }
}
