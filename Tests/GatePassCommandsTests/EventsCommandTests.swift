import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// `gatepass events` end to end: it prints live events, and ends (exit 1) when the session does.
@Suite(.serialized) struct EventsCommandTests {
    final class Log: LogSink { func log(_ line: String) {} }

    @Test func followsEventsUntilTheSessionEnds() throws {
        let directory = temporaryPath("events-cli")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ServerConfiguration()
        configuration.database = directory + "/server.db"
        configuration.port = 0
        configuration.threads = 4
        configuration.otpResendIntervalSeconds = 0
        let server = try GatePassServer(configuration: configuration, devMode: true, logSink: Log())
        defer { server.stop() }
        try DemoData.seed(store: server.store, now: Date(), timeZone: .current)
        let environment = ["GATEPASS_STATE_DIR": directory + "/state", "GATEPASS_CONNECT_TIMEOUT": "1"]
        let http = LoopbackHTTPClient(port: server.port)
        _ = try http.send("POST", "/api/auth/send-otp", json: ["email": "owner@demo.gatepass"])
        let code = try #require(try http.get("/api/auth/dev-peek-otp?email=owner@demo.gatepass").json?["otp"] as? String)
        #expect(GatePassCLI.main(["gatepass", "login", "--server", "http://127.0.0.1:\(server.port)", "--email",
                                  "owner@demo.gatepass", "--otp", code], terminal: RecordingTerminal(), environment: environment) == 0)

        let terminal = RecordingTerminal()
        let status = Locked<Int32?>(nil)
        let exited = DispatchSemaphore(value: 0)
        let thread = Thread {
            let result = GatePassCLI.main(["gatepass", "events"], terminal: terminal, environment: environment)
            status.withLock { $0 = result }
            exited.signal()
        }
        thread.start()
        func waitUntil(_ condition: () -> Bool) -> Bool { terminal.wait(until: condition) }
        #expect(waitUntil { terminal.stderr.contains("live") })
        #expect(GatePassCLI.main(["gatepass", "walk-in", "--name", "Stream Guest"], terminal: RecordingTerminal(),
                                 environment: environment) == 0)
        #expect(waitUntil { terminal.stdout.contains("notification.new  Walk-in Stream Guest asks to enter") })
        #expect(terminal.stdout.hasPrefix("1  request.created  Stream Guest ("))
        // Logging out ends the session and so the stream; the command says so and exits 1.
        #expect(GatePassCLI.main(["gatepass", "logout"], terminal: RecordingTerminal(), environment: environment) == 0)
        #expect(exited.wait(timeout: .now() + 30) == .success, "the events command exited")
        #expect(status.withLock { $0 } == 1)
        #expect(terminal.stderr.contains("error: "))
    }

    @Test func eventsAnswersHelpAndRefusesUnknownOptions() {
        let help = RecordingTerminal()
        #expect(GatePassCLI.main(["gatepass", "events", "--help"], terminal: help) == 0)
        #expect(help.stdout.contains("USAGE: gatepass events [--scanner] [--json]"))
        #expect(GatePassCLI.main(["gatepass", "events", "--bogus"], terminal: RecordingTerminal()) == 2)
    }
}
