import Foundation
import GatePassCore
import LoopbackHTTP
import Synchronization
import Testing
@testable import GatePassServer

/// A clock tests move by hand (OTP expiry, token lifetime, validity windows). Behind `Locked`
/// (a pthread mutex ThreadSanitizer knows), not `Mutex`: the server's own threads read it too.
final class TestClock: WallClock {
    private let current: Locked<Date>
    init(_ start: Date = Date()) { current = Locked(start) }
    func now() -> Date { current.withLock { $0 } }
    func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
    func set(_ date: Date) { current.withLock { $0 = date } }
}

/// Collects log lines so tests can check what was (and was not) logged; from any thread (HTTP
/// workers, the mail worker), so behind `Locked`, which ThreadSanitizer sees.
final class RecordingLog: LogSink {
    private let lines = Locked<[String]>([])
    /// Signalled after every line, so a test can wait for one.
    let changes = ChangeSignal()
    func log(_ line: String) {
        lines.withLock { $0.append(line) }
        changes.signal()
    }
    var all: [String] { lines.withLock { $0 } }
}

/// A temporary folder, removed after `body`.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-test-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// A running server on an ephemeral loopback port with its own database, and helpers to
/// act as its users.
struct TestServer {
    let server: GatePassServer
    let clock: TestClock
    let log: RecordingLog
    let directory: String

    var port: UInt16 { server.port }
    var store: ServerDatabase { server.store }

    func client() -> LoopbackHTTPClient { LoopbackHTTPClient(port: port) }

    /// Adds a user (creating the organization) straight in the database.
    @discardableResult
    func addUser(_ email: String, role: Role, organization: String = "Acme", canScan: Bool = false,
                 name: String = "Test User") throws -> Profile {
        try Administration.addUser(store: store, email: email, name: name, role: role, organization: organization,
                                   canScan: canScan, now: clock.now())
    }

    /// Logs in through the real OTP routes (dev mode lets the test read the code).
    func login(_ email: String, client: LoopbackHTTPClient? = nil) throws -> String {
        let http = client ?? self.client()
        let sent = try http.send("POST", "/api/auth/send-otp", json: ["email": email])
        guard sent.status == 202 else { throw TestFailure("send-otp answered \(sent.status): \(sent.text)") }
        let peek = try http.get("/api/auth/dev-peek-otp?email=\(email)")
        guard let otp = peek.json?["otp"] as? String else { throw TestFailure("no dev code: \(peek.text)") }
        let verified = try http.send("POST", "/api/auth/verify-otp", json: ["email": email, "otp": otp])
        guard verified.status == 200, let token = verified.json?["token"] as? String else {
            throw TestFailure("verify-otp answered \(verified.status): \(verified.text)")
        }
        // The resend throttle is per email; tests that log in twice move the clock past it.
        clock.advance(by: 31)
        return token
    }

    /// A scanner token made with `loginToken` (default checkpoint unless one is given).
    func scannerToken(_ loginToken: String, checkpointId: String? = nil) throws -> String {
        var body: [String: Any] = [:]
        if let checkpointId { body["checkpointId"] = checkpointId }
        let response = try client().send("POST", "/api/visitor-scanner/token", token: loginToken, json: body)
        guard response.status == 201, let token = response.json?["scannerToken"] as? String else {
            throw TestFailure("scanner token answered \(response.status): \(response.text)")
        }
        return token
    }

    /// Creates a visitor through the API as `token` (an OWNER or ADMIN).
    func createVisitor(_ token: String, _ fields: [String: Any] = [:]) throws -> [String: Any] {
        var body: [String: Any] = ["name": "Ana Pop"]
        body.merge(fields) { $1 }
        let response = try client().send("POST", "/api/visitors", token: token, json: body)
        guard response.status == 201, let visitor = response.json else {
            throw TestFailure("create visitor answered \(response.status): \(response.text)")
        }
        return visitor
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Starts a server for `body` and stops it afterwards, whatever happens.
func withTestServer<T>(devMode: Bool = true, configure: (inout ServerConfiguration) -> Void = { _ in },
                       _ body: (TestServer) throws -> T) throws -> T {
    try withTemporaryDirectory { directory in
        var configuration = ServerConfiguration()
        configuration.database = directory + "/gatepass.db"
        configuration.port = 0
        configuration.threads = 8
        // Tests do not need power-cut durability; FULL is covered by the default configuration.
        configuration.sqliteSynchronous = "NORMAL"
        configure(&configuration)
        let clock = TestClock(Timestamp.parse("2026-11-29T12:00:00Z")!)
        let log = RecordingLog()
        let server = try GatePassServer(configuration: configuration, devMode: devMode, clock: clock, logSink: log)
        defer { server.stop(grace: .seconds(2)) }
        return try body(TestServer(server: server, clock: clock, log: log, directory: directory))
    }
}
