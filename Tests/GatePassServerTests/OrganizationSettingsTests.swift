import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

/// api.md "Site operations": `PATCH /api/organization` (OWNER) and what the site's time zone
/// decides ("today" for stats, walk-ins and the kiosk's `/expected` feed).
@Suite struct OrganizationSettingsTests {
    @Test func theDefaultsAndAChangeAsGetAnswersThem() throws {
        try withSite { server, site in
            let before = try server.get("/api/organization", token: site.deskToken)
            #expect(before.keys == ["id", "name", "timeZone", "retentionDays", "autoCheckoutAt"])
            #expect(before.string("timeZone") == "UTC" && before.json?["retentionDays"] as? Int == 180)
            #expect(before.json?["autoCheckoutAt"] is NSNull)
            let changed = try server.patch("/api/organization", token: site.ownerToken, [
                "name": "Acme Works", "timeZone": "Pacific/Auckland", "retentionDays": 30, "autoCheckoutAt": "22:30",
            ])
            #expect(changed.status == 200, "\(changed.text)")
            let after = try server.get("/api/organization", token: site.deskToken)
            #expect(after.string("name") == "Acme Works" && after.string("timeZone") == "Pacific/Auckland")
            #expect(after.json?["retentionDays"] as? Int == 30 && after.string("autoCheckoutAt") == "22:30")
            #expect(changed.json as NSDictionary? == after.json as NSDictionary?)
            // Absent keys stay; null turns the automatic check-out off.
            let off = try server.patch("/api/organization", token: site.ownerToken, ["autoCheckoutAt": NSNull()])
            #expect(off.json?["autoCheckoutAt"] is NSNull && off.string("timeZone") == "Pacific/Auckland")
            #expect(off.json?["retentionDays"] as? Int == 30 && off.string("name") == "Acme Works")
            // Only the OWNER.
            #expect(try server.patch("/api/organization", token: site.adminToken, ["retentionDays": 1]).isError(403, "FORBIDDEN"))
        }
    }

