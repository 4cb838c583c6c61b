import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// An open `GET /api/events` that presents a device token, read just far enough to know it is
/// connected (the console and kiosk stream this way).
final class OpenEventStream {
    private let socket: Int32

    init(port: UInt16, token: String, deviceToken: String) throws {
        socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw CommandFailure("cannot connect") }
        let request = "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nX-Device-Token: \(deviceToken)\r\n\r\n"
        _ = Array(request.utf8).withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 5000) > 0 else { throw CommandFailure("no answer") }
        let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        guard count > 0, String(decoding: buffer[0..<count], as: UTF8.self).hasPrefix("HTTP/1.1 200") else {
            throw CommandFailure("the stream was refused: \(String(decoding: buffer[0..<max(0, count)], as: UTF8.self))")
        }
    }

    func close() { Foundation.close(socket) }
}

@Suite(.serialized) struct PushCommandTests {
    final class Log: LogSink { func log(_ line: String) {} }

    struct Setup {
        var server: GatePassServer
        var environment: [String: String]
        var database: String
        var url: String { "http://127.0.0.1:\(server.port)" }

        func gatepass(_ arguments: String...) -> (status: Int32, out: String, err: String) { gatepass(arguments) }

        func gatepass(_ arguments: [String]) -> (status: Int32, out: String, err: String) {
            let terminal = RecordingTerminal()
            let status = GatePassCLI.main(["gatepass"] + arguments, terminal: terminal, environment: environment)
            return (status, terminal.stdout, terminal.stderr)
        }

        /// Logs the owner in on this device (which registers its device token) and returns
        /// a second login token and that device token.
        func ownerDevice() throws -> (token: String, device: String) {
            let http = LoopbackHTTPClient(port: server.port)
            _ = try http.send("POST", "/api/auth/send-otp", json: ["email": "owner@demo.gatepass"])
            let code = try #require(try http.get("/api/auth/dev-peek-otp?email=owner@demo.gatepass").json?["otp"] as? String)
            let login = gatepass("login", "--server", url, "--email", "owner@demo.gatepass", "--otp", code)
            guard login.status == 0 else { throw CommandFailure(login.err) }
            let whoami = gatepass("whoami", "--json")
            let device = try #require((try JSONSerialization.jsonObject(with: Data(whoami.out.utf8)) as? [String: Any])?["deviceToken"] as? String)
            _ = try http.send("POST", "/api/auth/send-otp", json: ["email": "owner@demo.gatepass"])
            let second = try #require(try http.get("/api/auth/dev-peek-otp?email=owner@demo.gatepass").json?["otp"] as? String)
            let answer = try http.send("POST", "/api/auth/verify-otp", json: ["email": "owner@demo.gatepass", "otp": second])
            return (try #require(answer.json?["token"] as? String), device)
        }

        /// Waits (30 s only catches a hang) until the server holds no event stream: the signal
        /// that a closed stream's device counts as not connected.
        func streamClosed() -> Bool {
            server.application.eventHub.changes.wait { server.application.eventHub.streamCount == 0 }
        }
    }

    func withSetup(_ body: (Setup) throws -> Void) throws {
        let directory = temporaryPath("push-cli")
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
        try body(Setup(server: server, environment: ["GATEPASS_STATE_DIR": directory + "/state", "GATEPASS_CONNECT_TIMEOUT": "1"],
                       database: configuration.database))
    }

    /// A delivery log cut off by `--limit` says so on stderr (the whole log does not), with
    /// `--json` too: its plain array of rows has no cursor to say it.
    func expectTheNoteOnACutOffLog(_ setup: Setup, _ source: [String]) throws {
        let one = setup.gatepass(["push-deliveries"] + source + ["--limit", "1"])
        #expect(one.status == 0, "\(one.err)")
        #expect(one.out.split(separator: "\n").count == 1, "\(one.out)")
        #expect(one.err == "more deliveries than the 1 shown; raise --limit (at most 500)")
        let whole = setup.gatepass(["push-deliveries"] + source + ["--limit", "500"])
        #expect(whole.out.split(separator: "\n").count >= 2 && whole.err.isEmpty, "\(whole.err)")
        let json = setup.gatepass(["push-deliveries"] + source + ["--limit", "1", "--json"])
        #expect(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [[String: Any]] != nil)
        #expect(json.err == one.err)
    }

