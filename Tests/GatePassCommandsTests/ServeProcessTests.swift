import Foundation
import LoopbackHTTP
import GatePassCore
import Testing

/// Runs the real `gatepass` executable, as an operator would.
@Suite struct ServeProcessTests {
    static var executable: URL {
        // Tests run from .build/<configuration>/GatePassPackageTests.xctest; the binary is beside it.
        var url = Bundle.main.bundleURL
        while url.pathComponents.count > 1 && !FileManager.default.fileExists(atPath: url.appendingPathComponent("gatepass").path) {
            url.deleteLastPathComponent()
        }
        return url.appendingPathComponent("gatepass")
    }

    /// The first line a process prints, read byte by byte so nothing after it is consumed early.
    static func firstLine(of output: Pipe) -> String {
        var line = [UInt8]()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            guard let value = byte.first, value != 10 else { break }
            line.append(value)
        }
        return String(decoding: line, as: UTF8.self)
    }

    @Test func firstLineIsTheURLAndSIGTERMClosesCleanly() throws {
        let binary = Self.executable
        try #require(FileManager.default.isExecutableFile(atPath: binary.path),
                     "build the gatepass executable first (swift build --build-tests)")
        let directory = temporaryPath("serve")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = directory + "/gatepass.db"

        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve", "--port", "0", "--db", database, "--dev", "--demo-data"]
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        let line = Self.firstLine(of: stdout)
        let prefix = "listening on http://127.0.0.1:"
        #expect(line.hasPrefix(prefix))
        let port = try #require(UInt16(line.dropFirst(prefix.count)))

        let client = LoopbackHTTPClient(port: port)
        #expect(try client.get("/api/healthz").status == 200)
        let sent = try client.send("POST", "/api/auth/send-otp", json: ["email": "owner@demo.gatepass"])
        #expect(sent.status == 202)
        client.disconnect()

        // The secret beside the database is private.
        let secretAttributes = try FileManager.default.attributesOfItem(atPath: database + ".secret")
        #expect((secretAttributes[.posixPermissions] as? Int) == 0o600)

        process.interrupt() // SIGINT
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let log = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(log.contains("POST /api/auth/send-otp 202"))
        #expect(log.contains("stopped"))
        let rest = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(rest.contains("owner@demo.gatepass  OWNER"))
        // A clean close checkpoints the WAL into the database file.
        let walSize = (try? FileManager.default.attributesOfItem(atPath: database + "-wal")[.size] as? Int) ?? 0
        #expect(walSize == 0)
    }

    @Test func sigtermStopsTheServerWithStatusZero() throws {
        let binary = Self.executable
        try #require(FileManager.default.isExecutableFile(atPath: binary.path))
        let directory = temporaryPath("sigterm")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve", "--port", "0", "--db", directory + "/g.db"]
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = Pipe()
        try process.run()
        _ = stdout.fileHandleForReading.readData(ofLength: 20) // wait until it listens
        process.terminate() // SIGTERM
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
    }

    /// Issue 15: the request log is buffered (flushed every 100 ms); a SIGTERM right after a
    /// burst of requests still leaves every request's line in the log, each whole.
    @Test func sigtermRightAfterABurstLosesNoLogLine() throws {
        let binary = Self.executable
        try #require(FileManager.default.isExecutableFile(atPath: binary.path))
        let directory = temporaryPath("sigterm-log")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let logPath = directory + "/stderr.log"
        #expect(FileManager.default.createFile(atPath: logPath, contents: nil))
        let logFile = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve", "--port", "0", "--db", directory + "/g.db"]
        process.environment = ["PATH": "/usr/bin:/bin"].merging(sanitizerEnvironment()) { $1 }
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = logFile
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let line = Self.firstLine(of: stdout)
        let port = try #require(UInt16(line.dropFirst("listening on http://127.0.0.1:".count)))
        let requests = 600
        let client = LoopbackHTTPClient(port: port)
        for _ in 0..<requests { #expect(try client.get("/api/healthz").status == 200) }
        client.disconnect()
        process.terminate() // SIGTERM at once: most of the burst is still in the buffer
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        try logFile.close()
        let lines = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("GET /api/healthz 200 ") && $0.hasSuffix("ms") }.count == requests)
        #expect(lines.last == "stopped", "the stop's own last line is there too")
    }

    /// Issue 9 item 2: SIGTERM while a push-test waits 30 s for a device that never connects:
    /// the push-test is answered 503 UNAVAILABLE, the server exits 0, the WAL is checkpointed.
    @Test func sigtermDuringAThirtySecondPushTestAnswersItAndExitsZero() throws {
        let binary = Self.executable
        try #require(FileManager.default.isExecutableFile(atPath: binary.path))
        let directory = temporaryPath("sigterm-push")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = directory + "/g.db"
        let add = Process()
        add.executableURL = binary
        add.arguments = ["user", "add", "--db", database, "--email", "owner@site.test", "--name", "Owner", "--role", "OWNER",
                         "--organization", "Site"]
        add.standardOutput = Pipe()
        try add.run()
        add.waitUntilExit()
        try #require(add.terminationStatus == 0)

        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve", "--port", "0", "--db", database, "--dev"]
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let port = try #require(UInt16(Self.firstLine(of: stdout).split(separator: ":").last ?? ""))
        let client = LoopbackHTTPClient(port: port)
        _ = try client.send("POST", "/api/auth/send-otp", json: ["email": "owner@site.test"])
        let code = try #require(try client.get("/api/auth/dev-peek-otp?email=owner@site.test").json?["otp"] as? String)
        let login = try client.send("POST", "/api/auth/verify-otp", json: ["email": "owner@site.test", "otp": code])
        let token = try #require(login.json?["token"] as? String)
        let registered = try client.send("POST", "/api/visitors/devices/register", token: token,
                                         json: ["token": "never-connected", "platform": "console"])
        try #require(registered.status / 100 == 2, "\(registered.text)")

        let answer = Locked<LoopbackHTTPClient.Response?>(nil)
        let answered = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let response = try? LoopbackHTTPClient(port: port, timeoutSeconds: 60)
                .send("POST", "/api/admin/push-test", token: token, json: ["waitSeconds": 30])
            answer.withLock { $0 = response }
            answered.signal()
        }
        // The push-test has written its delivery (pending) and is waiting for the device.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let log = try client.get("/api/admin/push-deliveries?token=never-connected", token: token)
            if (log.json?["items"] as? [Any])?.isEmpty == false { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        client.disconnect()
        process.terminate() // SIGTERM
        #expect(answered.wait(timeout: .now() + 60) == .success, "the push-test was answered")
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        #expect(answer.withLock { $0?.status } == 503)
        // 503, not the wait's own 200: the stop answered the push-test rather than waiting it out.
        #expect(answer.withLock { $0?.text ?? "" }.contains("UNAVAILABLE"))
        let walSize = (try? FileManager.default.attributesOfItem(atPath: database + "-wal")[.size] as? Int) ?? 0
        #expect(walSize == 0)
    }

    /// Runs `gatepass` with `arguments` to its end: status, stdout, stderr.
    static func runToEnd(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let out = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let err = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, out, err)
    }

    /// Issue 27: a log with entries and no head (the newest entries may have gone with it)
    /// stops `serve` and the `--db` commands that write the log; `--recreate-audit-head`
    /// starts, saying so in the log and in the audit log.
    @Test func aMissingHeadStopsTheStartUntilTheFlagRecreatesIt() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.executable.path))
        let directory = temporaryPath("audit-head")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = directory + "/g.db"
        let added = try Self.runToEnd(["user", "add", "--db", database, "--email", "o@acme.test", "--name", "O",
                                       "--role", "OWNER", "--organization", "Acme"])
        #expect(added.status == 0, "\(added.err)")
        #expect(unlink(database + ".audit-head") == 0)

        let refused = try Self.runToEnd(["serve", "--port", "0", "--db", database])
        #expect(refused.status == 1 && refused.err.contains("is missing") && refused.err.contains("--recreate-audit-head"),
                "\(refused.err)")
        let refusedAdd = try Self.runToEnd(["checkpoint", "add", "--db", database, "--organization", "Acme", "--name", "Side"])
        #expect(refusedAdd.status == 1 && refusedAdd.err.contains("is missing"), "\(refusedAdd.err)")

        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["serve", "--port", "0", "--db", database, "--recreate-audit-head"]
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        #expect(Self.firstLine(of: stdout).hasPrefix("listening on http://127.0.0.1:"))
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let log = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(log.contains("audit head re-created at entry 2 (audit-head.recreate)"), "\(log)")
        let verified = try Self.runToEnd(["audit", "verify", "--db", database])
        #expect(verified.status == 0 && verified.out.contains("intact (2 entries)"), "\(verified.out) \(verified.err)")
    }
}
