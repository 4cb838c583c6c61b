import Foundation
import GatePassClient
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// The gate commands as a script meets them: the exit status says what the gate decided, an
/// offline check-in of a signed pass is checked as an offline kiosk checks it, and a drain says
/// what the server made of each entry.
extension ClientCommandTests {
    func logIn(_ setup: Setup, _ email: String = "owner@demo.gatepass") throws {
        _ = try LoopbackHTTPClient(port: setup.server.port).send("POST", "/api/auth/send-otp", json: ["email": email])
        let login = setup.gatepass("login", "--server", setup.url, "--email", email, "--otp", try setup.code(email))
        try #require(login.status == 0, "\(login.err)")
    }

    func shortId(_ setup: Setup, of name: String) throws -> String {
        let lookup = setup.gatepass("lookup", name, "--json")
        let found = try JSONSerialization.jsonObject(with: Data(lookup.out.utf8)) as? [String: Any]
        return try #require((found?["items"] as? [[String: Any]])?.first?["shortId"] as? String)
    }

    /// The GP2 text the server draws on the pass of the visitor with `shortId` now.
    func passText(_ setup: Setup, shortId: String) throws -> String {
        let record = try #require(try setup.server.store.read { tx in try tx.visitors.find(shortId: ShortID(shortId)!) })
        return try setup.server.application.passes.keyring.signedText(for: record.visitor, organizationId: record.organizationId,
                                                                      now: Date()).text
    }

    @Test func checkInWalkInAndCheckOutExitWithWhatTheGateDecided() throws {
        try withSetup { setup in
            try logIn(setup)
            let ana = try shortId(setup, of: "Ana Pop")
            let checkedIn = setup.gatepass("checkin", ana)
            #expect(checkedIn.status == 0 && checkedIn.out.hasPrefix("CHECKED_IN  Ana Pop"), "\(checkedIn.err)")
            let again = setup.gatepass("checkin", ana)
            #expect(again.status == 0 && again.out.hasPrefix("ALREADY_CHECKED_IN"), "\(again.err)")
            let out = setup.gatepass("checkout", ana)
            #expect(out.status == 0 && out.out.hasPrefix("CHECKED_OUT  Ana Pop"), "\(out.err)")
            let outAgain = setup.gatepass("checkout", ana)
            #expect(outAgain.status == 1, "a check-out of someone not inside is a failure")
            #expect(outAgain.out.hasPrefix("NOT_CHECKED_IN  Ana Pop") && outAgain.out.contains("not inside"))
            let used = setup.gatepass("checkin", ana, "--json")
            #expect(used.status == 3 && used.out.contains("\"CHECKED_OUT\""), "\(used.out)")

            let rejected = setup.gatepass("checkin", try shortId(setup, of: "Radu Marin"))
            #expect(rejected.status == 3 && rejected.out.hasPrefix("REJECTED"), "\(rejected.out)")
            let needsApproval = setup.gatepass("checkin", try shortId(setup, of: "Mihai Ionescu"))
            #expect(needsApproval.status == 3 && needsApproval.out.hasPrefix("APPROVAL_REQUIRED"), "\(needsApproval.out)")
            let asked = setup.gatepass("checkin", try shortId(setup, of: "Mihai Ionescu"), "--confirm-approval")
            #expect(asked.status == 0 && asked.out.hasPrefix("AWAITING_APPROVAL"), "\(asked.out)")
            let walkIn = setup.gatepass("walk-in", "--name", "Wanda Walker")
            #expect(walkIn.status == 0 && walkIn.out.hasPrefix("AWAITING_APPROVAL"), "\(walkIn.err)")
            #expect(setup.gatepass("checkin", "ZZZZZZZZ").status == 1, "an unknown pass is an error")
        }
    }

