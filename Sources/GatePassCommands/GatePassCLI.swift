import Foundation
import GatePassClient
import GatePassCore

/// The `gatepass` command: one type per subcommand, chosen by the first argument.
public enum GatePassCLI {
    /// A subcommand: its name, the sentence the top-level help lists, and how it runs.
    struct Subcommand: Sendable {
        var name: String
        var about: String
        var main: @Sendable ([String], CommandContext) throws -> Int32

        init<Command: GatePassCommand>(_ name: String, _ about: String, _ command: Command.Type) {
            self.name = name
            self.about = about
            main = { try Command.main($0, $1) }
        }

        /// `checkpoint add`: a word that only leads to its one subcommand. `aliases`: other
        /// words for the same group (`gate` for `checkpoint`), every member included.
        init(_ name: String, _ about: String, overview: String, aliases: [String] = [], members: [Subcommand]) {
            self.name = name
            self.about = about
            self.aliases = aliases
            self.members = members
            let configuration = CommandConfiguration(
                name: "gatepass \(name)", overview: overview, usage: "gatepass \(name) <subcommand> [options]",
                subcommands: members.map { ($0.name, $0.about) })
            main = { arguments, context in
                guard let word = arguments.first else {
                    context.terminal.err(configuration.help)
                    return 2
                }
                if ["--help", "-h", "help"].contains(word) {
                    context.terminal.out(configuration.help)
                    return 0
                }
                guard let member = members.first(where: { $0.name == word }) else {
                    throw UsageError("unknown subcommand \(name) \(word); one of: \(members.map(\.name).joined(separator: ", "))")
                }
                return try member.main(Array(arguments.dropFirst()), context)
            }
        }

        /// The subcommands of a group (`visitor`), by their own word; empty for a plain command.
        /// A command that runs by itself (`gatepass kiosk --dir D`) and also has subcommands
        /// (`gatepass kiosk enrol CODE`): a first word naming a member runs the member.
        init<Command: GatePassCommand>(_ name: String, _ about: String, _ command: Command.Type, members: [Subcommand]) {
            self.name = name
            self.about = about
            self.members = members
            main = { arguments, context in
                if let word = arguments.first, let member = members.first(where: { $0.name == word }) {
                    return try member.main(Array(arguments.dropFirst()), context)
                }
                return try Command.main(arguments, context)
            }
        }

        var members: [Subcommand] = []
        var aliases: [String] = []

        var word: String { String(name.split(separator: " ")[0]) }

        /// Whether `typed` names this subcommand, by its word or an alias.
        func answers(to typed: String) -> Bool { word == typed || aliases.contains(typed) }
    }

