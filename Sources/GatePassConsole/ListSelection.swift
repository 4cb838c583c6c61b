/// Where a list's selection bar is and which of its rows are in view: the one way every list
/// screen (approvals, history, the outbox, the Scan tab's recent decisions and lookup results)
/// moves through its rows, so Up, Down, PgUp, PgDn, Home and End do the same everywhere.
///
/// The list itself stays with the screen; this value only knows its length when told.
///
/// ```swift
/// var list = ListSelection()
/// if let moved = list.move(key, count: visitors.count) { return moved ? .redraw : .none }
/// …
/// for index in list.scroll(visibleRows: rows, count: visitors.count) { draw(visitors[index], selected: index == list.index) }
/// ```
public struct ListSelection: Sendable, Equatable {
    /// The selected row (0 when the list is empty).
    public private(set) var index = 0
    /// The first row drawn; `scroll(visibleRows:count:)` keeps the selection in view.
    public private(set) var top = 0
    /// How many rows PgUp and PgDn move: the rows the list showed in the last render, at least 1.
    public private(set) var pageSize: Int
    /// Whether `scroll(visibleRows:count:)` makes the rows shown the page size. Off, the page
    /// size stays as made (the Scan tab's lookup pages by 10 whatever its height).
    public let pageFollowsView: Bool

    /// - Parameters:
    ///   - pageSize: what PgUp and PgDn move by until a render says how many rows show.
    ///   - pageFollowsView: whether each render's row count becomes the page size.
    public init(pageSize: Int = 10, pageFollowsView: Bool = true) {
        self.pageSize = max(1, pageSize)
        self.pageFollowsView = pageFollowsView
    }

    /// The row a navigation key asks for, from `current`, before clamping: Up or `k` one up,
    /// Down or `j` one down, PgUp and PgDn a page, Home the first row and End `last`; nil for
    /// any other key. Also what screens that scroll text rather than select rows move by.
    public static func target(of key: Key, from current: Int, pageSize: Int, last: Int) -> Int? {
        switch key {
        case .up, .character("k"): current - 1
        case .down, .character("j"): current + 1
        case .pageUp: current - max(1, pageSize)
        case .pageDown: current + max(1, pageSize)
        case .home: 0
        case .end: last
        default: nil
        }
    }

    /// Moves the selection for a navigation key in a list of `count` rows.
    /// - Returns: nil when `key` is no navigation key (the screen handles it); otherwise
    ///   whether the selection moved (false at either end and for an empty list).
    public mutating func move(_ key: Key, count: Int) -> Bool? {
        guard let target = Self.target(of: key, from: index, pageSize: pageSize, last: count - 1) else { return nil }
        return move(to: target, count: count)
    }

    /// Selects `row`, clamped to the list of `count` rows.
    /// - Returns: whether the selection moved (false for an empty list).
    public mutating func move(to row: Int, count: Int) -> Bool {
        guard count > 0 else { return false }
        let target = max(0, min(row, count - 1))
        guard target != index else { return false }
        index = target
        return true
    }

    /// Selects `row` after the list changed (reloaded, a row removed or added): clamped to
    /// the `count` rows there are now, and the first row drawn not below it.
    public mutating func select(_ row: Int, count: Int) {
        index = max(0, min(row, count - 1))
        top = max(0, min(top, index))
    }

    /// Back to the first row, drawn first (a new list that has nothing to do with the old).
    public mutating func reset() {
        index = 0
        top = 0
    }

    /// Says how many rows PgUp and PgDn move (at least 1), whatever `pageFollowsView` says:
    /// for a render that shows no list at all.
    public mutating func setPageSize(_ rows: Int) {
        pageSize = max(1, rows)
    }

    /// Lays the list of `count` rows out in `visibleRows` rows: scrolls as little as keeps
    /// the selection in view, never past the last row, and remembers the page size.
    /// - Returns: the rows to draw (empty when no row fits).
    public mutating func scroll(visibleRows: Int, count: Int) -> Range<Int> {
        if pageFollowsView { setPageSize(visibleRows) }
        guard visibleRows > 0 else { return top..<top }
        if index < top { top = index }
        if index >= top + visibleRows { top = index - visibleRows + 1 }
        top = max(0, min(top, max(0, count - visibleRows)))
        return top..<max(top, min(count, top + visibleRows))
    }
}
