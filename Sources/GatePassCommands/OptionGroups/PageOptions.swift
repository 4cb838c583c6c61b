/// The option every list command shares: how much of the list one page brings (api.md
/// "Lists": `?limit=`, default 50, at most 500).
enum PageOptions {
    static let defaultLimit = 50

    /// `--limit N`, with the name of what the command lists ("users", "scans"; nil: none).
    static func limit(of things: String?) -> Option<Int> {
        Option<Int>("--limit", value: "N", in: 1...500,
                    help: "How many\(things.map { " " + $0 } ?? "") (default \(defaultLimit), at most 500).")
    }
}
