import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

/// api.md "Users, checkpoints, scanner tokens": `POST /api/users`, `PATCH /api/users/:id`.
@Suite struct UserRouteTests {
    /// Over HTTP, every creator × role: 201 exactly where api.md allows it (the domain's
    /// table is `UserRulesTests`), and the created user can log in with that role.
    @Test func everyCreatorAndRoleEndToEnd() throws {
        try withSite { server, site in
            try server.addUser("host@acme.test", role: .host)
            let creators: [(String, String, Set<String>)] = [
                ("OWNER", site.ownerToken, ["OWNER", "ADMIN", "APPROVER", "HOST"]),
                ("ADMIN", site.adminToken, ["ADMIN", "APPROVER", "HOST"]),
                ("APPROVER", site.approverToken, []),
                ("HOST", try server.login("host@acme.test"), []),
            ]
            for (creator, token, allowed) in creators {
                for role in Role.allCases.map(\.rawValue) {
                    let email = "\(creator.lowercased())-made-\(role.lowercased())@acme.test"
                    let answer = try server.post("/api/users", token: token, ["email": email, "name": "New \(role)", "role": role])
                    if allowed.contains(role) {
                        #expect(answer.status == 201, "\(creator) → \(role): \(answer.text)")
                        #expect(answer.keys == Shape.profile.union(["disabled", "lastLoginAt"]))
                        #expect(answer.string("role") == role && answer.json?["disabled"] as? Bool == false)
                        #expect(answer.string("organizationId") == site.owner.organizationId)
                        #expect(try server.loginAnswer(email)["role"] as? String == role)
                    } else {
                        #expect(answer.isError(403, "FORBIDDEN"), "\(creator) → \(role): \(answer.text)")
                    }
                }
            }
            let listed = try server.get("/api/users?limit=500", token: site.ownerToken).items
            #expect(listed.count == 5 + 4 + 3)
        }
    }

