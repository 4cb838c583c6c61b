import Foundation
import GatePassCore

/// The `gatepass` command: one type per subcommand, chosen by the first argument.
public enum GatePassCLI {
    public static let help = HelpText(
        overview: "Gate Pass: visitor passes, approvals and check-ins at the gate.",
        usage: "gatepass <subcommand> [options]",
        subcommands: [
            ("demo", "Try it: a demo server with demo data and the console logged in against it, in one command."),
            ("serve", "Run the HTTP API server."),
            ("user add", "Add a user to the database file (bootstrapping)."),
            ("checkpoint add", "Add a checkpoint (gate) to an organization in the database file."),
            ("login", "Log in with a one-time code (stores the session on this device)."),
            ("logout", "Unregister this device's push token and end the session."),
            ("whoami", "Show who is logged in."),
            ("approvals", "List visitors awaiting approval."),
            ("approve", "Approve a visitor."),
            ("reject", "Reject a visitor."),
            ("checkin", "Check a pass in (queued when offline)."),
            ("checkout", "Check a visitor out (queued when offline)."),
            ("lookup", "Find visitors by short id, name, phone or email."),
            ("walk-in", "Register a visitor who arrived without a pass."),
            ("stats", "Today's gate counters."),
            ("history", "The scan history (--csv for the export)."),
            ("outbox", "Inspect and replay queued mutations: list, dead, drain, retry ID."),
            ("events", "Follow the live events (approvals, arrivals, notifications) until Ctrl-C."),
            ("console", "The full-screen terminal console: approvals (live), scan, history, profile and outbox."),
            ("kiosk", "Run the unattended gate: scan passes from a camera and check them in."),
            ("push-test", "Send a test event to registered device tokens and report which were delivered."),
            ("push-deliveries", "List the push deliveries of one device token."),
            ("scan", "Read QR codes from image files, a folder or a Y4M recording and print each new one."),
        ])

    /// Runs the command line and returns the exit status: 0 ok, 1 failure, 2 usage error.
    public static func main(_ arguments: [String], terminal: any Terminal = StandardStreams(),
                            environment: [String: String] = ProcessInfo.processInfo.environment,
                            clock: any WallClock = SystemWallClock()) -> Int32 {
        var rest = Array(arguments.dropFirst())
        do {
            guard let name = rest.first else {
                terminal.err(help.rendered)
                return 2
            }
            rest.removeFirst()
            switch name {
            case "--help", "-h", "help":
                terminal.out(help.rendered)
                return 0
            case "demo":
                return try DemoCommand.run(rest, terminal: terminal, environment: environment, clock: clock)
            case "serve":
                return try ServeCommand.run(rest, terminal: terminal)
            case "user":
                return try AdministrationCommands.user(rest, terminal: terminal)
            case "checkpoint":
                return try AdministrationCommands.checkpoint(rest, terminal: terminal)
            case "events":
                return try EventsCommand.run(rest, terminal: terminal, environment: environment, clock: clock)
            case "console":
                return try ConsoleCommand.run(rest, terminal: terminal, environment: environment, clock: clock)
            case "kiosk":
                return try KioskCommand.run(rest, terminal: terminal, environment: environment, clock: clock)
            case "push-test":
                return try PushCommands.test(rest, terminal: terminal, environment: environment, clock: clock)
            case "push-deliveries":
                return try PushCommands.deliveries(rest, terminal: terminal, environment: environment, clock: clock)
            case "scan":
                return try ScanCommand.run(rest, terminal: terminal)
            case let client where ClientCommands.names.contains(client):
                return try ClientCommands.run(client, rest, terminal: terminal, environment: environment, clock: clock)
            default:
                throw UsageError("unknown subcommand \(name)")
            }
        } catch let error as UsageError {
            terminal.err("error: \(TerminalText.visible(error.message))\nRun 'gatepass --help' or 'gatepass <subcommand> --help' for usage.")
            return 2
        } catch let error as CommandFailure {
            terminal.err(visible: "error: \(error.message)")
            return 1
        } catch {
            terminal.err(visible: "error: \(error)")
            return 1
        }
    }
}
