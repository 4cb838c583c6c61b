import GatePassCore

/// The option every list command shares: how much of the list one page brings (api.md
/// "Lists": `?limit=`, default 50, at most 500), and the note that a page is not the whole list.
enum PageOptions {
    static let defaultLimit = 50

    /// `--limit N`, with the name of what the command lists ("users", "scans"; nil: none).
    static func limit(of things: String?) -> Option<Int> {
        Option<Int>("--limit", value: "N", in: 1...500,
                    help: "How many\(things.map { " " + $0 } ?? "") (default \(defaultLimit), at most 500).")
    }

    /// When `page` is not the whole list, says so on standard error (standard output stays the
    /// list itself, for a pipe): a log cut off without a word reads as complete. `filtered`:
    /// the command takes filters, so narrowing the list is the other way to see the rest.
    static func noteMore<Item>(_ page: Page<Item>, of things: String, filtered: Bool = false, on terminal: any Terminal) {
        guard page.nextCursor != nil else { return }
        terminal.err(filtered
            ? "more \(things) match than the \(page.items.count) shown; raise --limit (at most 500) or narrow the list"
            : "more \(things) than the \(page.items.count) shown; raise --limit (at most 500)")
    }
}
