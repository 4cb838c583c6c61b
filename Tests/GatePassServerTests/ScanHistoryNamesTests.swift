import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

/// The history CSV names what its ids stand for: its last columns are `visitorName`,
/// `company`, `gateName`, `guardName` and `scannedAtLocal` (the site's own time with its
/// offset), after the columns machines already read, on both databases.
@Suite struct ScanHistoryNamesTests {
    static let header = "id,shortId,raw,result,visitorId,checkpointId,scannedBy,scannedAt,receivedAt,offline,offlineDecision,"
        + "visitorName,company,gateName,guardName,scannedAtLocal\r\n"

    /// The rows of an export, keyed by the header's names.
    func rows(_ text: String) -> [[String: String]] {
        let table = OperationsRouteTests.parseCSV(text)
        guard let names = table.first else { return [] }
        return table.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(names, $0)) }
    }

    @Test(arguments: Backend.available)
    func theExportNamesVisitorGateAndGuardInTheSitesTime(_ backend: Backend) throws {
        try withServer(on: backend) { server in
            let site = try server.makeSite()
            #expect(try server.patch("/api/organization", token: site.ownerToken, ["timeZone": "Europe/Bucharest"]).status == 200)
            // Hostile text lands in cells defused and quoted by the CSV writer.
            let visitor = try server.createVisitor(site.ownerToken, ["name": "=Ana \"Pop\", Jr.", "company": "@Acme, Ltd"])
            let plain = try server.createVisitor(site.ownerToken, ["name": "Eva Pop"])
            let north = try server.addCheckpoint("North, door", token: site.adminToken)
            let kiosk = try server.enrol(try server.enrolmentCode(north, token: site.adminToken, name: "North kiosk"))
            let approverScanner = try server.scannerToken(site.approverToken)

            #expect(try server.checkIn(site.scanner, visitor["shortId"] as! String).status == 200)
            server.clock.advance(by: 60)
            #expect(try server.checkIn(kiosk, plain["shortId"] as! String).status == 200)
            server.clock.advance(by: 60)
            #expect(try server.checkIn(approverScanner, "gp1:zzzz-zzzz").status == 404)

            let export = try server.get("/api/admin/scan-history.csv", token: site.ownerToken)
            #expect(export.status == 200 && export.text.hasPrefix(Self.header), "\(export.text.prefix(300))")
            let table = rows(export.text)
            // Each row's local time is its scannedAt in the site's zone (+02:00 in November).
            let bucharest = try #require(SiteClock(zoneNamed: "Europe/Bucharest"))
            func local(_ row: [String: String]) -> String? { date(row["scannedAt"]).map(bucharest.localRFC3339) }
            #expect(table.allSatisfy { $0["scannedAtLocal"] == local($0) && $0["scannedAtLocal"]?.hasSuffix("+02:00") == true })
            #expect(local(["scannedAt": "2026-11-29T12:00:00Z"]) == "2026-11-29T14:00:00+02:00")
            #expect(export.text.contains(",\"'=Ana \"\"Pop\"\", Jr.\",\"'@Acme, Ltd\",Main gate,Olga Owner,\(local(table[2]) ?? "?")\r\n"),
                    "\(export.text)")
            #expect(table.count == 3 && table.allSatisfy { $0.count == 16 })
            // Newest first: the unknown code, the kiosk's admission, the owner's.
            #expect(table.map { $0["result"] } == ["NOT_FOUND", "CHECKED_IN", "CHECKED_IN"])
            #expect(table[0]["visitorName"] == "" && table[0]["company"] == "" && table[0]["gateName"] == "Main gate")
            #expect(table[0]["guardName"] == "Ana Approver")
            #expect(table[1]["visitorName"] == "Eva Pop" && table[1]["gateName"] == "North, door")
            // A kiosk is named by its own label, not by the admin who enrolled it.
            #expect(table[1]["guardName"] == "North kiosk" && table[1]["scannedBy"] == site.admin.id)
            #expect(table[2]["visitorName"] == "'=Ana \"Pop\", Jr." && table[2]["company"] == "'@Acme, Ltd")

            // A site west of UTC, read by PLATFORM_ADMIN beside the other: each row in its own site's time.
            let globex = try server.makeSite("Globex", domain: "globex.test")
            #expect(try server.patch("/api/organization", token: globex.ownerToken,
                                     ["timeZone": "America/Los_Angeles"]).status == 200)
            let guest = try server.createVisitor(globex.ownerToken, ["name": "Globex Guest"])
            #expect(try server.checkIn(globex.scanner, guest["shortId"] as! String).status == 200)
            try server.addUser("platform@gatepass.test", role: .platformAdmin, organization: "Platform")
            let platform = try server.login("platform@gatepass.test")
            let every = rows(try server.get("/api/admin/scan-history.csv", token: platform).text)
            #expect(every.count == 4)
            let losAngeles = try #require(SiteClock(zoneNamed: "America/Los_Angeles"))
            #expect(every.first?["visitorName"] == "Globex Guest" && every.first?["scannedAtLocal"]?.hasSuffix("-08:00") == true)
            #expect(every.first?["scannedAtLocal"] == date(every.first?["scannedAt"]).map(losAngeles.localRFC3339))
            #expect(every.last?["scannedAtLocal"] == local(try #require(every.last)))
        }
    }

    @Test func anAnonymisedVisitorKeepsTheNameTheStoreHas() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ana Pop", "company": "Acme"])
            #expect(try server.checkIn(site.scanner, visitor["shortId"] as! String).status == 200)
            let id = visitor["id"] as! String
            try FailClosedStorageTests.damage(server, "UPDATE visitors SET name = 'Erased', company = NULL WHERE id = ?", [id])
            let row = try #require(rows(try server.get("/api/admin/scan-history.csv", token: site.ownerToken).text).first)
            #expect(row["visitorName"] == "Erased" && row["company"] == "")
        }
    }
}
