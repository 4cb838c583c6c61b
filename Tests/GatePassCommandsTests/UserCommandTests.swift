import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// `gatepass user list|add|update|disable` end to end against an in-process server, as the
/// demo site's OWNER and ADMIN type them.
@Suite(.serialized) struct UserCommandTests {
    typealias Setup = ClientCommandTests.Setup

    func withLogin(_ email: String, _ body: (Setup) throws -> Void) throws {
        try ClientCommandTests().withSetup { setup in
            _ = try LoopbackHTTPClient(port: setup.server.port).send("POST", "/api/auth/send-otp", json: ["email": email])
            let login = setup.gatepass("login", "--server", setup.url, "--email", email, "--otp", try setup.code(email))
            try #require(login.status == 0, "\(login.err)")
            try body(setup)
        }
    }

    func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not JSON: \(text)")
    }

    @Test func addListUpdateDisableAsTheOwner() throws {
        try withLogin("owner@demo.gatepass") { setup in
            let added = setup.gatepass("user", "add", "--email", "Hana@Demo.Gatepass", "--name", "Hana Host", "--role", "host", "--json")
            #expect(added.status == 0, "\(added.err)")
            let user = try object(added.out)
            #expect(user["role"] as? String == "HOST" && user["email"] as? String == "hana@demo.gatepass")
            let id = try #require(user["id"] as? String)

            let list = setup.gatepass("user", "list")
            #expect(list.status == 0)
            #expect(list.out.contains("HOST  Hana Host <hana@demo.gatepass>  last login never  id \(id)"), "\(list.out)")
            let page = try object(setup.gatepass("user", "list", "--json", "--limit", "500").out)
            #expect((page["items"] as? [[String: Any]])?.count == 7, "the demo's six and the one added")

            // By email or by id.
            let promoted = setup.gatepass("user", "update", "hana@demo.gatepass", "--role", "APPROVER", "--can-scan", "--name", "Hana A.")
            #expect(promoted.status == 0, "\(promoted.err)")
            #expect(promoted.out.contains("APPROVER  Hana A. <hana@demo.gatepass>  can scan"), "\(promoted.out)")
            let disabled = setup.gatepass("user", "disable", id, "--json")
            #expect(disabled.status == 0, "\(disabled.err)")
            #expect(try object(disabled.out)["disabled"] as? Bool == true)
            let enabled = setup.gatepass("user", "update", id, "--enable")
            #expect(enabled.status == 0 && !enabled.out.contains("DISABLED"), "\(enabled.out) \(enabled.err)")

            // The server's refusals are one sentence and exit 1: its own role, the last owner, a taken email.
            let ownerId = try #require(try setup.server.store.read { tx in try tx.directory.user(email: "owner@demo.gatepass")?.id })
            let selfDisable = setup.gatepass("user", "disable", ownerId)
            #expect(selfDisable.status == 1 && selfDisable.err.contains("last OWNER"), "\(selfDisable.err)")
            let taken = setup.gatepass("user", "add", "--email", "admin@demo.gatepass", "--name", "X", "--role", "ADMIN")
            #expect(taken.status == 1 && taken.err.contains("already exists"), "\(taken.err)")
            let unknown = setup.gatepass("user", "disable", "nobody@demo.gatepass")
            #expect(unknown.status == 1 && unknown.err.contains("no user of your organization"), "\(unknown.err)")
        }
    }

    @Test func anAdminIsHeldToItsRules() throws {
        try withLogin("admin@demo.gatepass") { setup in
            let owner = setup.gatepass("user", "add", "--email", "o2@demo.gatepass", "--name", "O2", "--role", "OWNER")
            #expect(owner.status == 1 && owner.err.contains("may create"), "\(owner.err)")
            let demote = setup.gatepass("user", "update", "owner@demo.gatepass", "--role", "HOST")
            #expect(demote.status == 1, "\(demote.out)")
            let host = setup.gatepass("user", "add", "--email", "h@demo.gatepass", "--name", "H", "--role", "HOST")
            #expect(host.status == 0 && host.out.hasPrefix("added HOST  H <h@demo.gatepass>"), "\(host.out) \(host.err)")
        }
    }

    /// A disabled user's next command finds its session ended.
    @Test func aDisabledUsersSessionEnds() throws {
        try withLogin("desk@demo.gatepass") { setup in
            #expect(setup.gatepass("whoami").status == 0)
            let sent = try LoopbackHTTPClient(port: setup.server.port).send("POST", "/api/auth/send-otp", json: ["email": "admin@demo.gatepass"])
            #expect(sent.status == 202)
            let verified = try LoopbackHTTPClient(port: setup.server.port).send(
                "POST", "/api/auth/verify-otp", json: ["email": "admin@demo.gatepass", "otp": try setup.code("admin@demo.gatepass")])
            let token = try #require(verified.json?["token"] as? String)
            let desk = try #require(try setup.server.store.read { tx in try tx.directory.user(email: "desk@demo.gatepass")?.id })
            let patched = try LoopbackHTTPClient(port: setup.server.port).send("PATCH", "/api/users/\(desk)", token: token,
                                                                               json: ["disabled": true])
            #expect(patched.status == 200, "\(patched.text)")
            let after = setup.gatepass("user", "list")
            #expect(after.status == 1, "\(after.out)")
        }
    }

    @Test(arguments: [
        (["user", "add", "--email", "a@b.co", "--name", "N", "--role", "KING"], "--role must be OWNER, ADMIN, APPROVER, HOST or PLATFORM_ADMIN"),
        (["user", "add", "--email", "a@b.co", "--name", "N", "--role", "HOST", "--organization", "Elsewhere"], "--organization needs --db"),
        (["user", "add", "--email", "a@b.co", "--name", "N", "--role", "PLATFORM_ADMIN"], "a PLATFORM_ADMIN is added with --db only"),
        (["user", "update", "someone"], "nothing to change"),
        (["user", "update", "someone", "--can-scan", "--no-can-scan"], "give --can-scan or --no-can-scan, not both"),
        (["user", "update", "someone", "--role", "PLATFORM_ADMIN"], "--role must be OWNER, ADMIN, APPROVER or HOST"),
        (["user", "disable"], "the user's id or email is required"),
        (["user", "remove"], "unknown subcommand user remove; one of: list, add, update, disable"),
    ])
    func usageErrorsExitTwo(arguments: [String], message: String) {
        let terminal = RecordingTerminal()
        #expect(GatePassCLI.main(["gatepass"] + arguments, terminal: terminal) == 2)
        #expect(terminal.stderr.contains("error: \(message)"), "\(terminal.stderr)")
    }
}
