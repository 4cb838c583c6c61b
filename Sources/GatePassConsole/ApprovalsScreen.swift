import Foundation
import GatePassCore

/// The approvals queue: visitors AWAITING_APPROVAL, newest request first (`o`: the longest
/// wait first), kept live from the event stream.
///
/// ```
/// Awaiting approval (2)
/// Name            Company        Host          Waiting
/// Ana Pop         Acme           Ion             3 min      ← selected: reversed
/// Dan Ene         Bolt           Ion               2 h
/// ```
/// A visitor that arrives on the stream goes to the top (the bottom, oldest first) with a highlight for
/// `highlightDuration` (the shell rings the bell: `receive` answers `.alert`). Offline, the
/// list comes from the cache and a line says how old it is; the stream's changes are handed
/// to the cache too (`noteLiveApproval`), so offline it still holds the live arrivals.
public final class ApprovalsScreen: ConsoleScreen {
    private let services: any ConsoleServices
    private let clock: () -> Date
    /// How long a visitor that just arrived stays highlighted.
    public let highlightDuration: TimeInterval

    /// The order of the list: the newest request first (the default), or the oldest first,
    /// so that whoever has waited longest is at the top.
    public enum Order: Sendable, Equatable { case newestFirst, oldestFirst }

    /// The pending visitors, in `order`.
    public private(set) var visitors: [Visitor] = []
    /// `o` switches it.
    public private(set) var order = Order.newestFirst
    /// The selection bar and the first row drawn; PgUp/PgDn move by the rows of the last render.
    private var list = ListSelection()
    /// The row of the selection bar (0 when the list is empty).
    public var selection: Int { list.index }
    /// The first row drawn (scrolling keeps the selection in view).
    public var top: Int { list.top }
    /// When the list was read and whether the cache answered; nil before the first read.
    public private(set) var loaded: (updatedAt: Date, fromCache: Bool)?
    /// The server has more pending visitors than the page read.
    public private(set) var hasMore = false
    /// The last failure to read the list, in words.
    public private(set) var errorLine: String?
    /// Highlighted visitors and when their highlight ends.
    private var highlightUntil: [String: Date] = [:]
    /// Visitors whose decision waits in the outbox: still listed, marked "queued".
    private var queuedDecisions: Set<String> = []

    /// - Parameters:
    ///   - clock: "now", for the waiting times and the highlight (tests move it).
    ///   - highlightDuration: how long a live arrival stays highlighted (3 s).
    public init(services: any ConsoleServices, clock: @escaping () -> Date = Date.init, highlightDuration: TimeInterval = 3) {
        self.services = services
        self.clock = clock
        self.highlightDuration = highlightDuration
    }

    public var title: String { "Approvals" }

    public var keyHelp: [(key: String, action: String)] {
        [("Up, k", "previous visitor"),
         ("Down, j", "next visitor"),
         ("PgUp, PgDn", "a page up or down"),
         ("Home, End", "first or last visitor"),
         ("Enter", "open the visitor (approve or reject there)"),
         ("o", order == .newestFirst ? "oldest request first (the longest wait at the top)" : "newest request first"),
         ("r", "reload the list")]
    }

    /// The selected visitor, if any.
    public var selectedVisitor: Visitor? { visitors.indices.contains(selection) ? visitors[selection] : nil }

    /// Whether `visitorId` is drawn highlighted now.
    public func isHighlighted(_ visitorId: String) -> Bool {
        guard let until = highlightUntil[visitorId] else { return false }
        return clock() < until
    }

    /// When the screen next changes by itself (a highlight ends), so the shell can redraw
    /// then without a key press; nil when nothing is pending.
    public var nextChangeAt: Date? {
        let now = clock()
        return highlightUntil.values.filter { $0 > now }.min()
    }

    /// The minute (since 1970) of the last tick: waiting times are shown in minutes.
    private var lastTickMinute = 0
    /// The highlight end the last tick waited for.
    private var pendingChange: Date?

    /// Redraws when a highlight ends and when the minute changes (waiting times).
    public func tick(now: Date) -> ScreenAction {
        var redraw = false
        if let change = pendingChange, change <= now { redraw = true }
        pendingChange = nextChangeAt
        let minute = Int(now.timeIntervalSince1970 / 60)
        if minute != lastTickMinute {
            redraw = redraw || lastTickMinute != 0
            lastTickMinute = minute
        }
        return redraw ? .redraw : .none
    }

    // MARK: - Loading

    public func appear() -> ScreenAction {
        reload()
        return .redraw
    }

