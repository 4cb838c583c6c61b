import Foundation
import GatePassCore

/// What a screen draws on: a grid of cells, free of curses, so every screen's output is
/// checked by tests as text. The curses driver paints a canvas; nothing else touches the terminal.
public struct Canvas: Sendable, Equatable {
    /// How a cell looks. Colours are roles, not terminal colours: the driver maps them, and
    /// drops them when the terminal has none or NO_COLOR is set.
    public struct Style: Sendable, Equatable, Hashable {
        public enum Role: Sendable, Equatable, Hashable {
            case normal, accent, ok, warning, danger, muted
            /// A code to be scanned from the screen: the character's ink is a dark module,
            /// its background light, whatever the terminal's own colours (black on white with
            /// colour; without colour reversed, which is right on the usual dark terminal).
            case code
        }
        public var role: Role
        public var bold: Bool
        public var reverse: Bool
        public var underline: Bool

        public init(_ role: Role = .normal, bold: Bool = false, reverse: Bool = false, underline: Bool = false) {
            self.role = role; self.bold = bold; self.reverse = reverse; self.underline = underline
        }

        public static let plain = Style()
        public static let title = Style(.accent, bold: true)
        public static let selected = Style(.normal, reverse: true)
        public static let dim = Style(.muted)
    }

    public struct Cell: Sendable, Equatable {
        public var character: Character
        public var style: Style
        public init(_ character: Character = " ", _ style: Style = .plain) { self.character = character; self.style = style }
    }

    public let width: Int
    public let height: Int
    public private(set) var cells: [Cell]

    public init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        cells = Array(repeating: Cell(), count: self.width * self.height)
    }

    public subscript(x: Int, y: Int) -> Cell {
        get { cells[y * width + x] }
        set { cells[y * width + x] = newValue }
    }

    /// Writes `text` from (x, y), clipped at `maxWidth` (default: the canvas edge). Returns
    /// the column after the last character written.
    ///
    /// Every screen's text passes here, and much of it came from outside (names, notes,
    /// scanned codes, server messages): controls, escape sequences, bidi overrides and
    /// invisible characters are spelled out (`TerminalText.visible`), so they take cells of
    /// their own and the terminal never acts on them.
    @discardableResult
    public mutating func put(_ text: String, x: Int, y: Int, style: Style = .plain, maxWidth: Int? = nil) -> Int {
        guard y >= 0, y < height else { return x }
        let limit = min(width, x + (maxWidth ?? width))
        var column = x
        for character in TerminalText.visible(text) {
            guard column < limit else { break }
            if column >= 0 { self[column, y] = Cell(character, style) }
            column += 1
        }
        return column
    }

    /// Fills a row segment with a style (a selection bar, a header).
    public mutating func fill(y: Int, from x: Int = 0, width count: Int? = nil, style: Style) {
        guard y >= 0, y < height else { return }
        let end = min(width, x + (count ?? width))
        for column in max(0, x)..<max(max(0, x), end) { self[column, y] = Cell(self[column, y].character, style) }
    }

    /// Draws `rows` (text and style) as the last rows of `area`, each cut to its width: the
    /// prompts, notices and key hints under a screen's content.
    /// - Parameter keepingFirst: which rows stay when `area` is too short: the last ones (the
    ///   prompt and key hints) by default, the first ones when those matter more.
    /// - Returns: the row just above the footer, where the content above must stop.
    public mutating func putFooter(_ rows: [(String, Style)], in area: Area, keepingFirst: Bool = false) -> Int {
        let shown = keepingFirst ? Array(rows.prefix(area.height)) : Array(rows.suffix(area.height))
        let footerTop = area.y + area.height - shown.count
        for (offset, row) in shown.enumerated() {
            put(ConsoleFormat.fit(row.0, width: area.width), x: area.x, y: footerTop + offset, style: row.1, maxWidth: area.width)
        }
        return footerTop
    }

    /// One row as text, trailing spaces removed (for tests and the tmux check).
    public func line(_ y: Int) -> String {
        var text = String((0..<width).map { self[$0, y].character })
        while text.last == " " { text.removeLast() }
        return text
    }

    /// Every row, joined by newlines.
    public var text: String { (0..<height).map(line).joined(separator: "\n") }
}

/// A rectangle of the canvas given to one part of the layout.
public struct Area: Sendable, Equatable {
    public var x: Int, y: Int, width: Int, height: Int
    public init(x: Int, y: Int, width: Int, height: Int) { self.x = x; self.y = y; self.width = width; self.height = height }
}

/// How an action went, for the one line that says so (a visitor's decision, an export, a
/// retry): the screens with such a line share it, so the same outcome looks the same everywhere.
public enum OutcomeKind: Sendable, Equatable {
    case ok, warning, error

    /// Bold, in the colour of how it went.
    public var style: Canvas.Style {
        switch self {
        case .ok: Canvas.Style(.ok, bold: true)
        case .warning: Canvas.Style(.warning, bold: true)
        case .error: Canvas.Style(.danger, bold: true)
        }
    }
}

/// Writes a screen's lines down an area, each fitted to its width, stopping above `bottom`
/// (the footer's top), and draws a list's rows with the selection reversed across the width.
struct LineCursor {
    private(set) var y: Int
    let x: Int, width: Int, bottom: Int

    init(area: Area, bottom: Int) {
        y = area.y; x = area.x; width = area.width; self.bottom = bottom
    }

    /// Rows left above `bottom`.
    var rowsLeft: Int { max(0, bottom - y) }

    mutating func line(_ text: String, _ style: Canvas.Style, on canvas: inout Canvas) {
        guard y < bottom else { return }
        canvas.put(ConsoleFormat.fit(text, width: width), x: x, y: y, style: style, maxWidth: width)
        y += 1
    }

    /// The lines under a list's heading that say where it stands: offline (and how old what
    /// is shown is, naming it: "the list", "the roll"), the last failure to read it, and for
    /// an empty list `emptyText` once read, "Loading…" before.
    /// - Returns: whether there are rows to draw (`emptyText` is nil).
    mutating func readState(_ loaded: (updatedAt: Date, fromCache: Bool)?, error: String?, shown: String, now: Date,
                            emptyText: String?, on canvas: inout Canvas) -> Bool {
        if let loaded, loaded.fromCache {
            line("Offline: showing \(shown) as it was \(ConsoleFormat.age(since: loaded.updatedAt, now: now)) ago.",
                 Canvas.Style(.warning, bold: true), on: &canvas)
        }
        if let error { line(error, Canvas.Style(.danger, bold: true), on: &canvas) }
        guard let emptyText else { return true }
        if loaded != nil {
            line(emptyText, .plain, on: &canvas)
        } else if error == nil {
            line("Loading…", .dim, on: &canvas)
        }
        return false
    }

    /// The rows of a list of `count` in the rows left, scrolled to keep the selection in view;
    /// `row` gives each one's text and style (the selected row is reversed whatever it says).
    mutating func list(_ selection: inout ListSelection, count: Int, on canvas: inout Canvas,
                       row: (Int) -> (text: String, style: Canvas.Style)) {
        for index in selection.scroll(visibleRows: rowsLeft, count: count) {
            let (text, plainStyle) = row(index)
            let style = index == selection.index ? Canvas.Style.selected : plainStyle
            canvas.put(text, x: x, y: y, style: style, maxWidth: width)
            if index == selection.index { canvas.fill(y: y, from: x, width: width, style: style) }
            y += 1
        }
    }
}
