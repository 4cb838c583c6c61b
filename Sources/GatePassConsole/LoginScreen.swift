import Foundation
import GatePassCore

/// The login screen: server and e-mail, "send code", then the 6-digit code.
///
/// ```
/// Gate Pass — log in
///
///   Server  http://localhost:8080
/// > Email   ana@example.com
///
/// Enter: send a code to this address
/// ```
/// Errors are said plainly on their own line: a wrong code, too many wrong tries (the server
/// kills a code after 5), throttled sends with the wait, an unreachable server.
public final class LoginScreen: ConsoleScreen {
    /// Which field has the keyboard.
    public enum Field: Sendable, Equatable {
        case server, email, code
    }

    /// The two steps of a login.
    public enum Step: Sendable, Equatable {
        /// Server and e-mail; Enter sends a code.
        case address
        /// The code was sent; Enter verifies it.
        case code
    }

    /// A line under the fields: what happened, in the colour of how it went.
    public struct Notice: Sendable, Equatable {
        public enum Kind: Sendable, Equatable { case info, error }
        public var kind: Kind
        public var text: String
    }

    /// Wrong tries after which the server no longer accepts a code (api.md "OTP rules").
    public static let maxWrongTries = 5

    private let services: any ConsoleServices
    public private(set) var step: Step = .address
    public private(set) var focus: Field = .email
    public private(set) var notice: Notice?
    /// Wrong codes entered since the last code was sent.
    public private(set) var wrongTries = 0
    /// Set after the services warned that this login deletes another user's queued entries;
    /// the next Enter logs in anyway.
    public private(set) var confirmingPurge = false
    var server: TextInput
    var email = TextInput(limit: 254)
    var code = TextInput(limit: 6, accepts: { $0.isASCII && $0.isNumber })

    /// What `gatepass demo` adds to the login screen: the demo logins listed under the
    /// fields, and the development server's code filled in once it is sent (the demo server
    /// runs with `--dev`, whose `dev-peek-otp` route hands out the code).
    public struct DemoHints {
        public var logins: [(email: String, role: String)]
        /// The code the development server holds for (server, email); nil when it has none.
        public var devCode: (_ server: String, _ email: String) -> String?

        public init(logins: [(email: String, role: String)], devCode: @escaping (_ server: String, _ email: String) -> String?) {
            self.logins = logins
            self.devCode = devCode
        }
    }

    private let demo: DemoHints?

    public init(services: any ConsoleServices, email: String = "", demo: DemoHints? = nil) {
        self.services = services
        self.demo = demo
        server = TextInput(limit: 2048, text: services.serverURL())
        self.email.text = email.isEmpty ? demo?.logins.first?.email ?? "" : email
        if server.text.isEmpty { focus = .server }
    }

    public var serverText: String { server.text }
    public var emailText: String { email.text }
    public var codeText: String { code.text }

    public var title: String { "Log in" }

    // The fields always have the keyboard: an e-mail address may contain `q` or `?`.
    public var isCapturingText: Bool { true }

    public var keyHelp: [(key: String, action: String)] {
        [("Enter", "send the code (address step) or log in (code step)"),
         ("Tab, Down", "next field"),
         ("Shift-Tab, Up", "previous field"),
         ("Backspace", "delete the last character"),
         ("Ctrl-U", "clear the field"),
         ("Ctrl-R", "send a new code (code step)"),
         ("Esc", "back to the address (code step)"),
         ("Ctrl-C", "quit")]
            + (demo == nil ? [] : [("Ctrl-N", "demo: the next demo login into the Email field")])
    }

    // MARK: - Keys

    public func handle(_ key: Key) -> ScreenAction {
        switch key {
        case .enter:
            return step == .address ? submitAddress() : submitCode()
        case .escape:
            guard step == .code else { return .none }
            step = .address
            focus = .email
            code.text = ""
            notice = nil
            confirmingPurge = false
            return .redraw
        case .tab, .down:
            return moveFocus(by: 1)
        case .backTab, .up:
            return moveFocus(by: -1)
        case .backspace, .delete:
            return editFocused { $0.deleteBackward() }
        case .control("u"):
            return editFocused { input in
                defer { input.text = "" }
                return !input.text.isEmpty
            }
        case .control("n") where demo != nil && step == .address:
            // Demo: put the next demo login into the Email field.
            guard let logins = demo?.logins, !logins.isEmpty else { return .none }
            let current = logins.firstIndex { $0.email == email.text.trimmingCharacters(in: .whitespaces) }
            email.text = logins[current.map { ($0 + 1) % logins.count } ?? 0].email
            focus = .email
            return .redraw
        case .control("r"):
            guard step == .code else { return .none }
            return sendCode()
        case .character(let character):
            return editFocused { $0.insert(character) }
        case .resize:
            return .redraw
        default:
            return .none
        }
    }

