/// A `gatepass` subcommand: declared and parsed as a `ParsableCommand`, run with what the
/// process was given (terminal, environment, clock).
protocol GatePassCommand: ParsableCommand {
    func run(_ context: CommandContext) throws -> Int32
}

extension GatePassCommand {
    /// Prints the help or parses, validates and runs; usage mistakes are thrown before anything runs.
    static func main(_ arguments: [String], _ context: CommandContext) throws -> Int32 {
        guard let command = try parse(arguments) else {
            context.terminal.out(configuration.help)
            return 0
        }
        return try command.run(context)
    }
}