    @Test func pushTestThroughTheServerReportsConnectedThenNotConnected() throws {
        try withSetup { setup in
            let (token, device) = try setup.ownerDevice()
            let stream = try OpenEventStream(port: setup.server.port, token: token, deviceToken: device)
            let connected = setup.gatepass("push-test", "--wait", "3")
            #expect(connected.status == 0, "\(connected.err)")
            #expect(connected.out == "\(device)  [owner@demo.gatepass, console]  delivered")
            stream.close()
            #expect(setup.streamClosed(), "the server has dropped the closed stream")
            let gone = setup.gatepass("push-test", "--server", setup.url, "--token", device, "--wait", "1", "--json")
            #expect(gone.status == 0, "\(gone.err)")
            let outcomes = try #require(try JSONSerialization.jsonObject(with: Data(gone.out.utf8)) as? [[String: Any]])
            #expect(outcomes.count == 1 && outcomes.first?["status"] as? String == "not connected")
            // The delivery log shows both tests (and their notification.new companions).
            let log = setup.gatepass("push-deliveries", "--token", device, "--json")
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(log.out.utf8)) as? [[String: Any]])
            #expect(rows.filter { $0["kind"] as? String == "push.test" }.map { $0["status"] as? String } == ["pending", "delivered"])
            try expectTheNoteOnACutOffLog(setup, ["--server", setup.url, "--token", device])
        }
    }

    @Test func pushTestOnTheDatabaseFileIsDeliveredByTheRunningServer() throws {
        try withSetup { setup in
            let (token, device) = try setup.ownerDevice()
            let stream = try OpenEventStream(port: setup.server.port, token: token, deviceToken: device)
            let connected = setup.gatepass("push-test", "--db", setup.database, "--wait", "5")
            #expect(connected.status == 0 && connected.out.hasSuffix("delivered"), "\(connected.out) \(connected.err)")
            stream.close()
            #expect(setup.streamClosed(), "the server has dropped the closed stream")
            let gone = setup.gatepass("push-test", "--db", setup.database, "--wait", "1")
            #expect(gone.status == 0 && gone.out.hasSuffix("not connected"), "\(gone.out) \(gone.err)")
            let rows = setup.gatepass("push-deliveries", "--db", setup.database, "--token", device)
            #expect(rows.status == 0 && rows.out.contains("push.test  delivered") && rows.out.contains("push.test  pending"))
            try expectTheNoteOnACutOffLog(setup, ["--db", setup.database, "--token", device])
            let unknown = setup.gatepass("push-test", "--db", setup.database, "--token", "nobody", "--wait", "0")
            #expect(unknown.status == 1 && unknown.out == "nobody  error (this token is not registered)")
        }
    }

    @Test func badArgumentsAreUsageErrors() throws {
        #expect(GatePassCLI.main(["gatepass", "push-test", "--db", "a", "--server", "b"], terminal: RecordingTerminal()) == 2)
        #expect(GatePassCLI.main(["gatepass", "push-test", "--wait", "forever"], terminal: RecordingTerminal()) == 2)
        #expect(GatePassCLI.main(["gatepass", "push-test", "--wait", "31"], terminal: RecordingTerminal()) == 2)
        #expect(GatePassCLI.main(["gatepass", "push-deliveries"], terminal: RecordingTerminal()) == 2)
        let missing = RecordingTerminal()
        #expect(GatePassCLI.main(["gatepass", "push-test", "--db", temporaryPath("none.db")], terminal: missing) == 1)
        #expect(missing.stderr.contains("no database at"))
        for name in ["push-test", "push-deliveries"] {
            let terminal = RecordingTerminal()
            #expect(GatePassCLI.main(["gatepass", name, "--help"], terminal: terminal) == 0)
            #expect(terminal.stdout.contains("USAGE: gatepass \(name)"))
        }
    }
}
