import Foundation
import GatePassCore

/// The console's shell as a view model: the tabs, the screen stack (a visitor's detail over
/// the list), the status line that is always visible, the `?` help, and the keys that belong
/// to the shell (tab switching, quit). Curses-free like every screen; the driver feeds it keys
/// and events and paints what it renders.
public final class ConsoleApp {
    /// What the status line shows besides the connection; refreshed by the shell's owner.
    public struct Status: Sendable, Equatable {
        public var who: String
        public var role: String
        public var server: String
        public var queued: Int

        public init(who: String = "not logged in", role: String = "", server: String = "", queued: Int = 0) {
            self.who = who; self.role = role; self.server = server; self.queued = queued
        }
    }

    /// Builds the tabs for the current session (nil: logged out → the login screen only),
    /// and the detail screen for a visitor.
    public struct Factory {
        public var tabs: () -> [any ConsoleScreen]
        public var visitorDetail: (String) -> any ConsoleScreen
        /// Checkpoint (gate) names by id, for the security alert (best effort: empty when unknown).
        public var gateNames: () -> [String: String]
        /// "Now", for when an alert came.
        public var clock: () -> Date
        /// The site's clock an alert's time is shown in (the terminal's zone until the site's is known).
        public var siteClock: () -> SiteClock

        public init(tabs: @escaping () -> [any ConsoleScreen], visitorDetail: @escaping (String) -> any ConsoleScreen,
                    gateNames: @escaping () -> [String: String] = { [:] }, clock: @escaping () -> Date = Date.init,
                    siteClock: @escaping () -> SiteClock = { SiteClock(timeZone: .current) }) {
            self.tabs = tabs
            self.visitorDetail = visitorDetail
            self.gateNames = gateNames
            self.clock = clock
            self.siteClock = siteClock
        }
    }

    /// A `security.alert`, shown over every tab until dismissed: a blocked visitor at a gate,
    /// or an offline decision the server disagrees with (api.md "Offline passes").
    public struct SecurityAlert: Sendable, Equatable {
        public var visitorId: String
        public var visitorName: String
        /// The gate's name, or its id when the name is not known.
        public var gate: String
        public var receivedAt: Date
        /// For an offline conflict: what the kiosk decided offline, and what the server decided.
        public var offlineDecision: ScanResult? = nil
        public var serverDecision: ScanResult? = nil

        /// What the box says happened, in one line.
        var headline: String {
            guard let offlineDecision else { return "A blocked person tried to enter:" }
            return offlineDecision == .checkedIn
                ? "Admitted offline, but the server says \(serverDecision?.rawValue ?? "otherwise"):"
                : "Decided offline (\(offlineDecision.rawValue)); the server says \(serverDecision?.rawValue ?? "otherwise"):"
        }
    }

    public private(set) var tabs: [any ConsoleScreen] = []
    public private(set) var selectedTab = 0
    /// Screens opened over the current tab (a visitor's detail); Esc closes the top one.
    public private(set) var stack: [any ConsoleScreen] = []
    public private(set) var showingHelp = false
    public private(set) var wantsQuit = false
    public var status = Status()
    /// Security alerts not yet dismissed, oldest first: the first is shown over the screen.
    /// The server sends `security.alert` to OWNER/ADMIN only, so whoever receives one is meant to see it.
    public private(set) var securityAlerts: [SecurityAlert] = []
    private let factory: Factory
    /// The link to the server as the status line shows it: the same object the More tab reads.
    public let connection: ConsoleConnection

    /// - Parameter connection: shared with the screens that show the link (More); by default
    ///   a fresh one started at the factory's "now".
    public init(factory: Factory, connection: ConsoleConnection? = nil) {
        self.factory = factory
        self.connection = connection ?? ConsoleConnection(start: factory.clock())
        rebuild()
    }

    /// The screen that has the keyboard.
    public var current: (any ConsoleScreen)? { stack.last ?? (tabs.indices.contains(selectedTab) ? tabs[selectedTab] : nil) }

    /// Goes up each time the tabs are rebuilt for a new session (a login or a logout), so the
    /// driver knows when what the status line shows has changed.
    public private(set) var sessionGeneration = 0

    private func rebuild() {
        sessionGeneration += 1
        tabs = factory.tabs()
        selectedTab = 0
        stack = []
        securityAlerts = []
        _ = current?.appear()
    }

    // MARK: - Keys and events

