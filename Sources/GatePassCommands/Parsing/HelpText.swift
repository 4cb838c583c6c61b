/// Help in the shape swift-argument-parser uses: OVERVIEW / USAGE / ARGUMENTS / OPTIONS /
/// SUBCOMMANDS, each table's second column aligned; `-h, --help` closes the options.
public struct HelpText: Sendable {
    public var overview: String
    public var usage: String
    public var arguments: [(String, String)] = []
    public var options: [(String, String)] = []
    public var subcommands: [(String, String)] = []
    public var discussion: String?

    public init(overview: String, usage: String, arguments: [(String, String)] = [], options: [(String, String)] = [],
                subcommands: [(String, String)] = [], discussion: String? = nil) {
        self.overview = overview
        self.usage = usage
        self.arguments = arguments
        self.options = options
        self.subcommands = subcommands
        self.discussion = discussion
    }

    public var rendered: String {
        var text = "OVERVIEW: \(overview)\n\nUSAGE: \(usage)\n"
        func table(_ title: String, _ rows: [(String, String)]) {
            guard !rows.isEmpty else { return }
            // A name longer than 30 columns puts its sentence on the next line.
            let width = min(30, rows.map(\.0.count).max() ?? 0)
            text += "\n\(title):\n"
            for (name, about) in rows {
                let padded = name.count > width ? name + "\n" + String(repeating: " ", count: width + 4)
                                                 : name + String(repeating: " ", count: width - name.count)
                text += "  \(padded)  \(about)\n"
            }
        }
        table("ARGUMENTS", arguments)
        table("OPTIONS", options + [("-h, --help", "Show help information.")])
        table("SUBCOMMANDS", subcommands)
        if let discussion { text += "\n\(discussion)\n" }
        return text
    }
}
