import Foundation
import GatePassCore
import GatePassScanner
import LoopbackHTTP
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// `gatepass demo`: the demo passes, the arrivals, the folder, and the whole thing in tmux.
@Suite(.serialized) struct DemoCommandTests {
    final class Log: LogSink { func log(_ line: String) {} }

    /// A demo server in a temporary folder (development mode: mail goes to `<folder>/mail`).
    private func withDemoServer(_ body: (GatePassServer, String) throws -> Void) throws {
        let directory = temporaryPath("demo-server")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ServerConfiguration()
        configuration.database = directory + "/server.db"
        configuration.port = 0
        configuration.mailDirectory = directory + "/mail"
        let server = try GatePassServer(configuration: configuration, devMode: true, logSink: Log())
        defer { server.stop() }
        try body(server, directory)
    }

    /// The demo cycles roles, logging out and in again at once: its server sends a code again
    /// without the 30 s pause (and 1,000 an hour instead of 5), as the README says.
    @Test func theDemoServerSendsCodesAgainWithoutThrottling() throws {
        let directory = temporaryPath("demo-limits")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = DemoCommand.serverConfiguration(folder: directory, port: 0)
        let server = try GatePassServer(configuration: configuration, devMode: true, logSink: Log())
        defer { server.stop() }
        try DemoData.seed(store: server.store, now: Date(), timeZone: .current)
        let http = LoopbackHTTPClient(port: server.port)
        for attempt in 1...6 {
            let answer = try http.send("POST", "/api/auth/send-otp", json: ["email": "approver@demo.gatepass"])
            #expect((200..<300).contains(answer.status), "code \(attempt) was refused: \(answer.status)")
        }
    }

