import CurlHTTP
import Foundation
import GatePassCore
import HTTPServer
// The server's request and response (GatePassClient has its own of the same names).
import struct HTTPServer.HTTPRequest
import struct HTTPServer.HTTPResponse
import LoopbackHTTP
import Synchronization
import Testing
@testable import GatePassClient
@testable import GatePassServer

/// Collects server log lines (and keeps them out of the test output).
final class QuietLog: LogSink {
    private let lines = Locked<[String]>([])
    func log(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// A real server on a fixed loopback port that a test can stop and start again (same
/// database, same port), plus a client core over a private state folder.
final class ClientWorld: @unchecked Sendable {
    let directory: String
    let database: String
    private(set) var server: GatePassServer?
    private(set) var port: UInt16 = 0
    let log = QuietLog()

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-client-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        database = directory + "/server.db"
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    func start() throws {
        var configuration = ServerConfiguration()
        configuration.database = database
        configuration.port = Int(port)
        configuration.threads = 4
        configuration.sqliteSynchronous = "NORMAL"
        // Tests log in many times per email; the resend throttle is tested on the server side.
        configuration.otpResendIntervalSeconds = 0
        configuration.otpSendsPerHour = 1000
        let server = try GatePassServer(configuration: configuration, devMode: true, logSink: log)
        self.server = server
        port = server.port
    }

    func stop() {
        server?.stop(grace: .seconds(2))
        server = nil
    }

    var stateDirectory: StateDirectory { StateDirectory(path: directory + "/state") }

    func core(timeout: Duration = .seconds(5), transport: (any HTTPTransport)? = nil,
              directory: StateDirectory? = nil) throws -> ClientCore {
        try ClientCore(directory: directory ?? stateDirectory,
                       transport: transport ?? CurlSession(options: .init(connectTimeout: .seconds(2), requestTimeout: timeout)))
    }

    @discardableResult
    func addUser(_ email: String, role: Role, canScan: Bool = false, organization: String = "Acme") throws -> Profile {
        try Administration.addUser(store: server!.store, email: email, name: "User \(email)", role: role,
                                   organization: organization, canScan: canScan, now: Date())
    }

    /// The dev code for `email`, after asking the server to send one.
    func code(for email: String) throws -> String {
        let client = LoopbackHTTPClient(port: port)
        _ = try client.send("POST", "/api/auth/send-otp", json: ["email": email])
        guard let otp = try client.get("/api/auth/dev-peek-otp?email=\(email)").json?["otp"] as? String else {
            throw ClientTestFailure("no dev code for \(email)")
        }
        return otp
    }

    /// Logs `core` in through the real client path.
    @discardableResult
    func login(_ core: ClientCore, _ email: String, allowPurge: Bool = false) throws -> ClientCore.LoginOutcome {
        try core.login(server: baseURL, email: email, otp: try code(for: email), allowPurge: allowPurge)
    }

    /// A raw login token for test setup (creating visitors and reading history).
    func token(_ email: String) throws -> String {
        let answer = try LoopbackHTTPClient(port: port).send("POST", "/api/auth/verify-otp",
                                                            json: ["email": email, "otp": try code(for: email)])
        guard let token = answer.json?["token"] as? String else { throw ClientTestFailure("login failed: \(answer.text)") }
        return token
    }

    func createVisitor(_ token: String, name: String = "Ana Pop") throws -> (id: String, shortId: String) {
        let answer = try LoopbackHTTPClient(port: port).send("POST", "/api/visitors", token: token, json: ["name": name])
        guard let id = answer.json?["id"] as? String, let shortId = answer.json?["shortId"] as? String else {
            throw ClientTestFailure("create failed: \(answer.text)")
        }
        return (id, shortId)
    }

    /// An admin who may scan, one visitor, and a core logged in through a `FaultProxy` in front
    /// of the server (stopped by the caller: `defer { proxy.stop() }`).
    func guardBehindProxy(timeout: Duration = .seconds(5)) throws
        -> (admin: String, pass: (id: String, shortId: String), proxy: FaultProxy, core: ClientCore) {
        try addUser("guard@acme.test", role: .admin)
        let admin = try token("guard@acme.test")
        let pass = try createVisitor(admin)
        let proxy = try FaultProxy(target: port)
        let proxyPort = try proxy.start()
        let core = try core(timeout: timeout)
        _ = try core.login(server: "http://127.0.0.1:\(proxyPort)", email: "guard@acme.test",
                           otp: try code(for: "guard@acme.test"), allowPurge: false)
        return (admin, pass, proxy, core)
    }

    /// Every scan the server recorded, oldest first.
    func scans(_ token: String) throws -> [[String: Any]] {
        var all: [[String: Any]] = []
        var cursor: String?
        repeat {
            let path = "/api/visitor-scanner/scan-history?limit=500" + (cursor.map { "&cursor=\($0)" } ?? "")
            let page = try LoopbackHTTPClient(port: port).get(path, token: token).json
            all += (page?["items"] as? [[String: Any]]) ?? []
            cursor = page?["nextCursor"] as? String
        } while cursor != nil
        return all.reversed()
    }
}

struct ClientTestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A proxy in front of the real server that can fail on purpose: answer 503, or hold
/// requests (past the client's timeout) until the test releases them.
final class FaultProxy: HTTPResponder, @unchecked Sendable {
    /// `rateLimited`: 429 `RATE_LIMITED` with `Retry-After: 30`, as the server's limits answer.
    enum Mode: Sendable { case pass, serviceUnavailable, rateLimited, hold }
    private let mode = Locked<Mode>(.pass)
    private let forwarded = Atomic<Int>(0)
    /// Signalled once per held request by `releaseHeld`.
    private let release = DispatchSemaphore(value: 0)
    private let heldCount = Atomic<Int>(0)
    /// Signalled as each held request, released, has been answered.
    private let heldAnswered = DispatchSemaphore(value: 0)
    let target: UInt16
    private var server: HTTPServer?

    init(target: UInt16) throws {
        self.target = target
    }

    func start() throws -> UInt16 {
        let server = HTTPServer(configuration: .init(port: 0, threads: 2), responder: self)
        self.server = server
        return try server.start()
    }

    func stop() { server?.stop(grace: .seconds(1)) }
    func set(_ newMode: Mode) { mode.withLock { $0 = newMode } }
    var requestsSeen: Int { forwarded.load(ordering: .relaxed) }

    /// Lets every request held so far go on to the server, and returns once each has been
    /// answered (false if one took longer than `timeout`), so its proxy thread is free again.
    func releaseHeld(timeout: TimeInterval = 30) -> Bool {
        let held = heldCount.exchange(0, ordering: .acquiringAndReleasing)
        for _ in 0..<held { release.signal() }
        return (0..<held).allSatisfy { _ in heldAnswered.wait(timeout: .now() + timeout) == .success }
    }

    func respond(to request: HTTPRequest, reply: @escaping @Sendable (HTTPResponse) -> Void) {
        let held = mode.withLock { $0 } == .hold
        if held {
            heldCount.add(1, ordering: .relaxed)
            release.wait()
        }
        reply(forward(request, held: held))
        if held { heldAnswered.signal() }
    }

    private func forward(_ request: HTTPRequest, held: Bool) -> HTTPResponse {
        forwarded.add(1, ordering: .relaxed)
        if !held, mode.withLock({ $0 }) == .serviceUnavailable {
            return HTTPResponse(status: 503, headers: [("Content-Type", "application/json")],
                                body: Array(#"{"error":{"code":"INTERNAL","message":"injected failure"}}"#.utf8))
        }
        if !held, mode.withLock({ $0 }) == .rateLimited {
            return HTTPResponse(status: 429, headers: [("Content-Type", "application/json"), ("Retry-After", "30")],
                                body: Array(#"{"error":{"code":"RATE_LIMITED","message":"too many check-ins"}}"#.utf8))
        }
        var headers = request.headers.filter { ["authorization", "content-type", "idempotency-key", "accept"].contains($0.key) }
        headers["Connection"] = "close"
        let query = request.query.isEmpty ? "" : "?" + request.query.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
        do {
            let answer = try LoopbackHTTPClient(port: target).send(request.method, request.path + query, headers: headers,
                                                                   body: request.method == "POST" ? request.body : nil)
            return HTTPResponse(status: answer.status,
                                headers: answer.headers.filter { $0.key != "content-length" && $0.key != "connection" }
                                    .map { (name: $0.key, value: $0.value) },
                                body: answer.body)
        } catch {
            return HTTPResponse(status: 502, body: Array("proxy: \(error)".utf8))
        }
    }
}
