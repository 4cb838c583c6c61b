import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

/// api.md: two kiosks scanning one pass at the same moment get exactly one CHECKED_IN.
/// Each thread has its own client (its own connection, opened before the start gate).
@Suite struct CheckInRaceTests {
    static let threads = 24

    /// `threads` concurrent check-ins of `shortId`, thread i using `tokens[i % tokens.count]`.
    static func race(_ server: TestServer, shortId: String, tokens: [String]) -> [Result<(String, String), any Error>] {
        let port = server.port
        return runConcurrently(threads) { index, startGate in
            let client = LoopbackHTTPClient(port: port)
            let warm = try client.get("/api/healthz")
            guard warm.status == 200 else { throw TestFailure("healthz answered \(warm.status)") }
            let token = tokens[index % tokens.count]
            startGate()
            let answer = try client.send("POST", "/api/visitor-scanner/checkin", token: token, json: ["shortId": shortId])
            guard answer.status == 200, let result = answer.json?["result"] as? String,
                  let scanId = answer.json?["scanId"] as? String
            else { throw TestFailure("check-in answered \(answer.status): \(answer.text)") }
            return (result, scanId)
        }
    }

    static func verify(_ results: [Result<(String, String), any Error>], server: TestServer, site: Site,
                       visitorId: String) throws -> String {
        let answers = try results.map { try $0.get() }
        let checkedIn = answers.filter { $0.0 == "CHECKED_IN" }
        #expect(checkedIn.count == 1)
        #expect(answers.filter { $0.0 == "ALREADY_CHECKED_IN" }.count == threads - 1)
        #expect(Set(answers.map(\.1)).count == threads)
        let scans = try server.history(site.ownerToken, "")
        #expect(scans.count == threads)
        #expect(scans.filter { $0["result"] as? String == "CHECKED_IN" }.count == 1)
        #expect(scans.allSatisfy { $0["visitorId"] as? String == visitorId })
        let visitor = try server.visitor(visitorId, site.ownerToken)
        #expect(visitor["status"] as? String == "CHECKED_IN")
        let onSite = try server.get("/api/visitor-scanner/on-site", token: site.scanner).items
        #expect(ids(onSite) == [visitorId])
        return checkedIn.first?.1 ?? ""
    }

    @Test(arguments: [false, true])
    func oneCheckedInAmongTwentyFour(_ ownTokens: Bool) throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Racing Visitor"])
            var tokens = [site.scanner]
            if ownTokens { for _ in 1..<Self.threads { tokens.append(try server.scannerToken(site.ownerToken)) } }
            let results = Self.race(server, shortId: visitor["shortId"] as! String, tokens: tokens)
            _ = try Self.verify(results, server: server, site: site, visitorId: visitor["id"] as! String)
            let metrics = try server.get("/metrics").text
            #expect(metrics.contains("gatepass_checkins_total{result=\"CHECKED_IN\"} 1\n"))
            #expect(metrics.contains("gatepass_checkins_total{result=\"ALREADY_CHECKED_IN\"} \(Self.threads - 1)\n"))
        }
    }

    @Test func twoCheckpointsRacingForOnePass() throws {
        try withSite { server, site in
            let north = try server.post("/api/checkpoints", token: site.ownerToken, ["name": "North gate"])
            let northId = try #require(north.string("id"))
            let northScanner = try server.scannerToken(site.adminToken, checkpointId: northId)
            let southScanner = try server.scannerToken(site.approverToken)
            for round in 0..<3 {
                let visitor = try server.createVisitor(site.ownerToken, ["name": "Round \(round)"])
                let results = Self.race(server, shortId: visitor["shortId"] as! String, tokens: [northScanner, southScanner])
                let answers = try results.map { try $0.get() }
                #expect(answers.filter { $0.0 == "CHECKED_IN" }.count == 1)
                #expect(answers.filter { $0.0 == "ALREADY_CHECKED_IN" }.count == Self.threads - 1)
                let winner = try #require(answers.firstIndex { $0.0 == "CHECKED_IN" })
                let expectedGate = winner % 2 == 0 ? northId : site.mainGate
                let stored = try server.visitor(visitor["id"], site.ownerToken)
                #expect(stored["checkpointId"] as? String == expectedGate)
                let scans = try server.history(site.ownerToken, "result=CHECKED_IN")
                    .filter { $0["visitorId"] as? String == visitor["id"] as? String }
                #expect(scans.count == 1 && scans.first?["checkpointId"] as? String == expectedGate)
            }
            let northScans = try server.history(site.ownerToken, "checkpointId=\(northId)")
            let southScans = try server.history(site.ownerToken, "checkpointId=\(site.mainGate)")
            #expect(northScans.count == 3 * Self.threads / 2 && southScans.count == 3 * Self.threads / 2)
        }
    }
}
