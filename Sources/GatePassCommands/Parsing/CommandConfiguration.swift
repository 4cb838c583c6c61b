/// One command's declaration: what it is for, its arguments, options and subcommands. The
/// parser reads it to parse and check a command line, and `help` renders it, so the two can
/// never disagree.
///
/// ```swift
/// static let note = Option<String>("--note", value: "TEXT", help: "A note kept with the decision.")
/// static let configuration = CommandConfiguration(
///     name: "gatepass approve", overview: "Approve a visitor.",
///     arguments: [id.spec], options: [note, OutputOptions.json])
/// ```
public struct CommandConfiguration: Sendable {
    /// The words that start the command, `gatepass approve`.
    public var name: String
    /// Full sentences: what the command does.
    public var overview: String
    /// Set where options exclude each other (`(--csv | --json)`); otherwise made from the declarations.
    public var usageOverride: String?
    public var arguments: [ArgumentSpec]
    public var options: [OptionSpec]
    /// Name and a sentence each; the parser does not read them (the group command dispatches).
    public var subcommands: [(name: String, about: String)]
    /// Paragraphs printed after the tables.
    public var discussion: String?

    public init(name: String, overview: String, usage: String? = nil, arguments: [ArgumentSpec] = [],
                options: [any OptionDeclaration] = [], subcommands: [(name: String, about: String)] = [],
                discussion: String? = nil) {
        self.name = name
        self.overview = overview
        self.usageOverride = usage
        self.arguments = arguments
        self.options = options.map(\.spec)
        self.subcommands = subcommands
        self.discussion = discussion
        var seen = Set<String>()
        for option in self.options {
            // Declaring one name twice is a programming error, not the user's.
            precondition(seen.insert(option.name).inserted, "\(name) declares \(option.name) twice")
        }
    }

    /// `gatepass approve ID [--note TEXT] [--json]`.
    public var usage: String {
        if let usageOverride { return usageOverride }
        var words = [name]
        words += arguments.map { $0.isOptional ? "[\($0.name)]" : $0.name }
        words += options.map { $0.isRequired ? $0.synopsis : "[\($0.synopsis)]" }
        return words.joined(separator: " ")
    }

    /// The `--help` text: OVERVIEW / USAGE / ARGUMENTS / OPTIONS / SUBCOMMANDS.
    public var help: String {
        HelpText(overview: overview, usage: usage,
                 arguments: arguments.map { ($0.name, $0.help) },
                 options: options.map { ($0.helpLabel, $0.help) },
                 subcommands: subcommands.map { ($0.name, $0.about) },
                 discussion: discussion).rendered
    }
}
