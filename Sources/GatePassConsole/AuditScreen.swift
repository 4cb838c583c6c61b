import Foundation
import GatePassCore

/// The audit log (OWNER/ADMIN), newest first: who changed what and when, with the changed
/// fields before and after; filters by action, actor and visitor; Enter opens the visitor.
///
/// ```
/// Audit · action visitor.checkin · actor all · visitor all · 2 shown, more: m
/// When         Actor           Action              Entity
/// 10:42        kiosk Main gate visitor.checkin     visitor Ana Pop   ← selected
/// 10:40        Olivia Owner    blocklist.add       blocklist e1
/// before: {"status":"APPROVED"}
/// after:  {"status":"CHECKED_IN"}
/// Enter: open visitor · a/A: action · u: this actor · v: this visitor · x: clear · m: more · r: reload · i: ids
/// ```
/// Actors, gates and visitors show by name: users and gates read once, each visitor read once
/// when first listed (`visitorsReadPerTick` a tick, so a long page never holds the keys); `i`
/// shows the ids instead.
/// Every value from the log is drawn escaped (the canvas spells out controls): a visitor's
/// name in `after` cannot act on the terminal.
public final class AuditScreen: ConsoleScreen {
    /// The actions `a` steps through (the domain's list, which the server writes); nil is every action.
    public static let actionFilters: [String?] = [nil] + AuditAction.allCases.map(\.rawValue)

    private let services: any GovernanceServices
    private let clock: () -> Date
    private let fallbackZone: TimeZone

    public private(set) var site: Organization?
    public private(set) var entries: [AuditEntry] = []
    private var list = ListSelection()
    public var selection: Int { list.index }
    public private(set) var nextCursor: String?
    public private(set) var loadedAt: Date?
    public private(set) var errorLine: String?
    public private(set) var notice: VisitorsScreen.Notice?
    public private(set) var actionFilter: String?
    public private(set) var actorFilter: String?
    public private(set) var visitorFilter: String?
    /// Names of users, gates and visitors by id, for the actor and entity columns (best effort).
    private var names: [String: String] = [:]
    /// Visitors whose name was asked for (known or not): never asked again.
    private var visitorsAsked: Set<String> = []
    /// `i`: ids instead of names.
    public private(set) var showingIds = false
    /// How many visitors' names one tick reads.
    public static let visitorsReadPerTick = 4

    public init(services: any GovernanceServices, clock: @escaping () -> Date = Date.init, fallbackZone: TimeZone = .current) {
        self.services = services
        self.clock = clock
        self.fallbackZone = fallbackZone
    }

    public var title: String { "Audit" }

    public var siteTime: SiteClock { site.flatMap { SiteClock(zoneNamed: $0.timeZone) } ?? SiteClock(timeZone: fallbackZone) }

    public var selectedEntry: AuditEntry? { entries.indices.contains(selection) ? entries[selection] : nil }

    public var query: AuditQuery { AuditQuery(actor: actorFilter, action: actionFilter, entityId: visitorFilter) }

    public var keyHelp: [(key: String, action: String)] {
        [("Up, k / Down, j", "previous or next entry"), ("PgUp, PgDn, Home, End", "move by pages, to the ends"),
         ("Enter", "open the visitor the entry is about"), ("a, A", "next or previous action filter"),
         ("u", "only this entry's actor (again: every actor)"), ("v", "only this entry's visitor (again: every visitor)"),
         ("x", "clear every filter"), ("m", "read the next, older page"), ("r", "reload from the newest"),
         ("i", showingIds ? "names instead of ids" : "ids instead of names")]
    }

    // MARK: - Loading

    public func appear() -> ScreenAction {
        if site == nil { site = try? services.site().value }
        if names.isEmpty {
            names = services.gateNames()
            if let users = try? services.organizationUsers() {
                for user in users { names[user.profile.id] = user.profile.name }
            }
        }
        reload()
        return .redraw
    }

    /// Reads the newest page for the filters; on failure what was shown stays and the error is said.
    public func reload() {
        do {
            let page = try services.auditLog(query)
            entries = page.entries
            nextCursor = page.nextCursor
            loadedAt = clock()
            errorLine = nil
            list.reset()
        } catch {
            errorLine = "Could not load the audit log. " + error.sentence
        }
    }

    private func readMore() {
        guard let cursor = nextCursor else {
            notice = VisitorsScreen.Notice(.warning, "Nothing older: this is the whole log for these filters.")
            return
        }
        var next = query
        next.cursor = cursor
        do {
            let page = try services.auditLog(next)
            entries += page.entries
            nextCursor = page.nextCursor
            errorLine = nil
            notice = nil
        } catch {
            errorLine = "Could not load the older entries. " + error.sentence
        }
    }

