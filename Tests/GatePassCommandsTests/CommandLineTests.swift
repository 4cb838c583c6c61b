import Foundation
import GatePassCore
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// Records what a command printed.
final class RecordingTerminal: Terminal, @unchecked Sendable {
    // @unchecked: `lines` is a Mutex; `printed` only carries the signal.
    private let lines = Locked<(out: [String], err: [String])>(([], []))
    /// Broadcast after every line, so `wait(until:)` looks again at once.
    private let printed = NSCondition()
    private let input: Locked<[String]>
    /// Answers prompts when set (called at the moment of the prompt).
    private let answer: (@Sendable () -> String?)?
    init(input: [String] = [], answer: (@Sendable () -> String?)? = nil) {
        self.input = Locked(input)
        self.answer = answer
    }
    func out(_ text: String) { lines.withLock { $0.out.append(text) }; signal() }
    func err(_ text: String) { lines.withLock { $0.err.append(text) }; signal() }

    private func signal() {
        printed.lock()
        printed.broadcast()
        printed.unlock()
    }

    /// Waits until `condition` holds of what was printed, looking again after each line;
    /// false after `timeout` seconds (only a hang gets there).
    func wait(timeout: TimeInterval = 30, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        printed.lock()
        defer { printed.unlock() }
        while !condition() {
            if !printed.wait(until: deadline) { return condition() }
        }
        return true
    }
    func readLine(prompt: String) -> String? {
        err(prompt)
        if let answer { return answer() }
        return input.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }
    var stdout: String { lines.withLock { $0.out.joined(separator: "\n") } }
    var stderr: String { lines.withLock { $0.err.joined(separator: "\n") } }
}

func run(_ arguments: String...) -> (status: Int32, terminal: RecordingTerminal) {
    let terminal = RecordingTerminal()
    let status = GatePassCLI.main(["gatepass"] + arguments, terminal: terminal)
    return (status, terminal)
}

func temporaryPath(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-cli-\(UUID().uuidString)-\(name)").path
}

