import CurlHTTP
import Foundation
import GatePassClient
import GatePassCore
import LoopbackHTTP
import Synchronization
import Testing
@testable import GatePassServer

/// kill -9 of a draining `gatepass outbox drain`, then another drain: every queued
/// check-in is applied exactly once (checked on the server's scan history).
@Suite struct OutboxCrashTests {
    final class Log: LogSink { func log(_ line: String) {} }

    @Test func killNineWhileDrainingLosesNothingAndAppliesNothingTwice() throws {
        let binary = ServeProcessTests.executable
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the gatepass executable first")
        let directory = temporaryPath("crash")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        var configuration = ServerConfiguration()
        configuration.database = directory + "/server.db"
        configuration.port = 0
        configuration.threads = 4
        configuration.otpResendIntervalSeconds = 0
        var server = try GatePassServer(configuration: configuration, devMode: true, logSink: Log())
        configuration.port = Int(server.port)
        let port = server.port
        _ = try Administration.addUser(store: server.store, email: "guard@acme.test", name: "Guard", role: .admin,
                                   organization: "Acme", canScan: true, now: Date())
        let http = LoopbackHTTPClient(port: port)
        func code() throws -> String {
            _ = try http.send("POST", "/api/auth/send-otp", json: ["email": "guard@acme.test"])
            return try #require(try http.get("/api/auth/dev-peek-otp?email=guard@acme.test").json?["otp"] as? String)
        }
        let admin = try #require(try http.send("POST", "/api/auth/verify-otp",
                                               json: ["email": "guard@acme.test", "otp": try code()]).json?["token"] as? String)
        let count = 300
        var shortIds: [String] = []
        for index in 0..<count {
            let visitor = try http.send("POST", "/api/visitors", token: admin, json: ["name": "Visitor \(index)"])
            shortIds.append(try #require(visitor.json?["shortId"] as? String))
        }
        http.disconnect()

        let state = StateDirectory(path: directory + "/state")
        let core = try ClientCore(directory: state, transport: CurlSession(options: .init(connectTimeout: .seconds(1))))
        _ = try core.login(server: "http://127.0.0.1:\(port)", email: "guard@acme.test", otp: try code(), allowPurge: false)
        server.stop()
        for shortId in shortIds {
            guard case .queued = try core.checkIn(code: shortId, confirmApprovalRequest: false) else {
                Issue.record("expected the check-in of \(shortId) to queue"); return
            }
        }
        #expect(try core.store.outboxCount() == count)
        core.store.close()

        server = try GatePassServer(configuration: configuration, devMode: true, logSink: Log())
        defer { server.stop() }
        func scansOnServer() throws -> Int {
            try server.store.readConnection { db in Int(try db.scalarInt("SELECT COUNT(*) FROM scans") ?? 0) }
        }
        func drainProcess() throws -> Process {
            let process = Process()
            process.executableURL = binary
            process.arguments = ["outbox", "drain"]
            process.environment = ["GATEPASS_STATE_DIR": state.path, "PATH": "/usr/bin:/bin"].merging(sanitizerEnvironment()) { $1 }
            process.standardOutput = Pipe()
            process.standardError = Pipe()
            try process.run()
            return process
        }

        // Kill the first drain part-way through.
        let first = try drainProcess()
        let deadline = Date().addingTimeInterval(60)
        while try scansOnServer() < 40 && Date() < deadline && first.isRunning { Thread.sleep(forTimeInterval: 0.005) }
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        #expect(first.terminationReason == .uncaughtSignal)
        let appliedBeforeKill = try scansOnServer()
        #expect(appliedBeforeKill > 0 && appliedBeforeKill < count, "the kill must land mid-drain (\(appliedBeforeKill) applied)")

        // The second drain finishes the job.
        let second = try drainProcess()
        second.waitUntilExit()
        #expect(second.terminationStatus == 0)

        let rows = try server.store.readConnection { db in
            try db.query("SELECT short_id, result, COUNT(*) FROM scans GROUP BY short_id, result") {
                (shortId: try $0.string(0), result: try $0.string(1), times: try $0.int(2))
            }
        }
        #expect(rows.count == count)
        #expect(rows.allSatisfy { $0.result == "CHECKED_IN" && $0.times == 1 })
        #expect(Set(rows.map(\.shortId)) == Set(shortIds))
        let after = try ClientDatabase(directory: state)
        #expect(try after.outboxCount() == 0)
        #expect(try after.deadLetters().isEmpty)
    }
}
