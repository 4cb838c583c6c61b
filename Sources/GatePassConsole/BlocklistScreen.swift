import Foundation
import GatePassCore

/// The site's blocklist (OWNER/ADMIN): who must not enter and why, with expiry; add, remove,
/// and the matches the gates reported while the console ran (`security.alert`).
///
/// ```
/// Blocklist · 2 entries, 1 expired · times in Europe/Bucharest
/// Name          Email          Phone       Company     Reason                Expires
/// Ana Pop       ana@x.com                              threatened staff      never        ← selected
/// Dan Ene                      +40 700…    Bolt        stole a laptop        expired 11-30
/// Recent matches: 10:42 Ana Pop at Main gate (entry Ana Pop)
/// n: add · d: remove · r: reload
/// ```
/// The reason is for the site's managers: it is shown here and never at a gate. Expiry is
/// typed in the site's time zone (`YYYY-MM-DD HH:MM`); empty never expires.
public final class BlocklistScreen: ConsoleScreen {
    /// A match a gate reported (`security.alert`), as received.
    public struct Match: Sendable, Equatable {
        public var visitorId: String
        public var visitorName: String
        public var entryId: String?
        public var checkpointId: String?
        public var receivedAt: Date
    }

    /// The add form's fields, in the order shown.
    enum Field: Int, CaseIterable {
        case name, email, phone, company, reason, expires
    }

    /// The most matches kept (the newest).
    public static let matchesKept = 20

    private let services: any GovernanceServices
    private let clock: () -> Date
    private let fallbackZone: TimeZone

    public private(set) var site: Organization?
    public private(set) var entries: [BlocklistEntry] = []
    private var list = ListSelection()
    public var selection: Int { list.index }
    public private(set) var loadedAt: Date?
    public private(set) var errorLine: String?
    public private(set) var notice: VisitorsScreen.Notice?
    public private(set) var gates: [String: String] = [:]
    /// Newest first.
    public private(set) var matches: [Match] = []
    /// The entry whose removal waits for y/n.
    public private(set) var confirmingRemoval: BlocklistEntry?
    var form: FormFields?
    /// The last entry sent and its key: sending the same again reuses the key.
    private var lastSent: (entry: NewBlocklistEntry, key: String)?

    public init(services: any GovernanceServices, clock: @escaping () -> Date = Date.init, fallbackZone: TimeZone = .current) {
        self.services = services
        self.clock = clock
        self.fallbackZone = fallbackZone
    }

    public var title: String { "Blocklist" }

    public var isCapturingText: Bool { form != nil || confirmingRemoval != nil }

    public var isFormOpen: Bool { form != nil }

    public var siteTime: SiteClock { site.flatMap { SiteClock(zoneNamed: $0.timeZone) } ?? SiteClock(timeZone: fallbackZone) }

    public var selectedEntry: BlocklistEntry? { entries.indices.contains(selection) ? entries[selection] : nil }

    public var keyHelp: [(key: String, action: String)] {
        if form != nil { return FormFields.keyHelp }
        if confirmingRemoval != nil { return [("y", "remove the entry"), ("n, Esc", "keep it")] }
        return [("Up, k / Down, j", "previous or next entry"), ("PgUp, PgDn, Home, End", "move by pages, to the ends"),
                ("n", "add an entry (name, email or phone; reason; expiry)"), ("d", "remove the selected entry (after y/n)"),
                ("r", "reload the list")]
    }

    // MARK: - Loading and events

    public func appear() -> ScreenAction {
        if site == nil { site = try? services.site().value }
        if gates.isEmpty { gates = services.gateNames() }
        reload()
        return .redraw
    }

    public func reload() {
        let keep = selectedEntry?.id
        do {
            entries = try services.blocklist()
            loadedAt = clock()
            errorLine = nil
        } catch {
            errorLine = "Could not load the blocklist. " + error.sentence
        }
        list.select(keep.flatMap { id in entries.firstIndex { $0.id == id } } ?? selection, count: entries.count)
    }

    public func receive(_ event: ServerEvent) -> ScreenAction {
        guard event.kind == .securityAlert, case .visitor(let data)? = try? event.payload() else { return .none }
        matches.insert(Match(visitorId: data.visitor.id, visitorName: data.visitor.name, entryId: data.entryId,
                             checkpointId: data.checkpointId, receivedAt: clock()), at: 0)
        if matches.count > Self.matchesKept { matches.removeLast(matches.count - Self.matchesKept) }
        if let gate = data.checkpointId, gates[gate] == nil { gates = services.gateNames() }
        return .redraw
    }

