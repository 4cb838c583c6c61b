import Foundation
import GatePassCore
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// `gatepass admin retention --db`: end to end on a database file, on a clock the test sets.
@Suite struct AdminCommandTests {
    struct SetClock: WallClock {
        var date: Date
        func now() -> Date { date }
    }

    func run(at date: Date, _ arguments: String...) -> (status: Int32, terminal: RecordingTerminal) {
        let terminal = RecordingTerminal()
        let status = GatePassCLI.main(["gatepass"] + arguments, terminal: terminal, environment: [:], clock: SetClock(date: date))
        return (status, terminal)
    }

    @Test func retentionCountsOnADryRunThenAnonymisesTheSameAndTheChainVerifies() throws {
        let database = temporaryPath("retention.db")
        defer {
            for suffix in ["", "-wal", "-shm", ".secret", ".audit-head"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        }
        let seeded = Date(timeIntervalSince1970: 1_796_000_000)
        #expect(run(at: seeded, "user", "add", "--db", database, "--email", "owner@site.test", "--name", "Olive Owner",
                    "--role", "OWNER", "--organization", "Site").status == 0)
        let store = try ServerDatabase(path: database)
        _ = try DemoData.seed(store: store, now: seeded, timeZone: TimeZone(identifier: "UTC")!)
        store.close()

        let later = seeded.addingTimeInterval(400 * 86_400)
        let dry = run(at: later, "admin", "retention", "--db", database, "--dry-run")
        #expect(dry.status == 0, "\(dry.terminal.stderr)")
        let demoLine = try #require(dry.terminal.stdout.split(separator: "\n").first { $0.hasPrefix("\(DemoData.organization): would anonymise ") })
        #expect(dry.terminal.stdout.contains("Site: would anonymise 0 visitors and 0 scans"))
        #expect(!demoLine.contains("would anonymise 0 visitors"), "the demo's visitors are due 400 days on: \(demoLine)")
        #expect(run(at: later, "admin", "retention", "--db", database, "--dry-run").terminal.stdout == dry.terminal.stdout)

        let real = run(at: later, "admin", "retention", "--db", database)
        #expect(real.status == 0)
        #expect(real.terminal.stdout == dry.terminal.stdout.replacingOccurrences(of: "would anonymise", with: "anonymised"))
        let again = run(at: later, "admin", "retention", "--db", database)
        #expect(again.terminal.stdout.contains("\(DemoData.organization): anonymised 0 visitors and 0 scans"))
        #expect(run(at: later, "audit", "verify", "--db", database).status == 0)
    }

    @Test func retentionRefusesWhatItCannotDoInOneSentence() {
        let missing = temporaryPath("missing.db")
        let noFile = run(at: Date(), "admin", "retention", "--db", missing)
        #expect(noFile.status == 1 && noFile.terminal.stderr.contains("no database at"))
        #expect(run(at: Date(), "admin", "retention").status == 2, "--db is required")
        #expect(run(at: Date(), "admin", "retention", "--db").status == 2)
        #expect(run(at: Date(), "admin", "purge").status == 2)

        let database = temporaryPath("nosecret.db")
        defer {
            for suffix in ["", "-wal", "-shm", ".secret", ".audit-head"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        }
        #expect(run(at: Date(), "user", "add", "--db", database, "--email", "o@site.test", "--name", "O", "--role", "OWNER").status == 0)
        let wrongSecret = run(at: Date(), "admin", "retention", "--db", database, "--secret-file", database + ".elsewhere")
        #expect(wrongSecret.status == 1 && wrongSecret.terminal.stderr.contains("no server secret at"))
    }
}
