import Foundation
import GatePassClient
import GatePassCore
import GatePassScanner
import LoopbackHTTP
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// A kiosk enrolled with a one-time code, against a real server: it scans without a login,
/// and when an admin revokes it or retires its gate it says so, stops using the network and
/// waits for a new enrolment (api.md "Users, checkpoints, scanner tokens").
@Suite(.serialized) struct KioskEnrolmentTests {
    typealias Gate = KioskTests.Gate

    func runner(_ gate: Gate) throws -> KioskRunner {
        let decoder = try QRDecoder()
        return KioskRunner(core: try gate.core(), terminal: gate.terminal, clock: SystemWallClock(), options: .init(cooldown: 3),
                           notifier: SystemdNotifier(environment: [:])) { frame in
            try decoder.decode(frame).codes.map(\.text)
        }
    }

    func code(_ gate: Gate, _ owner: String, checkpointId: String) throws -> String {
        let made = try gate.http.send("POST", "/api/admin/kiosks", token: owner, json: ["checkpointId": checkpointId, "name": "Test kiosk"])
        return try #require(made.json?["enrolmentCode"] as? String, "\(made.text)")
    }

    func enrol(_ gate: Gate, _ code: String) -> (Int32, RecordingTerminal) {
        let terminal = RecordingTerminal()
        let status = GatePassCLI.main(["gatepass", "kiosk", "enrol", code, "--server", "http://127.0.0.1:\(gate.port)"],
                                      terminal: terminal, environment: gate.environment)
        return (status, terminal)
    }

    /// What the server has answered so far, per route (its metrics): a signed-out gate adds nothing.
    func requestCounts(_ gate: Gate) throws -> String {
        try #require(gate.server?.application.metrics.render()).split(separator: "\n")
            .filter { $0.hasPrefix("gatepass_http_requests_total") }.joined(separator: "\n")
    }

    @Test func anEnrolledKioskScansWithoutALoginAndStopsWhenRevoked() throws {
        let gate = try Gate()
        let owner = try gate.token("owner@demo.gatepass")
        let mainGate = try #require((try gate.http.get("/api/checkpoints", token: owner).json?["items"] as? [[String: Any]])?
            .first { $0["isDefault"] as? Bool == true }?["id"] as? String)
        let firstCode = try code(gate, owner, checkpointId: mainGate)
        let (status, terminal) = enrol(gate, firstCode)
        #expect(status == 0 && terminal.stdout.contains("enrolled as the kiosk of Main gate"), "\(terminal.stderr)")
        #expect(StateFileModeTests.mode(gate.environment["GATEPASS_STATE_DIR"]! + "/state.db") == 0o600)
        #expect(try gate.core().session() == nil, "no login on this device")
        // A used code enrols nothing, and says what to do.
        let (again, refused) = enrol(gate, firstCode)
        #expect(again == 1 && refused.stderr.contains("wrong, used or expired"), "\(refused.stderr)")

        let first = try gate.visitor(owner, ["name": "Eno Enrolled"])
        let kiosk = try runner(gate)
        try kiosk.start()
        defer { kiosk.stop() }
        try kiosk.scan(ImageFileSource(directory: try gate.folder("enrolled", ["GP1:\(first.shortId)"])))
        #expect(gate.waitForLine("ADMITTED  Eno Enrolled (\(first.shortId)) — welcome"))

        // The admin revokes it: its event stream ends, one request learns why, and it signs out.
        let tokens = try #require(try gate.http.get("/api/admin/scanner-tokens", token: owner).json?["items"] as? [[String: Any]])
        let id = try #require(tokens.first { $0["kioskName"] as? String == "Test kiosk" }?["id"] as? String)
        #expect(try gate.http.send("POST", "/api/admin/scanner-tokens/\(id)/revoke", token: owner, json: [String: Any]()).status == 204)
        #expect(kiosk.signedOutChanges.wait { kiosk.signedOutReason != nil })
        #expect(kiosk.signedOutReason?.contains("signed out by an admin") == true)
        #expect(gate.terminal.wait { gate.terminal.stderr.contains("this kiosk was signed out by an admin") })

        // A pass now is answered at the gate, with no request to the server and nothing queued.
        let second = try gate.visitor(owner, ["name": "Sid Signedout"])
        let afterSetup = try requestCounts(gate)
        try kiosk.scan(ImageFileSource(directory: try gate.folder("signed-out", ["GP1:\(second.shortId)"])))
        #expect(gate.waitForLine("SIGNED OUT  \(second.shortId) — this kiosk was signed out by an admin"))
        kiosk.settle(timeout: 1)
        #expect(try requestCounts(gate) == afterSetup, "the signed-out gate sent nothing")
        #expect(try gate.core().store.outboxCount() == 0)
        #expect(try gate.http.get("/api/visitors/\(second.id)", token: owner).json?["status"] as? String == "EXPECTED")