    /// Reads the list again; on failure the list shown so far stays and the error is said.
    public func reload() {
        let keep = selectedVisitor?.id
        do {
            let read = try services.pendingApprovals()
            visitors = Self.sorted(read.value.filter { $0.status == .awaitingApproval }, order)
            loaded = (read.updatedAt, read.fromCache)
            hasMore = read.hasMore
            errorLine = nil
            let pending = Set(visitors.map(\.id))
            queuedDecisions.formIntersection(pending)
            highlightUntil = highlightUntil.filter { pending.contains($0.key) }
        } catch {
            errorLine = "Could not load the list. " + error.sentence
        }
        select(id: keep, fallback: selection)
    }

    /// `visitors` by when approval was asked for; equal times keep their order.
    static func sorted(_ visitors: [Visitor], _ order: Order) -> [Visitor] {
        visitors.enumerated().sorted { lhs, rhs in
            let left = lhs.element.approvalRequestedAt ?? lhs.element.createdAt
            let right = rhs.element.approvalRequestedAt ?? rhs.element.createdAt
            guard left != right else { return lhs.offset < rhs.offset }
            return order == .newestFirst ? left > right : left < right
        }.map(\.element)
    }

    /// Called after the visitor detail decided `visitorId`: an applied decision leaves the
    /// list; a queued one stays, marked, until the server has it.
    public func noteDecision(visitorId: String, outcome: DecisionOutcome) {
        switch outcome {
        case .applied:
            remove(visitorId)
        case .queued, .needsLogin:
            queuedDecisions.insert(visitorId)
        case .refused:
            break
        }
    }

    public func isQueued(_ visitorId: String) -> Bool { queuedDecisions.contains(visitorId) }

    /// Takes a visitor off the list, and off the offline copy (a decision made here or
    /// seen on the stream).
    private func remove(_ visitorId: String) {
        guard let index = visitors.firstIndex(where: { $0.id == visitorId }) else { return }
        services.noteLiveApproval(.left(visitorId: visitorId))
        let keep = selectedVisitor?.id
        visitors.remove(at: index)
        highlightUntil[visitorId] = nil
        queuedDecisions.remove(visitorId)
        select(id: keep == visitorId ? nil : keep, fallback: min(selection, index))
    }

    private func select(id: String?, fallback: Int) {
        list.select(id.flatMap { id in visitors.firstIndex(where: { $0.id == id }) } ?? fallback, count: visitors.count)
    }

    // MARK: - Events

    public func receive(_ event: ServerEvent) -> ScreenAction {
        guard let kind = event.kind else { return .none }
        if kind == .streamGap {
            reload()
            return .redraw
        }
        guard case .visitor(let data)? = try? event.payload() else { return .none }
        switch kind {
        case .visitorAwaiting, .requestCreated:
            guard data.visitor.status == .awaitingApproval else { return .none }
            services.noteLiveApproval(.arrived(data.visitor))
            let keep = selectedVisitor?.id
            visitors.removeAll { $0.id == data.visitor.id }
            // The newest request: first in the default order, last when the oldest come first.
            if order == .newestFirst { visitors.insert(data.visitor, at: 0) } else { visitors.append(data.visitor) }
            queuedDecisions.remove(data.visitor.id)
            highlightUntil[data.visitor.id] = clock().addingTimeInterval(highlightDuration)
            errorLine = nil
            select(id: keep, fallback: 0)
            return .alert
        case .visitorDecided, .visitorArrived, .visitorDeparted:
            // Only for visitors shown: the offline copy holds no others, and every check-in at
            // the gate is such an event (the copy must not grow with them).
            guard visitors.contains(where: { $0.id == data.visitor.id }) else { return .none }
            remove(data.visitor.id)
            return .redraw
        default:
            return .none
        }
    }

    // MARK: - Keys

    public func handle(_ key: Key) -> ScreenAction {
        if let moved = list.move(key, count: visitors.count) { return moved ? .redraw : .none }
        switch key {
        case .enter:
            guard let visitor = selectedVisitor else { return .none }
            return .openVisitor(id: visitor.id)
        case .character("r"):
            reload()
            return .redraw
        case .character("o"):
            let keep = selectedVisitor?.id
            order = order == .newestFirst ? .oldestFirst : .newestFirst
            visitors = Self.sorted(visitors, order)
            select(id: keep, fallback: 0)
            return .redraw
        case .resize:
            return .redraw
        default:
            return .none
        }
    }

    // MARK: - Drawing