    /// Handles a key; returns true when the terminal bell should ring.
    @discardableResult
    public func handle(_ key: Key) -> Bool {
        // Ctrl-C quits from anywhere, even from a text field.
        if key == .control("c") {
            wantsQuit = true
            return false
        }
        if !securityAlerts.isEmpty {
            // Only Enter, Esc or v dismisses: a key typed for the screen below must not hide an alert unseen.
            switch key {
            case .enter, .escape:
                securityAlerts.removeFirst()
            case .character("v"):
                // The visitor's detail, over the current tab as any visitor opened from a list.
                let alert = securityAlerts.removeFirst()
                return apply(.openVisitor(id: alert.visitorId))
            default:
                break
            }
            return false
        }
        if showingHelp {
            // Any key closes the help.
            showingHelp = false
            return false
        }
        let capturing = current?.isCapturingText ?? false
        if !capturing {
            switch key {
            case .character("?"):
                showingHelp = true
                return false
            case .character("q") where stack.isEmpty:
                wantsQuit = true
                return false
            case .character(let digit) where stack.isEmpty && digit.isASCII && ("1"..."9").contains(digit):
                if let index = Int(String(digit)), index >= 1, index <= tabs.count { select(index - 1) }
                return false
            case .tab where stack.isEmpty && !tabs.isEmpty:
                select((selectedTab + 1) % tabs.count)
                return false
            case .backTab where stack.isEmpty && !tabs.isEmpty:
                select((selectedTab + tabs.count - 1) % tabs.count)
                return false
            default:
                break
            }
        }
        guard let screen = current else { return false }
        return apply(screen.handle(key))
    }

    /// A live event: every tab and open screen hears it (lists stay fresh even when hidden).
    @discardableResult
    public func receive(_ event: ServerEvent) -> Bool {
        var bell = false
        if event.kind == .securityAlert, case .visitor(let data)? = try? event.payload() {
            let gate = data.checkpointId.map { id in factory.gateNames()[id] ?? id } ?? "a gate"
            securityAlerts.append(SecurityAlert(visitorId: data.visitor.id, visitorName: data.visitor.name, gate: gate,
                                                receivedAt: factory.clock(), offlineDecision: data.offlineDecision,
                                                serverDecision: data.decision))
            bell = true
        }
        for screen in tabs + stack where apply(screen.receive(event)) { bell = true }
        return bell
    }

    /// The clock ticked (about every 100 ms): every tab and open screen hears it; true when
    /// something must be drawn again. A bell from a tick rings too (`alert`).
    public func tick(now: Date) -> (redraw: Bool, bell: Bool) {
        var redraw = false, bell = false
        for screen in tabs + stack {
            switch screen.tick(now: now) {
            case .none: break
            case .alert: redraw = true; bell = true
            case let action:
                redraw = true
                if apply(action) { bell = true }
            }
        }
        return (redraw, bell)
    }

    private func select(_ index: Int) {
        guard index != selectedTab || !stack.isEmpty else { return }
        selectedTab = index
        stack = []
        _ = current.map { apply($0.appear()) }
    }

    /// Carries out a screen's action; true when the bell should ring.
    private func apply(_ action: ScreenAction) -> Bool {
        switch action {
        case .none, .redraw: return false
        case .alert: return true
        case .openVisitor(let id):
            let detail = factory.visitorDetail(id)
            stack.append(detail)
            return apply(detail.appear())
        case .back:
            if !stack.isEmpty { stack.removeLast() }
            return current.map { apply($0.appear()) } ?? false
        case .sessionChanged:
            rebuild()
            return false
        case .quit:
            wantsQuit = true
            return false
        }
    }

    // MARK: - Drawing

    /// The whole console: tab bar on the first row, the status line on the last, the current
    /// screen between (and the help over it when asked).
    public func render(width: Int, height: Int) -> Canvas {
        var canvas = Canvas(width: width, height: height)
        guard width > 0, height > 0 else { return canvas }
        // Tab bar.
        var x = 0
        let labels = tabLabels(width: width)
        for (index, label) in labels.enumerated() {
            x = canvas.put(label, x: x, y: 0, style: index == selectedTab ? .selected : .title) + 1
        }
        canvas.put("? help  q quit", x: max(x, width - 14), y: 0, style: .dim)
        // Status line: who, where, the link (with the data's age when old), queue.
        if height >= 3 {
            let now = factory.clock()
            let link = connection.state
            let queued = status.queued == 0 ? "" : "  \(status.queued) queued"
            let line = "\(status.who)\(status.role.isEmpty ? "" : " (\(status.role))")  \(status.server)  \(link.words(now: now))\(queued)"
            let style = Canvas.Style(link.link == .offline || link.isStale(now: now) ? .warning : .normal, reverse: true)
            canvas.fill(y: height - 1, style: style)
            canvas.put(line, x: 0, y: height - 1, style: style)
        }
        let area = Area(x: 0, y: 1, width: width, height: max(0, height - 2))
        current?.render(into: &canvas, area: area)
        if showingHelp, let screen = current { renderHelp(for: screen, into: &canvas, area: area) }
        if let alert = securityAlerts.first { renderAlert(alert, into: &canvas, area: area) }
        return canvas
    }

