import Foundation
import GatePassCore

/// The Scan tab, for users who may scan at a checkpoint: passes from the camera (or another
/// frame source the driver runs) or typed by their short id, a lookup by name, phone or
/// email, walk-ins, and the gate's stats kept live.
///
/// ```
/// Checked in 12 · Awaiting 3 · Expected 40 · On site 9
/// Camera /dev/video0: streaming
///   ADMITTED · 14:02:05                     ┐
///    █  ██  █   █ ███ ███ ███ ███ ██        │ the last decision, large: block letters
///   █ █ █ █ ██ ██  █   █   █  █   █ █       │ in a box coloured by the outcome (ok,
///   ███ █ █ █ █ █  █   █   █  ██  █ █       │ danger, warning), who and why
///   █ █ █ █ █   █  █   █   █  █   █ █       │
///   █ █ ██  █   █ ███  █   █  ███ ██        │
///   Ana Pop (K7Q2M9XD)                      │
///   welcome                                 ┘
/// Short id  K7Q2_
/// Enter: check in · /: look up · w: walk-in · Esc: recent list · ?: help
/// Recent (3)
/// 14:02:05  ADMITTED            Ana Pop (K7Q2M9XD) — welcome
/// ```
/// On a short terminal the box shrinks to three rows, then one; the field and a pending
/// question are the last to go.
///
/// ## How the driver uses it
/// - `ScanScreen(services:clock:sourceDescription:siteClock:)`, as a tab when `ConsoleUser.mayScan`.
/// - For each new code from the camera (after de-duplication, e.g. `ConsoleScanFeed`), on the
///   UI thread: `scanned(text)`; ring the bell on `.alert` (a denial).
/// - For each change of the source's state, on the UI thread: `sourceState(text, isProblem:)`.
///
/// ## The keyboard
/// The short-id field has the keyboard whenever this tab shows (`isCapturingText` is true), so
/// a short id may start with a digit, a `q` or a `w` — all Crockford symbols — without
/// switching tabs or quitting. Exceptions, on an **empty** field only: lowercase `q` quits and
/// lowercase `w` opens the walk-in form (type `Q`/`W` in capitals to start a short id with
/// them; short ids are case-insensitive). `?` (never part of a short id) shows the help and
/// `/` opens the lookup. Esc on an empty field (or Tab) leaves the field for the list of
/// recent decisions; there the shell's keys (1–9, Tab, `q`, `?`) work again, and Esc or `i`
/// returns to the field.
///
/// ## Approval
/// A pass that needs approval is never asked for silently: the screen shows
/// "Request approval for … ? y/n" and only `y` sends the check-in again with
/// `confirmApprovalRequest`. The approver's answer arrives as `visitor.decided`: an approval is
/// followed by the check-in (which admits the visitor), a rejection is shown as a denial.
public final class ScanScreen: ConsoleScreen {
    /// Which part of the main screen has the keyboard.
    public enum Focus: Sendable, Equatable {
        /// The short-id field (the default).
        case shortId
        /// The list of recent decisions; the shell's keys work here.
        case recent
    }

    /// A line that says how the last key went, in the colour of how it went.
    public struct Notice: Sendable, Equatable {
        public enum Kind: Sendable, Equatable { case info, error }
        public var kind: Kind
        public var text: String

        static func info(_ text: String) -> Notice { Notice(kind: .info, text: text) }
        static func error(_ text: String) -> Notice { Notice(kind: .error, text: text) }
    }

    /// One decision of this session and when it was made.
    public struct RecentDecision: Sendable, Equatable {
        public var decision: GateDecision
        public var at: Date
    }

    /// "Request approval? y/n", open after a check-in answered APPROVAL_REQUIRED.
    public struct ApprovalQuestion: Sendable, Equatable {
        /// The APPROVAL_REQUIRED decision (visitor name, id, short id).
        public var decision: GateDecision
        /// The code that was checked in, sent again on `y`.
        public var code: String
    }