    public func render(into canvas: inout Canvas, area: Area) {
        guard area.width > 0, area.height > 0 else { return }
        let now = clock()
        var y = area.y
        let bottom = area.y + area.height
        func line(_ text: String, _ style: Canvas.Style) {
            guard y < bottom else { return }
            canvas.put(ConsoleFormat.fit(text, width: area.width), x: area.x, y: y, style: style, maxWidth: area.width)
            y += 1
        }
        // One page is read (the API's lists stop at 500): say so rather than miscount.
        let ordered = order == .oldestFirst ? " · oldest first (o: newest first)" : ""
        line(hasMore ? "Awaiting approval (\(visitors.count) shown; more are waiting; the list refills as these are decided)\(ordered)"
                     : "Awaiting approval (\(visitors.count))\(ordered)", .title)
        if let loaded, loaded.fromCache {
            line("Offline: showing the list as it was \(ConsoleFormat.age(since: loaded.updatedAt, now: now)) ago.",
                 Canvas.Style(.warning, bold: true))
        }
        if let errorLine { line(errorLine, Canvas.Style(.danger, bold: true)) }
        if visitors.isEmpty {
            if loaded != nil {
                line("No visitors are waiting for approval.", .plain)
                line("New requests appear here as they arrive.", .dim)
            } else if errorLine == nil {
                line("Loading…", .dim)
            }
            return
        }
        let columns = Columns(width: area.width)
        line(columns.row(name: "Name", company: "Company", host: "Host", waiting: "Waiting"), Canvas.Style(.muted, bold: true))
        for index in list.scroll(visibleRows: max(0, bottom - y), count: visitors.count) {
            let visitor = visitors[index]
            var host = visitor.hostName ?? ""
            if queuedDecisions.contains(visitor.id) { host = "(decision queued) " + host }
            let text = columns.row(name: visitor.name, company: visitor.company ?? "", host: host,
                                   waiting: ConsoleFormat.waiting(since: visitor.approvalRequestedAt ?? visitor.createdAt, now: now))
            let style: Canvas.Style
            if index == selection {
                style = .selected
            } else if let until = highlightUntil[visitor.id], now < until {
                style = Canvas.Style(.accent, bold: true)
            } else {
                style = .plain
            }
            canvas.put(text, x: area.x, y: y, style: style, maxWidth: area.width)
            if index == selection || style != .plain {
                canvas.fill(y: y, from: area.x, width: area.width, style: style)
            }
            y += 1
        }
    }

    /// The list's columns for a width: waiting time on the right, the rest shared
    /// name 40 %, company 30 %, host 30 %.
    struct Columns {
        let name: Int, company: Int, host: Int, waiting: Int

        init(width: Int) {
            let width = max(0, width)
            waiting = min(width, 8)
            let rest = max(0, width - waiting)
            name = rest * 4 / 10
            company = rest * 3 / 10
            host = rest - name - company
        }

        func row(name nameText: String, company companyText: String, host hostText: String, waiting waitingText: String) -> String {
            Self.cell(nameText, name) + Self.cell(companyText, company) + Self.cell(hostText, host)
                + Self.rightAligned(waitingText, waiting)
        }

        /// `text` fitted into `width - 1` columns and padded, so a space separates columns.
        static func cell(_ text: String, _ width: Int) -> String {
            guard width > 0 else { return "" }
            let fitted = ConsoleFormat.fit(text, width: width - 1)
            return fitted + String(repeating: " ", count: width - fitted.count)
        }

        static func rightAligned(_ text: String, _ width: Int) -> String {
            let fitted = ConsoleFormat.fit(text, width: width)
            return String(repeating: " ", count: max(0, width - fitted.count)) + fitted
        }
    }
}

// MARK: - Formatting shared by the screens

enum ConsoleFormat {
    /// `text` on one line within `width` columns: controls, escapes, bidi overrides and
    /// invisible characters spelled out (`TerminalText.visible`, as `Canvas.put` would), and
    /// a cut marked with "…". Never longer than `width`.
    static func fit(_ text: String, width: Int) -> String {
        guard width > 0 else { return "" }
        let visible = TerminalText.visible(text)
        guard visible.count > width else { return visible }
        return String(visible.prefix(width - 1)) + "…"
    }

    /// A waiting time as the list shows it: "<1 min", "3 min", "2 h", "1 d".
    static func waiting(since date: Date, now: Date) -> String {
        let seconds = Int(max(0, now.timeIntervalSince(date)))
        if seconds < 60 { return "<1 min" }
        if seconds < 3600 { return "\(seconds / 60) min" }
        if seconds < 86_400 { return "\(seconds / 3600) h" }
        return "\(seconds / 86_400) d"
    }

    /// How old a cached value is: "40 s", "5 min", "2 h", "3 d".
    static func age(since date: Date, now: Date) -> String {
        let seconds = Int(max(0, now.timeIntervalSince(date)))
        if seconds < 60 { return "\(seconds) s" }
        return waiting(since: date, now: now)
    }
}
