import Foundation

/// A screen that only says something — a visitor that could not be opened, say — until Esc.
/// Opened over a tab like a visitor's detail, so Esc goes back to where the person was.
public final class MessageScreen: ConsoleScreen {
    public let title: String
    public let lines: [String]

    public init(title: String, lines: [String]) {
        self.title = title
        self.lines = lines
    }

    public var keyHelp: [(key: String, action: String)] { [("Esc, Enter", "back")] }

    public func handle(_ key: Key) -> ScreenAction {
        switch key {
        case .escape, .enter: .back
        default: .none
        }
    }

    public func render(into canvas: inout Canvas, area: Area) {
        guard area.width > 0, area.height > 0 else { return }
        canvas.put(ConsoleFormat.fit(title, width: area.width), x: area.x, y: area.y, style: .title, maxWidth: area.width)
        for (offset, line) in lines.prefix(max(0, area.height - 3)).enumerated() {
            canvas.put(ConsoleFormat.fit(line, width: area.width), x: area.x, y: area.y + 2 + offset, maxWidth: area.width)
        }
        if area.height >= 3 {
            canvas.put("Esc: back", x: area.x, y: area.y + area.height - 1, style: .dim, maxWidth: area.width)
        }
    }
}
