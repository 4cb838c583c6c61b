import Foundation
import GatePassCore

/// Who is logged in, where, this device's push token, the outbox, and logout.
///
/// ```
/// More
/// Profile
///   Name          Ana Pop
///   Role          OWNER
/// Server
///   URL           http://gate.test
///   State         online
/// Device
///   Push token    gpd_x7Hq2a…
///   Registered    yes, with http://gate.test
/// Outbox: 1 queued, 1 dead letter
///   #12 approve · POST /api/visitors/v1/approve-scan · 3 tries · next try in 40 s
///   #9 checkin · POST /api/visitor-scanner/checkin · refused: 409 CONFLICT: …   ← selected
/// ```
/// `r` puts the selected dead letter back in the queue (or makes a waiting entry due now),
/// `s` sends the queue now, `L` logs out after a y/n question: the push token is
/// unregistered first, then the session ends; problems met are shown before the shell goes
/// back to the login screen. The outbox part is read again every `outboxRefreshInterval`.
/// Offline, the profile comes from the cache and says how old it is.
public final class MoreScreen: ConsoleScreen {
    /// The line above the prompt or the key hint: what the last action did.
    public struct Notice: Sendable, Equatable {
        public typealias Kind = OutcomeKind
        public var kind: Kind
        public var text: String
    }

    /// One selectable outbox row.
    public enum EntryReference: Sendable, Equatable {
        case queued(id: Int64)
        case dead(id: Int64)

        public var id: Int64 {
            switch self {
            case .queued(let id), .dead(let id): id
            }
        }
    }

    /// How often the outbox part is read again while the screen lives.
    public static let outboxRefreshInterval: TimeInterval = 2

    private let services: any MoreServices
    private let clock: () -> Date
    /// The link to the server: the one the status line shows too.
    private let connection: ConsoleConnection

    /// The profile and whether the cache answered; nil until it was read.
    public private(set) var profile: ConsoleRead<Profile>?
    public private(set) var profileError: String?
    /// The organization, for its name; nil until read or when it cannot be.
    public private(set) var organization: Organization?
    /// `i`: ids shown beside names.
    public private(set) var showingIds = false
    public private(set) var server: String?
    public private(set) var device: ConsoleDevice?
    public private(set) var deviceError: String?
    public private(set) var outbox: OutboxState?
    public private(set) var outboxError: String?
    /// The selected outbox row (an index into `entries`); PgUp/PgDn move by the content rows
    /// of the last render. The content scrolls on its own (`scroll`), as it holds more than the outbox.
    private var list = ListSelection()
    /// The selected outbox row (an index into `entries`).
    public var selection: Int { list.index }
    /// The first content line drawn.
    public private(set) var scroll = 0
    public private(set) var notice: Notice?
    /// True while "Log out? y/n" waits for an answer.
    public private(set) var confirmingLogout = false
    /// Problems met by a logout that happened: shown until any key, which then goes to the login.
    public private(set) var logoutProblems: [String]?
    private var lastOutboxRead: Date?
    private var visibleRows = 10
    private var contentCount = 0

    /// - Parameters:
    ///   - services: profile, device, outbox and logout (the client core, or a fake).
    ///   - clock: "now", for ages, countdowns and the outbox refresh (tests move it).
    ///   - connection: the link to the server, shared with the status line.
    public init(services: any MoreServices, clock: @escaping () -> Date, connection: ConsoleConnection) {
        self.services = services
        self.clock = clock
        self.connection = connection
    }

    public var title: String { "More" }

    public var isCapturingText: Bool { confirmingLogout || logoutProblems != nil }

    public var keyHelp: [(key: String, action: String)] {
        if confirmingLogout { return [("y", "log out"), ("n, Esc", "stay logged in")] }
        if logoutProblems != nil { return [("any key", "go to the login screen")] }
        return [("Up, k", "previous outbox entry"),
                ("Down, j", "next outbox entry"),
                ("PgUp, PgDn", "a page up or down"),
                ("Home, End", "first or last entry"),
                ("r", "retry the selected dead letter (or send a waiting entry next)"),
                ("s", "send the queued entries now"),
                ("L", "log out (asks first)"),
                ("i", showingIds ? "hide the ids" : "show the ids beside the names"),
                ("g", "reload everything"),
                ("Esc", "clear the message")]
    }