    // MARK: - Keys

    public func handle(_ key: Key) -> ScreenAction {
        if form != nil { return handleForm(key) }
        if confirmingRemoval != nil { return handleRemoval(key) }
        if let moved = list.move(key, count: entries.count) { return moved ? .redraw : .none }
        switch key {
        case .character("n"):
            form = Self.newForm()
            notice = nil
            return .redraw
        case .character("d"):
            guard let entry = selectedEntry else {
                notice = VisitorsScreen.Notice(.warning, "Nothing to remove: the list is empty.")
                return .redraw
            }
            confirmingRemoval = entry
            notice = nil
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

    private func handleRemoval(_ key: Key) -> ScreenAction {
        guard let entry = confirmingRemoval else { return .none }
        switch key {
        case .character("y"), .character("Y"):
            confirmingRemoval = nil
            do {
                try services.removeBlocklistEntry(id: entry.id)
                notice = VisitorsScreen.Notice(.ok, "Removed \(Self.summary(entry)): it no longer stops anyone.")
                reload()
                return .redraw
            } catch {
                notice = VisitorsScreen.Notice(.error, "Not removed: \(error.sentence)")
                return .alert
            }
        case .character("n"), .character("N"), .escape:
            confirmingRemoval = nil
            notice = VisitorsScreen.Notice(.warning, "Kept: nothing was removed.")
            return .redraw
        case .resize:
            return .redraw
        default:
            return .none
        }
    }

    // MARK: - The form

    static func newForm() -> FormFields {
        FormFields([
            .init("Name", .text(limit: FieldRules.nameLength)),
            .init("Email", .text(limit: FieldRules.emailLength)),
            .init("Phone", .text(limit: FieldRules.phoneLength)),
            .init("Company", .text(limit: FieldRules.nameLength)),
            .init("Reason", .text(limit: NewBlocklistEntry.reasonLength)),
            // A site-local time or an RFC 3339 one (the domain's SiteTime reads at most 40 bytes).
            .init("Expires", .text(limit: 40)),
        ])
    }

    /// The entry the form holds, checked by the server's own rules, or the first problem and
    /// the field it belongs to.
    func entry(from form: FormFields) -> Result<NewBlocklistEntry, FormProblem> {
        var expiresAt: Timestamp?
        if let typed = form.value(Field.expires.rawValue) {
            switch siteTime.instant(typed, "expires") {
            case .success(let instant):
                guard instant > clock() else {
                    return .failure(FormProblem(field: Field.expires.rawValue, message: "expires must be in the future (empty: never)"))
                }
                expiresAt = Timestamp(instant)
            case .failure(let failure):
                return .failure(FormProblem(field: Field.expires.rawValue, message: failure.message))
            }
        }
        let typed = NewBlocklistEntry(name: form.value(Field.name.rawValue), email: form.value(Field.email.rawValue),
                                      phone: form.value(Field.phone.rawValue), company: form.value(Field.company.rawValue),
                                      reason: form.text(Field.reason.rawValue), expiresAt: expiresAt)
        do throws(FieldRuleViolation) {
            return .success(try typed.validated(now: clock()))
        } catch {
            let named: Field? = error.field == "expiresAt" ? .expires : Field.allCases.first { "\($0)" == error.field }
            let field = (named ?? .name).rawValue
            return .failure(FormProblem(field: field, message: error.message))
        }
    }

    /// What is wrong with field `index` as typed; a missing reason or identity only after a
    /// first attempt to send.
    func problem(_ index: Int, in form: FormFields) -> String? {
        guard case .failure(let problem) = entry(from: form), problem.field == index else { return nil }
        if !form.attempted && form.value(index) == nil { return nil }
        return problem.message
    }

    private func handleForm(_ key: Key) -> ScreenAction {
        guard var current = form else { return .none }
        switch current.handle(key) {
        case .unchanged: return .none
        case .changed:
            form = current
            return .redraw
        case .close:
            form = nil
            notice = VisitorsScreen.Notice(.warning, "Nothing was added.")
            return .redraw
        case .submit:
            current.attempted = true
            switch entry(from: current) {
            case .failure(let problem):
                current.focus = problem.field
                current.notice = VisitorsScreen.Notice(.error, "Not sent: \(problem.message).")
                form = current
                return .redraw
            case .success(let entry):
                let key = lastSent.flatMap { $0.entry == entry ? $0.key : nil } ?? UUID().uuidString
                lastSent = (entry, key)
                do {
                    let added = try services.addBlocklistEntry(entry, idempotencyKey: key)
                    form = nil
                    lastSent = nil
                    notice = VisitorsScreen.Notice(.ok, "Added \(Self.summary(added)): every gate now stops a match.")
                    reload()
                    if let index = entries.firstIndex(where: { $0.id == added.id }) { list.select(index, count: entries.count) }
                    return .redraw
                } catch {
                    current.notice = VisitorsScreen.Notice(.error, "Not added: \(error.sentence) The form is kept; Ctrl-S sends it again.")
                    form = current
                    return .alert
                }
            }
        }
    }

    // MARK: - Drawing

    /// "Ana Pop", else the email, else the phone: who the entry stops.
    static func summary(_ entry: BlocklistEntry) -> String {
        entry.name ?? entry.email ?? entry.phone ?? entry.id
    }

    func gate(_ id: String?) -> String {
        guard let id else { return "a gate" }
        return gates[id] ?? String(id.prefix(8))
    }

    func matchLine(_ match: Match, now: Date) -> String {
        let entry = match.entryId.flatMap { id in entries.first { $0.id == id } }.map { " (entry \(Self.summary($0)))" } ?? ""
        return "\(siteTime.short(match.receivedAt, now: now)) \(match.visitorName) at \(gate(match.checkpointId))\(entry)"
    }

    public func render(into canvas: inout Canvas, area: Area) {
        guard area.width > 0, area.height > 0 else { return }
        if let form {
            form.render(into: &canvas, area: area,
                        title: "New blocklist entry · at least one of name, email, phone · expiry in \(siteTime.zoneName), empty: never",
                        problem: { problem($0, in: form) })
            return
        }
        let now = clock()
        var footer: [(String, Canvas.Style)] = []
        if !matches.isEmpty {
            footer.append(("Recent matches at the gates (newest first):", Canvas.Style(.danger, bold: true)))
            for match in matches.prefix(3) { footer.append(("  " + matchLine(match, now: now), Canvas.Style(.danger))) }
        }
        if let notice { footer.append((notice.text, notice.kind.style)) }
        if let entry = confirmingRemoval {
            footer.append(("Remove \(Self.summary(entry)) from the blocklist? The gates stop matching it at once. y/n",
                           Canvas.Style(.normal, bold: true)))
        } else {
            footer.append(("n: add · d: remove · r: reload", .dim))
        }
        var cursor = LineCursor(area: area, bottom: canvas.putFooter(footer, in: area))
        let expired = entries.filter { !$0.isActive(at: now) }.count
        let count = entries.count == 1 ? "1 entry" : "\(entries.count) entries"
        cursor.line("Blocklist · \(count)\(expired > 0 ? ", \(expired) expired" : "") · times in \(siteTime.zoneName)",
                    .title, on: &canvas)
        guard cursor.readState(loadedAt.map { ($0, false) }, error: errorLine, shown: "the list", now: now,
                               emptyText: entries.isEmpty ? "Nobody is blocked. Press n to add an entry." : nil,
                               on: &canvas) else { return }
        let columns = Self.columns(width: area.width)
        cursor.line(columns.row(["Name", "Email", "Phone", "Company", "Reason", "Expires"]), Canvas.Style(.muted, bold: true),
                    on: &canvas)
        cursor.list(&list, count: entries.count, on: &canvas) { index in
            let entry = entries[index]
            let active = entry.isActive(at: now)
            let expires = entry.expiresAt.map { active ? siteTime.short($0, now: now) : "expired " + siteTime.short($0, now: now) }
                ?? "never"
            return (columns.row([entry.name ?? "", entry.email ?? "", entry.phone ?? "", entry.company ?? "", entry.reason, expires]),
                    active ? .plain : .dim)
        }
    }

    /// Expires 20 on the right; the rest name 20 %, email 20 %, phone 15 %, company 15 %, reason 30 %.
    static func columns(width: Int) -> TableColumns {
        let expires = min(max(0, width), 20)
        let rest = max(0, width - expires)
        let name = rest / 5, email = rest / 5, phone = rest * 15 / 100, company = rest * 15 / 100
        return TableColumns(widths: [name, email, phone, company, rest - name - email - phone - company, expires])
    }
}

/// A form's first problem and the field it belongs to (an index into its fields).
struct FormProblem: Error, Equatable {
    var field: Int
    var message: String
}
