import Foundation
import GatePassCore

// The Scan screen's lookup: a visitor found by name, phone or email is checked in from the list.

extension ScanScreen {
    /// The lookup prompt while it is open.
    public struct Lookup: Sendable, Equatable {
        var query = TextInput(limit: ScanScreen.lookupLimit)
        /// The last search's answer; nil before the first search.
        public internal(set) var results: [Visitor]?
        /// The results' selection bar and first row drawn. PgUp/PgDn move by 10 whatever the
        /// height: the list shares the screen with the form above it.
        var list = ListSelection(pageFollowsView: false)
        public var selection: Int { list.index }
        /// True when Up/Down/j/k/Enter act on the results rather than on the query.
        public internal(set) var onResults = false
        public internal(set) var notice: Notice?

        public var queryText: String { query.text }
        var selectedVisitor: Visitor? { results.flatMap { $0.indices.contains(selection) ? $0[selection] : nil } }
    }

    func openLookup() -> ScreenAction {
        lookup = Lookup()
        notice = nil
        return .redraw
    }

    func handleLookup(_ key: Key) -> ScreenAction {
        guard var state = lookup else { return .none }
        defer { if lookup != nil { lookup = state } }
        if state.onResults, let results = state.results, !results.isEmpty {
            if let moved = state.list.move(key, count: results.count) { return moved ? .redraw : .none }
            switch key {
            case .enter:
                guard let visitor = state.selectedVisitor else { return .none }
                lookup = nil
                return checkIn(code: visitor.shortId.rawValue)
            case .escape:
                lookup = nil
                return .redraw
            case .backspace, .tab, .backTab, .character("/"):
                // Back to the search, to change it.
                state.onResults = false
                return .redraw
            case .character:
                // Typing means searching again: the key goes to the query.
                state.onResults = false
            default:
                return .none
            }
        }
        switch key {
        case .character(let character):
            state.notice = Self.typingNotice(state.query.insert(character), character: character,
                                             full: "A lookup takes at most \(Self.lookupLimit) characters; the rest was not typed.")
            return .redraw
        case .backspace, .delete:
            guard state.query.deleteBackward() else { return .none }
            state.notice = nil
            return .redraw
        case .control("u"):
            state.query.text = ""
            state.notice = nil
            return .redraw
        case .enter:
            search(&state)
            return .redraw
        case .down, .tab:
            guard let results = state.results, !results.isEmpty else { return .none }
            state.onResults = true
            return .redraw
        case .escape:
            lookup = nil
            return .redraw
        default:
            return .none
        }
    }

    /// The notice after typing `character` into a field: nil when it was taken.
    static func typingNotice(_ taken: Bool, character: Character, full: String) -> Notice? {
        if taken { return nil }
        if !TextInput.isPrintable(character) {
            return .error("Control characters cannot be typed here; nothing was changed.")
        }
        return .error(full)
    }

    func search(_ state: inout Lookup) {
        let query = state.query.text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !query.isEmpty else {
            state.notice = .error("Type a name, phone or email, then press Enter.")
            return
        }
        do {
            let found = try services.lookup(query)
            state.results = found
            state.list.reset()
            state.onResults = !found.isEmpty
            state.notice = found.isEmpty ? .info("No visitor matches “\(query)”.") : nil
        } catch {
            // The query and the results so far stay: the search can be sent again as it is.
            state.notice = .error("Could not look up. " + error.sentence)
        }
    }
}
