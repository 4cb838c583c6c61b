import Foundation
import GatePassCore

/// The evacuation roll (OWNER/ADMIN): everyone CHECKED_IN now, with host, gate and time in,
/// the count, kept live from the event stream, and an export to a text file for printing.
///
/// ```
/// On site now: 2 people · Acme Works · 2026-12-01 10:42 (Europe/Bucharest)
/// Name            Company        Host          Gate          In
/// Ana Pop         Acme           Ion           Main gate     09:12      ← selected
/// Dan Ene         Bolt           Maria         Dock          10:05
/// Enter: open · e: export to a text file · r: reload
/// ```
/// `visitor.arrived` adds a person, `visitor.departed` (or any change out of CHECKED_IN)
/// takes them off; the stream's changes go to the offline copy too. Offline the roll is the
/// server's last one (kept with the pass cache, so it is there even when this tab was never
/// opened online) with what this device admitted and checked out since, and says how old the
/// server's part is.
public final class OnSiteScreen: ConsoleScreen {
    private let services: any VisitorsServices
    private let clock: () -> Date
    private let fallbackZone: TimeZone

    public private(set) var site: Organization?
    /// Everyone on site, by name (passes known by their short id only last).
    public private(set) var entries: [OnSiteRoll.Entry] = []
    /// The people whose visitor this device knows (all but passes admitted here by signature).
    public var visitors: [Visitor] { entries.compactMap(\.visitor) }
    /// This device's own admissions and check-outs the server's roll did not show yet.
    public private(set) var changedHere: (admitted: Int, checkedOut: Int) = (0, 0)
    private var list = ListSelection()
    public var selection: Int { list.index }
    public private(set) var gates: [String: String] = [:]
    public private(set) var loaded: (updatedAt: Date, fromCache: Bool)?
    public private(set) var errorLine: String?
    public private(set) var notice: VisitorsScreen.Notice?

    public init(services: any VisitorsServices, clock: @escaping () -> Date = Date.init, fallbackZone: TimeZone = .current) {
        self.services = services
        self.clock = clock
        self.fallbackZone = fallbackZone
    }

    public var title: String { "On site" }

    public var keyHelp: [(key: String, action: String)] {
        [("Up, k / Down, j", "previous or next person"), ("PgUp, PgDn, Home, End", "move by pages, to the ends"),
         ("Enter", "open the visitor (check out there)"), ("e", "export the roll to a text file in the current folder"),
         ("r", "reload the roll")]
    }

    public var siteTime: SiteClock { site.flatMap { SiteClock(zoneNamed: $0.timeZone) } ?? SiteClock(timeZone: fallbackZone) }

    public var selectedVisitor: Visitor? { entries.indices.contains(selection) ? entries[selection].visitor : nil }

    // MARK: - Loading and events

    public func appear() -> ScreenAction {
        if site == nil { site = try? services.site().value }
        if gates.isEmpty { gates = services.gateNames() }
        reload()
        return .redraw
    }

    public func reload() {
        let keep = selectedPass
        do {
            let read = try services.onSite()
            entries = OnSiteRoll.ordered(read.value.entries)
            changedHere = (read.value.admittedHere, read.value.checkedOutHere)
            loaded = (read.updatedAt, read.fromCache)
            errorLine = nil
        } catch {
            errorLine = "Could not load the roll. " + error.sentence
        }
        select(keep)
    }

    private var selectedPass: ShortID? { entries.indices.contains(selection) ? entries[selection].shortId : nil }

    private func select(_ pass: ShortID?) {
        list.select(pass.flatMap { pass in entries.firstIndex { $0.shortId == pass } } ?? list.index, count: entries.count)
    }

    public func receive(_ event: ServerEvent) -> ScreenAction {
        guard let kind = event.kind else { return .none }
        if kind == .streamGap {
            reload()
            return .redraw
        }
        guard kind.carriesVisitor, case .visitor(let data)? = try? event.payload() else { return .none }
        let visitor = data.visitor
        let keep = selectedPass
        let isThem = { (entry: OnSiteRoll.Entry) in entry.shortId == visitor.shortId || entry.visitor?.id == visitor.id }
        let shown = entries.contains(where: isThem)
        if visitor.status == .checkedIn {
            services.noteLiveOnSite(.arrived(visitor))
            entries = OnSiteRoll.ordered(entries.filter { !isThem($0) }
                + [OnSiteRoll.Entry(shortId: visitor.shortId, visitor: visitor, inSince: visitor.checkedInAt, admittedHere: false)])
            if gates[visitor.checkpointId ?? ""] == nil, visitor.checkpointId != nil { gates = services.gateNames() }
        } else if shown {
            services.noteLiveOnSite(.left(visitorId: visitor.id))
            entries.removeAll(where: isThem)
        } else {
            return .none
        }
        select(keep)
        return .redraw
    }

    // MARK: - Keys

    public func handle(_ key: Key) -> ScreenAction {
        if let moved = list.move(key, count: entries.count) { return moved ? .redraw : .none }
        switch key {
        case .enter:
            guard let visitor = selectedVisitor else { return .none }
            return .openVisitor(id: visitor.id)
        case .character("e"):
            export()
            return .redraw
        case .character("r"):
            reload()
            return .redraw
        case .resize:
            return .redraw
        default:
            return .none
        }
    }

