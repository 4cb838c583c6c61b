import Foundation
import GatePassServer

/// `gatepass audit …`: the audit log's own checks, on the database file.
enum AuditCommands {
    static let members: [GatePassCLI.Subcommand] = [
        .init("verify", "Check the audit log's chain; exit 1 naming the first altered, inserted or removed entry.",
              AuditVerifyCommand.self),
    ]
}

struct AuditVerifyCommand: GatePassCommand {
    static let database = ServerOptions.database("The database.", required: true)
    static let secretFile = ServerOptions.secretFile
    static let configuration = CommandConfiguration(
        name: "gatepass audit verify",
        overview: "Walk the audit log of a database file from its first entry: every entry's values must hash to what its link covers, every link must follow from the one before (HMAC under the key from the server's secret), an erased entry must be of an action retention erases, hold no values and be listed by a later entry that records the erasure, and the log must reach the newest entry recorded outside the database (<db>.audit-head, signed with the same key), which must be there once the log has entries. Exits 0 when the log is intact, 1 naming the first entry that was altered, inserted or removed, or what is wrong with the head.",
        options: [database, secretFile])

    var database: String
    var secretFile: String?

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        database = try arguments.required(Self.database)
        secretFile = try arguments.value(Self.secretFile)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        try AdministrationCommands.requireExisting(database)
        let verdict: AuditVerdict
        do {
            verdict = try AuditVerification.verify(database: database, secretFile: secretFile)
        } catch {
            throw CommandFailure("cannot verify \(database): \(error)")
        }
        if verdict.isIntact {
            context.terminal.out(visible: verdict.description)
            return 0
        }
        context.terminal.err(verdict.description)
        return 1
    }
}
