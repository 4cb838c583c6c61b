import GatePassCore

/// The option every list command shares: how much of the list one page brings (api.md
/// "Lists": `?limit=`, `ListBounds`), and the note that a page is not the whole list.
enum PageOptions {
    static let defaultLimit = ListBounds.defaultLimit
    static let maximumLimit = ListBounds.maximumLimit

    /// `--limit N`, with the name of what the command lists ("users", "scans"; nil: none).
    static func limit(of things: String?) -> Option<Int> {
        Option<Int>("--limit", value: "N", in: 1...maximumLimit,
                    help: "How many\(things.map { " " + $0 } ?? "") (default \(defaultLimit), at most \(maximumLimit)).")
    }

    /// When `page` is not the whole list, says so on standard error (standard output stays the
    /// list itself, for a pipe): a log cut off without a word reads as complete. `filtered`:
    /// the command takes filters, so narrowing the list is the other way to see the rest.
    static func noteMore<Item>(_ page: Page<Item>, of things: String, filtered: Bool = false, on terminal: any Terminal) {
        noteMore(shown: page.items.count, hasMore: page.nextCursor != nil, of: things, filtered: filtered, on: terminal)
    }

    /// The same, for a list read some other way than as the API's page.
    static func noteMore(shown: Int, hasMore: Bool, of things: String, filtered: Bool = false, on terminal: any Terminal) {
        guard hasMore else { return }
        terminal.err(filtered
            ? "more \(things) match than the \(shown) shown; raise --limit (at most \(maximumLimit)) or narrow the list"
            : "more \(things) than the \(shown) shown; raise --limit (at most \(maximumLimit))")
    }
}
