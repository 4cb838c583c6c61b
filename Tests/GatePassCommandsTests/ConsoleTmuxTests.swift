import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassCommands
@testable import GatePassServer

struct TestFailureText: Error { var text: String; init(_ text: String) { self.text = text } }

/// The real console in tmux against a real server, as a person would use it.
@Suite(.serialized) struct ConsoleTmuxTests {
    /// The server's log lines, for a test that waits for a request to have been answered.
    final class Log: LogSink {
        let lines = Locked<[String]>([])
        func log(_ line: String) { lines.withLock { $0.append(line) } }
        func contains(prefix: String) -> Bool { lines.withLock { $0.contains { $0.hasPrefix(prefix) } } }
    }

    struct Tmux {
        let socket = "gatepass-test-\(UUID().uuidString.prefix(8))"

        /// Runs one tmux client command through `system(3)`. Not through `Process`: the first
        /// command forks the tmux server, which inherits the descriptor Foundation watches for
        /// the child's exit, and `waitUntilExit` would then wait for the server too.
        @discardableResult
        func run(_ arguments: [String]) throws -> String {
            let outputPath = temporaryPath("tmux-out")
            defer { try? FileManager.default.removeItem(atPath: outputPath) }
            func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            let command = (["/usr/bin/tmux", "-L", socket] + arguments).map(quoted).joined(separator: " ")
                + " </dev/null >\(quoted(outputPath)) 2>/dev/null"
            guard system(command) != -1 else { throw TestFailureText("cannot run tmux") }
            return (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        }

        func screen(escapes: Bool = false) throws -> String {
            try run(["capture-pane", "-p"] + (escapes ? ["-e"] : []) + ["-t", "console"])
        }

        func keys(_ keys: String...) throws { try run(["send-keys", "-t", "console"] + keys) }

        /// Waits until the screen contains `text` (10 s at most).
        func waitFor(_ text: String) throws -> Bool {
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                if try screen().contains(text) { return true }
                Thread.sleep(forTimeInterval: 0.1)
            }
            return false
        }

        /// The tmux channel the pane's shell signals once the console has ended.
        static let exitChannel = "console-exit"

        /// What a pane's command runs after the console: its status to `file`, then the signal
        /// on `exitChannel` (tmux remembers it for a waiter that comes later).
        func afterConsole(writingStatusTo file: String) -> String {
            "echo EXIT=$? > \(file); /usr/bin/tmux -L \(socket) wait-for -S \(Self.exitChannel); sleep 60"
        }

        /// Waits for the pane's shell to signal that the console ended (tmux `wait-for`): woken
        /// by the signal, not by polling. The limit only keeps a console that never ends from
        /// hanging the suite.
        func waitForConsoleExit(timeout: TimeInterval = 10) -> Bool {
            let command = "/usr/bin/timeout \(Int(timeout.rounded(.up))) /usr/bin/tmux -L \(socket) wait-for \(Self.exitChannel)"
                + " </dev/null >/dev/null 2>&1"
            return system(command) == 0
        }

        func kill() { _ = try? run(["kill-server"]) }
    }

    func withConsole(environment extra: String = "", log: Log = Log(), _ body: (Tmux, GatePassServer, String) throws -> Void) throws {
        let binary = ServeProcessTests.executable
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the gatepass executable first")
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux"), "install tmux (.ci/install-packages does)")
        let directory = temporaryPath("console")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ServerConfiguration()
        configuration.database = directory + "/server.db"
        configuration.port = 0
        configuration.threads = 4
        configuration.otpResendIntervalSeconds = 0
        let server = try GatePassServer(configuration: configuration, devMode: true, logSink: log)
        defer { server.stop() }
        try DemoData.seed(store: server.store, now: Date(), timeZone: .current)
        let tmux = Tmux()
        defer { tmux.kill() }
        let command = "\(extra) GATEPASS_STATE_DIR=\(directory)/state \(binary.path) console --server http://127.0.0.1:\(server.port); "
            + tmux.afterConsole(writingStatusTo: "\(directory)/exit")
        try tmux.run(["new-session", "-d", "-s", "console", "-x", "110", "-y", "32", command])
        try body(tmux, server, directory)
    }

    func code(_ server: GatePassServer, _ email: String) throws -> String {
        try #require(try LoopbackHTTPClient(port: server.port).get("/api/auth/dev-peek-otp?email=\(email)").json?["otp"] as? String)
    }