    private var fields: [Field] { step == .address ? [.server, .email] : [.code] }

    private func moveFocus(by offset: Int) -> ScreenAction {
        let order = fields
        guard order.count > 1, let index = order.firstIndex(of: focus) else { return .none }
        focus = order[(index + offset + order.count) % order.count]
        return .redraw
    }

    private func editFocused(_ edit: (inout TextInput) -> Bool) -> ScreenAction {
        let changed: Bool
        switch focus {
        case .server: changed = edit(&server)
        case .email: changed = edit(&email)
        case .code: changed = edit(&code)
        }
        if changed { confirmingPurge = false }
        return changed ? .redraw : .none
    }

    private func submitAddress() -> ScreenAction {
        let serverURL = server.text.trimmingCharacters(in: .whitespaces)
        guard serverURL.hasPrefix("http://") || serverURL.hasPrefix("https://") else {
            focus = .server
            notice = Notice(kind: .error, text: "The server must be an http:// or https:// URL, like http://localhost:8080.")
            return .redraw
        }
        let address = email.text.trimmingCharacters(in: .whitespaces)
        guard address.contains("@"), !address.hasPrefix("@"), !address.hasSuffix("@") else {
            focus = .email
            notice = Notice(kind: .error, text: "Type your e-mail address, like ana@example.com.")
            return .redraw
        }
        do {
            try services.setServerURL(serverURL)
        } catch {
            focus = .server
            notice = Notice(kind: .error, text: error.sentence)
            return .redraw
        }
        return sendCode()
    }

    private func sendCode() -> ScreenAction {
        let address = email.text.trimmingCharacters(in: .whitespaces).lowercased()
        do {
            try services.sendCode(server: server.text.trimmingCharacters(in: .whitespaces), email: address)
        } catch {
            notice = Notice(kind: .error, text: Self.sentence(for: error, sending: true))
            return .redraw
        }
        step = .code
        focus = .code
        code.text = ""
        wrongTries = 0
        confirmingPurge = false
        notice = Notice(kind: .info, text: "A 6-digit code was sent to \(address). Type it and press Enter.")
        if let demo, let devCode = demo.devCode(server.text.trimmingCharacters(in: .whitespaces), address),
           devCode.count == 6, devCode.allSatisfy({ $0.isASCII && $0.isNumber }) {
            code.text = devCode
            notice = Notice(kind: .info, text: "Demo: the development server's code \(devCode) is filled in. Press Enter.")
        }
        return .redraw
    }

    private func submitCode() -> ScreenAction {
        guard code.text.count == 6 else {
            notice = Notice(kind: .error, text: "The code has 6 digits; you typed \(code.text.count).")
            return .redraw
        }
        guard wrongTries < Self.maxWrongTries else {
            notice = Notice(kind: .error, text: Self.tooManyTries)
            return .redraw
        }
        let address = email.text.trimmingCharacters(in: .whitespaces).lowercased()
        do {
            _ = try services.logIn(server: server.text.trimmingCharacters(in: .whitespaces), email: address,
                                   code: code.text, allowPurge: confirmingPurge)
        } catch {
            switch error {
            case .unauthorized:
                wrongTries += 1
                code.text = ""
                notice = Notice(kind: .error, text: wrongTries >= Self.maxWrongTries
                    ? Self.tooManyTries
                    : "That code is wrong or has expired. Type it again, or press Ctrl-R for a new code.")
            case .identityChange:
                confirmingPurge = true
                notice = Notice(kind: .error, text: error.sentence + " Press Enter again to log in anyway, or Esc to stop.")
            default:
                notice = Notice(kind: .error, text: Self.sentence(for: error, sending: false))
            }
            return .redraw
        }
        notice = nil
        confirmingPurge = false
        return .sessionChanged
    }

    static let tooManyTries = "Too many wrong tries: this code no longer works. Press Ctrl-R for a new code."

    static func sentence(for error: ConsoleError, sending: Bool) -> String {
        switch error {
        case .throttled(let seconds, _):
            "Too many codes were asked for: " + ConsoleError.waitPhrase(seconds) + "."
        case .offline(let detail):
            "The server cannot be reached (\(detail)). Check the server URL, or try again when it is back."
        default:
            error.sentence
        }
    }

    // MARK: - Drawing