    /// The most characters the short-id field takes: a short id is 8, with hyphens or a `GP1:`
    /// prefix a little more; beyond this it cannot be a short id, so the rest is not taken.
    public static let shortIdLimit = 32
    /// The most characters a lookup takes (the server's search limit).
    public static let lookupLimit = 100
    /// How many decisions the recent list keeps.
    public static let recentLimit = 100
    /// Events refresh the stats at most this often; a burst is folded into one refresh later.
    public static let statsMinimumInterval: TimeInterval = 1

    let services: any ScanServices
    let clock: () -> Date
    /// How often the stats are read again when no event came (expected passes change without one).
    public let statsRefreshInterval: TimeInterval
    /// The organization's clock: decision times are read in its zone.
    let siteClock: SiteClock

    public internal(set) var focus: Focus = .shortId
    var shortId = TextInput(limit: ScanScreen.shortIdLimit)
    public internal(set) var notice: Notice?
    public internal(set) var stats: ScanStats?
    /// When the stats were read and whether the cache answered; nil before the first read.
    public internal(set) var statsLoaded: (updatedAt: Date, fromCache: Bool)?
    /// When the pass cache was last synced, read with the stats; nil when there is none.
    public internal(set) var passCacheSyncedAt: Date?
    public internal(set) var statsError: String?
    /// The camera/source line.
    public internal(set) var sourceText: String
    public internal(set) var sourceIsProblem = false
    /// The decision drawn large (the latest, or the one a question is about).
    public internal(set) var lastDecision: GateDecision?
    var lastDecisionAt: Date?
    /// This session's decisions, newest first.
    public internal(set) var recent: [RecentDecision] = []
    /// The recent list's selection bar and first row drawn; PgUp/PgDn move by the rows it showed.
    var recentList = ListSelection()
    public var recentSelection: Int { recentList.index }
    public internal(set) var question: ApprovalQuestion?
    public internal(set) var lookup: Lookup?
    public internal(set) var walkIn: WalkInForm?
    public internal(set) var showingHelp = false
    /// Visitors whose approval this screen requested (or saw requested), by id, with the code
    /// to check in again when they are approved.
    public private(set) var awaitingDecision: [String: String] = [:]
    private var lastStatsLoad: Date?
    private var statsRefreshPending = false
    /// The cache age the last render showed, so `tick` redraws only when it changes.
    var renderedStatsAge: String?
    /// The pass cache's age as last drawn, so `tick` redraws when it changes.
    var renderedPassCacheAge: String?

    /// - Parameters:
    ///   - services: stats, check-ins, lookups and walk-ins (`ClientCoreServices`, or a fake).
    ///   - clock: "now", for decision times, cache ages and the stats refresh (tests move it).
    ///   - sourceDescription: the source line until the driver reports a state, such as
    ///     "Camera /dev/video0: starting"; nil shows "No camera: type a short id".
    ///   - siteClock: the organization's zone, which decision times are shown in.
    ///   - statsRefreshInterval: how often the stats are read without an event (60 s).
    public init(services: any ScanServices, clock: @escaping () -> Date = Date.init, sourceDescription: String?,
                siteClock: SiteClock, statsRefreshInterval: TimeInterval = 60) {
        self.services = services
        self.clock = clock
        self.statsRefreshInterval = statsRefreshInterval
        sourceText = sourceDescription ?? "No camera: type a short id"
        self.siteClock = siteClock
    }

    public var title: String { "Scan" }

    /// Under the short-id field while it has the keyboard: the shell's digits do not switch tabs there.
    public static let digitsHint = "Digits go into this field — Esc, then a number, to switch tabs."
    /// With text in the field Esc first clears it (so a mistyped id is one key away from gone),
    /// and the hint counts the second Esc.
    public static let digitsHintWithText = "Digits go into this field — Esc clears it; Esc again, then a number: tabs."

    /// The typed short id.
    public var shortIdText: String { shortId.text }

    public var isCapturingText: Bool {
        // The field keeps the keyboard so that digits, `q` and `w` can start a short id; every
        // prompt and the help keep it too (a `q` there must not quit).
        focus == .shortId || question != nil || lookup != nil || walkIn != nil || showingHelp
    }

