/// A key as screens see it; the driver translates curses key codes into these.
public enum Key: Sendable, Equatable, Hashable, CustomStringConvertible {
    case character(Character)
    case enter, escape, tab, backTab, backspace, delete
    case up, down, left, right, home, end, pageUp, pageDown
    /// Ctrl with a letter (Ctrl-C never reaches screens: it quits).
    case control(Character)
    /// The terminal changed size; screens re-lay out on the next render.
    case resize

    public var description: String {
        switch self {
        case .character(let c): String(c)
        case .enter: "Enter"
        case .escape: "Esc"
        case .tab: "Tab"
        case .backTab: "Shift-Tab"
        case .backspace: "Backspace"
        case .delete: "Delete"
        case .up: "Up"
        case .down: "Down"
        case .left: "Left"
        case .right: "Right"
        case .home: "Home"
        case .end: "End"
        case .pageUp: "PgUp"
        case .pageDown: "PgDn"
        case .control(let c): "Ctrl-\(c)"
        case .resize: "resize"
        }
    }
}
