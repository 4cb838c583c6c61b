import GatePassConsole

/// Whether the console paints in colour: only when the terminal has colours and `NO_COLOR`
/// is unset or empty (https://no-color.org: any non-empty value disables colour).
public enum ColorPolicy {
    /// - Parameters:
    ///   - environment: the process environment (only `NO_COLOR` is read).
    ///   - terminalHasColors: what `has_colors()` answered for this terminal.
    public static func usesColor(environment: [String: String], terminalHasColors: Bool) -> Bool {
        guard terminalHasColors else { return false }
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return false }
        return true
    }
}

/// How one `Canvas.Style` is shown on the terminal, before it is turned into curses attributes.
/// Bold, reverse and underline are always allowed; colour pairs only when colour is on.
public struct CellAppearance: Sendable, Equatable, Hashable {
    /// The curses colour pair (0 is the terminal's default colours).
    public var colorPair: Int16
    public var bold: Bool
    public var dim: Bool
    public var reverse: Bool
    public var underline: Bool

    public init(colorPair: Int16 = 0, bold: Bool = false, dim: Bool = false, reverse: Bool = false, underline: Bool = false) {
        self.colorPair = colorPair; self.bold = bold; self.dim = dim; self.reverse = reverse; self.underline = underline
    }

    /// The appearance of `style`; without colour the role falls back to the default colours,
    /// except `muted`, which stays dim (an attribute, not a colour).
    public init(_ style: Canvas.Style, usesColor: Bool) {
        // A code without colour is reversed: on a light-on-dark terminal the ink (a dark
        // module) is then dark and the cell light, as a scanner needs.
        let reverse = style.role == .code && !usesColor ? !style.reverse : style.reverse
        self.init(colorPair: usesColor ? ColorPalette.pair(for: style.role) : 0,
                  bold: style.bold, dim: style.role == .muted, reverse: reverse, underline: style.underline)
    }
}

/// The colour pairs the driver registers with `init_pair`, over the terminal's default
/// background (`use_default_colors`, so `-1` means "the terminal's own").
public enum ColorPalette {
    /// A terminal colour number as curses numbers them (`COLOR_RED` is 1 … `COLOR_CYAN` is 6).
    public enum TerminalColor: Int16, Sendable, CaseIterable {
        case red = 1, green = 2, yellow = 3, cyan = 6
    }

    /// Every pair to register: pair number and foreground colour.
    public static let pairs: [(pair: Int16, foreground: TerminalColor)] = [
        (1, .cyan), (2, .green), (3, .yellow), (4, .red),
    ]

    /// The pair of the `code` role: black ink on a white cell, whatever the terminal's
    /// own background (a scanner needs dark modules on light).
    public static let codePair: (pair: Int16, foreground: Int16, background: Int16) = (5, 0, 7)

    /// The pair for a role: accent cyan, ok green, warning yellow, danger red, code black on
    /// white; normal and muted use the default colours (muted is dimmed instead).
    public static func pair(for role: Canvas.Style.Role) -> Int16 {
        switch role {
        case .normal, .muted: 0
        case .accent: 1
        case .ok: 2
        case .warning: 3
        case .danger: 4
        case .code: codePair.pair
        }
    }
}

/// The wide characters one canvas cell is painted with (`setcchar` takes at most
/// `CCHARW_MAX` = 5, the first spacing, the rest combining).
public enum CellText {
    public static let maximumScalars = 5

    /// The scalars of `character`, with control characters shown as a space and extra
    /// combining marks dropped.
    public static func scalars(of character: Character) -> [UInt32] {
        let values = character.unicodeScalars.map(\.value)
        if values.contains(where: { $0 < 0x20 || (0x7F..<0xA0).contains($0) }) { return [0x20] }
        return Array(values.prefix(maximumScalars))
    }
}