    public var keyHelp: [(key: String, action: String)] {
        if walkIn != nil {
            return [("Tab, Down", "next field"),
                    ("Shift-Tab, Up", "previous field"),
                    ("Enter", "next field; on Host: register the walk-in"),
                    ("Ctrl-S", "register the walk-in from any field"),
                    ("Backspace, Ctrl-U", "delete a character, clear the field"),
                    ("Esc", "cancel (nothing is sent)")]
        }
        if lookup != nil {
            return [("Enter", "search; on a result: check that visitor in"),
                    ("Down, Tab", "from the search to the results"),
                    ("Up, k / Down, j", "choose a result"),
                    ("Home, End, PgUp, PgDn", "first, last, a page of results"),
                    ("Backspace, Ctrl-U", "edit or clear the search"),
                    ("Esc", "close the lookup")]
        }
        if question != nil {
            return [("y", "request approval (an approver is asked; the answer shows here)"),
                    ("n, Esc", "do not request it: the visitor is not let in")]
        }
        return [("0–9, A–Z, -", "type a short id (digits go here, not to the tabs)"),
                ("Enter", "check the short id in; in the list: open the visitor"),
                ("Backspace, Ctrl-U", "delete a character, clear the field"),
                ("Esc", "clear the field; when empty: go to the recent list"),
                ("Tab, Shift-Tab", "go to the recent list (there they switch tabs again)"),
                ("i, Esc", "back to the short-id field (from the recent list)"),
                ("Up, k / Down, j", "choose a recent decision"),
                ("Home, End, PgUp, PgDn", "first, last, a page of recent decisions"),
                ("/", "look a visitor up by name, phone or email"),
                ("w", "register a walk-in (on an empty field, or in the list)"),
                ("Q, W", "in capitals: start a short id with Q or W"),
                ("q", "quit (on an empty field, or in the list)"),
                ("r, Ctrl-R", "reload the stats (r in the list, Ctrl-R in the field)"),
                ("y, n", "answer “Request approval?” for a pass that needs it"),
                ("?", "this help (any key closes it)")]
    }

    // MARK: - Driver calls