    /// Reads the names of a few listed visitors not asked for yet, the selected one first.
    public func tick(now: Date) -> ScreenAction {
        let listed = (selectedEntry.map { [$0] } ?? []) + entries
        let wanted = listed.compactMap { $0.entity == "visitor" ? $0.entityId : nil }.filter { !visitorsAsked.contains($0) }
        var read = false
        for id in wanted.prefix(Self.visitorsReadPerTick) where !visitorsAsked.contains(id) {
            visitorsAsked.insert(id)
            // A visitor that cannot be read (erased, gone, the server away) stays an id.
            if let name = try? services.visitorName(id: id) {
                names[id] = name
                read = true
            }
        }
        return read ? .redraw : .none
    }

    // MARK: - Keys

    public func handle(_ key: Key) -> ScreenAction {
        if let moved = list.move(key, count: entries.count) { return moved ? .redraw : .none }
        switch key {
        case .enter:
            guard let entry = selectedEntry else { return .none }
            guard entry.entity == "visitor", let id = entry.entityId else {
                notice = VisitorsScreen.Notice(.warning, "This entry is about a \(entry.entity), not a visitor: nothing to open.")
                return .redraw
            }
            return .openVisitor(id: id)
        case .character("a"), .character("A"):
            let filters = Self.actionFilters
            let current = filters.firstIndex(of: actionFilter) ?? 0
            actionFilter = filters[(current + (key == .character("a") ? 1 : filters.count - 1)) % filters.count]
            notice = nil
            reload()
            return .redraw
        case .character("u"):
            if actorFilter != nil {
                actorFilter = nil
            } else {
                guard let entry = selectedEntry else { return .none }
                actorFilter = entry.actorId ?? entry.actorKind.rawValue
            }
            notice = nil
            reload()
            return .redraw
        case .character("v"):
            if visitorFilter != nil {
                visitorFilter = nil
            } else {
                guard let entry = selectedEntry, entry.entity == "visitor", let id = entry.entityId else {
                    notice = VisitorsScreen.Notice(.warning, "Select an entry about a visitor first.")
                    return .redraw
                }
                visitorFilter = id
            }
            notice = nil
            reload()
            return .redraw
        case .character("x"):
            actionFilter = nil
            actorFilter = nil
            visitorFilter = nil
            notice = nil
            reload()
            return .redraw
        case .character("m"):
            readMore()
            return .redraw
        case .character("i"):
            showingIds.toggle()
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

    // MARK: - Drawing

    /// The name behind an id, or the id when it is not known or ids were asked for.
    func named(_ id: String) -> String { showingIds ? id : names[id] ?? id }

    func actor(_ entry: AuditEntry) -> String {
        switch entry.actorKind {
        case .system: return "system"
        case .kiosk: return "kiosk " + (entry.actorId.map { showingIds || names[$0] != nil ? named($0) : String($0.prefix(8)) } ?? "")
        case .user: return entry.actorId.map(named) ?? "a user"
        }
    }

    /// "visitor Ana Pop", "checkpoint Dock", "blocklist b1".
    func entity(_ entry: AuditEntry) -> String {
        entry.entity + (entry.entityId.map { " " + named($0) } ?? "")
    }

    func filterName(_ id: String?) -> String { id.map(named) ?? "all" }

    public func render(into canvas: inout Canvas, area: Area) {
        guard area.width > 0, area.height > 0 else { return }
        let now = clock()
        var footer: [(String, Canvas.Style)] = []
        if let entry = selectedEntry {
            footer.append(("before: " + (entry.before ?? "—"), .plain))
            footer.append(("after:  " + (entry.after ?? "—"), .plain))
        }
        if let notice { footer.append((notice.text, notice.kind.style)) }
        footer.append(("Enter: open visitor · a/A: action · u: this actor · v: this visitor · x: clear · m: more · r: reload · i: ids", .dim))
        var cursor = LineCursor(area: area, bottom: canvas.putFooter(footer, in: area))
        let more = nextCursor == nil ? "" : ", more: m"
        cursor.line("Audit · action \(actionFilter ?? "all") · actor \(filterName(actorFilter)) · visitor \(filterName(visitorFilter))"
                    + " · \(entries.count) shown\(more)", .title, on: &canvas)
        let filtered = actionFilter != nil || actorFilter != nil || visitorFilter != nil
        guard cursor.readState(loadedAt.map { ($0, false) }, error: errorLine, shown: "the log", now: now,
                               emptyText: entries.isEmpty ? (filtered ? "No entry matches. Press x to clear the filters." : "The log is empty.") : nil,
                               on: &canvas) else { return }
        let columns = Self.columns(width: area.width)
        cursor.line(columns.row(["When", "Actor", "Action", "Entity"]), Canvas.Style(.muted, bold: true), on: &canvas)
        cursor.list(&list, count: entries.count, on: &canvas) { index in
            let entry = entries[index]
            return (columns.row([siteTime.short(entry.at, now: now), actor(entry), entry.action, entity(entry)]), .plain)
        }
    }

    /// When 13, action 22; the rest actor 40 %, entity 60 %.
    static func columns(width: Int) -> TableColumns {
        let when = min(max(0, width), 13)
        let action = min(max(0, width - when), 22)
        let rest = max(0, width - when - action)
        let actor = rest * 4 / 10
        return TableColumns(widths: [when, actor, action, rest - actor])
    }
}
