import Foundation
import LoopbackHTTP
import Testing

/// Issue 9, item 4: the database, its WAL and shm, the secret and the client's state file are
/// private from their first byte. Observed at creation: the real executable runs under a
/// umask of 0 (so nothing but the mode given to `open` protects a file) inside strace, and
/// the calls that created each file are read back — the mode they passed, O_EXCL where we
/// create the file ourselves, and no chmod or umask call at all.
@Suite(.serialized) struct StateFileModeTests {
    struct Trace {
        var lines: [String]

        /// The first successful call that created `path` (open/openat with O_CREAT).
        func creation(of path: String) -> String? {
            lines.first { line in
                line.contains("\"\(path)\"") && line.contains("O_CREAT") && !line.contains("= -1")
                    && (line.contains("openat(") || line.contains("open("))
            }
        }

        /// Calls that change modes or the umask afterwards.
        var modeChanges: [String] {
            lines.filter { $0.contains("chmod(") || $0.contains("chmodat(") || $0.contains("umask(") }
        }
    }

    static let traced = "open,openat,creat,chmod,fchmod,fchmodat,umask"

    /// `arguments` run as `gatepass …` under umask 0, traced.
    static func tracedProcess(_ arguments: [String], trace: String, environment: [String: String] = [:]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "umask 000 && exec strace -f -qq -o \"$0\" -e trace=\(traced) \"$@\"", trace,
                             ServeProcessTests.executable.path] + arguments
        var all = ProcessInfo.processInfo.environment
        all.merge(environment) { $1 }
        process.environment = all
        return process
    }

    static func mode(_ path: String) -> mode_t? {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_mode & 0o7777 : nil
    }

    @Test func theServersFilesAreCreatedPrivate() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), ".ci/install-packages installs strace")
        let directory = temporaryPath("modes")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = directory + "/gatepass.db"
        let tracePath = directory + "/trace.txt"
        let process = try Self.tracedProcess(["serve", "--port", "0", "--db", database], trace: tracePath)
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = Pipe()
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        var firstLine = [UInt8]()
        while true {
            let byte = stdout.fileHandleForReading.readData(ofLength: 1)
            guard let value = byte.first, value != 10 else { break }
            firstLine.append(value)
        }
        let line = String(decoding: firstLine, as: UTF8.self)
        let port = try #require(UInt16(line.split(separator: ":").last ?? ""), "first line: \(line)")
        let client = LoopbackHTTPClient(port: port)
        #expect(try client.send("POST", "/api/auth/send-otp", json: ["email": "someone@acme.test"]).status == 202)
        client.disconnect()
        // While it runs: every file exists, mode 0600 under a umask of 0.
        for path in [database, database + "-wal", database + "-shm", database + ".secret"] {
            #expect(Self.mode(path) == 0o600, "\(path): \(Self.mode(path).map { String($0, radix: 8) } ?? "missing")")
        }
        // Stop the server (strace's only child, started by this test) and let strace finish the trace.
        let children = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/task/\(process.processIdentifier)/children",
                                     encoding: .utf8)) ?? ""
        let server = try #require(Int32(children.split(separator: " ").first ?? ""), "the traced server's pid")
        kill(server, SIGTERM)
        process.waitUntilExit()
        let trace = Trace(lines: try String(contentsOfFile: tracePath, encoding: .utf8).split(separator: "\n").map(String.init))
        for (path, exclusive) in [(database, true), (database + ".secret", true), (database + "-wal", false), (database + "-shm", false)] {
            let created = try #require(trace.creation(of: path), "no creating open of \(path)")
            #expect(created.contains(", 0600)"), "\(created)")
            if exclusive { #expect(created.contains("O_EXCL"), "\(created)") }
        }
        #expect(trace.modeChanges.isEmpty, "\(trace.modeChanges)")
    }

    /// `serve` refuses a database its group or others may read, naming it, as it refuses such
    /// a secret; a command that reads a copy (`audit verify --db`) reads a 0644 one.
    @Test func serveRefusesASharedDatabaseAndCommandsReadACopy() throws {
        try #require(FileManager.default.isExecutableFile(atPath: ServeProcessTests.executable.path))
        let directory = temporaryPath("shared-db")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = directory + "/gatepass.db"
        let made = try ServeProcessTests.runToEnd(["user", "add", "--db", database, "--email", "owner@acme.test", "--name", "Olga Owner",
                                 "--role", "OWNER", "--organization", "Acme"])
        #expect(made.status == 0, "\(made.err)")
        #expect(chmod(database, 0o644) == 0)
        let served = try ServeProcessTests.runToEnd(["serve", "--port", "0", "--db", database])
        #expect(served.status == 1, "\(served.err)")
        #expect(served.err.contains("\(database) has mode 644") && served.err.contains("chmod 600 \(database)"), "\(served.err)")
        #expect(Self.mode(database) == 0o644, "the refusal changes nothing")
        let verified = try ServeProcessTests.runToEnd(["audit", "verify", "--db", database])
        #expect(verified.status == 0, "\(verified.err)")
    }

    @Test func theClientStateFileIsCreatedPrivate() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), ".ci/install-packages installs strace")
        let directory = temporaryPath("client-modes")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = directory + "/state"
        let tracePath = directory + "/trace.txt"
        let process = try Self.tracedProcess(["outbox", "list"], trace: tracePath, environment: ["GATEPASS_STATE_DIR": state])
        process.standardOutput = Pipe()
        process.standardError = Pipe()
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let trace = Trace(lines: try String(contentsOfFile: tracePath, encoding: .utf8).split(separator: "\n").map(String.init))
        let created = try #require(trace.creation(of: state + "/state.db"), "no creating open of state.db")
        #expect(created.contains("O_EXCL") && created.contains(", 0600)"), "\(created)")
        for suffix in ["-wal", "-shm"] {
            if let wal = trace.creation(of: state + "/state.db" + suffix) { #expect(wal.contains(", 0600)"), "\(wal)") }
        }
        #expect(Self.mode(state + "/state.db") == 0o600)
        #expect(trace.modeChanges.filter { !$0.contains("\"\(state)\"") }.isEmpty, "\(trace.modeChanges)")
    }
}