    @Test func canScanCheckpointIsTrueForOwnersAndAdminsInEveryProfile() throws {
        try withSite { server, site in
            let owner = try server.post("/api/users", token: site.ownerToken,
                                        ["email": "o2@acme.test", "name": "O", "role": "OWNER", "canScanCheckpoint": false])
            #expect(owner.json?["canScanCheckpoint"] as? Bool == true)
            let host = try server.post("/api/users", token: site.ownerToken,
                                       ["email": "h@acme.test", "name": "H", "role": "HOST", "canScanCheckpoint": true])
            #expect(host.json?["canScanCheckpoint"] as? Bool == false)
            // The bootstrap users were added without --can-scan: their profiles still say true.
            #expect(try server.get("/api/auth/me", token: site.ownerToken).json?["canScanCheckpoint"] as? Bool == true)
            #expect(try server.get("/api/auth/me", token: site.adminToken).json?["canScanCheckpoint"] as? Bool == true)
            for user in try server.get("/api/users?limit=500", token: site.ownerToken).items {
                let role = user["role"] as? String
                if role == "OWNER" || role == "ADMIN" { #expect(user["canScanCheckpoint"] as? Bool == true, "\(user)") }
            }
            // An APPROVER's flag is its own, and changing it works.
            let desk = try server.patch("/api/users/\(site.desk.id)", token: site.adminToken, ["canScanCheckpoint": true])
            #expect(desk.json?["canScanCheckpoint"] as? Bool == true)
            #expect(try server.scannerTokenAnswer(site.deskToken)["scannerToken"] is String)
        }
    }

    @Test func anExistingEmailIs409AndBadBodiesAre400() throws {
        try withSite { server, site in
            #expect(try server.post("/api/users", token: site.ownerToken,
                                    ["email": "ADMIN@acme.test", "name": "Again", "role": "ADMIN"]).isError(409, "CONFLICT"))
            let hostile: [[String: Any]] = [
                ["name": "No Email", "role": "HOST"],
                ["email": "x@acme.test", "role": "HOST"],
                ["email": "x@acme.test", "name": "X", "role": "ROOT"],
                ["email": "x@acme.test", "name": "X", "role": "host"],
                ["email": "x@acme.test", "name": "X"],
                ["email": "x@acme.test", "name": "X", "role": 3],
                ["email": "not an email", "name": "X", "role": "HOST"],
                ["email": "x@acme.test\r\nBcc: all@acme.test", "name": "X", "role": "HOST"],
                ["email": "x@acme.test", "name": "Evil\u{1B}[2J", "role": "HOST"],
                ["email": "x@acme.test", "name": String(repeating: "N", count: 10_000), "role": "HOST"],
                ["email": "x@acme.test", "name": "   ", "role": "HOST"],
                ["email": "x@acme.test", "name": "X", "role": "HOST", "canScanCheckpoint": "yes"],
            ]
            for body in hostile {
                #expect(try server.post("/api/users", token: site.ownerToken, body).isError(400, "BAD_REQUEST"), "\(body)")
            }
            #expect(try server.postRaw("/api/users", token: site.ownerToken, body: Array("{\"email\":".utf8)).isError(400, "BAD_REQUEST"))
            let badPatches: [Any] = [["role": "SUPERUSER"], ["disabled": "true"], ["name": ""], ["name": "\u{0}"], [1, 2]]
            for body in badPatches {
                #expect(try server.patch("/api/users/\(site.desk.id)", token: site.ownerToken, body).isError(400, "BAD_REQUEST"), "\(body)")
            }
            // Nothing of that was stored.
            let users = try server.get("/api/users?limit=500", token: site.ownerToken).items
            #expect(users.count == 4)
            let desk = users.first(where: { $0["id"] as? String == site.desk.id })
            #expect(desk?["name"] as? String == "Dan Desk")
        }
    }

    @Test func theRulesOfPatchOverHTTP() throws {
        try withSite { server, site in
            // Nobody their own role or disabled (403); their own name is fine.
            #expect(try server.patch("/api/users/\(site.admin.id)", token: site.adminToken, ["role": "HOST"]).isError(403, "FORBIDDEN"))
            #expect(try server.patch("/api/users/\(site.admin.id)", token: site.adminToken, ["disabled": true]).isError(403, "FORBIDDEN"))
            #expect(try server.patch("/api/users/\(site.admin.id)", token: site.adminToken, ["name": "Adam A."]).string("name") == "Adam A.")
            // An ADMIN changes no OWNER and makes nobody OWNER.
            #expect(try server.patch("/api/users/\(site.owner.id)", token: site.adminToken, ["name": "X"]).isError(403, "FORBIDDEN"))
            #expect(try server.patch("/api/users/\(site.desk.id)", token: site.adminToken, ["role": "OWNER"]).isError(403, "FORBIDDEN"))
            #expect(try server.patch("/api/users/\(site.desk.id)", token: site.adminToken, ["role": "HOST"]).string("role") == "HOST")
            // The OWNER may make an OWNER; the last OWNER cannot step down (409).
            #expect(try server.patch("/api/users/\(site.owner.id)", token: site.ownerToken, ["role": "ADMIN"]).isError(409, "CONFLICT"))
            #expect(try server.patch("/api/users/\(site.owner.id)", token: site.ownerToken, ["disabled": true]).isError(409, "CONFLICT"))
            #expect(try server.patch("/api/users/\(site.admin.id)", token: site.ownerToken, ["role": "OWNER"]).string("role") == "OWNER")
            // Two owners now: either may disable or demote the other, not both.
            #expect(try server.patch("/api/users/\(site.owner.id)", token: site.adminToken, ["role": "ADMIN"]).string("role") == "ADMIN")
            #expect(try server.patch("/api/users/\(site.admin.id)", token: site.ownerToken, ["role": "ADMIN"]).isError(403, "FORBIDDEN"))
            // Another organization's user, and an unknown id, do not exist here.
            let other = try server.makeSite("Globex", domain: "globex.test")
            #expect(try server.patch("/api/users/\(other.desk.id)", token: site.adminToken, ["name": "X"]).isError(404, "NOT_FOUND"))
            #expect(try server.patch("/api/users/no-such-user", token: site.adminToken, ["name": "X"]).isError(404, "NOT_FOUND"))
            #expect(try server.patch("/api/users/%00%0A", token: site.adminToken, ["name": "X"]).isError(404, "NOT_FOUND"))
        }
    }

    /// Disabling ends at once the user's login sessions, its scanner tokens and its open event
    /// streams; it cannot log in again until re-enabled.
    @Test func disablingEndsSessionsScannerTokensAndStreams() throws {
        try withSite { server, site in
            let secondSession = try server.login(site.approver.email)
            let scanner = try server.scannerToken(site.approverToken)
            let stream = try server.stream(site.approverToken)
            let gateStream = try server.stream(scanner)
            let ownerStream = try server.stream(site.ownerToken)
            let hub = server.server.application.eventHub
            #expect(hub.changes.wait { hub.streamCount == 3 })

            let answer = try server.patch("/api/users/\(site.approver.id)", token: site.adminToken, ["disabled": true])
            #expect(answer.status == 200 && answer.json?["disabled"] as? Bool == true, "\(answer.text)")
            // The streams end (the socket closes: a positive signal), the others stay.
            #expect(hub.changes.wait { hub.streamCount == 1 })
            #expect(stream.nextFrame(timeout: 10) == nil && stream.ended)
            #expect(gateStream.nextFrame(timeout: 10) == nil && gateStream.ended)
            for token in [site.approverToken, secondSession] {
                #expect(try server.get("/api/auth/me", token: token).isError(401, "UNAUTHORIZED"))
            }
            #expect(try server.get("/api/visitor-scanner/stats", token: scanner).isError(401, "UNAUTHORIZED"))
            #expect(try SSETestClient(port: server.port, token: site.approverToken).answer.isError(401, "UNAUTHORIZED"))
            // No code is mailed, and none works.
            #expect(try server.post("/api/auth/send-otp", ["email": site.approver.email]).status == 202)
            if let code = try server.get("/api/auth/dev-peek-otp?email=\(site.approver.email)").string("otp") {
                #expect(try server.post("/api/auth/verify-otp", ["email": site.approver.email, "otp": code]).isError(401, "UNAUTHORIZED"))
            }
            // Nobody can assign it a visitor now.
            let assigned = try server.post("/api/visitors", token: site.ownerToken, ["name": "X", "approverId": site.approver.id])
            #expect(assigned.isError(400, "BAD_REQUEST") && assigned.errorMessage.contains("not disabled"), "\(assigned.text)")
            #expect(!ownerStream.ended)
            try server.awaitingVisitor(site)
            #expect(kinds(ownerStream.events(1)) == ["visitor.awaiting"], "other users' streams are untouched")

            // Re-enabled, it logs in again; the old tokens stay dead.
            server.clock.advance(by: 60)
            #expect(try server.patch("/api/users/\(site.approver.id)", token: site.ownerToken, ["disabled": false]).json?["disabled"] as? Bool == false)
            let again = try server.login(site.approver.email)
            #expect(try server.get("/api/auth/me", token: again).status == 200)
            #expect(try server.get("/api/auth/me", token: site.approverToken).isError(401, "UNAUTHORIZED"))
        }
    }

    /// A changed role changes what the user's open stream may carry: the stream ends and the
    /// client reconnects under the new role.
    @Test func aRoleChangeEndsTheUsersStreams() throws {
        try withSite { server, site in
            let stream = try server.stream(site.adminToken)
            let hub = server.server.application.eventHub
            #expect(hub.changes.wait { hub.streamCount == 1 })
            #expect(try server.patch("/api/users/\(site.admin.id)", token: site.ownerToken, ["role": "HOST"]).string("role") == "HOST")
            #expect(hub.changes.wait { hub.streamCount == 0 })
            #expect(stream.nextFrame(timeout: 10) == nil && stream.ended)
            // Its session lives on, with the new role's rights.
            #expect(try server.get("/api/auth/me", token: site.adminToken).string("role") == "HOST")
            #expect(try server.get("/api/users", token: site.adminToken).isError(403, "FORBIDDEN"))
        }
    }

    /// Replaying a PATCH with its Idempotency-Key changes nothing twice (api.md: every POST and PATCH).
    @Test func createIsIdempotent() throws {
        try withSite { server, site in
            let body: [String: Any] = ["email": "once@acme.test", "name": "Once", "role": "HOST"]
            let first = try server.post("/api/users", token: site.ownerToken, body, headers: ["Idempotency-Key": "user-1"])
            let second = try server.post("/api/users", token: site.ownerToken, body, headers: ["Idempotency-Key": "user-1"])
            #expect(first.status == 201 && second.status == 201 && second.headers["idempotent-replayed"] == "true")
            #expect(first.string("id") == second.string("id"))
        }
    }
}