    @Test func logInSeeTheQueueLiveApproveAndQuit() throws {
        try withConsole { tmux, server, directory in
            #expect(try tmux.waitFor("Gate Pass — log in"))
            try tmux.keys("approver@demo.gatepass", "Enter")
            #expect(try tmux.waitFor("A 6-digit code was sent"))
            try tmux.keys(try code(server, "approver@demo.gatepass"), "Enter")
            #expect(try tmux.waitFor("Awaiting approval"))
            #expect(try tmux.waitFor("live"))
            // A walk-in at the gate appears without a key press.
            let http = LoopbackHTTPClient(port: server.port)
            _ = try http.send("POST", "/api/auth/send-otp", json: ["email": "owner@demo.gatepass"])
            let owner = try #require(try http.send("POST", "/api/auth/verify-otp",
                                                   json: ["email": "owner@demo.gatepass", "otp": try code(server, "owner@demo.gatepass")]).json?["token"] as? String)
            let scanner = try #require(try http.send("POST", "/api/visitor-scanner/token", token: owner, json: [String: Any]()).json?["scannerToken"] as? String)
            #expect(try http.send("POST", "/api/visitor-scanner/walk-in-arrived", token: scanner,
                                  json: ["name": "Live Larry", "company": "Initech"]).status == 201)
            #expect(try tmux.waitFor("Live Larry"))
            // Open it (Home: the newest, at the top), approve with a, accept the empty note.
            try tmux.keys("Home")
            try tmux.keys("Enter")
            #expect(try tmux.waitFor("Live Larry — awaiting approval"))
            try tmux.keys("a")
            #expect(try tmux.waitFor("Note (optional)"))
            try tmux.keys("Enter")
            #expect(try tmux.waitFor("Approved."))
            try tmux.keys("Escape")
            #expect(try tmux.waitFor("Awaiting approval"))
            #expect(!(try tmux.screen().contains("Live Larry")))
            try tmux.keys("q")
            #expect(tmux.waitForConsoleExit())
            #expect((try? String(contentsOfFile: directory + "/exit", encoding: .utf8)) == "EXIT=0\n")
        }
    }

    /// An approver disabled while the console is open loses the event stream (the server ends
    /// it); re-enabled and logged in again on the same state folder (`gatepass login`), the open
    /// console follows the stream again by itself: `live`, and a new request shows without `r`.
    @Test func afterTheSessionIsRenewedTheOpenConsoleIsLiveAgain() throws {
        let log = Log()
        try withConsole(log: log) { tmux, server, directory in
            let statusLine = "(APPROVER)  http://127.0.0.1:\(server.port)  "
            #expect(try tmux.waitFor("Gate Pass — log in"))
            try tmux.keys("approver@demo.gatepass", "Enter")
            #expect(try tmux.waitFor("A 6-digit code was sent"))
            try tmux.keys(try code(server, "approver@demo.gatepass"), "Enter")
            #expect(try tmux.waitFor(statusLine + "live"))
            let http = LoopbackHTTPClient(port: server.port)
            _ = try http.send("POST", "/api/auth/send-otp", json: ["email": "owner@demo.gatepass"])
            let owner = try #require(try http.send("POST", "/api/auth/verify-otp",
                                                   json: ["email": "owner@demo.gatepass", "otp": try code(server, "owner@demo.gatepass")]).json?["token"] as? String)
            let approverId = try #require(try server.store.write { try $0.directory.user(email: "approver@demo.gatepass")?.id })
            #expect(try http.send("PATCH", "/api/users/\(approverId)", token: owner, json: ["disabled": true]).status == 200)
            // The server ends the stream: the status line no longer says live.
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, try tmux.screen().contains(statusLine + "live") { Thread.sleep(forTimeInterval: 0.1) }
            #expect(!(try tmux.screen().contains(statusLine + "live")), "the disabled approver's stream ended")
            // The stream's reconnect was refused (401): the console's stream has given up on that session.
            let refused = Date().addingTimeInterval(10)
            while Date() < refused, !log.contains(prefix: "GET /api/events 401") { Thread.sleep(forTimeInterval: 0.1) }
            #expect(log.contains(prefix: "GET /api/events 401"), "log: \(log.lines.withLock { $0.suffix(5) })")
            #expect(try http.send("PATCH", "/api/users/\(approverId)", token: owner, json: ["disabled": false]).status == 200)
            _ = try http.send("POST", "/api/auth/send-otp", json: ["email": "approver@demo.gatepass"])
            let relogin = GatePassCLI.main(["gatepass", "login", "--server", "http://127.0.0.1:\(server.port)",
                                            "--email", "approver@demo.gatepass", "--otp", try code(server, "approver@demo.gatepass")],
                                           terminal: RecordingTerminal(), environment: ["GATEPASS_STATE_DIR": directory + "/state"])
            #expect(relogin == 0)
            #expect(try tmux.waitFor(statusLine + "live"), "the stream came back with the renewed session")
            let scanner = try #require(try http.send("POST", "/api/visitor-scanner/token", token: owner, json: [String: Any]()).json?["scannerToken"] as? String)
            #expect(try http.send("POST", "/api/visitor-scanner/walk-in-arrived", token: scanner,
                                  json: ["name": "Renewed Rita", "company": "Initech"]).status == 201)
            #expect(try tmux.waitFor("Renewed Rita"), "a new request shows without r")
            try tmux.keys("C-c")
        }
    }

    @Test func noColorKeepsReverseVideoButDropsColours() throws {
        try withConsole(environment: "NO_COLOR=1") { tmux, _, _ in
            #expect(try tmux.waitFor("Gate Pass — log in"))
            let escapes = try tmux.screen(escapes: true)
            // SGR 30–37/40–47/38;5/48;5 are colours; 7 is reverse video (the tab bar).
            let colour = try Regex(#"\x1B\[[0-9;]*(3[0-8]|4[0-8])[;m]"#)
            #expect(escapes.firstMatch(of: colour) == nil, "no colour with NO_COLOR")
            #expect(escapes.contains("\u{1B}[7m") || escapes.contains(";7m"), "reverse video stays")
            try tmux.keys("C-c")
        }
    }

    @Test func withoutATerminalTheConsoleRefuses() {
        let terminal = RecordingTerminal()
        let state = temporaryPath("no-tty")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let status = GatePassCLI.main(["gatepass", "console"], terminal: terminal, environment: ["GATEPASS_STATE_DIR": state])
        #expect(status == 1)
        #expect(terminal.stderr.contains("needs a terminal") && terminal.stderr.contains("gatepass approvals"))
    }
}
