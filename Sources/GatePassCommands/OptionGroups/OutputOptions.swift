/// `--json`: the stable, documented machine output (sorted keys) instead of the lines for a person.
enum OutputOptions {
    static let json = Flag("--json", help: "Print the server's JSON answer instead of text.")

    /// `--json` with the command's own sentence about what it prints.
    static func flag(_ meaning: String) -> Flag { Flag("--json", help: meaning) }
}
