import Foundation
import GatePassCore

/// A small form of text fields and choices, one of them focused: the keys and the drawing the
/// governance tabs' forms share (a blocklist entry, a user). The screen that owns it judges
/// the values (with the domain's rules) and sends them; this value only edits and draws.
///
/// ```
/// New blocklist entry · at least one of name, email, phone
/// > Name         Ana Pop_
///   Email
///                ! email must be an email address like ana@example.com
///   Role         < HOST >
/// ```
struct FormFields: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        /// Typed, at most `limit` characters.
        case text(limit: Int)
        /// One of `options`, chosen with Space, Left and Right.
        case choice([String])
    }

    struct Field: Sendable, Equatable {
        var label: String
        var kind: Kind
        var input: TextInput
        var chosen: Int

        init(_ label: String, _ kind: Kind, text: String = "", chosen: Int = 0) {
            self.label = label
            self.kind = kind
            if case .text(let limit) = kind { input = TextInput(limit: limit, text: text) } else { input = TextInput(limit: 0) }
            self.chosen = chosen
        }
    }

    /// What a key did to the form.
    enum Outcome: Sendable, Equatable {
        case changed, unchanged
        /// Enter on the last field, or Ctrl-S: the screen checks and sends.
        case submit
        /// Esc (twice when something was typed): the screen closes the form.
        case close
    }

    var fields: [Field]
    var focus = 0
    var notice: VisitorsScreen.Notice?
    /// Set by Esc on a touched form: a second Esc closes it.
    var confirmingDiscard = false
    /// Set once a send was tried: from then on a missing required value is said.
    var attempted = false
    private let initial: [Field]

    init(_ fields: [Field]) {
        self.fields = fields
        initial = fields
    }

    static func == (lhs: FormFields, rhs: FormFields) -> Bool {
        lhs.fields == rhs.fields && lhs.focus == rhs.focus && lhs.notice == rhs.notice
            && lhs.confirmingDiscard == rhs.confirmingDiscard && lhs.attempted == rhs.attempted
    }

    /// The text of field `index` as typed.
    func text(_ index: Int) -> String { fields[index].input.text }

    /// The trimmed text of field `index`, nil when empty.
    func value(_ index: Int) -> String? {
        let trimmed = text(index).trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// The option chosen in field `index` (a choice).
    func chosen(_ index: Int) -> Int { fields[index].chosen }

    var isTouched: Bool { fields != initial }

    static let keyHelp: [(key: String, action: String)] = [
        ("Tab, Down / Shift-Tab, Up", "next or previous field"),
        ("Enter", "next field; on the last: send"),
        ("Ctrl-S", "send from any field"),
        ("Space, Left, Right", "change a choice"),
        ("Backspace, Ctrl-U", "delete a character, clear the field"),
        ("Esc", "close the form (twice when something was typed)"),
    ]

    mutating func handle(_ key: Key) -> Outcome {
        let field = fields[focus]
        let isText: Bool
        if case .text = field.kind { isText = true } else { isText = false }
        if key != .escape { confirmingDiscard = false }
        switch key {
        case .character(" ") where !isText, .right where !isText:
            choose(forward: true)
        case .left where !isText:
            choose(forward: false)
        case .character(let character) where isText:
            notice = nil
            if !fields[focus].input.insert(character) {
                notice = VisitorsScreen.Notice(.warning, TextInput.isPrintable(character)
                    ? "\(field.label) takes at most \(field.input.limit) characters; the rest was not typed."
                    : "Control characters cannot be typed here; nothing was changed.")
            }
        case .backspace where isText, .delete where isText:
            guard fields[focus].input.deleteBackward() else { return .unchanged }
            notice = nil
        case .control("u") where isText:
            fields[focus].input.text = ""
            notice = nil
        case .tab, .down:
            focus = (focus + 1) % fields.count
        case .backTab, .up:
            focus = (focus + fields.count - 1) % fields.count
        case .enter where focus < fields.count - 1:
            focus += 1
        case .enter, .control("s"):
            return .submit
        case .escape:
            guard isTouched, !confirmingDiscard else { return .close }
            confirmingDiscard = true
            notice = VisitorsScreen.Notice(.warning, "Press Esc again to discard what was typed; any other key goes on.")
        case .resize:
            return .changed
        default:
            return .unchanged
        }
        return .changed
    }

    private mutating func choose(forward: Bool) {
        guard case .choice(let options) = fields[focus].kind, !options.isEmpty else { return }
        fields[focus].chosen = (fields[focus].chosen + (forward ? 1 : options.count - 1)) % options.count
    }

    /// Draws the form in `area`: `title`, each field with its problem under it, the notice and
    /// the key hint at the bottom; scrolled so the focused field and its problem show.
    func render(into canvas: inout Canvas, area: Area, title: String, problem: (Int) -> String?) {
        var footer: [(String, Canvas.Style)] = []
        if let notice { footer.append((notice.text, notice.kind.style)) }
        footer.append(("Tab: next · Shift-Tab: back · Space: choose · Ctrl-S: send · Esc: close", .dim))
        let footerTop = canvas.putFooter(footer, in: area)
        let labelWidth = max(13, (fields.map(\.label.count).max() ?? 0) + 2)
        let room = max(0, area.width - 2 - labelWidth)
        var rows: [(text: String, style: Canvas.Style, field: Int?)] = [(title, .title, nil)]
        for (index, field) in fields.enumerated() {
            let focused = index == focus
            let value: String
            switch field.kind {
            case .text: value = field.input.visibleTail(width: room, cursor: focused)
            case .choice(let options): value = options.indices.contains(field.chosen) ? "< \(options[field.chosen]) >" : "<  >"
            }
            rows.append(((focused ? "> " : "  ") + field.label.padding(toLength: labelWidth, withPad: " ", startingAt: 0) + value,
                         focused ? Canvas.Style(.normal, bold: true) : .plain, index))
            if let problem = problem(index) {
                rows.append((String(repeating: " ", count: 2 + labelWidth) + "! " + problem, Canvas.Style(.danger, bold: true), index))
            }
        }
        let visible = max(0, footerTop - area.y)
        let lastFocus = rows.indices.last { rows[$0].field == focus } ?? 0
        let first = max(0, min(lastFocus - visible + 1, rows.count - visible))
        for (offset, row) in rows.dropFirst(first).prefix(visible).enumerated() {
            canvas.put(ConsoleFormat.fit(row.text, width: area.width), x: area.x, y: area.y + offset, style: row.style,
                       maxWidth: area.width)
        }
    }
}
