import Foundation
import GatePassTestSupport
import LocalPostgres
import LoopbackHTTP
import Synchronization
import Testing
import GatePassCore

/// Two real `gatepass serve` processes on one PostgreSQL database, as behind a load balancer:
/// one killed with SIGKILL in the middle of check-ins loses none it answered, and the other
/// serves every one of them.
@Suite(.enabled(if: PostgresCluster.isAvailable, Comment(rawValue: PostgresCluster.unavailableReason)))
struct SharedDatabaseKillTests {
    /// A `gatepass serve` process with `arguments`, and the port its first line names.
    static func serve(_ arguments: [String]) throws -> (Process, UInt16) {
        let process = Process()
        process.executableURL = ServeProcessTests.executable
        process.arguments = ["serve", "--port", "0", "--dev"] + arguments
        process.environment = ["PATH": "/usr/bin:/bin"].merging(sanitizerEnvironment()) { $1 }
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        let line = ServeProcessTests.firstLine(of: stdout)
        let prefix = "listening on http://127.0.0.1:"
        guard line.hasPrefix(prefix), let port = UInt16(line.dropFirst(prefix.count)) else {
            process.terminate()
            throw TestFailureText("serve printed \(line.debugDescription)")
        }
        return (process, port)
    }

    @Test func killingOneInstanceLosesNothingItAnswered() throws {
        let binary = ServeProcessTests.executable
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the gatepass executable first")
        let url = try PostgresCluster.shared().makeDatabase()
        let folder = temporaryPath("kill-one")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let configuration = folder + "/server.json"
        let settings: [String: Any] = ["database": url, "secretFile": folder + "/gatepass.secret"]
        try JSONSerialization.data(withJSONObject: settings).write(to: URL(fileURLWithPath: configuration))

        // A from a configuration file, B from the command line: the same database and secret.
        let (a, portA) = try Self.serve(["--config", configuration, "--demo-data"])
        defer { if a.isRunning { kill(a.processIdentifier, SIGKILL) } }
        let (b, portB) = try Self.serve(["--database", url, "--secret-file", folder + "/gatepass.secret"])
        defer { if b.isRunning { b.terminate(); b.waitUntilExit() } }

        // The demo's OWNER logs in on A; its scanner token and 40 passes are made there.
        let http = LoopbackHTTPClient(port: portA)
        _ = try http.send("POST", "/api/auth/send-otp", json: ["email": "owner@demo.gatepass"])
        let otp = try #require(try http.get("/api/auth/dev-peek-otp?email=owner@demo.gatepass").json?["otp"] as? String)
        let owner = try #require(try http.send("POST", "/api/auth/verify-otp",
                                               json: ["email": "owner@demo.gatepass", "otp": otp]).json?["token"] as? String)
        let scanner = try #require(try http.send("POST", "/api/visitor-scanner/token", token: owner,
                                                 json: [String: Any]()).json?["scannerToken"] as? String)
        var shortIds: [String] = []
        for index in 0..<40 {
            let visitor = try http.send("POST", "/api/visitors", token: owner, json: ["name": "Crash Guest \(index)"])
            shortIds.append(try #require(visitor.json?["shortId"] as? String))
        }
        http.disconnect()

        // Four clients check passes in on A; A is killed once ten answers are in.
        let answered = Locked<[String: String]>([:]) // short id → scan id
        let tenAnswered = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for lane in 0..<4 {
            done.enter()
            let mine = shortIds.enumerated().filter { $0.offset % 4 == lane }.map(\.element)
            Thread {
                defer { done.leave() }
                let client = LoopbackHTTPClient(port: portA)
                for shortId in mine {
                    guard let answer = try? client.send("POST", "/api/visitor-scanner/checkin", token: scanner,
                                                        json: ["shortId": shortId]),
                          answer.status == 200, let scanId = answer.json?["scanId"] as? String
                    else { return }
                    let count = answered.withLock { all in
                        all[shortId] = scanId
                        return all.count
                    }
                    if count == 10 { tenAnswered.signal() }
                }
            }.start()
        }
        #expect(tenAnswered.wait(timeout: .now() + 60) == .success)
        kill(a.processIdentifier, SIGKILL)
        a.waitUntilExit()
        done.wait()

        // B serves every check-in A answered, and nothing twice.
        let survivor = LoopbackHTTPClient(port: portB)
        let history = try survivor.get("/api/visitor-scanner/scan-history?limit=500", token: owner)
        #expect(history.status == 200, "\(history.text)")
        let items = (history.json?["items"] as? [[String: Any]]) ?? []
        let scanIds = Set(items.compactMap { $0["id"] as? String })
        let confirmed = answered.withLock { $0 }
        #expect(confirmed.count >= 10)
        for (shortId, scanId) in confirmed {
            #expect(scanIds.contains(scanId), "the answered check-in of \(shortId) (scan \(scanId)) is missing on B")
        }
        #expect(items.count == scanIds.count)
    }
}