    @Test func anOfflineCheckInChecksASignedPassAndNeverQueuesAForgery() throws {
        try withSetup { setup in
            try logIn(setup)
            let ana = try shortId(setup, of: "Ana Pop")
            let valid = try passText(setup, shortId: ana)
            let forged = KioskTests().forged(valid)
            #expect(forged != valid && SignedPassText(parsing: forged) != nil)
            let truncated = String(valid.dropLast(9))

            setup.server.stop()
            let accepted = setup.gatepass("checkin", valid)
            #expect(accepted.status == 0, "\(accepted.err)")
            #expect(accepted.out.contains("CHECKED_IN  \(ana): accepted offline by signature; queued as outbox entry"), "\(accepted.out)")
            #expect(!accepted.out.contains(valid), "the GP2 text is named by its short id")
            let forgery = setup.gatepass("checkin", forged)
            #expect(forgery.status == 1)
            #expect(forgery.err.contains("refused: signature does not check out (\(ana)); nothing was queued"), "\(forgery.err)")
            let cut = setup.gatepass("checkin", truncated)
            #expect(cut.status == 1 && cut.err.contains("refused: not a Gate Pass code"), "\(cut.err)")
            let hostile = setup.gatepass("checkin", "GP2:\u{1B}[2J" + String(repeating: "Z", count: 100))
            #expect(hostile.status == 1 && !hostile.err.contains("\u{1B}"), "\(hostile.err)")
            #expect(setup.gatepass("checkin", String(repeating: "GP2:", count: 200)).status == 2, "oversized: refused as usage")
            let unknown = setup.gatepass("checkin", "ZZZZZZZZ")
            #expect(unknown.status == 0 && unknown.out.contains("queued as outbox entry"), "a short id waits for the server")

            let list = setup.gatepass("outbox", "list", "--json")
            let entries = try #require(try JSONSerialization.jsonObject(with: Data(list.out.utf8)) as? [[String: Any]])
            let bodies = entries.compactMap { $0["body"] as? String }
            #expect(entries.count == 2, "only the valid pass and the short id are queued: \(bodies)")
            #expect(bodies.first?.contains("\"offlineDecision\":\"CHECKED_IN\"") == true)

            // The server back: the drain says what it decided for each entry.
            setup.server = try GatePassServer(configuration: setup.configuration, devMode: true, logSink: Log())
            let drained = setup.gatepass("outbox", "drain")
            #expect(drained.status == 0, "\(drained.err)")
            let lines = drained.out.split(separator: "\n").map(String.init)
            #expect(lines.first == "sent 1, dead-lettered 1, 0 left", "\(drained.out)")
            #expect(lines.contains("checkin \(ana): CHECKED_IN (Ana Pop)"), "\(drained.out)")
            #expect(lines.contains { $0.hasPrefix("checkin ZZZZZZZZ: dead-lettered: ") && $0.contains("404 NOT_FOUND") },
                    "\(drained.out)")
        }
    }

    /// Ana Pop's check-in queued while the server was down, and the server back: her short id.
    func queueOfflineCheckInOfAna(_ setup: inout Setup) throws -> String {
        try logIn(setup)
        let ana = try shortId(setup, of: "Ana Pop")
        setup.server.stop()
        #expect(setup.gatepass("checkin", ana).status == 0)
        setup.server = try GatePassServer(configuration: setup.configuration, devMode: true, logSink: Log())
        return ana
    }

    @Test func theDrainsJSONListsEachEntrysDecision() throws {
        try withSetup { setup in
            let ana = try queueOfflineCheckInOfAna(&setup)
            let drained = setup.gatepass("outbox", "drain", "--json")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(drained.out.utf8)) as? [String: Any])
            let entries = try #require(summary["entries"] as? [[String: Any]])
            #expect(entries.count == 1)
            #expect(entries.first?["kind"] as? String == "checkin" && entries.first?["subject"] as? String == ana)
            #expect(entries.first?["result"] as? String == "CHECKED_IN" && entries.first?["visitorName"] as? String == "Ana Pop")
        }
    }
}

extension ClientCommandTests {
    /// `outbox watch` says what the server decided for each entry it sends, as `drain` does
    /// (it printed only `sent 1, dead-lettered 0, 0 left`). Run as the program it is, stopped
    /// by SIGTERM once the line is read; the reader's deadline only catches a hang.
    @Test func theWatchSaysWhatTheServerDecidedForEachEntry() throws {
        let binary = ServeProcessTests.executable
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the gatepass executable first")
        try withSetup { setup in
            let ana = try queueOfflineCheckInOfAna(&setup)

            let process = Process()
            process.executableURL = binary
            process.arguments = ["outbox", "watch", "--interval", "1"]
            process.environment = ProcessInfo.processInfo.environment.merging(setup.environment) { _, ours in ours }
            let stdout = Pipe()
            process.standardOutput = stdout
            process.standardError = FileHandle.nullDevice
            try process.run()
            let hang = DispatchWorkItem { if process.isRunning { process.terminate() } }
            DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: hang)
            defer { hang.cancel(); if process.isRunning { process.terminate() }; process.waitUntilExit() }
            var lines: [String] = []
            while !lines.contains("checkin \(ana): CHECKED_IN (Ana Pop)") {
                let line = ServeProcessTests.firstLine(of: stdout)
                if line.isEmpty && !process.isRunning { break }
                lines.append(line)
            }
            #expect(lines.contains("sent 1, dead-lettered 0, 0 left"), "\(lines)")
            #expect(lines.contains("checkin \(ana): CHECKED_IN (Ana Pop)"), "\(lines)")
        }
    }
}
