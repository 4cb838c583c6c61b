import Foundation
import GatePassCore

/// Today's and upcoming visitors (OWNER/ADMIN), with a status filter, a search and the
/// registration form.
///
/// ```
/// Visitors from 2026-12-01 (Europe/Bucharest) · all statuses · 3 shown
/// From         Name            Company       Host          Status
/// 09:00        Ana Pop         Acme          Ion           expected          ← selected
/// 12-02 10:00  Dan Ene         Bolt          Maria         awaiting approval
/// Enter: open · n: new visitor · f/F: status · /: search · r: reload
/// ```
/// "Today" is the site's (the organization's time zone), as the server counts it. Enter opens
/// the visitor (cancel, check out, invitation, pass there). Offline, the list of the same
/// query comes from the cache and says how old it is. Visitors shown are kept current from
/// the event stream.
public final class VisitorsScreen: ConsoleScreen {
    /// The line that says how the last action went.
    public struct Notice: Sendable, Equatable {
        public var kind: OutcomeKind
        public var text: String
        public init(_ kind: OutcomeKind, _ text: String) { self.kind = kind; self.text = text }
    }

    /// The statuses `f` steps through; nil is every status.
    public static let statusFilters: [VisitorStatus?] = [nil, .expected, .awaitingApproval, .approved, .checkedIn,
                                                        .checkedOut, .rejected, .cancelled]
    /// The longest search the prompt takes.
    public static let searchLimit = 200

    let services: any VisitorsServices
    let clock: () -> Date
    /// The zone used until the site's is known (the terminal's).
    private let fallbackZone: TimeZone
    /// Whether the registration form offers a choice of approver (it reads the users, which
    /// a HOST may not: its visitors then go to any approver).
    let choosesApprover: Bool

    /// The site's name and time zone; nil until read.
    public private(set) var site: Organization?
    /// Why the site's zone is not used, when it is not.
    public private(set) var siteProblem: String?
    public private(set) var visitors: [Visitor] = []
    var list = ListSelection()
    public var selection: Int { list.index }
    public private(set) var loaded: (updatedAt: Date, fromCache: Bool)?
    public private(set) var hasMore = false
    public private(set) var errorLine: String?
    public private(set) var statusFilter: VisitorStatus?
    public private(set) var search: String?
    /// The search prompt while it is open.
    var searchInput: TextInput?
    public var searchText: String? { searchInput?.text }
    /// The registration form while it is open.
    public internal(set) var form: RegistrationForm?
    public internal(set) var notice: Notice?

    /// - Parameters:
    ///   - clock: "now": what today is.
    ///   - fallbackZone: the zone used while the site's cannot be read.
    ///   - choosesApprover: whether the form offers the approvers to choose from.
    public init(services: any VisitorsServices, clock: @escaping () -> Date = Date.init, fallbackZone: TimeZone = .current,
                choosesApprover: Bool = true) {
        self.services = services
        self.clock = clock
        self.fallbackZone = fallbackZone
        self.choosesApprover = choosesApprover
    }

    public var title: String { "Visitors" }

    public var isCapturingText: Bool { searchInput != nil || form != nil }

    /// The site's clock, or the terminal's while the site's zone is unknown.
    public var siteTime: SiteClock {
        site.flatMap { SiteClock(zoneNamed: $0.timeZone) } ?? SiteClock(timeZone: fallbackZone)
    }

    /// What the list asks for now.
    public var query: VisitorListQuery {
        VisitorListQuery(fromDay: siteTime.day(clock()), status: statusFilter, search: search)
    }

    public var selectedVisitor: Visitor? { visitors.indices.contains(selection) ? visitors[selection] : nil }

    public var keyHelp: [(key: String, action: String)] {
        if form != nil { return RegistrationForm.keyHelp }
        if searchInput != nil {
            return [("Enter", "search (an empty search shows everyone)"), ("Esc", "close the search, keep the list"),
                    ("Backspace, Ctrl-U", "delete a character, clear the search")]
        }
        return [("Up, k / Down, j", "previous or next visitor"), ("PgUp, PgDn, Home, End", "move by pages, to the ends"),
                ("Enter", "open the visitor: cancel, check out, invitation, pass"), ("n", "register a new visitor"),
                ("f, F", "next or previous status filter"), ("/", "search by name, email, phone, company or short id"),
                ("r", "reload the list")]
    }

    // MARK: - Loading

    public func appear() -> ScreenAction {
        if site == nil { loadSite() }
        reload()
        return .redraw
    }

    private func loadSite() {
        do {
            let read = try services.site()
            site = read.value
            siteProblem = SiteClock(zoneNamed: read.value.timeZone) == nil
                ? "The site's time zone \(read.value.timeZone) is unknown here; times are this terminal's." : nil
        } catch {
            siteProblem = "The site's time zone could not be read (\(error.sentence)); times are this terminal's."
        }
    }

    /// Reads the list again; on failure the list shown so far stays and the error is said.
    public func reload() {
        let keep = selectedVisitor?.id
        do {
            let read = try services.visitors(query)
            visitors = read.value
            loaded = (read.updatedAt, read.fromCache)
            hasMore = read.hasMore
            errorLine = nil
        } catch {
            errorLine = "Could not load the visitors. " + error.sentence
        }
        list.select(keep.flatMap { id in visitors.firstIndex { $0.id == id } } ?? selection, count: visitors.count)
    }

    // MARK: - Events