    /// The outbox rows in the order drawn: queued entries, then dead letters.
    public var entries: [EntryReference] {
        guard let outbox else { return [] }
        return outbox.queued.map { .queued(id: $0.id) } + outbox.deadLetters.map { .dead(id: $0.id) }
    }

    public var selectedEntry: EntryReference? {
        let all = entries
        return all.indices.contains(selection) ? all[selection] : nil
    }

    /// The push token as shown: its first 6 characters (after the `gpd_` prefix, which says
    /// nothing) and "…". Enough to tell devices apart, too little to reuse.
    public static func abbreviated(token: String) -> String {
        let prefix = token.hasPrefix("gpd_") ? "gpd_" : ""
        let rest = token.dropFirst(prefix.count)
        return prefix + String(rest.prefix(min(6, rest.count / 2))) + "…"
    }

    // MARK: - Loading

    public func appear() -> ScreenAction {
        reload()
        return .redraw
    }

    /// Reads everything again; each part that fails says so and keeps what it showed.
    public func reload() {
        server = services.sessionServer()
        do {
            let read = try services.profile()
            profile = read
            profileError = nil
        } catch {
            profileError = "Could not load the profile. " + error.sentence
        }
        // Best effort: without it the organization shows as its id.
        organization = (try? services.site())?.value
        do {
            device = try services.device()
            deviceError = nil
        } catch {
            deviceError = "Could not read this device's push token. " + error.sentence
        }
        reloadOutbox()
    }

    /// Reads the outbox again, keeping the selection on the same entry; true when it changed.
    @discardableResult
    private func reloadOutbox(select wanted: EntryReference? = nil) -> Bool {
        let keep = wanted ?? selectedEntry
        let before = outbox
        let beforeError = outboxError
        lastOutboxRead = clock()
        do {
            outbox = try services.outboxState()
            outboxError = nil
        } catch {
            outboxError = "Could not read the outbox. " + error.sentence
        }
        let all = entries
        let kept = keep.flatMap { keep in all.firstIndex(of: keep) ?? all.firstIndex(where: { $0.id == keep.id }) }
        list.select(kept ?? selection, count: all.count)
        return before != outbox || beforeError != outboxError
    }

    public func tick(now: Date) -> ScreenAction {
        guard let lastOutboxRead, now.timeIntervalSince(lastOutboxRead) >= Self.outboxRefreshInterval else { return .none }
        let changed = reloadOutbox()
        // Waiting entries show a countdown, which moves even when nothing else does.
        let counting = outbox?.queued.contains { $0.nextAttemptAt > now } ?? false
        return changed || counting ? .redraw : .none
    }

    // MARK: - Keys

    public func handle(_ key: Key) -> ScreenAction {
        if logoutProblems != nil {
            // The logout happened; whatever the key, the shell now shows the login.
            return key == .resize ? .redraw : .sessionChanged
        }
        if confirmingLogout { return handleLogoutQuestion(key) }
        if let moved = move(key) { return moved ? .redraw : .none }
        switch key {
        case .character("r"): return retrySelected()
        case .character("s"): return sendNow()
        case .character("L"):
            confirmingLogout = true
            notice = nil
            return .redraw
        case .character("g"):
            notice = nil
            reload()
            return .redraw
        case .character("i"):
            showingIds.toggle()
            return .redraw
        case .escape:
            guard notice != nil else { return .none }
            notice = nil
            return .redraw
        case .resize:
            return .redraw
        default:
            return .none
        }
    }

    /// Moves the selection among the outbox rows, or scrolls when there are none.
    /// - Returns: nil for a key that does not move; otherwise whether anything moved.
    private func move(_ key: Key) -> Bool? {
        let count = entries.count
        if count > 0 { return list.move(key, count: count) }
        let last = max(0, contentCount - visibleRows)
        guard let target = ListSelection.target(of: key, from: scroll, pageSize: visibleRows, last: last) else { return nil }
        let clamped = max(0, min(target, last))
        guard clamped != scroll else { return false }
        scroll = clamped
        return true
    }

