import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// `gatepass history` and `gatepass scanner-token list` name people and gates (resolved through
/// the API's own routes, since a Scan carries ids only), in the site's time; `history --csv`
/// stays the server's export byte for byte.
@Suite(.serialized) struct NamesInListsTests {
    @Test(arguments: ["Europe/Bucharest", "America/New_York"])
    func historyShowsNameGateAndResultInTheSitesTime(_ zone: String) throws {
        try ClientCommandTests().withSetup(configure: { $0.timeZone = zone }) { setup in
            let http = LoopbackHTTPClient(port: setup.server.port)
            _ = try http.send("POST", "/api/auth/send-otp", json: ["email": "owner@demo.gatepass"])
            let code = try setup.code("owner@demo.gatepass")
            let login = setup.gatepass("login", "--server", setup.url, "--email", "owner@demo.gatepass", "--otp", code)
            try #require(login.status == 0, "\(login.err)")
            // A hostile name on a visitor who is then scanned, and a scan of an unknown pass.
            let owner = try #require(try setup.server.store.read { tx in try tx.directory.user(email: "owner@demo.gatepass") })
            let scans = try setup.server.store.read { tx in
                try tx.scans.page(ScanHistoryFilter(organizationId: owner.organizationId), after: nil, limit: 50)
            }
            let scan = try #require(scans.first { $0.scan.visitorId != nil }?.scan)
            let visitorName = try #require(try setup.server.store.read { tx in try tx.visitors.find(id: scan.visitorId!) }?.visitor.name)

            let history = setup.gatepass("history")
            #expect(history.status == 0, "\(history.err)")
            #expect(history.out.hasPrefix("times in \(zone)\n"), "\(history.out)")
            let site = try #require(SiteClock(zoneNamed: zone))
            let expected = "\(site.date(scan.scannedAt.date)) \(site.timeWithSeconds(scan.scannedAt.date))  \(scan.result.rawValue)  \(visitorName)"
            #expect(history.out.contains(expected), "\(expected) in \(history.out)")
            #expect(history.out.contains("  at Main gate  by Olivia Owner"), "\(history.out)")
            #expect(!history.out.contains("GP1:") && !history.out.contains("GP2:") && !history.out.contains("raw "), "\(history.out)")
            #expect(!history.out.contains(scan.checkpointId) && !history.out.contains(owner.id), "\(history.out)")

            // --from and --to are read in the site's zone, as every typed time is.
            func typed(_ date: Date) -> String { "\(site.day(date)) \(site.timeWithSeconds(date))" }
            let through = setup.gatepass("history", "--to", typed(scan.scannedAt.date.addingTimeInterval(1)))
            #expect(through.status == 0 && through.out.contains(expected), "\(through.err)\(through.out)")
            let before = setup.gatepass("history", "--to", typed(scan.scannedAt.date.addingTimeInterval(-1)))
            #expect(before.status == 0 && !before.out.contains(expected), "\(before.err)\(before.out)")
            let after = setup.gatepass("history", "--from", typed(scan.scannedAt.date.addingTimeInterval(1)))
            #expect(after.status == 0 && !after.out.contains(expected), "\(after.err)\(after.out)")
            let skipped = setup.gatepass("history", "--from", "2026-03-29 03:30")
            #expect(zone != "Europe/Bucharest" || (skipped.status == 2 && skipped.err.contains("the clocks skip it")), "\(skipped.err)")

            // --csv is the server's export, byte for byte.
            let csv = setup.gatepass("history", "--csv")
            _ = try http.send("POST", "/api/auth/send-otp", json: ["email": "admin@demo.gatepass"])
            let admin = try http.send("POST", "/api/auth/verify-otp", json: ["email": "admin@demo.gatepass", "otp": try setup.code("admin@demo.gatepass")])
            let adminToken = try #require(admin.json?["token"] as? String)
            let served = try http.get("/api/admin/scan-history.csv", token: adminToken)
            // The recording terminal keeps lines: the export's last line feed is the line's end.
            #expect(csv.out + "\n" == served.text)
        }
    }

    @Test func historyOfAnUnknownPassSaysSoAndEscapesWhatWasScanned() throws {
        try UserCommandTests().withLogin("owner@demo.gatepass") { setup in
            let checkIn = setup.gatepass("checkin", "GP2:\u{1B}[2Jforged" + String(repeating: "A", count: 95))
            #expect(checkIn.status != 0)
            let history = setup.gatepass("history", "--limit", "1")
            #expect(history.status == 0, "\(history.err)")
            #expect(history.out.contains("unknown pass") && !history.out.contains("\u{1B}"), "\(history.out)")
            #expect(!history.out.contains(String(repeating: "A", count: 95)), "not the raw text: \(history.out)")
        }
    }

    @Test func scannerTokensNameTheirKioskMakerAndGate() throws {
        try UserCommandTests().withLogin("owner@demo.gatepass") { setup in
            let owner = try #require(try setup.server.store.read { tx in try tx.directory.user(email: "owner@demo.gatepass") })
            let north = try setup.server.store.write { tx in
                try tx.checkpoints.create(organizationId: owner.organizationId, name: "North door", now: Date())
            }
            let code = setup.gatepass("kiosk", "enrol-code", "--checkpoint", north.id, "--name", "North kiosk", "--json")
            let enrolment = try #require(try JSONSerialization.jsonObject(with: Data(code.out.utf8)) as? [String: Any])
            let enrolled = try LoopbackHTTPClient(port: setup.server.port).send("POST", "/api/visitor-scanner/enrol",
                                                                                json: ["enrolmentCode": enrolment["enrolmentCode"] as! String])
            #expect(enrolled.status == 201)
            let tokens = setup.gatepass("scanner-token", "list")
            #expect(tokens.status == 0, "\(tokens.err)")
            let line = try #require(tokens.out.split(separator: "\n").first { $0.contains("kiosk") }.map(String.init))
            #expect(line.hasPrefix("kiosk North kiosk  at North door  made by Olivia Owner  last used never  expires "), "\(line)")
            #expect(!line.contains(north.id) && !line.contains(owner.id), "\(line)")
        }
    }
}
