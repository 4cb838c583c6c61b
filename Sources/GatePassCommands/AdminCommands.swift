import Foundation
import GatePassCore
import GatePassServer

/// `gatepass admin …`: the site's data governance on the database file.
enum AdminCommands {
    static let members: [GatePassCLI.Subcommand] = [
        .init("retention", "Run retention now on a database file (--dry-run: count only).", AdminRetentionCommand.self),
    ]
}

struct AdminRetentionCommand: GatePassCommand {
    static let database = ServerOptions.database("The database.", required: true)
    static let dryRun = Flag("--dry-run", help: "Count what the run would anonymise; change nothing.")
    static let secretFile = ServerOptions.secretFile
    static let configuration = CommandConfiguration(
        name: "gatepass admin retention",
        overview: "Run retention now on a database file, for every organization, as the server's daily run does at 03:30 site time: visitors whose pass ended more than the organization's retentionDays ago are anonymised (name \"(anonymised)\", contact details, host, purpose and decision note erased; statuses, times and counts kept), with their scans' raw text, event snapshots, mail log rows, stored answers and audit values. Prints one line per organization. A real run is audited as retention.run by system.",
        options: [database, dryRun, secretFile])

    var database: String
    var dryRun: Bool
    var secretFile: String?

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        database = try arguments.required(Self.database)
        dryRun = arguments.has(Self.dryRun)
        secretFile = try arguments.value(Self.secretFile)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        try AdministrationCommands.requireExisting(database)
        let outcomes: [Administration.RetentionOutcome]
        do {
            outcomes = try Administration.runRetention(database: database, secretFile: secretFile, dryRun: dryRun,
                                                       now: context.clock.now(), warn: { context.terminal.err(visible: $0) })
        } catch let failure as Administration.Failure {
            throw CommandFailure(failure.message)
        } catch {
            throw CommandFailure("cannot run retention on \(database): \(error)")
        }
        let verb = dryRun ? "would anonymise" : "anonymised"
        for outcome in outcomes {
            context.terminal.out(visible: "\(outcome.organization): \(verb) \(outcome.counts.visitors) visitors and \(outcome.counts.scans) scans")
        }
        if outcomes.isEmpty { context.terminal.out("no organization in \(database)") }
        return 0
    }
}
