import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// `gatepass checkpoint list|rename|retire`, `gatepass scanner-token list|revoke` and
/// `gatepass kiosk enrol-code` end to end against an in-process server, as the demo OWNER.
@Suite(.serialized) struct GateCommandTests {
    func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not JSON: \(text)")
    }

    @Test func anAdminManagesGatesAndKiosksFromTheCommandLine() throws {
        try UserCommandTests().withLogin("owner@demo.gatepass") { setup in
            let list = setup.gatepass("checkpoint", "list", "--json")
            #expect(list.status == 0, "\(list.err)")
            let main = try #require((try object(list.out)["items"] as? [[String: Any]])?.first { $0["isDefault"] as? Bool == true })
            let mainId = try #require(main["id"] as? String)
            #expect(setup.gatepass("checkpoint", "list").out.contains("Main gate  default  id \(mainId)"))

            // A second gate, renamed, an enrolment code for it, then retired.
            let owner = try #require(try setup.server.store.read { tx in try tx.directory.user(email: "owner@demo.gatepass") })
            let north = try setup.server.store.write { tx in
                try tx.checkpoints.create(organizationId: owner.organizationId, name: "North door", now: Date())
            }
            let renamed = setup.gatepass("checkpoint", "rename", north.id, "--name", "North\u{1B}[2J gate")
            #expect(renamed.status == 1 && renamed.err.contains("control characters"), "\(renamed.out) \(renamed.err)")
            let fine = setup.gatepass("checkpoint", "rename", north.id, "--name", "North gate")
            #expect(fine.status == 0 && fine.out.contains("North gate  id"))
            let taken = setup.gatepass("checkpoint", "rename", north.id, "--name", "Main gate")
            #expect(taken.status == 1 && taken.err.contains("already exists"), "\(taken.err)")

            let code = setup.gatepass("kiosk", "enrol-code", "--checkpoint", north.id, "--name", "North kiosk", "--json")
            #expect(code.status == 0, "\(code.err)")
            let enrolmentCode = try #require(try object(code.out)["enrolmentCode"] as? String)
            let enrolled = try LoopbackHTTPClient(port: setup.server.port).send("POST", "/api/visitor-scanner/enrol",
                                                                                json: ["enrolmentCode": enrolmentCode])
            let kioskToken = try #require(enrolled.json?["scannerToken"] as? String)

            let tokens = setup.gatepass("scanner-token", "list")
            #expect(tokens.status == 0 && tokens.out.contains("kiosk North kiosk  at North gate  made by Olivia Owner  last used never"), "\(tokens.out)")
            let page = try object(setup.gatepass("scanner-token", "list", "--json").out)
            let kioskEntry = try #require((page["items"] as? [[String: Any]])?.first { $0["kioskName"] as? String == "North kiosk" })
            let kioskId = try #require(kioskEntry["id"] as? String)
            let revoked = setup.gatepass("scanner-token", "revoke", kioskId)
            #expect(revoked.status == 0 && revoked.out.contains("revoked scanner token \(kioskId)"), "\(revoked.err)")
            let again = setup.gatepass("scanner-token", "revoke", kioskId)
            #expect(again.status == 1 && again.err.contains("not found"), "\(again.err)")
            let refused = try LoopbackHTTPClient(port: setup.server.port).get("/api/visitor-scanner/stats", token: kioskToken)
            #expect(refused.status == 401 && refused.text.contains("REVOKED"))

            let retired = setup.gatepass("checkpoint", "retire", north.id)
            #expect(retired.status == 0 && retired.out.contains("North gate  RETIRED"), "\(retired.out) \(retired.err)")
            let noCode = setup.gatepass("kiosk", "enrol-code", "--checkpoint", north.id, "--name", "K")
            #expect(noCode.status == 1 && noCode.err.contains("retired"), "\(noCode.err)")
            let back = setup.gatepass("checkpoint", "retire", north.id, "--undo")
            #expect(back.status == 0 && !back.out.contains("RETIRED"))
            let defaultGate = setup.gatepass("checkpoint", "retire", mainId)
            #expect(defaultGate.status == 1 && defaultGate.err.contains("default checkpoint"), "\(defaultGate.err)")
        }
    }
}