    private func export() {
        guard loaded != nil else {
            notice = VisitorsScreen.Notice(.error, "Nothing to export: the roll has not been read yet.")
            return
        }
        do {
            let path = try services.saveOnSiteRoll(rollText())
            let count = entries.count == 1 ? "1 person" : "\(entries.count) people"
            notice = VisitorsScreen.Notice(.ok, "Exported \(count) to \(path) (readable by you only).")
        } catch {
            notice = VisitorsScreen.Notice(.error, "Not exported: \(error.sentence)")
        }
    }

    // MARK: - Text

    func gate(of visitor: Visitor?) -> String {
        guard let id = visitor?.checkpointId else { return "" }
        return gates[id] ?? String(id.prefix(8))
    }

    /// The name column: a pass admitted here by its signature alone has no name on this device.
    static func name(of entry: OnSiteRoll.Entry) -> String {
        entry.visitor?.name ?? "\(entry.shortId.rawValue) (admitted here by signature)"
    }

    /// What this device did that the server's roll does not show yet, or nil.
    var changedHereText: String? {
        var parts: [String] = []
        if changedHere.admitted > 0 { parts.append("\(changedHere.admitted) admitted") }
        if changedHere.checkedOut > 0 { parts.append("\(changedHere.checkedOut) checked out") }
        guard !parts.isEmpty else { return nil }
        return "Includes " + parts.joined(separator: " and ") + " at this device since the server's roll."
    }

    /// The roll as plain text for printing: every value on one line with controls, escapes
    /// and invisible characters spelled out (`TerminalText.visible`), columns padded, nothing cut.
    public func rollText() -> String {
        let now = clock()
        var lines = ["On site at \(site?.name ?? "the site") — \(siteTime.dateTime(now)) (\(siteTime.zoneName))",
                     entries.count == 1 ? "1 person checked in" : "\(entries.count) people checked in"]
        if let loaded, loaded.fromCache {
            lines.append("OFFLINE: the server's roll as it was \(ConsoleFormat.age(since: loaded.updatedAt, now: now)) ago "
                         + "(\(siteTime.stamped(loaded.updatedAt))); check at the gates.")
        }
        if let changedHereText { lines.append(changedHereText) }
        lines.append("")
        let table = [["Name", "Company", "Host", "Gate", "In"]] + entries.map { entry in
            [Self.name(of: entry), entry.visitor?.company ?? "", entry.visitor?.hostName ?? "", gate(of: entry.visitor),
             entry.inSince.map { siteTime.dateTime($0) } ?? ""].map(TerminalText.visible)
        }
        let widths = (0..<5).map { column in table.map { $0[column].count }.max() ?? 0 }
        for row in table {
            let cells = zip(row, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }
            var text = cells.joined(separator: "  ")
            while text.last == " " { text.removeLast() }
            lines.append(text)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Drawing

    public func render(into canvas: inout Canvas, area: Area) {
        guard area.width > 0, area.height > 0 else { return }
        let now = clock()
        var footer: [(String, Canvas.Style)] = []
        if let notice { footer.append((notice.text, notice.kind.style)) }
        footer.append(("Enter: open · e: export to a text file · r: reload", .dim))
        var cursor = LineCursor(area: area, bottom: canvas.putFooter(footer, in: area))
        let count = entries.count == 1 ? "1 person" : "\(entries.count) people"
        var heading = "On site now: \(count)"
        if let site { heading += " · \(site.name)" }
        cursor.line(heading + " · \(siteTime.dateTime(now)) (\(siteTime.zoneName))", .title, on: &canvas)
        if let time = site?.autoCheckoutAt {
            cursor.line("Visitors still inside at \(time) are checked out automatically.", .dim, on: &canvas)
        }
        if let changedHereText { cursor.line(changedHereText, .dim, on: &canvas) }
        guard cursor.readState(loaded, error: errorLine, shown: "the server's roll", now: now,
                               emptyText: entries.isEmpty ? "Nobody is checked in." : nil, on: &canvas) else { return }
        let columns = Columns.layout(width: area.width)
        cursor.line(columns.row(["Name", "Company", "Host", "Gate", "In"]), Canvas.Style(.muted, bold: true), on: &canvas)
        cursor.list(&list, count: entries.count, on: &canvas) { index in
            let entry = entries[index]
            return (columns.row([Self.name(of: entry), entry.visitor?.company ?? "", entry.visitor?.hostName ?? "",
                                 gate(of: entry.visitor), entry.inSince.map { siteTime.short($0, now: now) } ?? ""]), .plain)
        }
    }

    /// Columns: time in 13 on the right, the rest name 30 %, company 20 %, host 25 %, gate 25 %.
    struct Columns {
        static func layout(width: Int) -> TableColumns {
            let time = min(max(0, width), 13)
            let rest = max(0, width - time)
            let name = rest * 3 / 10, company = rest * 2 / 10, host = rest / 4
            return TableColumns(widths: [name, company, host, rest - name - company - host, time])
        }
    }
}