        // Enrolled again (at another gate), the same running kiosk scans again.
        let north = try #require(try gate.http.send("POST", "/api/checkpoints", token: owner, json: ["name": "North door"]).json?["id"] as? String)
        #expect(enrol(gate, try code(gate, owner, checkpointId: north)).0 == 0)
        let third = try gate.visitor(owner, ["name": "Tia Third"])
        try kiosk.scan(ImageFileSource(directory: try gate.folder("again", ["GP1:\(third.shortId)"])))
        #expect(gate.waitForLine("ADMITTED  Tia Third (\(third.shortId)) — welcome"))
        #expect(kiosk.signedOutReason == nil)

        // Its gate is retired: signed out again, saying why.
        #expect(try gate.http.send("PATCH", "/api/checkpoints/\(north)", token: owner, json: ["retired": true]).status == 200)
        #expect(kiosk.signedOutChanges.wait { kiosk.signedOutReason?.contains("retired") == true })
    }

    /// A kiosk run by a logged-in user: a revoked scanner token is not renewed with the login.
    @Test func aRevokedTokenIsNotRenewedWithTheLogin() throws {
        let gate = try Gate()
        try gate.loginKiosk("owner@demo.gatepass")
        let owner = try gate.token("owner@demo.gatepass")
        let core = try gate.core()
        let scanner = try core.ensureScannerToken(now: Date())
        let listed = { () throws -> [[String: Any]] in
            try #require(try gate.http.get("/api/admin/scanner-tokens?limit=500", token: owner).json?["items"] as? [[String: Any]])
        }
        let id = try #require(try listed().first?["id"] as? String)
        #expect(try gate.http.send("POST", "/api/admin/scanner-tokens/\(id)/revoke", token: owner, json: [String: Any]()).status == 204)
        let countBefore = try listed().count
        let visitor = try gate.visitor(owner, ["name": "Rene Revoked"])
        let outcome = try core.checkIn(code: "GP1:\(visitor.shortId)", confirmApprovalRequest: false)
        guard case .needsLogin(_, let message) = outcome else {
            Issue.record("expected the check-in to wait, got \(outcome)")
            return
        }
        #expect(message.contains("signed out by an admin"))
        #expect(try core.scannerRevocation() != nil)
        #expect(try listed().count == countBefore, "no new scanner token was made with the login")
        #expect(try core.session()?.scanner?.scannerToken == scanner.scannerToken)
        #expect(throws: ClientError.self) { try core.ensureScannerToken(now: Date()) }
        // The runner starts signed out instead of failing.
        let kiosk = try runner(gate)
        try kiosk.start()
        defer { kiosk.stop() }
        #expect(kiosk.signedOutReason != nil)
        // A new login clears it.
        try gate.loginKiosk("owner@demo.gatepass")
        #expect(try core.scannerRevocation() == nil)
    }

    /// The state file that will hold the kiosk's credential is private from its first byte
    /// (created O_EXCL with mode 0600, never chmodded later), even when the enrolment then fails.
    @Test func theEnrolmentsStateFileIsCreatedPrivate() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), ".ci/install-packages installs strace")
        let directory = temporaryPath("enrol-modes")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = directory + "/state"
        let tracePath = directory + "/trace.txt"
        let process = try StateFileModeTests.tracedProcess(["kiosk", "enrol", "AAAA-BBBB-CCCC", "--server", "http://127.0.0.1:9"],
                                                           trace: tracePath,
                                                           environment: ["GATEPASS_STATE_DIR": state, "GATEPASS_CONNECT_TIMEOUT": "1"])
        process.standardOutput = Pipe()
        process.standardError = Pipe()
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 1, "nothing listens on port 9")
        let trace = StateFileModeTests.Trace(lines: try String(contentsOfFile: tracePath, encoding: .utf8)
            .split(separator: "\n").map(String.init))
        let created = try #require(trace.creation(of: state + "/state.db"), "no creating open of state.db")
        #expect(created.contains("O_EXCL") && created.contains(", 0600)"), "\(created)")
        #expect(StateFileModeTests.mode(state + "/state.db") == 0o600)
    }

    @Test func enrolArgumentsAreChecked() {
        #expect(GatePassCLI.main(["gatepass", "kiosk", "enrol"], terminal: RecordingTerminal()) == 2)
        #expect(GatePassCLI.main(["gatepass", "kiosk", "enrol", "ABCD"], terminal: RecordingTerminal()) == 2)
        #expect(GatePassCLI.main(["gatepass", "kiosk", "enrol-code", "--name", "K"], terminal: RecordingTerminal()) == 2)
        #expect(GatePassCLI.main(["gatepass", "scanner-token", "revoke"], terminal: RecordingTerminal()) == 2)
        #expect(GatePassCLI.main(["gatepass", "checkpoint", "rename", "ID"], terminal: RecordingTerminal()) == 2)
    }
}
