import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// The scriptable client commands against a real server, as a script would use them.
@Suite(.serialized) struct ClientCommandTests {
    final class Log: LogSink { func log(_ line: String) {} }

    struct Setup {
        var server: GatePassServer
        var configuration: ServerConfiguration
        var environment: [String: String]
        var directory: String
        var url: String { "http://127.0.0.1:\(server.port)" }

        func gatepass(_ arguments: String..., answer: (@Sendable () -> String?)? = nil) -> (status: Int32, out: String, err: String) {
            gatepass(arguments, answer: answer)
        }

        func gatepass(_ arguments: [String], answer: (@Sendable () -> String?)? = nil) -> (status: Int32, out: String, err: String) {
            let terminal = RecordingTerminal(answer: answer)
            let status = GatePassCLI.main(["gatepass"] + arguments, terminal: terminal, environment: environment)
            return (status, terminal.stdout, terminal.stderr)
        }

        func code(_ email: String) throws -> String {
            try #require(try LoopbackHTTPClient(port: server.port).get("/api/auth/dev-peek-otp?email=\(email)").json?["otp"] as? String)
        }
    }

    /// - Parameter configure: changes to the server's configuration (its `timeZone`, say).
    func withSetup(configure: (inout ServerConfiguration) -> Void = { _ in }, _ body: (inout Setup) throws -> Void) throws {
        let directory = temporaryPath("client-cli")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ServerConfiguration()
        configuration.database = directory + "/server.db"
        configuration.port = 0
        configuration.threads = 4
        configuration.otpResendIntervalSeconds = 0
        configure(&configuration)
        let server = try GatePassServer(configuration: configuration, devMode: true, logSink: Log())
        configuration.port = Int(server.port)
        try DemoData.seed(store: server.store, now: Date(), timeZone: configuration.resolvedTimeZone)
        var setup = Setup(server: server, configuration: configuration,
                          environment: ["GATEPASS_STATE_DIR": directory + "/state", "GATEPASS_CONNECT_TIMEOUT": "1"],
                          directory: directory)
        defer { setup.server.stop() }
        try body(&setup)
    }

    @Test func loginPromptsForTheCodeThenCommandsWork() throws {
        try withSetup { setup in
            // Without --otp the command sends the code and reads it from the terminal; the
            // person at the prompt reads it (here: from the dev route) when asked.
            let port = setup.server.port
            let login = setup.gatepass("login", "--server", setup.url, "--email", "approver@demo.gatepass") {
                try? LoopbackHTTPClient(port: port).get("/api/auth/dev-peek-otp?email=approver@demo.gatepass").json?["otp"] as? String
            }
            #expect(login.status == 0, "\(login.err)")
            #expect(login.out.contains("logged in as Ana Approver"))
            #expect(login.out.contains("scanning at Main gate"))
            #expect(login.err.contains("a one-time code was sent to approver@demo.gatepass"))

            let whoami = setup.gatepass("whoami", "--json")
            #expect(whoami.status == 0)
            let profile = try JSONSerialization.jsonObject(with: Data(whoami.out.utf8)) as? [String: Any]
            #expect((profile?["user"] as? [String: Any])?["role"] as? String == "APPROVER")
            #expect((profile?["deviceToken"] as? String)?.hasPrefix("gpd_") == true)

            let approvals = setup.gatepass("approvals", "--json")
            let page = try JSONSerialization.jsonObject(with: Data(approvals.out.utf8)) as? [String: Any]
            let items = try #require(page?["items"] as? [[String: Any]])
            #expect(!items.isEmpty)
            #expect(items.allSatisfy { $0["status"] as? String == "AWAITING_APPROVAL" })

            let id = try #require(items.first?["id"] as? String)
            let approve = setup.gatepass("approve", id, "--note", "expected")
            #expect(approve.status == 0)
            #expect(approve.out.hasPrefix("APPROVED"))
            let again = setup.gatepass("approve", id)
            #expect(again.status == 1)
            #expect(again.err.contains("CONFLICT"))

            let unknown = setup.gatepass("checkin", "ZZZZZZZZ")
            #expect(unknown.status == 1)
            #expect(unknown.err.contains("NOT_FOUND"))
            let bad = setup.gatepass("checkin", String(repeating: "x", count: 300))
            #expect(bad.status == 2)

            let stats = setup.gatepass("stats", "--json")
            #expect(stats.status == 0)
            #expect(stats.out.contains("\"onSite\""))

            let logout = setup.gatepass("logout")
            #expect(logout.status == 0)
            #expect(setup.gatepass("whoami").status == 1)
        }
    }

    /// `-h` after `--note` is the note, not a request for help: the visitor is approved with
    /// the note "-h" (it used to print the help and exit 0 without approving).
    @Test func aNoteThatLooksLikeAnOptionIsTheNote() throws {
        try withSetup { setup in
            _ = try LoopbackHTTPClient(port: setup.server.port).send("POST", "/api/auth/send-otp",
                                                                     json: ["email": "approver@demo.gatepass"])
            let login = setup.gatepass("login", "--server", setup.url, "--email", "approver@demo.gatepass",
                                       "--otp", try setup.code("approver@demo.gatepass"))
            #expect(login.status == 0, "\(login.err)")
            let approvals = setup.gatepass("approvals", "--json")
            let page = try JSONSerialization.jsonObject(with: Data(approvals.out.utf8)) as? [String: Any]
            let id = try #require((page?["items"] as? [[String: Any]])?.first?["id"] as? String)

            let approve = setup.gatepass("approve", id, "--note", "-h", "--json")
            #expect(approve.status == 0, "\(approve.err)")
            #expect(!approve.out.contains("OVERVIEW"))
            let visitor = try JSONSerialization.jsonObject(with: Data(approve.out.utf8)) as? [String: Any]
            #expect(visitor?["status"] as? String == "APPROVED")
            #expect(visitor?["decisionNote"] as? String == "-h")
        }
    }