    static let subcommands: [Subcommand] = [
        .init("demo", "Try it: a demo server with demo data and the console logged in against it, in one command.", DemoCommand.self),
        .init("serve", "Run the HTTP API server.", ServeCommand.self),
        .init("user", "List, add, update and disable users (add --db: bootstrap a database file).",
              overview: "The users of your organization, through the server (OWNER/ADMIN): list them, add one, change a name, role or scanning right, disable or enable one. gatepass user add --db adds a user to a database file directly, for the first OWNER.",
              members: UserCommands.members),
        .init("checkpoint", "List, add, rename and retire checkpoints (alias: gate; add --db: bootstrap a database file).",
              overview: "The checkpoints (gates) of your organization, through the server (OWNER/ADMIN): list them, add one, rename one, retire one (its scanner tokens and kiosks stop at once). gatepass checkpoint add --db adds one to a database file directly. gatepass gate is the same command.",
              aliases: ["gate"], members: GateCommands.checkpointMembers),
        .init("site", "Show or change the organization's settings: time zone, retention, automatic check-out.",
              overview: "Your organization's settings, through the server: its name, time zone, how long visitors are kept before they are anonymised (retention) and when visitors still inside are checked out automatically. Anyone shows them; an OWNER changes them.",
              members: SiteCommands.members),
        .init("scanner-token", "List and revoke scanner tokens, enrolled kiosks included.",
              overview: "The live scanner tokens of your organization (OWNER/ADMIN): who made each, at which checkpoint, when it was last used; revoke one and its kiosk is signed out.",
              members: GateCommands.scannerTokenMembers),
        .init("login", "Log in with a one-time code (stores the session on this device).", LoginCommand.self),
        .init("logout", "Unregister this device's push token and end the session.", LogoutCommand.self),
        .init("whoami", "Show who is logged in.", WhoAmICommand.self),
        .init("approvals", "List visitors awaiting approval.", ApprovalsCommand.self),
        .init("approve", "Approve a visitor.", ApproveCommand.self),
        .init("reject", "Reject a visitor.", RejectCommand.self),
        .init("checkin", "Check a pass in (queued when offline).", CheckInCommand.self),
        .init("checkout", "Check a visitor out (queued when offline).", CheckOutCommand.self),
        .init("lookup", "Find visitors by short id, name, phone or email.", LookupCommand.self),
        .init("visitor", "Register, list, show, edit, cancel, check out and invite visitors; save their passes.",
              overview: "The office's work with visitors (OWNER/ADMIN): register them before they come, find them, change or cancel a visit, check them out, mail the invitation, save the pass. Every ID is the visitor's id or short id.",
              members: OfficeCommands.visitorMembers),
        .init("mail", "The server's mail log, and a test mail.",
              overview: "The server's outgoing mail (OWNER/ADMIN): the log of what was queued, sent or given up, and a test mail to check the SMTP settings.",
              members: MailCommands.members),
        .init("blocklist", "Who must not enter: list, add and remove blocklist entries.",
              overview: "The organization's blocklist (OWNER/ADMIN): people refused at every gate, by name (and company), email or phone. A blocked check-in or walk-in answers BLOCKED, without the reason, and owners and admins get a security alert.",
              members: BlocklistCommands.members),
        .init("audit", "Read the audit log (list), or check its tamper-evident chain in a database file (verify).",
              overview: "The audit log: read it through the server (OWNER/ADMIN), or check its chain on a database file.",
              members: AuditCommands.members),
        .init("keys", "The pass keys that sign GP2 passes: list, rotate, revoke a leaked one.",
              overview: "The Ed25519 keys that sign each organization's passes (GP2), kept in <db>.pass-keys (mode 0600) beside the database. The server may be running: it sees a change within a second.",
              members: KeysCommands.members),
        .init("admin", "Data governance on a database file: retention now (or a dry run).",
              overview: "The site's data governance on a database file (the server may be running).",
              members: AdminCommands.members),
        .init("db", "Move a site's database to PostgreSQL (copy), or back up a SQLite file (backup).",
              overview: "The site's database as a whole: copy a SQLite database into an empty PostgreSQL database and verify it, or back up a SQLite file while the server runs.",
              members: DatabaseCommands.members),
        .init("walk-in", "Register a visitor who arrived without a pass.", WalkInCommand.self),
        .init("stats", "Today's gate counters.", StatsCommand.self),
        .init("history", "The scan history (--csv for the export).", HistoryCommand.self),
        .init("outbox", "Inspect and replay queued mutations: list, dead, drain, retry ID.", OutboxCommand.self),
        .init("events", "Follow the live events (approvals, arrivals, notifications) until Ctrl-C.", EventsCommand.self),
        .init("console", "The full-screen terminal console: approvals (live), scan, history, profile and outbox.", ConsoleCommand.self),
        .init("kiosk", "Run the unattended gate: scan passes from a camera and check them in (enrol, enrol-code, roll).",
              KioskCommand.self, members: [
                  .init("enrol", "Enrol this device as a gate's kiosk with a one-time code.", KioskEnrolCommand.self),
                  .init("enrol-code", "Make a one-time enrolment code for a kiosk (OWNER/ADMIN).", KioskEnrolCodeCommand.self),
                  .init("roll", "Print the evacuation roll from this kiosk's pass cache (works offline).", KioskRollCommand.self),
              ]),
        .init("push-test", "Send a test event to registered device tokens and report which were delivered.", PushTestCommand.self),
        .init("push-deliveries", "List the push deliveries of one device token.", PushDeliveriesCommand.self),
        .init("scan", "Read QR codes from image files, a folder or a Y4M recording and print each new one.", ScanCommand.self),
    ]

    public static let configuration = CommandConfiguration(
        name: "gatepass", overview: "Gate Pass: visitor passes, approvals and check-ins at the gate.",
        usage: "gatepass <subcommand> [options]",
        subcommands: subcommands.map { ($0.name, $0.about) })

    /// Runs the command line and returns the exit status: 0 ok, 1 failure, 2 usage error.
    public static func main(_ arguments: [String], terminal: any Terminal = StandardStreams(),
                            environment: [String: String] = ProcessInfo.processInfo.environment,
                            clock: any WallClock = SystemWallClock()) -> Int32 {
        var rest = Array(arguments.dropFirst())
        let context = CommandContext(terminal: terminal, environment: environment, clock: clock)
        do {
            guard let name = rest.first else {
                terminal.err(configuration.help)
                return 2
            }
            rest.removeFirst()
            if ["--help", "-h", "help"].contains(name) {
                terminal.out(configuration.help)
                return 0
            }
            guard let subcommand = subcommands.first(where: { $0.answers(to: name) }) else {
                throw UsageError("unknown subcommand \(name)")
            }
            return try subcommand.main(rest, context)
        } catch let error as UsageError {
            terminal.err("error: \(TerminalText.visible(error.message))\nRun 'gatepass --help' or 'gatepass <subcommand> --help' for usage.")
            return 2
        } catch let error as CommandFailure {
            terminal.err(visible: "error: \(error.message)")
            return 1
        } catch let error as ClientError {
            terminal.err(visible: "error: \(ClientCommands.sentence(for: error))")
            return 1
        } catch {
            terminal.err(visible: "error: \(error)")
            return 1
        }
    }
}