    /// The hint at the right of the tab bar.
    static let tabBarHint = "? help  q quit"

    /// Each tab's label: " 3 Visitors ". When they do not all fit beside the hint, the selected
    /// tab keeps its title and the others, from the first on, keep theirs while room is left
    /// (beside the hint from 80 columns on); the rest show their number only (the digit still
    /// selects them).
    func tabLabels(width: Int) -> [String] {
        let full = tabs.enumerated().map { " \($0.offset + 1) \($0.element.title) " }
        let short = tabs.indices.map { " \($0 + 1) " }
        func length(_ labels: [String]) -> Int { labels.reduce(0) { $0 + $1.count + 1 } }
        if length(full) + Self.tabBarHint.count <= width { return full }
        var labels = short
        if labels.indices.contains(selectedTab) { labels[selectedTab] = full[selectedTab] }
        // On a narrow terminal titles matter more than the hint (`?` works without it).
        let keepsHint = width >= 80 && length(labels) + Self.tabBarHint.count <= width
        let budget = keepsHint ? width - Self.tabBarHint.count : width
        for index in labels.indices where index != selectedTab {
            var wider = labels
            wider[index] = full[index]
            if length(wider) <= budget { labels = wider }
        }
        return labels
    }

    /// The alert box over the middle of `area`: what happened, who, where, when, how to dismiss.
    private func renderAlert(_ alert: SecurityAlert, into canvas: inout Canvas, area: Area) {
        let more = securityAlerts.count - 1
        let lines = [
            "SECURITY ALERT",
            "",
            alert.headline,
            "\(alert.visitorName) at \(alert.gate)",
            "received \(factory.siteClock().stamped(alert.receivedAt))",
            "",
            "v: open the visitor · " + (more > 0 ? "Enter or Esc: dismiss (\(more) more waiting)" : "Enter or Esc: dismiss"),
        ].map(TerminalText.visible)   // measured as drawn: an escape sequence in a name takes cells of its own
        let boxWidth = min(area.width, max(44, min(area.width - 4, (lines.map(\.count).max() ?? 0) + 6)))
        let boxHeight = min(area.height, lines.count + 2)
        guard boxWidth > 0, boxHeight > 0 else { return }
        let left = area.x + (area.width - boxWidth) / 2
        let top = area.y + (area.height - boxHeight) / 2
        let style = Canvas.Style(.danger, bold: true, reverse: true)
        for y in top..<(top + boxHeight) {
            for column in left..<(left + boxWidth) { canvas[column, y] = Canvas.Cell(" ", style) }
        }
        for (offset, line) in lines.prefix(max(0, boxHeight - 2)).enumerated() {
            let text = ConsoleFormat.fit(line, width: max(0, boxWidth - 4))
            canvas.put(text, x: left + 2, y: top + 1 + offset, style: style, maxWidth: max(0, boxWidth - 4))
        }
    }

    private func renderHelp(for screen: any ConsoleScreen, into canvas: inout Canvas, area: Area) {
        let shellKeys: [(key: String, action: String)] = [
            ("1–\(max(1, tabs.count)), Tab, Shift-Tab", "switch tabs (in a text field: Esc first)"), ("?", "this help (any key closes it)"),
            ("q", "quit (from a tab)"), ("Ctrl-C", "quit from anywhere"),
        ]
        let rows = [("Keys of \(screen.title)", "")] + screen.keyHelp.map { ($0.key, $0.action) } + [("", "")] + shellKeys
        for row in 0..<min(rows.count, area.height) {
            let y = area.y + row
            canvas.fill(y: y, from: area.x, width: area.width, style: .plain)
            for column in area.x..<(area.x + area.width) { canvas[column, y] = Canvas.Cell(" ", .plain) }
            let (key, action) = rows[row]
            let end = canvas.put(key, x: area.x + 2, y: y, style: action.isEmpty ? .title : Canvas.Style(.accent, bold: true))
            if !action.isEmpty { canvas.put(action, x: max(end + 2, area.x + 26), y: y) }
        }
    }
}
