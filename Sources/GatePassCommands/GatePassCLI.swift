import Foundation

/// The `gatepass` command: one type per subcommand, chosen by the first argument.
public enum GatePassCLI {
    public static let help = HelpText(
        overview: "Gate Pass: visitor passes, approvals and check-ins at the gate.",
        usage: "gatepass <subcommand> [options]",
        subcommands: [
            ("serve", "Run the HTTP API server."),
            ("user add", "Add a user to the database file (bootstrapping)."),
            ("checkpoint add", "Add a checkpoint (gate) to an organization in the database file."),
        ])

    /// Runs the command line and returns the exit status: 0 ok, 1 failure, 2 usage error.
    public static func main(_ arguments: [String], terminal: any Terminal = StandardStreams()) -> Int32 {
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
            case "serve":
                return try ServeCommand.run(rest, terminal: terminal)
            case "user":
                return try AdministrationCommands.user(rest, terminal: terminal)
            case "checkpoint":
                return try AdministrationCommands.checkpoint(rest, terminal: terminal)
            default:
                throw UsageError("unknown subcommand \(name)")
            }
        } catch let error as UsageError {
            terminal.err("error: \(error.message)\nRun 'gatepass --help' or 'gatepass <subcommand> --help' for usage.")
            return 2
        } catch let error as CommandFailure {
            terminal.err("error: \(error.message)")
            return 1
        } catch {
            terminal.err("error: \(error)")
            return 1
        }
    }
}
