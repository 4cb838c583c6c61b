import Foundation
import LoopbackHTTP
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// The console's tabs end to end: the real binary in tmux against a real server with the demo
/// data, each test one person's path through Scan, History, More, the help and a resize.
@Suite(.serialized) struct ConsoleTabsTmuxTests {
    typealias Tmux = ConsoleTmuxTests.Tmux

    /// One console run: tmux, the server, its temporary folder, and the demo's short ids.
    struct Run {
        let tmux: Tmux
        let server: GatePassServer
        let directory: String
        /// DemoData.seed's answer: short ids by status ("EXPECTED", "REJECTED", …).
        let shortIds: [String: String]

        var stateDirectory: String { directory + "/state" }
        var exitFile: String { directory + "/exit" }

        /// Polls the screen until `check` holds (at most `timeout` seconds).
        @discardableResult
        func waitUntil(timeout: TimeInterval = 10, _ check: (String) -> Bool) throws -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                if check(try tmux.screen()) { return true }
                if Date() >= deadline { return false }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }

        func waitFor(_ text: String, timeout: TimeInterval = 10) throws -> Bool {
            try waitUntil(timeout: timeout) { $0.contains(text) }
        }

        func waitForAbsence(_ text: String, timeout: TimeInterval = 10) throws -> Bool {
            try waitUntil(timeout: timeout) { !$0.contains(text) }
        }

        /// The screen's lines as tmux shows them (trailing blanks cut).
        func lines() throws -> [String] { ConsoleTabsTmuxTests.rows(of: try tmux.screen()) }

        func code(_ email: String) throws -> String {
            try #require(try LoopbackHTTPClient(port: server.port).get("/api/auth/dev-peek-otp?email=\(email)").json?["otp"] as? String)
        }