    /// The demo passes are the printable passes of the API (1240 × 1748), and scan back as
    /// their short ids.
    @Test func passesAreWrittenAsPNGsThatScanBack() throws {
        try withDemoServer { server, directory in
            let seeded = try DemoData.seed(store: server.store, now: Date(), timeZone: .current)
            let chosen = seeded.filter { ["EXPECTED", "REJECTED"].contains($0.key) }
            let written = try DemoCommand.writePasses(chosen, server: server, into: directory + "/passes")
            #expect(written.map(\.label) == ["EXPECTED \(chosen["EXPECTED"]!)", "REJECTED \(chosen["REJECTED"]!)"])
            for (pass, shortId) in zip(written, [chosen["EXPECTED"]!, chosen["REJECTED"]!]) {
                let bytes = try #require(FileManager.default.contents(atPath: pass.path))
                #expect(Array(bytes.prefix(4)) == [0x89, 0x50, 0x4E, 0x47], "a PNG file")
                let image = try GreyImage(contentsOf: pass.path)
                #expect(image.width == 1240 && image.height == 1748)
                let decoded = try image.pixels.withUnsafeBytes { bytes in
                    try QRDecoder().decode(FrameView(width: image.width, height: image.height, luma: bytes, index: 0))
                }
                #expect(decoded.texts.count == 1 && decoded.texts.first.flatMap(SignedPassText.init(parsing:))?.shortId.rawValue == shortId,
                        "the signed GP2 text: \(decoded.texts)")
            }
            // A second run over the same folder (the organization exists: nothing seeded) lists them.
            #expect(try DemoCommand.writePasses([:], server: server, into: directory + "/passes").map(\.label)
                    == ["EXPECTED-\(chosen["EXPECTED"]!)", "REJECTED-\(chosen["REJECTED"]!)"])
        }
    }

    /// Upcoming visitors are invited by mail; in development mode each invitation is an
    /// `.eml` file (0600) that the summary names.
    @Test func upcomingVisitorsGetInvitationFiles() throws {
        try withDemoServer { server, directory in
            try DemoData.seed(store: server.store, now: Date(), timeZone: .current)
            let upcoming = try DemoData.seedUpcoming(server: server, now: Date(), timeZone: .current)
            #expect(upcoming.count == 3)
            // The worker may have sent them already; after this call nothing due is left unsent.
            server.deliverDueMail()
            let files = DemoCommand.invitationFiles(in: directory + "/mail", upcoming: upcoming)
            #expect(files.map(\.label) == upcoming.map { "\($0.name) \($0.shortId)" })
            for file in files {
                let text = try String(contentsOfFile: file.path, encoding: .utf8)
                #expect(text.contains("Subject: Your visitor pass for Demo Site"))
                #expect(text.contains("Content-Type: image/png") && text.contains("Content-Type: text/calendar"))
                var info = stat()
                #expect(stat(file.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
            }
        }
    }

    @Test func anArrivalWaitsForApprovalWithItsEvent() throws {
        let directory = temporaryPath("demo-arrival")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ServerConfiguration()
        configuration.database = directory + "/server.db"
        configuration.port = 0
        let server = try GatePassServer(configuration: configuration, devMode: true, logSink: Log())
        defer { server.stop() }
        // Without the demo organization there is nobody to arrive at.
        #expect(try DemoData.addArrival(to: server, number: 0, now: Date(), timeZone: .current) == nil)
        let seeded = try DemoData.seed(store: server.store, now: Date(), timeZone: .current)
        #expect(Set(seeded.keys) == Set(VisitorStatus.allCases.map(\.rawValue)).union([DemoData.expectedNeedingApproval]))
        let first = try #require(try DemoData.addArrival(to: server, number: 1, now: Date(), timeZone: .current))
        let second = try #require(try DemoData.addArrival(to: server, number: 2, now: Date(), timeZone: .current))
        #expect(first.status == .awaitingApproval && first.walkIn && first.requiresApproval)
        #expect(first.name != second.name)
        let events = try server.store.readConnection { db in
            try db.query("SELECT kind, visitor_id, checkpoint_id FROM events ORDER BY id", []) { row in
                (try row.string(0), try row.optionalString(1), try row.optionalString(2))
            }
        }
        // (Each also lands in users' notification lists as notification.new.)
        let arrivals = events.filter { ($0.1 == first.id || $0.1 == second.id) && $0.0 != "notification.new" }
        #expect(arrivals.map(\.0) == ["request.created", "request.created"])
        #expect(arrivals[0].2 != arrivals[1].2, "the two demo checkpoints take turns")
    }

    @Test func abandonedTemporaryFoldersAreRemovedLiveOnesKept() throws {
        let base = temporaryPath("demo-tmp")
        defer { try? FileManager.default.removeItem(atPath: base) }
        // A pid that cannot exist (above pid_max), ours (alive), and an unrelated folder.
        for name in ["gatepass-demo-2147483600", "gatepass-demo-\(getpid())", "gatepass-demo-notapid", "other"] {
            try FileManager.default.createDirectory(atPath: base + "/" + name, withIntermediateDirectories: true)
        }
        DemoFolder.removeAbandoned(in: base)
        let left = try FileManager.default.contentsOfDirectory(atPath: base).sorted()
        #expect(left == ["gatepass-demo-\(getpid())", "gatepass-demo-notapid", "other"].sorted())
    }

    @Test func aDirThatCannotBeAFolderIsAClearError() throws {
        let file = temporaryPath("demo-file")
        try Data("not a folder".utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect {
            _ = try DemoFolder(kept: file + "/demo")
        } throws: { error in
            "\((error as? CommandFailure)?.message ?? "")".contains("cannot create the state folder \(file)/demo")
        }
        #expect((try? String(contentsOfFile: file, encoding: .utf8)) == "not a folder", "nothing lost")
        // A kept folder is private (0700) and stays after the demo.
        let kept = temporaryPath("demo-kept")
        defer { try? FileManager.default.removeItem(atPath: kept) }
        let folder = try DemoFolder(kept: kept)
        #expect(!folder.isTemporary)
        #expect(try FileManager.default.attributesOfItem(atPath: kept)[.posixPermissions] as? Int == 0o700)
        folder.removeIfTemporary()
        #expect(FileManager.default.fileExists(atPath: kept))
    }

    @Test func withoutATerminalTheDemoRefusesBeforeStartingAnything() {
        let terminal = RecordingTerminal()
        let status = GatePassCLI.main(["gatepass", "demo"], terminal: terminal, environment: [:])
        #expect(status == 1)
        #expect(terminal.stderr.contains("needs a terminal") && terminal.stderr.contains("gatepass serve --dev --demo-data"))
    }

    @Test(arguments: [["--port"], ["--port", "99999"], ["--arrivals", "-1"], ["--bogus"]])
    func badFlagsAreUsageErrors(arguments: [String]) {
        let terminal = RecordingTerminal()
        #expect(GatePassCLI.main(["gatepass", "demo"] + arguments, terminal: terminal, environment: [:]) == 2)
        #expect(terminal.stderr.contains("error:"))
    }

    /// The whole demo as a new user runs it: one command, log in with the filled-in code, the
    /// queue moves by itself, `q` quits, and nothing is left running or on disk.
    @Test func theDemoRunsLogsInShowsArrivalsAndLeavesNothingBehind() throws {
        let binary = ServeProcessTests.executable
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the gatepass executable first")
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux"), "install tmux (.ci/install-packages does)")
        let temporary = temporaryPath("demo-run")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        let tmux = ConsoleTmuxTests.Tmux()
        defer { tmux.kill() }
        let command = "TMPDIR=\(temporary) HOME=\(temporary) \(binary.path) demo --arrivals 2; echo EXIT=$? > \(temporary)/exit; sleep 60"
        try tmux.run(["new-session", "-d", "-s", "console", "-x", "110", "-y", "32", command])
        #expect(try tmux.waitFor("Demo logins"))
        let folders = try FileManager.default.contentsOfDirectory(atPath: temporary).filter { $0.hasPrefix("gatepass-demo-") }
        #expect(folders.count == 1)
        let folder = temporary + "/" + (folders.first ?? "")
        let passes = try FileManager.default.contentsOfDirectory(atPath: folder + "/passes")
        #expect(passes.count == 8 && passes.allSatisfy { $0.hasSuffix(".png") })
        #expect(try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int == 0o700)
        // Ctrl-N twice: owner → admin → approver.
        try tmux.keys("C-n", "C-n")
        #expect(try tmux.waitFor("> Email    approver@demo.gatepass"))
        try tmux.keys("Enter")
        #expect(try tmux.waitFor("code") && tmux.waitFor("is filled in"))
        try tmux.keys("Enter")
        #expect(try tmux.waitFor("Awaiting approval (2)"))
        // A walk-in arrives within the 2 s period, without a key press.
        #expect(try tmux.waitFor("Awaiting approval (3)"))
        try tmux.keys("q")
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline, !FileManager.default.fileExists(atPath: temporary + "/exit") { Thread.sleep(forTimeInterval: 0.1) }
        #expect((try? String(contentsOfFile: temporary + "/exit", encoding: .utf8)) == "EXIT=0\n")
        #expect(!FileManager.default.fileExists(atPath: folder), "the temporary folder is removed")
        #expect(try tmux.screen().contains("demo stopped"))
    }
}