    /// A new code from the camera (already de-duplicated): checks it in as read, so the server
    /// judges and records it (text that is no pass is recorded as INVALID).
    /// - Returns: `.alert` on a denial (the bell rings), `.redraw` otherwise, `.none` for empty text.
    @discardableResult
    public func scanned(_ text: String) -> ScreenAction {
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return .none }
        return checkIn(code: text)
    }

    /// Sets the camera/source line, e.g. "Camera /dev/video0: streaming".
    /// - Parameter isProblem: draws the line as a warning (camera lost, unreadable file).
    /// - Returns: `.redraw` when the line changed.
    @discardableResult
    public func sourceState(_ text: String, isProblem: Bool = false) -> ScreenAction {
        guard text != sourceText || isProblem != sourceIsProblem else { return .none }
        sourceText = text
        sourceIsProblem = isProblem
        return .redraw
    }

    // MARK: - Stats

    public func appear() -> ScreenAction {
        // Arriving on the tab is arriving at the gate: ready to type a short id.
        focus = .shortId
        loadStats()
        return .redraw
    }

    /// Reads the stats now; on failure the stats shown so far stay and the error is said.
    public func reloadStats() {
        loadStats()
    }

    func loadStats() {
        lastStatsLoad = clock()
        statsRefreshPending = false
        do {
            passCacheSyncedAt = services.passCacheSyncedAt()
            let read = try services.stats()
            stats = read.value
            statsLoaded = (read.updatedAt, read.fromCache)
            statsError = nil
        } catch {
            statsError = "Could not load the stats. " + error.sentence
        }
    }

    /// Reads the stats unless they were read less than `statsMinimumInterval` ago; then
    /// `tick` reads them once that has passed. True when they were read now.
    private func requestStatsRefresh() -> Bool {
        if let last = lastStatsLoad, clock().timeIntervalSince(last) < Self.statsMinimumInterval {
            statsRefreshPending = true
            return false
        }
        loadStats()
        return true
    }

    public func tick(now: Date) -> ScreenAction {
        if let last = lastStatsLoad {
            let since = now.timeIntervalSince(last)
            if (statsRefreshPending && since >= Self.statsMinimumInterval) || since >= statsRefreshInterval {
                loadStats()
                return .redraw
            }
        }
        if let statsLoaded, statsLoaded.fromCache, let shown = renderedStatsAge,
           ConsoleFormat.age(since: statsLoaded.updatedAt, now: now) != shown {
            return .redraw
        }
        if let syncedAt = passCacheSyncedAt, let shown = renderedPassCacheAge, ConsoleFormat.age(since: syncedAt, now: now) != shown {
            return .redraw
        }
        return .none
    }

    // MARK: - Events

    public func receive(_ event: ServerEvent) -> ScreenAction {
        guard let kind = event.kind else { return .none }
        switch kind {
        case .visitorArrived, .visitorDeparted, .visitorAwaiting, .visitorDecided, .requestCreated, .streamGap:
            break
        default:
            return .none
        }
        var action: ScreenAction = requestStatsRefresh() ? .redraw : .none
        if kind == .visitorDecided, case .visitor(let data)? = try? event.payload(),
           let code = awaitingDecision[data.visitor.id] {
            switch data.visitor.status {
            case .approved:
                awaitingDecision[data.visitor.id] = nil
                // Approved is not yet inside: the check-in admits them (and records the scan).
                action = Self.stronger(action, checkIn(code: code))
            case .rejected, .checkedIn:
                awaitingDecision[data.visitor.id] = nil
                action = Self.stronger(action, record(.decided(data.visitor, code: code), code: code))
            default:
                // Not a decision this gate can act on; keep waiting for one.
                break
            }
        }
        return action
    }

    /// The action that asks for more: a bell over a redraw over nothing.
    private static func stronger(_ first: ScreenAction, _ second: ScreenAction) -> ScreenAction {
        func weight(_ action: ScreenAction) -> Int {
            switch action {
            case .none: 0
            case .redraw: 1
            case .alert: 2
            default: 3
            }
        }
        return weight(second) >= weight(first) ? second : first
    }

    // MARK: - Check-ins

    func checkIn(code: String) -> ScreenAction {
        show(services.checkIn(code: code, confirmApprovalRequest: false), code: code)
    }

    /// Shows a check-in's decision: a pass that needs approval opens the question; every
    /// other decision is final and goes to the recent list.
    func show(_ decision: GateDecision, code: String) -> ScreenAction {
        if decision.result == ScanResult.approvalRequired.rawValue {
            question = ApprovalQuestion(decision: decision, code: code)
            lastDecision = decision
            lastDecisionAt = clock()
            return .redraw
        }
        return record(decision, code: code)
    }

    /// Makes `decision` the large one and the newest of the recent list.
    func record(_ decision: GateDecision, code: String) -> ScreenAction {
        let now = clock()
        lastDecision = decision
        lastDecisionAt = now
        recent.insert(RecentDecision(decision: decision, at: now), at: 0)
        if recent.count > Self.recentLimit { recent.removeLast(recent.count - Self.recentLimit) }
        // Someone browsing the list keeps their row; otherwise the newest is the one selected.
        recentList.select(focus == .recent ? recentSelection + 1 : 0, count: recent.count)
        if decision.outcome == .approvalRequested, let visitorId = decision.visitorId {
            awaitingDecision[visitorId] = code
        }
        if decision.outcome == .admitted || decision.outcome == .approvalRequested {
            _ = requestStatsRefresh()
        }
        return decision.outcome == .denied ? .alert : .redraw
    }

    func answerQuestion(request: Bool) -> ScreenAction {
        guard let asked = question else { return .none }
        question = nil
        notice = nil
        if request {
            return show(services.checkIn(code: asked.code, confirmApprovalRequest: true), code: asked.code)
        }
        let declined = GateDecision(outcome: .denied, code: asked.code, visitorName: asked.decision.visitorName,
                                    visitorId: asked.decision.visitorId, shortId: asked.decision.shortId,
                                    result: asked.decision.result, reason: "approval was not requested: do not let them in")
        _ = record(declined, code: asked.code)
        // The guard chose this: no bell.
        return .redraw
    }
}