    @Test func mutationsQueueWhileTheServerIsDownAndTheOutboxCommandsShowThem() throws {
        try withSetup { setup in
            _ = try LoopbackHTTPClient(port: setup.server.port).send("POST", "/api/auth/send-otp",
                                                                     json: ["email": "owner@demo.gatepass"])
            let login = setup.gatepass("login", "--server", setup.url, "--email", "owner@demo.gatepass",
                                       "--otp", try setup.code("owner@demo.gatepass"))
            #expect(login.status == 0)
            let lookup = setup.gatepass("lookup", "Ana Pop", "--json")
            let found = try JSONSerialization.jsonObject(with: Data(lookup.out.utf8)) as? [String: Any]
            let shortId = try #require((found?["items"] as? [[String: Any]])?.first?["shortId"] as? String)

            setup.server.stop()
            let queued = setup.gatepass("checkin", shortId)
            #expect(queued.status == 0)
            #expect(queued.out.contains("queued as outbox entry"))
            let walkIn = setup.gatepass("walk-in", "--name", "Dora Walker", "--phone", "+40 711 111 111", "--json")
            #expect(walkIn.status == 0)
            #expect(walkIn.out.contains("\"queued\""))
            let stats = setup.gatepass("stats")
            #expect(stats.status == 1) // never cached for this user: the error says the server is unreachable
            #expect(stats.err.contains("unreachable"))

            let list = setup.gatepass("outbox", "list", "--json")
            let entries = try #require(try JSONSerialization.jsonObject(with: Data(list.out.utf8)) as? [[String: Any]])
            #expect(entries.map { $0["kind"] as? String } == ["checkin", "walk-in"])
            let drainDown = setup.gatepass("outbox", "drain")
            #expect(drainDown.status == 0)
            #expect(drainDown.out.contains("the server is unreachable"))
            #expect(drainDown.out.contains("wait for backoff"))

            setup.server = try GatePassServer(configuration: setup.configuration, devMode: true, logSink: Log())
            let drained = setup.gatepass("outbox", "drain", "--json")
            #expect(drained.status == 0)
            let summary = try JSONSerialization.jsonObject(with: Data(drained.out.utf8)) as? [String: Any]
            #expect(summary?["applied"] as? Int == 2)
            #expect(summary?["remaining"] as? Int == 0)
            #expect(setup.gatepass("outbox", "list").out == "the outbox is empty")

            let history = setup.gatepass("history", "--limit", "1", "--json")
            let scans = try JSONSerialization.jsonObject(with: Data(history.out.utf8)) as? [String: Any]
            let scan = try #require((scans?["items"] as? [[String: Any]])?.first)
            #expect(scan["shortId"] as? String == shortId)
            #expect(scan["offline"] as? Bool == true)
            let csv = setup.gatepass("history", "--csv")
            #expect(csv.out.hasPrefix("id,shortId,raw,result"))

            #expect(setup.gatepass("outbox", "retry", "12345").status == 1)
            #expect(setup.gatepass("outbox", "retry", "abc").status == 2)
            #expect(setup.gatepass("outbox", "frobnicate").status == 2)
        }
    }

    @Test func anotherUsersLoginNeedsForceWhileEntriesWait() throws {
        try withSetup { setup in
            let http = LoopbackHTTPClient(port: setup.server.port)
            _ = try http.send("POST", "/api/auth/send-otp", json: ["email": "owner@demo.gatepass"])
            #expect(setup.gatepass("login", "--server", setup.url, "--email", "owner@demo.gatepass",
                                   "--otp", try setup.code("owner@demo.gatepass")).status == 0)
            setup.server.stop()
            #expect(setup.gatepass("checkin", "AAAAAAAA").status == 0)
            setup.server = try GatePassServer(configuration: setup.configuration, devMode: true, logSink: Log())
            let refused = setup.gatepass("login", "--email", "admin@demo.gatepass", "--otp", "123456")
            #expect(refused.status == 1)
            #expect(refused.err.contains("1 queued or dead-lettered entries of owner@demo.gatepass"))
            #expect(refused.err.contains("--force"))
            _ = try LoopbackHTTPClient(port: setup.server.port).send("POST", "/api/auth/send-otp", json: ["email": "admin@demo.gatepass"])
            let forced = setup.gatepass("login", "--email", "admin@demo.gatepass", "--otp", try setup.code("admin@demo.gatepass"), "--force")
            #expect(forced.status == 0, "\(forced.err)")
            #expect(forced.err.contains("deleted 1 queued entries"))
            #expect(setup.gatepass("outbox", "list").out == "the outbox is empty")
        }
    }

    @Test(arguments: ClientCommands.names)
    func everyClientCommandAnswersHelp(name: String) {
        let terminal = RecordingTerminal()
        #expect(GatePassCLI.main(["gatepass", name, "--help"], terminal: terminal, environment: [:]) == 0)
        #expect(terminal.stdout.hasPrefix("OVERVIEW: "))
        #expect(terminal.stdout.contains("USAGE: gatepass \(name)"))
    }
}