    public func receive(_ event: ServerEvent) -> ScreenAction {
        guard let kind = event.kind else { return .none }
        if kind == .streamGap {
            reload()
            return .redraw
        }
        guard kind.carriesVisitor, case .visitor(let data)? = try? event.payload(),
              let index = visitors.firstIndex(where: { $0.id == data.visitor.id }) else { return .none }
        visitors[index] = data.visitor
        return .redraw
    }

    // MARK: - Keys

    public func handle(_ key: Key) -> ScreenAction {
        if form != nil { return handleForm(key) }
        if searchInput != nil { return handleSearch(key) }
        if let moved = list.move(key, count: visitors.count) { return moved ? .redraw : .none }
        switch key {
        case .enter:
            guard let visitor = selectedVisitor else { return .none }
            return .openVisitor(id: visitor.id)
        case .character("n"):
            return openForm()
        case .character("f"), .character("F"):
            let filters = Self.statusFilters
            let current = filters.firstIndex(of: statusFilter) ?? 0
            statusFilter = filters[(current + (key == .character("f") ? 1 : filters.count - 1)) % filters.count]
            list.reset()
            reload()
            return .redraw
        case .character("/"):
            searchInput = TextInput(limit: Self.searchLimit, text: search ?? "")
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

    private func handleSearch(_ key: Key) -> ScreenAction {
        guard var input = searchInput else { return .none }
        switch key {
        case .character(let character):
            notice = nil
            if !input.insert(character) {
                notice = Notice(.warning, TextInput.isPrintable(character)
                                ? "A search takes at most \(Self.searchLimit) characters; the rest was not typed."
                                : "Control characters cannot be typed here; nothing was changed.")
            }
        case .backspace, .delete:
            guard input.deleteBackward() else { return .none }
        case .control("u"):
            input.text = ""
        case .enter:
            searchInput = nil
            notice = nil
            let trimmed = input.text.trimmingCharacters(in: .whitespaces)
            search = trimmed.isEmpty ? nil : trimmed
            list.reset()
            reload()
            return .redraw
        case .escape:
            searchInput = nil
            return .redraw
        case .resize:
            return .redraw
        default:
            return .none
        }
        searchInput = input
        return .redraw
    }

    // MARK: - Drawing

    static func describe(_ filter: VisitorStatus?) -> String {
        filter.map(VisitorDetailScreen.describe) ?? "all statuses"
    }

    public func render(into canvas: inout Canvas, area: Area) {
        guard area.width > 0, area.height > 0 else { return }
        if let form {
            renderForm(form, into: &canvas, area: area)
            return
        }
        let now = clock()
        var footer: [(String, Canvas.Style)] = []
        if let notice { footer.append((notice.text, notice.kind.style)) }
        if let searchInput {
            footer.append((searchInput.promptLine(label: "Search: ", width: area.width), Canvas.Style(.normal, bold: true)))
            footer.append(("Enter: search · Esc: close · an empty search shows everyone", .dim))
        } else {
            footer.append(("Enter: open · n: new visitor · f/F: status · /: search · r: reload", .dim))
        }
        var cursor = LineCursor(area: area, bottom: canvas.putFooter(footer, in: area))
        var heading = "Visitors from \(siteTime.day(now)) (\(siteTime.zoneName)) · \(Self.describe(statusFilter))"
        if let search { heading += " · search \"\(search)\"" }
        heading += hasMore ? " · \(visitors.count) shown, more match" : " · \(visitors.count) shown"
        cursor.line(heading, .title, on: &canvas)
        if let siteProblem { cursor.line(siteProblem, Canvas.Style(.warning, bold: true), on: &canvas) }
        let empty = search == nil && statusFilter == nil ? "No visitors today or later. Press n to register one."
                                                         : "No visitor matches. Press f or / to change the filter."
        guard cursor.readState(loaded, error: errorLine, shown: "the list", now: now,
                               emptyText: visitors.isEmpty ? empty : nil, on: &canvas) else { return }
        let columns = Columns.layout(width: area.width)
        cursor.line(columns.row(["From", "Name", "Company", "Host", "Status"]), Canvas.Style(.muted, bold: true), on: &canvas)
        cursor.list(&list, count: visitors.count, on: &canvas) { index in
            let visitor = visitors[index]
            return (columns.row([siteTime.short(visitor.validity.from, now: now), visitor.name, visitor.company ?? "",
                                 visitor.hostName ?? "", VisitorDetailScreen.describe(visitor.status)]),
                    visitor.status == .awaitingApproval ? Canvas.Style(.warning) : .plain)
        }
    }

    /// Columns: from 13 (`SiteClock.short` of another day, `16 Jun 18:06`, and a gap), status 18 on the right, the rest name 40 %, company 30 %, host 30 %.
    struct Columns {
        static func layout(width: Int) -> TableColumns {
            let from = min(max(0, width), 13)
            let status = min(max(0, width - from), 18)
            let rest = max(0, width - from - status)
            let name = rest * 4 / 10, company = rest * 3 / 10
            return TableColumns(widths: [from, name, company, rest - name - company, status])
        }
    }
}

/// A list's columns: each cell fitted into its width less one column, padded, so a space
/// separates them (the Visitors and On site lists).
struct TableColumns {
    let widths: [Int]

    func row(_ cells: [String]) -> String {
        zip(cells, widths).map { ApprovalsScreen.Columns.cell($0, $1) }.joined()
    }
}
