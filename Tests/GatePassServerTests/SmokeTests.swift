import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

@Suite struct SmokeTests {
    @Test func loginCreateAndCheckIn() throws {
        try withTestServer { server in
            try server.addUser("owner@acme.test", role: .owner)
            let token = try server.login("owner@acme.test")
            let visitor = try server.createVisitor(token, ["name": "Ana Pop", "company": "Acme"])
            let shortId = try #require(visitor["shortId"] as? String)
            let scanner = try server.scannerToken(token)
            let answer = try server.client().send("POST", "/api/visitor-scanner/checkin", token: scanner,
                                                  json: ["shortId": "GP1:\(shortId.lowercased())"])
            #expect(answer.status == 200)
            #expect(answer.json?["result"] as? String == "CHECKED_IN")
            let again = try server.client().send("POST", "/api/visitor-scanner/checkin", token: scanner,
                                                 json: ["shortId": shortId])
            #expect(again.json?["result"] as? String == "ALREADY_CHECKED_IN")
        }
    }
}