    private func retrySelected() -> ScreenAction {
        guard let entry = selectedEntry else {
            notice = Notice(kind: .warning, text: "Nothing to retry: the outbox is empty.")
            return .redraw
        }
        do {
            if try services.retryOutboxEntry(id: entry.id) {
                switch entry {
                case .dead(let id):
                    notice = Notice(kind: .ok, text: "Entry #\(id) is back in the queue and due now: s sends it now, or the next drain does.")
                case .queued(let id):
                    notice = Notice(kind: .ok, text: "Entry #\(id) is due now: s sends it now, or the next drain does.")
                }
                reloadOutbox(select: .queued(id: entry.id))
            } else {
                notice = Notice(kind: .warning, text: "Entry #\(entry.id) is no longer in the outbox: it was sent or retried meanwhile.")
                reloadOutbox()
            }
        } catch {
            notice = Notice(kind: .error, text: "Could not retry entry #\(entry.id). " + error.sentence)
        }
        return .redraw
    }

    private func sendNow() -> ScreenAction {
        let summary = services.drainOutboxNow()
        if let failure = summary.failure {
            notice = Notice(kind: .error, text: "Sending stopped: \(failure).")
        } else if summary.busy {
            notice = Notice(kind: .warning, text: "Another program is sending this outbox right now; try again in a moment.")
        } else if let reason = summary.pausedForLogin {
            notice = Notice(kind: .error, text: "The server refused the session (\(reason)): log in again, then send.")
        } else if summary.offline {
            notice = Notice(kind: .warning, text: "The server cannot be reached: sent \(summary.sent), \(summary.remaining) still queued.")
        } else {
            let refused = summary.deadLettered == 0 ? "" : ", \(summary.deadLettered) refused (see the dead letters)"
            notice = Notice(kind: summary.deadLettered == 0 ? .ok : .warning,
                            text: "Sent \(summary.sent)\(refused), \(summary.remaining) left.")
        }
        reloadOutbox()
        return .redraw
    }

    private func handleLogoutQuestion(_ key: Key) -> ScreenAction {
        switch key {
        case .character("y"), .character("Y"):
            confirmingLogout = false
            do {
                let problems = try services.logOut()
                if problems.isEmpty { return .sessionChanged }
                logoutProblems = problems
            } catch {
                notice = Notice(kind: .error, text: "Could not log out. " + error.sentence)
            }
            return .redraw
        case .character("n"), .character("N"), .escape:
            confirmingLogout = false
            notice = Notice(kind: .warning, text: "Still logged in.")
            return .redraw
        case .resize:
            return .redraw
        default:
            return .none
        }
    }

    // MARK: - Drawing

    /// One content line: a label and value, a section header, or an outbox row.
    private struct Line {
        var text: String
        var style: Canvas.Style
        var label: String?
        var entry: EntryReference?
    }

    private func contentLines(now: Date) -> [Line] {
        var lines: [Line] = []
        func section(_ text: String) { lines.append(Line(text: text, style: Canvas.Style(.muted, bold: true))) }
        func field(_ label: String, _ value: String, _ style: Canvas.Style = .plain) {
            lines.append(Line(text: value, style: style, label: label))
        }
        func message(_ text: String, _ style: Canvas.Style) { lines.append(Line(text: "  " + text, style: style)) }
        let warning = Canvas.Style(.warning, bold: true)
        let danger = Canvas.Style(.danger, bold: true)

        section("Profile")
        if let profile {
            if profile.fromCache {
                message("Offline: the profile as it was \(ConsoleFormat.age(since: profile.updatedAt, now: now)) ago.", warning)
            }
            let user = profile.value
            field("Name", user.name)
            field("Email", user.email)
            field("Role", user.role.rawValue)
            field("Organization", organizationName(of: user))
            field("May scan", user.principalKind.mayScan ? "yes" : "no")
        }
        if let profileError { message(profileError, danger) }
        if profile == nil && profileError == nil { message("Loading…", .dim) }

        section("Server")
        field("URL", server ?? "not logged in")
        let link = connection.state
        field("State", link.sentence(now: now),
              link.link == .offline || link.isStale(now: now) ? warning : Canvas.Style(.ok))

        section("Device")
        if let device {
            field("Push token", Self.abbreviated(token: device.token))
            if let registeredWith = device.registeredWith {
                field("Registered", "yes, with \(registeredWith) (\(device.platform))", Canvas.Style(.ok))
            } else {
                field("Registered", "no: events are not pushed to this device until the next login", warning)
            }
        }
        if let deviceError { message(deviceError, danger) }

        if let outbox {
            let dead = outbox.deadLetters.count
            section("Outbox: \(outbox.queued.count) queued, \(dead) dead \(dead == 1 ? "letter" : "letters")")
            if let reason = outbox.pausedForLogin {
                message("Sending is paused until you log in again (\(reason)).", danger)
            }
            if outbox.queued.isEmpty && outbox.deadLetters.isEmpty { message("Nothing is waiting to be sent.", .dim) }
            for entry in outbox.queued {
                var parts = ["#\(entry.id) \(entry.kind)", entry.request, "\(entry.attempts) \(entry.attempts == 1 ? "try" : "tries")"]
                parts.append(entry.nextAttemptAt > now
                    ? "next try in \(ConsoleFormat.age(since: now, now: entry.nextAttemptAt))" : "due now")
                if let lastError = entry.lastError { parts.append("last error: \(lastError)") }
                lines.append(Line(text: "  " + parts.joined(separator: " · "), style: .plain, entry: .queued(id: entry.id)))
            }
            if !outbox.deadLetters.isEmpty { message("Refused by the server (r puts one back in the queue):", .dim) }
            for entry in outbox.deadLetters {
                let text = "#\(entry.id) \(entry.kind) · \(entry.request) · refused: \(entry.status) \(entry.code): \(entry.message)"
                lines.append(Line(text: "  " + text, style: Canvas.Style(.danger), entry: .dead(id: entry.id)))
            }
        } else {
            section("Outbox")
        }
        if let outboxError { message(outboxError, danger) }
        return lines
    }

