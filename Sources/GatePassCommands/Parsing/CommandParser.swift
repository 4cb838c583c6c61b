/// Parses one command's arguments against its `CommandConfiguration`.
///
/// The rules, in the order they apply to each argument:
/// - after `--`, every argument is positional, even `--help`;
/// - the value of an option is the next argument whatever it starts with, so
///   `--note -h` is the note "-h" and `--cooldown -1` reaches the range check; `--note=TEXT`
///   works too. A list option (`--image A B`) takes the arguments up to the next one that
///   starts with `-` (`--image=-odd.png` for a file whose name does);
/// - `-h` and `--help` where they stand as an option ask for help, which wins over every
///   other mistake on the line;
/// - any other argument starting with `--` must be a declared option (else "unknown option");
///   a non-repeatable option given twice is a usage error;
/// - the rest are positionals, handed to the declared arguments in order (a lone `-`, or
///   `-5`, is a positional).
public enum CommandParser {
    public enum Outcome: Sendable {
        case help
        case parsed(ParsedArguments)
    }

    public static func parse(_ arguments: [String],
                             for configuration: CommandConfiguration) throws(UsageError) -> Outcome {
        let declared = Dictionary(configuration.options.flatMap { option in option.names.map { ($0, option) } },
                                  uniquingKeysWith: { first, _ in first })
        var values: [String: [String]] = [:]
        var positionals: [String] = []
        var firstMistake: UsageError?
        func note(_ mistake: String) { if firstMistake == nil { firstMistake = UsageError(mistake) } }

        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !isOption(argument) {
                positionals.append(argument)
                continue
            }
            if argument == "--" { optionsEnded = true; continue }
            if argument == "-h" || argument == "--help" { return .help }
            let (typed, inline) = split(argument)
            guard let option = declared[typed] else {
                note("unknown option \(typed)")
                continue
            }
            // Values are kept under the option's own name, whichever alias was typed.
            let name = option.name
            if values[name] != nil, option.arity != .values {
                note("\(name) was given more than once; give it once")
            }
            switch option.arity {
            case .flag:
                if inline != nil { note("\(name) takes no value") }
                values[name, default: []].append("")
            case .value, .values:
                let value: String
                if let inline {
                    value = inline
                } else if index < arguments.count, option.arity == .value || !arguments[index].hasPrefix("-") {
                    value = arguments[index]
                    index += 1
                } else {
                    note(option.arity == .value ? "\(name) needs a value"
                                                : "\(name) needs at least one \(option.valueName ?? "value")")
                    continue
                }
                values[name, default: []].append(value)
                if option.arity == .values {
                    while index < arguments.count, !arguments[index].hasPrefix("-") {
                        values[name, default: []].append(arguments[index])
                        index += 1
                    }
                }
            }
        }
        if let firstMistake { throw firstMistake }
        if positionals.count > configuration.arguments.count {
            throw UsageError("unexpected argument \(positionals[configuration.arguments.count])")
        }
        for (position, argument) in configuration.arguments.enumerated()
        where position >= positionals.count && !argument.isOptional {
            throw UsageError(argument.missingMessage)
        }
        for option in configuration.options where option.isRequired && values[option.name] == nil {
            throw UsageError("\(option.name) is required")
        }
        let named = Dictionary(uniqueKeysWithValues: zip(configuration.arguments.map(\.name), positionals))
        return .parsed(ParsedArguments(values: values, positionals: named))
    }

    /// Options are `--name`, `--name=value` and `-h`; `--` ends them. `-` and `-5` are values.
    private static func isOption(_ argument: String) -> Bool {
        argument.hasPrefix("--") || argument == "-h"
    }

    private static func split(_ argument: String) -> (name: String, inline: String?) {
        guard let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
}

/// What the parser read, looked up through the same declarations that drove it.
public struct ParsedArguments: Sendable {
    let values: [String: [String]]
    let positionals: [String: String]

    /// Whether `flag` was given.
    public func has(_ flag: Flag) -> Bool { values[flag.spec.name] != nil }

    /// The converted value, nil when the option was not given.
    public func value<Value>(_ option: Option<Value>) throws(UsageError) -> Value? {
        guard let text = values[option.spec.name]?.first else { return nil }
        return try option.convert(text)
    }

    /// The value of an option declared `required: true` (the parser checked it is there).
    public func required<Value>(_ option: Option<Value>) throws(UsageError) -> Value {
        guard let value = try value(option) else { throw UsageError("\(option.spec.name) is required") }
        return value
    }

    /// Every value of a list option, in order; empty when it was not given.
    public func values(_ option: ListOption) -> [String] { values[option.spec.name] ?? [] }

    /// Whether a list option was given at all.
    public func has(_ option: ListOption) -> Bool { values[option.spec.name] != nil }

    /// A positional argument, nil when an optional one is absent.
    public func value<Value>(_ argument: Argument<Value>) throws(UsageError) -> Value? {
        guard let text = positionals[argument.spec.name] else { return nil }
        return try argument.convert(text)
    }

    /// A required positional argument (the parser checked it is there).
    public func required<Value>(_ argument: Argument<Value>) throws(UsageError) -> Value {
        guard let value = try value(argument) else { throw UsageError(argument.spec.missingMessage) }
        return value
    }
}