    public func render(into canvas: inout Canvas, area: Area) {
        guard area.width > 0, area.height > 0 else { return }
        var rows: [(text: String, style: Canvas.Style, fieldStart: Int?)] = []
        rows.append(("Gate Pass — log in", .title, nil))
        rows.append(("", .plain, nil))
        let label = 9
        func fieldRow(_ field: Field, _ name: String, _ input: TextInput) {
            let marker = focus == field ? "> " : "  "
            let room = max(0, area.width - 2 - label)
            rows.append((marker + name.padding(toLength: label, withPad: " ", startingAt: 0)
                             + input.visibleTail(width: room, cursor: focus == field),
                         focus == field ? Canvas.Style(.normal, bold: true) : .plain, 2 + label))
        }
        if step == .address {
            fieldRow(.server, "Server", server)
            fieldRow(.email, "Email", email)
        } else {
            rows.append(("  Server   " + server.text, .dim, nil))
            rows.append(("  Email    " + email.text, .dim, nil))
            fieldRow(.code, "Code", code)
        }
        rows.append(("", .plain, nil))
        if let notice {
            rows.append((notice.text, notice.kind == .error ? Canvas.Style(.danger, bold: true) : Canvas.Style(.ok), nil))
        }
        rows.append((step == .address ? "Enter: send a code to this address · Tab: next field"
                                      : "Enter: log in · Ctrl-R: new code · Esc: change the address", .dim, nil))
        if let demo, step == .address, !demo.logins.isEmpty {
            rows.append(("", .plain, nil))
            rows.append(("Demo logins (Ctrl-N: next one into the Email field):", .title, nil))
            for login in demo.logins {
                rows.append(("  " + login.email.padding(toLength: 26, withPad: " ", startingAt: 0) + login.role, .plain, nil))
            }
        }
        for (offset, row) in rows.prefix(area.height).enumerated() {
            let y = area.y + offset
            canvas.put(ConsoleFormat.fit(row.text, width: area.width), x: area.x, y: y, style: row.style, maxWidth: area.width)
            if let start = row.fieldStart, start < area.width, row.style.bold {
                // The focused field's value stands out as an input box.
                canvas.fill(y: y, from: area.x + start, width: area.width - start, style: Canvas.Style(.normal, underline: true))
            }
        }
    }
}

// MARK: - Text input

/// A one-line text field: printable characters are appended, Backspace removes the last
/// one, and nothing beyond `limit` characters is taken. Used by the login fields and the
/// note prompt of the visitor detail.
struct TextInput: Sendable, Equatable {
    var text: String
    let limit: Int
    /// Which printable characters this field takes (digits only for a code).
    private let accepts: @Sendable (Character) -> Bool

    init(limit: Int, text: String = "", accepts: @escaping @Sendable (Character) -> Bool = { _ in true }) {
        self.limit = limit
        self.text = String(text.prefix(limit))
        self.accepts = accepts
    }

    static func == (lhs: TextInput, rhs: TextInput) -> Bool { lhs.text == rhs.text && lhs.limit == rhs.limit }

    /// Whether `character` can be typed: no control characters (C0, DEL, C1).
    static func isPrintable(_ character: Character) -> Bool {
        character.unicodeScalars.allSatisfy { !($0.value < 0x20 || (0x7F...0x9F).contains($0.value)) }
    }

    /// Appends `character` when it is printable, accepted and there is room; true if it was.
    mutating func insert(_ character: Character) -> Bool {
        guard Self.isPrintable(character), accepts(character), text.count < limit else { return false }
        text.append(character)
        return true
    }

    /// Removes the last character; true if there was one.
    mutating func deleteBackward() -> Bool {
        guard !text.isEmpty else { return false }
        text.removeLast()
        return true
    }

    /// The end of the text that fits `width` columns (what was typed last stays visible),
    /// with "…" in front when the start is cut and a `_` cursor when focused.
    func visibleTail(width: Int, cursor: Bool) -> String {
        guard width > 0 else { return "" }
        let shown = cursor ? text + "_" : text
        guard shown.count > width else { return shown }
        guard width > 1 else { return "…" }
        return "…" + String(shown.suffix(width - 1))
    }

    /// A prompt line at the bottom of a screen: `label` (cut to leave the field 10 columns at
    /// least) and the end of the text, with the cursor.
    func promptLine(label: String, width: Int) -> String {
        let fittedLabel = ConsoleFormat.fit(label, width: max(0, width - 10))
        return fittedLabel + visibleTail(width: width - fittedLabel.count, cursor: true)
    }
}