    /// "Demo Site", with "(id …)" when ids are asked for; the id when the name is not known.
    private func organizationName(of user: Profile) -> String {
        guard let organization, organization.id == user.organizationId else {
            return "\(user.organizationId) (its name cannot be read now)"
        }
        return showingIds ? "\(organization.name) (id \(organization.id))" : organization.name
    }

    public func render(into canvas: inout Canvas, area: Area) {
        guard area.width > 0, area.height > 0 else { return }
        let now = clock()
        var footer: [(String, Canvas.Style)] = []
        if let logoutProblems {
            footer.append(("Logged out, with problems:", Canvas.Style(.warning, bold: true)))
            for problem in logoutProblems { footer.append(("  " + problem, Canvas.Style(.warning))) }
            footer.append(("Press any key to go to the login screen.", .dim))
        } else {
            if let notice {
                footer.append((notice.text, notice.kind.style))
            }
            if confirmingLogout {
                footer.append(("Log out? y/n", Canvas.Style(.warning, bold: true)))
                footer.append(("The push token is unregistered first; queued entries stay for the next login.", .dim))
            } else {
                footer.append(("r retry · s send now · L log out · g reload · i ids", .dim))
            }
        }
        // The question or the problems matter more than the key hint on a tiny screen.
        let footerTop = canvas.putFooter(footer, in: area, keepingFirst: true)

        var y = area.y
        guard y < footerTop else { return }
        canvas.put(ConsoleFormat.fit("More", width: area.width), x: area.x, y: y, style: .title, maxWidth: area.width)
        y += 1
        let lines = contentLines(now: now)
        contentCount = lines.count
        visibleRows = max(1, footerTop - y)
        list.setPageSize(visibleRows)
        let rows = max(0, footerTop - y)
        // Keep the selected outbox row in view.
        if let selected = selectedEntry, let index = lines.firstIndex(where: { $0.entry == selected }) {
            // Scrolling up near the top shows the sections above the outbox again.
            if index < scroll { scroll = index < rows ? 0 : index }
            if index >= scroll + rows { scroll = index - rows + 1 }
        }
        scroll = max(0, min(scroll, max(0, lines.count - rows)))
        let labelWidth = min(16, max(0, area.width / 3))
        let selected = selectedEntry
        for line in lines.dropFirst(scroll).prefix(rows) {
            if let label = line.label {
                canvas.put(ConsoleFormat.fit("  " + label, width: labelWidth - 1), x: area.x, y: y, style: .dim, maxWidth: labelWidth)
                canvas.put(ConsoleFormat.fit(line.text, width: area.width - labelWidth), x: area.x + labelWidth, y: y,
                           style: line.style, maxWidth: max(0, area.width - labelWidth))
            } else {
                let isSelected = line.entry != nil && line.entry == selected
                var style = line.style
                if isSelected { style.reverse = true }
                canvas.put(ConsoleFormat.fit(line.text, width: area.width), x: area.x, y: y, style: style, maxWidth: area.width)
                if isSelected { canvas.fill(y: y, from: area.x, width: area.width, style: style) }
            }
            y += 1
        }
    }
}