@Suite struct HelpTests {
    @Test func topLevelHelpIsPinned() {
        let (status, terminal) = run("--help")
        #expect(status == 0)
        #expect(terminal.stdout == """
            OVERVIEW: Gate Pass: visitor passes, approvals and check-ins at the gate.

            USAGE: gatepass <subcommand> [options]

            OPTIONS:
              -h, --help  Show help information.

            SUBCOMMANDS:
              demo             Try it: a demo server with demo data and the console logged in against it, in one command.
              serve            Run the HTTP API server.
              user             List, add, update and disable users (add --db: bootstrap a database file).
              checkpoint       List, add, rename and retire checkpoints (alias: gate; add --db: bootstrap a database file).
              site             Show or change the organization's settings: time zone, retention, automatic check-out.
              scanner-token    List and revoke scanner tokens, enrolled kiosks included.
              login            Log in with a one-time code (stores the session on this device).
              logout           Unregister this device's push token and end the session.
              whoami           Show who is logged in.
              approvals        List visitors awaiting approval.
              approve          Approve a visitor.
              reject           Reject a visitor.
              checkin          Check a pass in (queued when offline).
              checkout         Check a visitor out (queued when offline).
              lookup           Find visitors by short id, name, phone or email.
              visitor          Register, list, show, edit, cancel, check out and invite visitors; save their passes.
              mail             The server's mail log, and a test mail.
              blocklist        Who must not enter: list, add and remove blocklist entries.
              audit            Read the audit log (list), or check its tamper-evident chain in a database file (verify).
              keys             The pass keys that sign GP2 passes: list, rotate, revoke a leaked one.
              admin            Data governance on a database file: retention now (or a dry run).
              db               Move a site's database to PostgreSQL (copy), or back up a SQLite file (backup).
              walk-in          Register a visitor who arrived without a pass.
              stats            Today's gate counters.
              history          The scan history (--csv for the export).
              outbox           Inspect and replay queued mutations: list, dead, drain, retry ID.
              events           Follow the live events (approvals, arrivals, notifications) until Ctrl-C.
              console          The full-screen terminal console: approvals (live), scan, history, profile and outbox.
              kiosk            Run the unattended gate: scan passes from a camera and check them in (enrol, enrol-code, roll).
              push-test        Send a test event to registered device tokens and report which were delivered.
              push-deliveries  List the push deliveries of one device token.
              scan             Read QR codes from image files, a folder or a Y4M recording and print each new one.

            """)
    }

    @Test func serveHelpIsPinned() {
        let (status, terminal) = run("serve", "--help")
        #expect(status == 0)
        #expect(terminal.stdout == """
            OVERVIEW: Run the Gate Pass HTTP API server (api.md) on SQLite, or on PostgreSQL shared by several servers behind a load balancer.

            USAGE: gatepass serve [--config FILE] [--db PATH|URL] [--secret-file FILE] [--host H] [--port N] [--dev] [--demo-data] [--recreate-audit-head]

            OPTIONS:
              --config FILE              A JSON configuration file (see Config/server.json); flags override it.
              --db, --database PATH|URL  The database (default gatepass.db). A SQLite file (PATH or sqlite:PATH) or postgres://USER@HOST:PORT/DB (its password from PGPASSWORD or ~/.pgpass, never the URL).
              --secret-file FILE         The server's secret, which holds the audit key (default <db>.secret; required with a postgres:// database).
              --host H                   The IPv4 address to listen on (default 127.0.0.1).
              --port N                   The port (default 8080); 0 picks a free one. The first line printed is the URL.
              --dev                      Development mode: log one-time codes and answer /api/auth/dev-peek-otp.
              --demo-data                Seed a demo organization with a user per role and visitors in every status.
              --recreate-audit-head      Write a new audit head (<db>.audit-head) where the one found is missing or does not match the log, as after restoring the database from a backup; recorded in the audit log as audit-head.recreate. Without it such a head stops the start.
              -h, --help                 Show help information.

            """)
    }

    @Test(arguments: [["checkpoint", "add", "--help"], ["checkpoint", "add", "-h"]])
    func subcommandHelp(arguments: [String]) {
        let terminal = RecordingTerminal()
        let status = GatePassCLI.main(["gatepass"] + arguments, terminal: terminal)
        #expect(status == 0)
        #expect(terminal.stdout.hasPrefix("OVERVIEW: Add a"))
        #expect(terminal.stdout.contains("USAGE: gatepass \(arguments[0]) add NAME [--json] | gatepass \(arguments[0]) add NAME --db PATH"))
    }

    @Test func userHelpListsItsSubcommands() {
        let terminal = RecordingTerminal()
        #expect(GatePassCLI.main(["gatepass", "user", "--help"], terminal: terminal) == 0)
        #expect(terminal.stdout.hasPrefix("OVERVIEW: The users of your organization"))
        for word in ["list", "add", "update", "disable"] { #expect(terminal.stdout.contains("  \(word) "), "\(word)") }
        let add = RecordingTerminal()
        #expect(GatePassCLI.main(["gatepass", "user", "add", "--help"], terminal: add) == 0)
        #expect(add.stdout.contains("USAGE: gatepass user add [--db PATH|URL [--organization NAME] [--secret-file FILE]]"))
    }
}

@Suite struct UsageErrorTests {
    @Test(arguments: [
        (["frobnicate"], "unknown subcommand frobnicate"),
        (["serve", "--port", "70000"], "--port must be a whole number from 0 to 65535"),
        (["serve", "--port", "abc"], "--port must be a whole number from 0 to 65535"),
        (["serve", "--port"], "--port needs a value"),
        (["serve", "--bogus"], "unknown option --bogus"),
        (["user", "add", "--db", "x.db", "--name", "N", "--role", "OWNER"], "--email is required"),
        (["user", "add", "--db", "x.db", "--email", "a@b.co", "--name", "N", "--role", "KING"], "--role must be OWNER, ADMIN, APPROVER, HOST or PLATFORM_ADMIN"),
        (["user", "add", "--db", "x.db", "--email", "a@b.co", "--name", "N", "--role", "HOST", "--json"], "--json is for the server's answer"),
        (["checkpoint", "add", "--db", "x.db", "--name", "Dock"], "--organization is required"),
    ])
    func usageErrorsExitTwo(arguments: [String], message: String) {
        let terminal = RecordingTerminal()
        let status = GatePassCLI.main(["gatepass"] + arguments, terminal: terminal)
        #expect(status == 2)
        #expect(terminal.stderr.contains("error: \(message)"))
        #expect(terminal.stderr.contains("--help"))
    }

    @Test func noArgumentsPrintsHelpAndExitsTwo() {
        let (status, terminal) = run()
        #expect(status == 2)
        #expect(terminal.stderr.contains("USAGE: gatepass <subcommand>"))
    }
}

@Suite struct BootstrapCommandTests {
    @Test func userAndCheckpointAdd() throws {
        let database = temporaryPath("boot.db")
        defer {
            for suffix in ["", "-wal", "-shm", ".secret", ".audit-head"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        }
        let added = run("user", "add", "--db", database, "--email", "Owner@Site.Test", "--name", "Olive Owner",
                        "--role", "owner", "--organization", "Site")
        #expect(added.status == 0)
        #expect(added.terminal.stdout.contains("added owner@site.test (OWNER, can scan) to Site"))
        // The database is private to its owner.
        let attributes = try FileManager.default.attributesOfItem(atPath: database)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        let duplicate = run("user", "add", "--db", database, "--email", "owner@site.test", "--name", "Again", "--role", "ADMIN",
                            "--organization", "Site")
        #expect(duplicate.status == 1)
        #expect(duplicate.terminal.stderr.contains("already exists"))

        let approver = run("user", "add", "--db", database, "--email", "ap@site.test", "--name", "Ap", "--role", "APPROVER",
                           "--organization", "Site", "--can-scan")
        #expect(approver.status == 0)
        #expect(approver.terminal.stdout.contains("(APPROVER, can scan)"))

        let badEmail = run("user", "add", "--db", database, "--email", "not-an-email", "--name", "X", "--role", "ADMIN")
        #expect(badEmail.status == 1)
        #expect(badEmail.terminal.stderr.contains("email must be an email address"))

        let dock = run("checkpoint", "add", "--db", database, "--organization", "Site", "--name", "Loading dock")
        #expect(dock.status == 0)
        let again = run("checkpoint", "add", "--db", database, "--organization", "Site", "--name", "Loading dock")
        #expect(again.status == 1)
        #expect(again.terminal.stderr.contains("already has a checkpoint named Loading dock"))
        let unknown = run("checkpoint", "add", "--db", database, "--organization", "Nowhere", "--name", "Gate 2")
        #expect(unknown.status == 1)
        #expect(unknown.terminal.stderr.contains("no organization named Nowhere"))

        let store = try ServerDatabase(path: database)
        defer { store.close() }
        let names = try store.readConnection { db in
            try db.query("SELECT c.name FROM checkpoints c JOIN organizations o ON o.id = c.organization_id WHERE o.name = 'Site' ORDER BY c.name") { try $0.string(0) }
        }
        #expect(names == ["Loading dock", "Main gate"])

        // What was added on the file is in its audit log, by `system`, and the chain holds;
        // refused additions left nothing.
        let entries = try store.readConnection { db in
            try db.query("SELECT action, actor_kind FROM audit_log ORDER BY seq") { "\(try $0.string(0)) \(try $0.string(1))" }
        }
        #expect(entries == ["user.create system", "user.create system", "checkpoint.create system"])
        let verified = run("audit", "verify", "--db", database)
        #expect(verified.status == 0, "\(verified.terminal.stdout)\(verified.terminal.stderr)")
        // The secret the chain is keyed with was made private beside the database.
        let secret = try FileManager.default.attributesOfItem(atPath: database + ".secret")
        #expect((secret[.posixPermissions] as? Int) == 0o600)
    }

    /// `gatepass audit verify` on a file someone edited: exit 1 naming the entry, for a changed
    /// value, a deleted entry, an inserted one and the newest ones removed; exit 0 again once
    /// the file is as it was.
    @Test func keysListRotateAndRevokeWorkOnTheKeysFile() throws {
        let database = temporaryPath("keys.db")
        defer {
            for suffix in ["", "-wal", "-shm", ".secret", ".audit-head", ".pass-keys", ".pass-keys.lock"] {
                try? FileManager.default.removeItem(atPath: database + suffix)
            }
        }
        #expect(run("user", "add", "--db", database, "--email", "o@site.test", "--name", "O", "--role", "OWNER",
                    "--organization", "Site").status == 0)
        var result = run("keys", "list", "--db", database)
        #expect(result.status == 0)
        let listed = result.terminal.stdout
        #expect(listed.contains("1  admit") && listed.contains("2  approval") && listed.contains("current"), "\(listed)")
        var status = stat()
        #expect(stat(database + ".pass-keys", &status) == 0 && status.st_mode & 0o777 == 0o600)
        #expect(!listed.contains("privateKey"))

        result = run("keys", "rotate", "--db", database, "--purpose", "admit")
        #expect(result.status == 0 && result.terminal.stdout.contains("admit key 3 is current; 1 retired"), "\(result.terminal.stdout)")
        result = run("keys", "revoke", "--db", database, "3")
        #expect(result.status == 0 && result.terminal.stdout.contains("key 3 revoked; 4 is the new current key"),
                "\(result.terminal.stdout)")
        result = run("keys", "list", "--db", database)
        #expect(result.terminal.stdout.contains("3  admit") && result.terminal.stdout.contains("REVOKED"))
        // Refusals in one sentence: a key revoked twice, an unknown key, a malformed id, a bad purpose.
        for (arguments, message) in [(["revoke", "--db", database, "3"], "revoked already"),
                                     (["revoke", "--db", database, "77"], "no pass key has the id 77"),
                                     (["revoke", "--db", database, "bad\u{1B}[2J"], "KEY must be a pass key id"),
                                     (["rotate", "--db", database, "--purpose", "root"], "--purpose must be admit or approval"),
                                     (["rotate", "--db", database + "-missing"], "no database at")] {
            result = GatePassCLI.main(["gatepass", "keys"] + arguments, terminal: RecordingTerminal()) == 0 ? (0, RecordingTerminal()) : {
                let terminal = RecordingTerminal()
                return (GatePassCLI.main(["gatepass", "keys"] + arguments, terminal: terminal), terminal)
            }()
            #expect(result.status != 0 && result.terminal.stderr.contains(message), "\(arguments): \(result.terminal.stderr)")
            #expect(!result.terminal.stderr.contains("\u{1B}"))
        }
    }

    @Test func auditVerifyNamesTheFirstTamperedEntry() throws {
        let database = temporaryPath("tamper.db")
        defer {
            for suffix in ["", "-wal", "-shm", ".secret", ".audit-head"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        }
        for (index, role) in ["OWNER", "ADMIN", "APPROVER", "HOST"].enumerated() {
            #expect(run("user", "add", "--db", database, "--email", "u\(index)@site.test", "--name", "U \(index)",
                        "--role", role, "--organization", "Site").status == 0)
        }
        func verify() -> (status: Int32, text: String) {
            let result = run("audit", "verify", "--db", database)
            return (result.status, result.terminal.stdout + result.terminal.stderr)
        }
        #expect(verify().status == 0)
        func sql(_ statement: String) throws {
            let store = try ServerDatabase(path: database)
            defer { store.close() }
            _ = try store.writeConnection { db in try db.execute(statement) }
        }
        try sql("UPDATE audit_log SET after = replace(after, 'U 1', 'U X') WHERE seq = 2")
        var result = verify()
        #expect(result.status == 1 && result.text.contains("entry 2") && result.text.contains("after"), "\(result.text)")
        try sql("UPDATE audit_log SET after = replace(after, 'U X', 'U 1') WHERE seq = 2")
        #expect(verify().status == 0)

        try sql("CREATE TABLE saved AS SELECT * FROM audit_log WHERE seq = 3")
        try sql("DELETE FROM audit_log WHERE seq = 3")
        result = verify()
        #expect(result.status == 1 && result.text.contains("entry 4") && result.text.contains("does not follow"), "\(result.text)")
        try sql("INSERT INTO audit_log SELECT * FROM saved")
        #expect(verify().status == 0)

        // A copy of entry 2 slipped in after it, with a fresh id and seq: its link cannot follow.
        try sql("""
            INSERT INTO audit_log (seq, id, organization_id, at, actor_kind, actor_id, action, entity, entity_id, before, after,
                erased, field_hashes, link)
            SELECT 100, 'inserted', organization_id, at, actor_kind, actor_id, action, entity, entity_id, before, after, erased,
                field_hashes, link FROM audit_log WHERE seq = 2
            """)
        result = verify()
        #expect(result.status == 1 && result.text.contains("entry 100"), "\(result.text)")
        try sql("DELETE FROM audit_log WHERE seq = 100")

        try sql("DELETE FROM audit_log WHERE seq = 4")
        result = verify()
        #expect(result.status == 1 && result.text.contains("newest entries were removed"), "\(result.text)")
    }

    @Test func checkpointAddNeedsAnExistingDatabase() {
        let (status, terminal) = run("checkpoint", "add", "--db", temporaryPath("missing.db"), "--organization", "X", "--name", "Y")
        #expect(status == 1)
        #expect(terminal.stderr.contains("no database at"))
    }
}

@Suite struct ConfigurationFileTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Config/server.json documents the defaults: it must say exactly what the code does.
    @Test func shippedConfigurationEqualsTheDefaults() throws {
        let loaded = try ServerConfiguration.load(path: Self.root.appendingPathComponent("Config/server.json").path)
        #expect(loaded == ServerConfiguration())
    }

    /// The table is the one declaration of a key: every stored property of the configuration
    /// has its row (a property without one could never be set from the file), and
    /// Config/server.json lists every row, in the table's order.
    @Test func everyKeyIsInTheTableAndInTheShippedFile() throws {
        let properties = Mirror(reflecting: ServerConfiguration()).children.compactMap(\.label)
        #expect(ServerConfiguration.keys.map(\.name) == properties)
        #expect(Set(ServerConfiguration.keys.map(\.name)).count == ServerConfiguration.keys.count)
        #expect(ServerConfiguration.keys.allSatisfy { !$0.meaning.isEmpty })
        let data = try Data(contentsOf: Self.root.appendingPathComponent("Config/server.json"))
        let text = String(decoding: data, as: UTF8.self)
        let keys = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any]).keys
        #expect(Set(keys) == Set(ServerConfiguration.keys.map(\.name)))
        let offsets = ServerConfiguration.keys.compactMap { text.range(of: "\"\($0.name)\":")?.lowerBound }
        #expect(offsets == offsets.sorted(), "Config/server.json lists the keys in the table's order")
    }

    /// Config/kiosk.json documents the kiosk's defaults the same way.
    @Test func shippedKioskConfigurationEqualsTheDefaults() throws {
        let loaded = try KioskConfiguration.load(path: Self.root.appendingPathComponent("Config/kiosk.json").path)
        #expect(loaded == KioskConfiguration())
        #expect(loaded.offlinePolicy == .signed && loaded.offlineAfterMs == 1500 && loaded.cooldown == 3)
    }

    func kiosk(_ arguments: [String]) throws -> KioskCommand {
        guard case .parsed(let parsed) = try CommandParser.parse(arguments + ["--image", "pass.png"], for: KioskCommand.configuration)
        else { throw TestFailureText("not parsed") }
        return try KioskCommand(parsing: parsed)
    }

    @Test func theKioskReadsItsPolicyFromTheFileAndFlagsOverrideIt() throws {
        let path = temporaryPath("kiosk.json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(#"{"offlinePolicy": "deny", "offlineAfterMs": 800}"#.utf8).write(to: URL(fileURLWithPath: path))
        let fromFile = try kiosk(["--config", path]).settings()
        #expect(fromFile.offlinePolicy == .deny && fromFile.offlineAfterMs == 800 && fromFile.cooldown == 3)
        let overridden = try kiosk(["--config", path, "--offline-policy", "cached-only", "--cooldown", "5"]).settings()
        #expect(overridden.offlinePolicy == .cachedOnly && overridden.offlineAfterMs == 800 && overridden.cooldown == 5)
        #expect(try kiosk([]).settings() == KioskConfiguration())
    }

    @Test(arguments: [
        (#"{"offlinePolicy": "allow-all"}"#, "offlinePolicy"),
        (#"{"offlinepolicy": "deny"}"#, "unknown key offlinepolicy; the nearest known key is offlinePolicy"),
        (#"{"cooldwn": 2}"#, "unknown key cooldwn; the nearest known key is cooldown"),
        (#"{"offlineAfterMs": 50}"#, "offlineAfterMs must be 100 to 60000"),
        (#"{"offlineAfterMs": "1500"}"#, "offlineAfterMs has the wrong type"),
        (#"{"cooldown": -1}"#, "cooldown must be 0 to 3600"),
        ("[1]", "the file has the wrong type"),
        ("{not json", "is not a kiosk configuration"),
        (#"{"offlinePolicy": "deny\u001b[2J"}"#, "offlinePolicy"),
    ])
    func aKioskConfigurationThatIsNotUnderstoodIsRefusedNamingWhy(text: String, message: String) throws {
        let path = temporaryPath("kiosk.json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        do {
            _ = try KioskConfiguration.load(path: path)
            Issue.record("\(text) was accepted")
        } catch {
            #expect("\(error)".contains(message), "\(error)")
            #expect(!"\(error)".contains("\u{1B}"))
        }
        #expect(throws: (any Error).self) { try KioskConfiguration.load(path: path + "-missing") }
    }

    @Test(arguments: [
        ("{\"port\": 70000}", "port must be between 0 and 65535"),
        ("{\"port\": \"80\"}", "port must be an integer"),
        ("{\"threads\": 0}", "threads must be between 1 and 256"),
        ("{\"sqliteSynchronous\": \"SOMETIMES\"}", "sqliteSynchronous must be OFF, NORMAL, FULL or EXTRA"),
        ("{\"timeZone\": \"Mars/Olympus\"}", "timeZone must be an IANA zone"),
        ("{\"idempotencyRetentionHours\": 1}", "idempotencyRetentionHours must be between 24 and 87600"),
        // A key the server does not know stops the start, naming the nearest one it knows.
        ("{\"retentionDayz\": 30}", "unknown key retentionDayz; the nearest known key is retentionDays"),
        ("{\"treads\": 4}", "unknown key treads; the nearest known key is threads"),
        ("{\"port\": null}", "port must be an integer, not null"),
        ("{\"retentionDays\": 0}", "retentionDays must be between 1 and 3650"),
        // The limits block is read by its own table, its keys named with the block's.
        ("{\"limits\": {\"enabld\": false}}", "unknown key limits.enabld; the nearest known key is limits.enabled"),
        ("{\"limits\": {\"enabled\": \"no\"}}", "limits.enabled must be true or false"),
        ("{\"limits\": {\"scannerCheckInBurst\": 0}}", "limits.scannerCheckInBurst must be between 1 and 10000000"),
        ("{\"limits\": 5}", "limits must be"),
        ("[1, 2]", "the body must be a JSON object"),
        ("{not json", "not valid JSON"),
    ])
    func badConfigurationIsNamed(text: String, message: String) throws {
        let path = temporaryPath("config.json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let (status, terminal) = run("serve", "--config", path, "--port", "0")
        #expect(status == 1)
        #expect(terminal.stderr.contains(message))
    }

    @Test func missingConfigurationFile() {
        let (status, terminal) = run("serve", "--config", "/nonexistent/server.json")
        #expect(status == 1)
        #expect(terminal.stderr.contains("cannot read the configuration file /nonexistent/server.json"))
    }
}
