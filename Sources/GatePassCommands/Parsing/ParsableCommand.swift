/// A command declared once: `configuration` lists its arguments and options (static
/// declarations the command also reads its values through), `init(parsing:)` takes the values
/// and `validate()` checks how they combine, both before anything runs — so every usage
/// mistake is found before the command does anything and exits 2.
public protocol ParsableCommand {
    static var configuration: CommandConfiguration { get }
    /// Reads the parsed values; a bad value is a `UsageError`.
    init(parsing arguments: ParsedArguments) throws(UsageError)
    /// Checks how the values combine (`choose one of --csv and --json`).
    func validate() throws(UsageError)
}

extension ParsableCommand {
    public func validate() throws(UsageError) {}

    /// Parses and validates `arguments`; nil when they ask for help.
    public static func parse(_ arguments: [String]) throws(UsageError) -> Self? {
        switch try CommandParser.parse(arguments, for: configuration) {
        case .help:
            return nil
        case .parsed(let parsed):
            let command = try Self(parsing: parsed)
            try command.validate()
            return command
        }
    }
}