    @Test func badSettingsAre400AndChangeNothing() throws {
        try withSite { server, site in
            let bad: [[String: Any]] = [
                ["timeZone": "Mars/Olympus"], ["timeZone": "EST"], ["timeZone": "GMT+2"], ["timeZone": "+02:00"],
                ["timeZone": ""], ["timeZone": "Europe/../../etc/passwd"], ["timeZone": String(repeating: "A", count: 5_000)],
                ["timeZone": "Europe/Bucharest\n"], ["timeZone": 3],
                ["retentionDays": 0], ["retentionDays": 3651], ["retentionDays": -1], ["retentionDays": 1.5],
                ["retentionDays": "30"], ["retentionDays": 9_223_372_036_854_775_807],
                ["autoCheckoutAt": "24:00"], ["autoCheckoutAt": "7:30"], ["autoCheckoutAt": "07:30:00"],
                ["autoCheckoutAt": "noon"], ["autoCheckoutAt": 730], ["autoCheckoutAt": ""],
                ["name": ""], ["name": "   "], ["name": "Evil\u{1B}]0;owned\u{7}"], ["name": String(repeating: "N", count: 500)],
                // One bad field refuses the good ones with it.
                ["name": "Fine Name", "retentionDays": 0],
            ]
            for body in bad {
                let answer = try server.patch("/api/organization", token: site.ownerToken, body)
                #expect(answer.isError(400, "BAD_REQUEST"), "\(body): \(answer.text)")
            }
            #expect(try server.client().send("PATCH", "/api/organization", headers: [
                "Content-Type": "application/json", "Authorization": "Bearer \(site.ownerToken)",
            ], body: Array("[".utf8)).isError(400, "BAD_REQUEST"))
            let now = try server.get("/api/organization", token: site.ownerToken)
            #expect(now.string("name") == "Acme" && now.string("timeZone") == "UTC")
            #expect(now.json?["retentionDays"] as? Int == 180 && now.json?["autoCheckoutAt"] is NSNull)
            // Another organization's name is taken (409); the boundaries are fine.
            _ = try server.makeSite("Globex", domain: "globex.test")
            #expect(try server.patch("/api/organization", token: site.ownerToken, ["name": "Globex"]).isError(409, "CONFLICT"))
            #expect(try server.patch("/api/organization", token: site.ownerToken, ["retentionDays": 1]).status == 200)
            #expect(try server.patch("/api/organization", token: site.ownerToken, ["retentionDays": 3650, "autoCheckoutAt": "00:00"]).status == 200)
            #expect(try server.patch("/api/organization", token: site.ownerToken, ["timeZone": "UTC", "name": "Acme"]).status == 200)
        }
    }

    /// The server's zone is UTC and the clock 2026-11-29T12:00Z. In Pacific/Kiritimati
    /// (UTC+14) it is already 02:00 on the 30th: "today" moves a day on, for the stats (the
    /// cached answer included), the walk-in's pass and the kiosk's feed.
    @Test func theSitesZoneDefinesToday() throws {
        try withSite { server, site in
            // Valid in the morning of the 29th (UTC): today's in UTC, yesterday's in Kiritimati.
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Of The 29th", "validFrom": "2026-11-29T00:00:00Z",
                                                                     "validUntil": "2026-11-29T09:00:00Z"])
            #expect(try server.get("/api/visitor-scanner/stats", token: site.scanner).json?["expectedToday"] as? Int == 1)
            #expect(try server.get("/api/visitor-scanner/expected", token: site.scanner).items.count == 1)

            #expect(try server.patch("/api/organization", token: site.ownerToken, ["timeZone": "Pacific/Kiritimati"]).status == 200)
            // The cached stats answer of the old zone is not served.
            #expect(try server.get("/api/visitor-scanner/stats", token: site.scanner).json?["expectedToday"] as? Int == 0)
            #expect(try server.get("/api/visitor-scanner/expected", token: site.scanner).items.isEmpty)
            let walkIn = try server.post("/api/visitor-scanner/walk-in-arrived", token: site.scanner, ["name": "Walks In"])
            #expect(walkIn.status == 201)
            #expect(walkIn.visitor["validFrom"] as? String == "2026-11-29T10:00:00Z")
            #expect(walkIn.visitor["validUntil"] as? String == "2026-11-30T09:59:59Z")
            // A registration without a window gets the site's today too.
            let registered = try server.createVisitor(site.ownerToken, ["name": "Of The 30th"])
            #expect(registered["validFrom"] as? String == "2026-11-29T10:00:00Z")
            // Back to UTC: the first visitor is today's again.
            #expect(try server.patch("/api/organization", token: site.ownerToken, ["timeZone": "UTC"]).status == 200)
            let expected = ids(try server.get("/api/visitor-scanner/expected", token: site.scanner).items)
            #expect(expected.contains(visitor["id"] as! String))
            // The morning's pass and the one registered in Kiritimati's today (which overlaps UTC's).
            #expect(try server.get("/api/visitor-scanner/stats", token: site.scanner).json?["expectedToday"] as? Int == 2)
        }
    }

    /// Another organization's zone is its own: one server serves sites in different zones.
    @Test func eachOrganizationHasItsOwnZone() throws {
        try withSite { server, site in
            let other = try server.makeSite("Globex", domain: "globex.test")
            #expect(try server.patch("/api/organization", token: other.ownerToken, ["timeZone": "Pacific/Kiritimati"]).status == 200)
            #expect(try server.get("/api/organization", token: site.ownerToken).string("timeZone") == "UTC")
            let ours = try server.createVisitor(site.ownerToken, ["name": "Ours"])
            let theirs = try server.createVisitor(other.ownerToken, ["name": "Theirs"])
            #expect(ours["validFrom"] as? String == "2026-11-29T00:00:00Z")
            #expect(theirs["validFrom"] as? String == "2026-11-29T10:00:00Z")
        }
    }
}