        /// Logs in from the login screen and waits for the tabs.
        func logIn(_ email: String) throws {
            #expect(try waitFor("Gate Pass — log in"))
            try tmux.keys(email, "Enter")
            #expect(try waitFor("A 6-digit code was sent"))
            try tmux.keys(try code(email), "Enter")
            #expect(try waitUntil { $0.components(separatedBy: "\n").first?.contains("More") == true },
                    "the tab bar appears after the login")
        }

        /// Waits for the console's exit status (written by the shell after it ends, which then
        /// signals; nil when no signal came within `timeout`). A status already written is
        /// answered at once: tmux wakes only the first wait for a signal.
        func exitStatus(timeout: TimeInterval = 10) -> String? {
            if let text = try? String(contentsOfFile: exitFile, encoding: .utf8), text.hasSuffix("\n") { return text }
            guard tmux.waitForConsoleExit(timeout: timeout) else { return nil }
            return try? String(contentsOfFile: exitFile, encoding: .utf8)
        }

        /// What `sql` counts on the server's database (one `?`, bound to `value`).
        func count(_ sql: String, _ value: String) throws -> Int {
            try server.store.readConnection { db in Int(try db.scalarInt(sql, [value]) ?? 0) }
        }
    }

    /// Starts a real server with the demo data and `gatepass console ARGUMENTS` in tmux
    /// (110×32); `prepare` gets the folder and the demo's short ids before the console starts
    /// and answers the extra arguments (such as `--image FILE`); `environment` is put before
    /// the command (such as `TERM=xterm-256color`).
    func withConsole(environment: String = "", _ prepare: (String, [String: String]) throws -> [String] = { _, _ in [] },
                     _ body: (Run) throws -> Void) throws {
        let binary = ServeProcessTests.executable
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the gatepass executable first")
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux"), "install tmux (.ci/install-packages does)")
        let directory = temporaryPath("console-tabs")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ServerConfiguration()
        configuration.database = directory + "/server.db"
        configuration.port = 0
        configuration.threads = 4
        configuration.otpResendIntervalSeconds = 0
        let server = try GatePassServer(configuration: configuration, devMode: true, logSink: ConsoleTmuxTests.Log())
        defer { server.stop() }
        let shortIds = try DemoData.seed(store: server.store, now: Date(), timeZone: .current)
        let extra = try prepare(directory, shortIds)
        func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let tmux = Tmux()
        defer { tmux.kill() }
        let console = ([binary.path, "console", "--server", "http://127.0.0.1:\(server.port)"] + extra).map(quoted).joined(separator: " ")
        let command = "\(environment) GATEPASS_STATE_DIR=\(quoted(directory + "/state")) HOME=\(quoted(directory)) \(console); "
            + tmux.afterConsole(writingStatusTo: quoted(directory + "/exit"))
        try tmux.run(["new-session", "-d", "-s", "console", "-x", "110", "-y", "32", command])
        try body(Run(tmux: tmux, server: server, directory: directory, shortIds: shortIds))
    }

    /// Runs the gatepass binary (not the console) to completion; answers its exit status and output.
    func gatepass(_ arguments: [String], stateDirectory: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = ServeProcessTests.executable
        process.arguments = arguments
        process.environment = ["GATEPASS_STATE_DIR": stateDirectory, "PATH": "/usr/bin:/bin"].merging(sanitizerEnvironment()) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    /// A captured screen's rows (capture-pane ends the last one with a line break).
    static func rows(of screen: String) -> [String] {
        var rows = screen.components(separatedBy: "\n")
        if rows.last == "" { rows.removeLast() }
        return rows
    }

    // MARK: - The owner's shift

    /// The owner logs in with a pass picture as the Scan tab's source: the pass is admitted
    /// without a key press, a rejected pass typed by its short id is denied, History shows
    /// the check-in and exports it to a private CSV, More logs out (the server forgets the
    /// device and the session), and Ctrl-C ends the console with status 0.
    @Test func ownerScansReadsTheHistoryExportsAndLogsOut() throws {
        try withConsole({ directory, shortIds in
            let expected = try #require(shortIds["EXPECTED"])
            let picture = directory + "/pass.pgm"
            try Data(try passPicture("GP1:\(expected)")).write(to: URL(fileURLWithPath: picture))
            return ["--image", picture]
        }) { run in
            let tmux = run.tmux
            let expected = try #require(run.shortIds["EXPECTED"])
            let rejected = try #require(run.shortIds["REJECTED"])
            try run.logIn("owner@demo.gatepass")
            let tabBar = try #require(try run.lines().first)
            #expect(tabBar.contains("1 Approvals") && tabBar.contains("2 Scan") && tabBar.contains("3 Visitors")
                    && tabBar.contains("4 On site") && tabBar.contains("5 History") && tabBar.contains("6 More"),
                    "the owner's tabs: \(tabBar)")

            // Scan: the picture's pass is read and checked in by itself, before any key.
            let checkIns = "SELECT COUNT(*) FROM scans WHERE short_id = ? AND result = 'CHECKED_IN'"
            let deadline = Date().addingTimeInterval(10)
            while try run.count(checkIns, expected) == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            #expect(try run.count(checkIns, expected) == 1, "the picture's pass was checked in without a key press")
            try tmux.keys("2")
            #expect(try run.waitUntil { $0.contains("ADMITTED") && $0.contains("Ana Pop (\(expected))") },
                    "the pass in the picture is admitted without a key press")
            #expect(try run.waitFor("finished reading"), "the source line says the picture was read")
            // A rejected visitor's short id, typed.
            try tmux.keys(rejected)
            #expect(try run.waitFor("Short id  \(rejected)"))
            try tmux.keys("Enter")
            #expect(try run.waitUntil { $0.contains("DENIED") && $0.contains("Radu Marin (\(rejected))") },
                    "a rejected pass is denied")
            #expect(try run.waitFor("Recent (2)"))

            // History: from the recent list (the field has the digits otherwise).
            try tmux.keys("Escape")
            #expect(try run.waitFor("Enter: open · /: look up"))
            try tmux.keys("5")
            #expect(try run.waitFor("Scan history — "))
            #expect(try run.waitUntil { screen in
                screen.components(separatedBy: "\n").contains { $0.contains("CHECKED_IN") && $0.contains(expected) }
            }, "the check-in of the picture's pass is in the history")
            #expect(try run.waitUntil { screen in
                screen.components(separatedBy: "\n").contains { $0.contains("REJECTED") && $0.contains(rejected) }
            }, "the denied scan is in the history")

            // Export to a file of our choosing.
            try tmux.keys("e")
            #expect(try run.waitFor("Save the CSV to: ~/gatepass-scans-"))
            try tmux.keys("C-u")
            #expect(try run.waitForAbsence("Save the CSV to: ~/"))
            let exportFolder = run.directory + "/exports"
            try FileManager.default.createDirectory(atPath: exportFolder, withIntermediateDirectories: true)
            let exportPath = exportFolder + "/scans.csv"
            try tmux.keys("-l", exportPath)
            #expect(try run.waitFor("Save the CSV to: \(exportPath)"))
            try tmux.keys("Enter")
            #expect(try run.waitFor("Saved"))
            #expect(try run.waitFor("to \(exportPath)"))
            let attributes = try FileManager.default.attributesOfItem(atPath: exportPath)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "the export is private")
            let csv = try String(contentsOfFile: exportPath, encoding: .utf8)
            #expect(csv.hasPrefix("id,shortId,raw,result,visitorId,checkpointId,scannedBy,scannedAt,receivedAt,offline,offlineDecision,"
                                  + "visitorName,company,gateName,guardName,scannedAtLocal\r\n"))
            #expect(csv.contains(",\(expected),GP1:\(expected),CHECKED_IN,"), "the picture's check-in is exported")
            #expect(csv.contains(",\(rejected),"), "the denial is exported")

            // More: the profile and the outbox; then log out.
            try tmux.keys("6")
            #expect(try run.waitFor("Outbox"))
            #expect(try run.waitUntil { screen in
                // Not the status line (the last), which shows the email on every tab.
                Self.rows(of: screen).dropLast().contains { $0.contains("Email") && $0.contains("owner@demo.gatepass") }
            }, "the owner's email on the More tab (not only in the status line)")
            #expect(try run.waitFor("Registered    yes"), "the push token is registered")
            let ownerDevices = "SELECT COUNT(*) FROM devices d JOIN users u ON u.id = d.user_id WHERE u.email = ?"
            let ownerSessions = "SELECT COUNT(*) FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = ? AND s.revoked_at IS NULL"
            #expect(try run.count(ownerDevices, "owner@demo.gatepass") == 1)
            #expect(try run.count(ownerSessions, "owner@demo.gatepass") >= 1)
            let before = try gatepass(["whoami"], stateDirectory: run.stateDirectory)
            #expect(before.status == 0 && before.output.contains("owner@demo.gatepass"), "logged in before: \(before.output)")
            try tmux.keys("L")
            #expect(try run.waitFor("Log out? y/n"))
            try tmux.keys("y")
            #expect(try run.waitFor("Gate Pass — log in"))
            #expect(try run.count(ownerDevices, "owner@demo.gatepass") == 0, "the push token was unregistered")
            #expect(try run.count(ownerSessions, "owner@demo.gatepass") == 0, "the session (and its scanner tokens) ended")
            let after = try gatepass(["whoami"], stateDirectory: run.stateDirectory)
            #expect(after.status != 0, "whoami after the logout: \(after.output)")
            #expect(after.output.contains("no one is logged in") && after.output.contains("gatepass login"),
                    "whoami says to log in: \(after.output)")

            // Logging in again does not read the image again (it would check the pass in twice).
            let scansBefore = try run.count("SELECT COUNT(*) FROM scans WHERE short_id = ?", expected)
            try run.logIn("owner@demo.gatepass")
            try tmux.keys("2")
            #expect(try run.waitFor("Already read in this console"))
            #expect(try run.count("SELECT COUNT(*) FROM scans WHERE short_id = ?", expected) == scansBefore)

            try tmux.keys("C-c")
            #expect(run.exitStatus() == "EXIT=0\n")
        }
    }

    // MARK: - Tabs by role

    /// An approver who may not scan sees Approvals and More, and nothing else.
    @Test func anApproverWhoMayNotScanHasApprovalsAndMoreOnly() throws {
        try withConsole { run in
            try run.logIn("desk@demo.gatepass")
            #expect(try run.waitFor("Awaiting approval"))
            let tabBar = try #require(try run.lines().first)
            #expect(tabBar.contains("1 Approvals") && tabBar.contains("2 More"), "tab bar: \(tabBar)")
            #expect(!tabBar.contains("Scan") && !tabBar.contains("History"), "tab bar: \(tabBar)")
            // 2 is More, and 3 is nothing.
            try run.tmux.keys("2")
            #expect(try run.waitFor("Outbox"))
            #expect(try run.waitFor("May scan"))
            #expect(try run.lines().contains { $0.contains("May scan") && $0.hasSuffix("no") })
            try run.tmux.keys("q")
            #expect(run.exitStatus() == "EXIT=0\n")
        }
    }

    // MARK: - Help and resize

    /// `?` on History lists its keys; any key closes the help and History is back.
    @Test func helpOnHistoryListsItsKeysAndAnyKeyClosesIt() throws {
        try withConsole { run in
            try run.logIn("owner@demo.gatepass")
            try run.tmux.keys("5")
            #expect(try run.waitFor("Scan history — "))
            #expect(try run.waitFor("e export"))
            try run.tmux.keys("?")
            #expect(try run.waitFor("Keys of History"))
            let help = try run.tmux.screen()
            #expect(help.contains("export these scans as CSV to a file"))
            #expect(help.contains("choose a day or a range of days"))
            #expect(help.contains("switch tabs"))
            try run.tmux.keys("x")
            #expect(try run.waitForAbsence("Keys of History"))
            #expect(try run.waitFor("Scan history — "))
            #expect(!(try run.tmux.screen().contains("export these scans")))
            // The key that closed the help did nothing else: still on History, still running.
            #expect(try run.waitUntil { Self.rows(of: $0).last?.hasPrefix("Olivia Owner <owner@demo.gatepass> (OWNER)") == true },
                    "the status line: \((try? run.lines().last) ?? "")")
            #expect(try run.lines().first?.contains("? help  q quit") == true)
            try run.tmux.keys("C-c")
            #expect(run.exitStatus() == "EXIT=0\n")
        }
    }

    /// Shrinking the terminal while on History lays the screen out again: the tab bar stays
    /// on the first row and the status line on the last; growing it back does too.
    @Test func resizingOnHistoryLaysTheScreenOutAgain() throws {
        try withConsole { run in
            try run.logIn("owner@demo.gatepass")
            try run.tmux.keys("5")
            #expect(try run.waitFor("Scan history — "))
            #expect(try run.waitFor("CHECKED_IN"))
            try run.tmux.run(["resize-window", "-t", "console", "-x", "60", "-y", "20"])
            #expect(try run.waitUntil { screen in
                let rows = Self.rows(of: screen)
                return rows.count == 20 && rows.allSatisfy { $0.count <= 60 }
                    && rows[0].contains("1 Approvals") && rows[0].contains("5 History")
                    && rows[19].hasPrefix("Olivia Owner <owner@demo.gatepass>")
                    && screen.contains("Scan history — ") && screen.contains("[ ] day · t today")
            }, "laid out for 60×20: \((try? run.tmux.screen()) ?? "")")
            // Still alive and taking keys at the small size.
            try run.tmux.keys("?")
            #expect(try run.waitFor("Keys of History"))
            try run.tmux.keys("x")
            #expect(try run.waitForAbsence("Keys of History"))
            try run.tmux.run(["resize-window", "-t", "console", "-x", "110", "-y", "32"])
            #expect(try run.waitUntil { screen in
                let lines = Self.rows(of: screen)
                return lines.count == 32 && lines[0].contains("6 More") && lines[0].contains("? help  q quit")
                    && lines[31].hasPrefix("Olivia Owner <owner@demo.gatepass>") && screen.contains("CHECKED_IN")
            }, "laid out again for 110×32: \((try? run.tmux.screen()) ?? "")")
            try run.tmux.keys("q")
            #expect(run.exitStatus() == "EXIT=0\n")
        }
    }
}
