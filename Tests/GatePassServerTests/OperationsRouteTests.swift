import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

/// The CSV export, checkpoints, healthz, /metrics and PLATFORM_ADMIN's reads.
@Suite struct OperationsRouteTests {
    /// A small RFC 4180 reader: rows of cells (CRLF rows, quoted cells with doubled quotes).
    static func parseCSV(_ text: String) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var cell = ""
        var quoted = false
        var characters = Array(text.unicodeScalars)[...]
        while let c = characters.popFirst() {
            if quoted {
                if c == "\"" {
                    if characters.first == "\"" { cell.unicodeScalars.append("\""); characters.removeFirst() } else { quoted = false }
                } else {
                    cell.unicodeScalars.append(c)
                }
            } else if c == "\"" {
                quoted = true
            } else if c == "," {
                row.append(cell); cell = ""
            } else if c == "\r", characters.first == "\n" {
                characters.removeFirst()
                row.append(cell); cell = ""
                rows.append(row); row = []
            } else {
                cell.unicodeScalars.append(c)
            }
        }
        if !cell.isEmpty || !row.isEmpty { row.append(cell); rows.append(row) }
        return rows
    }

    @Test func csvExportHasAHeaderQuotesAndDefusesFormulas() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken)
            let shortId = visitor["shortId"] as! String
            #expect(try server.checkIn(site.scanner, shortId).status == 200)
            let texts = ["He said \"hi\", then left", "=HYPERLINK(\"http://evil.test\",\"click\")", "+1 phone", "@SUM(A1)",
                         "-2+3", "line\nbreak"]
            for text in texts {
                server.clock.advance(by: 1)
                #expect(try server.checkIn(site.scanner, text).status == 400)
            }
            let export = try server.get("/api/admin/scan-history.csv", token: site.adminToken)
            #expect(export.status == 200)
            #expect(export.headers["content-type"]?.hasPrefix("text/csv") == true)
            #expect(export.text.hasPrefix("id,shortId,raw,result,visitorId,checkpointId,scannedBy,scannedAt,receivedAt,offline,offlineDecision,"
                                          + "visitorName,company,gateName,guardName,scannedAtLocal\r\n"))
            // Quoting by the RFC: a quote doubles, a comma or line break quotes the cell.
            #expect(export.text.contains(",\"He said \"\"hi\"\", then left\",INVALID,"))
            #expect(export.text.contains(",\"line\nbreak\",INVALID,"))
            // Formula cells are defused with a leading apostrophe.
            #expect(export.text.contains(",\"'=HYPERLINK(\"\"http://evil.test\"\",\"\"click\"\")\",INVALID,"))
            let rows = Self.parseCSV(export.text)
            #expect(rows.count == 1 + 1 + texts.count)
            #expect(rows.allSatisfy { $0.count == 16 })
            let raws = rows.dropFirst().map { $0[2] }
            #expect(raws.allSatisfy { !["=", "+", "-", "@"].contains($0.first.map(String.init) ?? "") })
            #expect(Set(raws) == Set([shortId, "He said \"hi\", then left", "'=HYPERLINK(\"http://evil.test\",\"click\")",
                                      "'+1 phone", "'@SUM(A1)", "'-2+3", "line\nbreak"]))
            let admitted = try #require(rows.first { $0[3] == "CHECKED_IN" })
            #expect(admitted[1] == shortId && admitted[4] == visitor["id"] as? String && admitted[5] == site.mainGate)
            #expect(admitted[6] == site.owner.id && admitted[9] == "false" && date(admitted[7]) != nil)
            // Newest first, like the history; the export takes the history's filters.
            #expect(rows.last?[3] == "CHECKED_IN")
            let onlyInvalid = Self.parseCSV(try server.get("/api/admin/scan-history.csv?result=INVALID", token: site.ownerToken).text)
            #expect(onlyInvalid.count == 1 + texts.count)
            #expect(try server.get("/api/admin/scan-history.csv?result=NOPE", token: site.ownerToken).isError(400, "BAD_REQUEST"))
        }
    }

    @Test func checkpointsListAndCreate() throws {
        try withSite { server, site in
            let list = try server.get("/api/checkpoints", token: site.deskToken)
            #expect(list.status == 200 && list.keys == Shape.list && list.json?["nextCursor"] is NSNull)
            #expect(list.items.count == 1)
            #expect(list.items.first?["name"] as? String == "Main gate" && list.items.first?["id"] as? String == site.mainGate)
            let created = try server.post("/api/checkpoints", token: site.adminToken, ["name": "  Loading dock  "])
            #expect(created.status == 201)
            #expect(created.string("name") == "Loading dock" && created.string("id") != nil)
            let duplicate = try server.post("/api/checkpoints", token: site.ownerToken, ["name": "Loading dock"])
            #expect(duplicate.isError(409, "CONFLICT"))
            let defaultAgain = try server.post("/api/checkpoints", token: site.ownerToken, ["name": "Main gate"])
            #expect(defaultAgain.isError(409, "CONFLICT"))
            let after = try server.get("/api/checkpoints", token: site.approverToken)
            #expect(Set(after.items.compactMap { $0["name"] as? String }) == ["Main gate", "Loading dock"])
            for bad: Any in ["", "   ", String(repeating: "g", count: 101)] {
                let answer = try server.post("/api/checkpoints", token: site.ownerToken, ["name": bad])
                #expect(answer.isError(400, "BAD_REQUEST") && answer.errorMessage.contains("name"))
            }
            // Another organization may use the same name.
            let other = try server.makeSite("Globex", domain: "globex.test")
            #expect(try server.post("/api/checkpoints", token: other.ownerToken, ["name": "Loading dock"]).status == 201)
        }
    }

    @Test func healthz() throws {
        try withServer { server in
            let answer = try server.get("/api/healthz")
            #expect(answer.status == 200 && answer.keys == ["status"] && answer.string("status") == "ok")
            #expect(answer.headers["content-type"]?.hasPrefix("application/json") == true)
        }
    }

    @Test func metricsCountRequestsAndCheckIns() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["requiresApproval": true])
            let shortId = visitor["shortId"] as! String
            for _ in 0..<3 { _ = try server.get("/api/healthz") }
            _ = try server.get("/api/nowhere")
            _ = try server.checkIn(site.scanner, shortId)
            _ = try server.checkIn(site.scanner, shortId, ["confirmApprovalRequest": true])
            _ = try server.checkIn(site.scanner, "ZZZZZZZZ")
            _ = try server.checkIn(site.scanner, "junk")
            let metrics = try server.get("/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.headers["content-type"]?.hasPrefix("text/plain") == true)
            let text = metrics.text
            #expect(text.contains("# TYPE gatepass_http_requests_total counter\n"))
            #expect(text.contains("gatepass_http_requests_total{route=\"/api/healthz\",status=\"200\"} 3\n"))
            #expect(text.contains("gatepass_http_requests_total{route=\"/api/visitors\",status=\"201\"} 1\n"))
            #expect(text.contains("gatepass_http_requests_total{route=\"/api/visitor-scanner/checkin\",status=\"200\"} 2\n"))
            #expect(text.contains("gatepass_http_requests_total{route=\"/api/visitor-scanner/checkin\",status=\"404\"} 1\n"))
            #expect(text.contains("# TYPE gatepass_http_request_duration_seconds histogram\n"))
            #expect(text.contains("gatepass_http_request_duration_seconds_count{route=\"/api/healthz\"} 3\n"))
            #expect(text.contains("# TYPE gatepass_checkins_total counter\n"))
            for result in ["APPROVAL_REQUIRED", "AWAITING_APPROVAL", "NOT_FOUND", "INVALID"] {
                #expect(text.contains("gatepass_checkins_total{result=\"\(result)\"} 1\n"), "\(result)")
            }
            #expect(text.contains("gatepass_idempotent_replays_total 0\n"))
            // Every sample line is `name{labels} value` or `name value`.
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                let parts = line.split(separator: " ")
                #expect(parts.count == 2 && Double(parts[1]) != nil, "\(line)")
            }
        }
    }

    @Test func metricsNeedTheirTokenWhenOneIsConfigured() throws {
        try withSite(configure: { $0.metricsToken = "metrics-secret" }) { server, site in
            #expect(try server.get("/metrics").isError(401, "UNAUTHORIZED"))
            #expect(try server.get("/metrics", token: "wrong").isError(401, "UNAUTHORIZED"))
            #expect(try server.get("/metrics", token: site.ownerToken).isError(401, "UNAUTHORIZED"))
            #expect(try server.get("/metrics", headers: ["Authorization": "metrics-secret"]).isError(401, "UNAUTHORIZED"))
            let allowed = try server.get("/metrics", token: "metrics-secret")
            #expect(allowed.status == 200 && allowed.text.contains("gatepass_http_requests_total"))
            // The token is never logged.
            #expect(server.log.all.allSatisfy { !$0.contains("metrics-secret") })
        }
    }

    /// One log line per request: method, route pattern (never the raw path), status, milliseconds.
    @Test func oneLogLinePerRequest() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Logged Person", "email": "logged@x.test"])
            let id = visitor["id"] as! String
            let before = server.log.all.count
            _ = try server.get("/api/visitors/\(id)", token: site.ownerToken)
            _ = try server.get("/api/visitors?q=logged%40x.test", token: site.ownerToken)
            _ = try server.post("/api/visitors/\(id)/cancel", token: site.ownerToken)
            _ = try server.get("/api/nowhere")
            _ = try server.client().send("DELETE", "/api/healthz")
            // The mail worker logs the dev folder's writes of the site's login codes meanwhile
            // (lines of its own, not of these requests).
            let lines = Array(server.log.all.dropFirst(before)).filter { !$0.hasPrefix("dev: mail ") && !$0.hasPrefix("mail") }
            #expect(lines.count == 5)
            let expected = ["GET /api/visitors/:id 200 ", "GET /api/visitors 200 ", "POST /api/visitors/:id/cancel 200 ",
                            "GET ", "DELETE "]
            for (line, prefix) in zip(lines, expected) {
                #expect(line.hasPrefix(prefix), "\(line)")
                #expect(line.hasSuffix("ms") && Double(line.split(separator: " ").last!.dropLast(2)) != nil, "\(line)")
                #expect(!line.contains(id) && !line.contains("logged"), "\(line)")
            }
            #expect(lines[3].contains(" 404 ") && lines[4].contains(" 405 "))
        }
    }

    @Test func platformAdminReadsEveryOrganization() throws {
        try withServer { server in
            let acme = try server.makeSite("Acme", domain: "acme.test")
            let globex = try server.makeSite("Globex", domain: "globex.test")
            try server.addUser("platform@gatepass.test", role: .platformAdmin, organization: "Platform")
            let platform = try server.login("platform@gatepass.test")
            let acmeVisitor = try server.createVisitor(acme.ownerToken, ["name": "Acme Guest"])
            let globexVisitor = try server.createVisitor(globex.ownerToken, ["name": "Globex Guest"])
            #expect(try server.checkIn(acme.scanner, acmeVisitor["shortId"] as! String).status == 200)
            #expect(try server.checkIn(globex.scanner, globexVisitor["shortId"] as! String).status == 200)
            let (a, g) = (acmeVisitor["id"] as! String, globexVisitor["id"] as! String)

            #expect(ids(try server.get("/api/visitors?organizationId=\(acme.organizationId)", token: platform).items) == [a])
            #expect(ids(try server.get("/api/visitors?organizationId=\(globex.organizationId)", token: platform).items) == [g])
            #expect(Set(ids(try server.get("/api/visitors", token: platform).items)) == [a, g])
            #expect(try server.get("/api/visitors/\(g)", token: platform).string("name") == "Globex Guest")
            #expect(try server.get("/api/visitors/\(a)/pass.svg", token: platform).status == 200)
            let acmeScans = try server.get("/api/visitor-scanner/scan-history?organizationId=\(acme.organizationId)", token: platform)
            #expect(acmeScans.items.map { $0["visitorId"] as? String } == [a])
            let csv = try server.get("/api/admin/scan-history.csv?organizationId=\(globex.organizationId)", token: platform).text
            #expect(csv.contains(g) && !csv.contains(a))
            // No mutations through the API.
            #expect(try server.post("/api/visitors/\(a)/cancel", token: platform).isError(403, "FORBIDDEN"))
            #expect(try server.post("/api/visitors", token: platform, ["name": "X"]).isError(403, "FORBIDDEN"))
            #expect(try server.visitor(a, acme.ownerToken)["status"] as? String == "CHECKED_IN")
            // Everyone else's ?organizationId= is ignored: an owner reads only its own organization.
            #expect(ids(try server.get("/api/visitors?organizationId=\(globex.organizationId)", token: acme.ownerToken).items) == [a])
            let ownerScans = try server.get("/api/visitor-scanner/scan-history?organizationId=\(globex.organizationId)",
                                            token: acme.scanner)
            #expect(ownerScans.items.map { $0["visitorId"] as? String } == [a])
        }
    }
}
