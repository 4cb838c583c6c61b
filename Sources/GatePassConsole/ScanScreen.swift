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
/// - `ScanScreen(services:clock:sourceDescription:)`, as a tab when `ConsoleUser.mayScan`.
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

    /// The lookup prompt while it is open.
    public struct Lookup: Sendable, Equatable {
        var query = TextInput(limit: ScanScreen.lookupLimit)
        /// The last search's answer; nil before the first search.
        public internal(set) var results: [Visitor]?
        public internal(set) var selection = 0
        /// True when Up/Down/j/k/Enter act on the results rather than on the query.
        public internal(set) var onResults = false
        public internal(set) var notice: Notice?
        var top = 0

        public var queryText: String { query.text }
        var selectedVisitor: Visitor? { results.flatMap { $0.indices.contains(selection) ? $0[selection] : nil } }
    }

    /// The walk-in form while it is open.
    public struct WalkInForm: Sendable, Equatable {
        var inputs = WalkInRegistration.Field.allCases.map { TextInput(limit: $0.limit) }
        public internal(set) var focus: WalkInRegistration.Field = .name
        public internal(set) var notice: Notice?

        public func text(_ field: WalkInRegistration.Field) -> String { inputs[field.rawValue].text }

        var registration: WalkInRegistration {
            func optional(_ field: WalkInRegistration.Field) -> String? { text(field).isEmpty ? nil : text(field) }
            return WalkInRegistration(name: text(.name), phone: optional(.phone), email: optional(.email),
                                      company: optional(.company), purpose: optional(.purpose), hostName: optional(.hostName))
        }
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

    private let services: any ScanServices
    private let clock: () -> Date
    /// How often the stats are read again when no event came (expected passes change without one).
    public let statsRefreshInterval: TimeInterval
    private let timeFormatter: DateFormatter

    public private(set) var focus: Focus = .shortId
    var shortId = TextInput(limit: ScanScreen.shortIdLimit)
    public private(set) var notice: Notice?
    public private(set) var stats: ScanStats?
    /// When the stats were read and whether the cache answered; nil before the first read.
    public private(set) var statsLoaded: (updatedAt: Date, fromCache: Bool)?
    public private(set) var statsError: String?
    /// The camera/source line.
    public private(set) var sourceText: String
    public private(set) var sourceIsProblem = false
    /// The decision drawn large (the latest, or the one a question is about).
    public private(set) var lastDecision: GateDecision?
    private var lastDecisionAt: Date?
    /// This session's decisions, newest first.
    public private(set) var recent: [RecentDecision] = []
    public private(set) var recentSelection = 0
    private var recentTop = 0
    private var recentPageRows = 10
    public private(set) var question: ApprovalQuestion?
    public private(set) var lookup: Lookup?
    public private(set) var walkIn: WalkInForm?
    public private(set) var showingHelp = false
    /// Visitors whose approval this screen requested (or saw requested), by id, with the code
    /// to check in again when they are approved.
    public private(set) var awaitingDecision: [String: String] = [:]
    private var lastStatsLoad: Date?
    private var statsRefreshPending = false
    /// The cache age the last render showed, so `tick` redraws only when it changes.
    private var renderedStatsAge: String?

    /// - Parameters:
    ///   - services: stats, check-ins, lookups and walk-ins (`ClientCoreServices`, or a fake).
    ///   - clock: "now", for decision times, cache ages and the stats refresh (tests move it).
    ///   - sourceDescription: the source line until the driver reports a state, such as
    ///     "Camera /dev/video0: starting"; nil shows "No camera: type a short id".
    ///   - timeZone: the zone decision times are shown in.
    ///   - statsRefreshInterval: how often the stats are read without an event (60 s).
    public init(services: any ScanServices, clock: @escaping () -> Date = Date.init, sourceDescription: String?,
                timeZone: TimeZone = .current, statsRefreshInterval: TimeInterval = 60) {
        self.services = services
        self.clock = clock
        self.statsRefreshInterval = statsRefreshInterval
        sourceText = sourceDescription ?? "No camera: type a short id"
        timeFormatter = DateFormatter()
        timeFormatter.locale = Locale(identifier: "en_US_POSIX")
        timeFormatter.timeZone = timeZone
        timeFormatter.dateFormat = "HH:mm:ss"
    }

    public var title: String { "Scan" }

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

    private func loadStats() {
        lastStatsLoad = clock()
        statsRefreshPending = false
        do {
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

    private func checkIn(code: String) -> ScreenAction {
        show(services.checkIn(code: code, confirmApprovalRequest: false), code: code)
    }

    /// Shows a check-in's decision: a pass that needs approval opens the question; every
    /// other decision is final and goes to the recent list.
    private func show(_ decision: GateDecision, code: String) -> ScreenAction {
        if decision.result == ScanResult.approvalRequired.rawValue {
            question = ApprovalQuestion(decision: decision, code: code)
            lastDecision = decision
            lastDecisionAt = clock()
            return .redraw
        }
        return record(decision, code: code)
    }

    /// Makes `decision` the large one and the newest of the recent list.
    private func record(_ decision: GateDecision, code: String) -> ScreenAction {
        let now = clock()
        lastDecision = decision
        lastDecisionAt = now
        recent.insert(RecentDecision(decision: decision, at: now), at: 0)
        if recent.count > Self.recentLimit { recent.removeLast(recent.count - Self.recentLimit) }
        // Someone browsing the list keeps their row; otherwise the newest is the one selected.
        recentSelection = focus == .recent ? min(recentSelection + 1, recent.count - 1) : 0
        if decision.outcome == .approvalRequested, let visitorId = decision.visitorId {
            awaitingDecision[visitorId] = code
        }
        if decision.outcome == .admitted || decision.outcome == .approvalRequested {
            _ = requestStatsRefresh()
        }
        return decision.outcome == .denied ? .alert : .redraw
    }

    private func answerQuestion(request: Bool) -> ScreenAction {
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

    // MARK: - Keys

    public func handle(_ key: Key) -> ScreenAction {
        if showingHelp {
            // Any key closes the help, like the shell's.
            showingHelp = false
            return .redraw
        }
        if key == .resize { return .redraw }
        if walkIn != nil { return handleWalkIn(key) }
        if lookup != nil { return handleLookup(key) }
        if question != nil { return handleQuestion(key) }
        switch focus {
        case .shortId: return handleShortIdField(key)
        case .recent: return handleRecentList(key)
        }
    }

    private func handleQuestion(_ key: Key) -> ScreenAction {
        switch key {
        case .character("y"), .character("Y"): return answerQuestion(request: true)
        case .character("n"), .character("N"), .escape: return answerQuestion(request: false)
        case .character("?"):
            showingHelp = true
            return .redraw
        default:
            let reminder = Notice.error("Press y to ask an approver, or n not to.")
            guard notice != reminder else { return .none }
            notice = reminder
            return .redraw
        }
    }

    /// Short ids are typed in Crockford base32 (`I L O` are read as `1 1 0`), with hyphens,
    /// and `:` for a `GP1:` code; anything else cannot be part of one.
    static func isShortIdCharacter(_ character: Character) -> Bool {
        guard character.isASCII else { return false }
        return character.isLetter || character.isNumber || character == "-" || character == ":"
    }

    private func handleShortIdField(_ key: Key) -> ScreenAction {
        switch key {
        case .character(let character):
            if shortId.text.isEmpty {
                switch character {
                case "q": return .quit
                case "w": return openWalkIn()
                default: break
                }
            }
            switch character {
            case "?":
                showingHelp = true
                return .redraw
            case "/":
                return openLookup()
            default:
                return typeShortId(character)
            }
        case .enter:
            return submitShortId()
        case .backspace, .delete:
            guard shortId.deleteBackward() else { return .none }
            notice = nil
            return .redraw
        case .control("u"):
            guard !shortId.text.isEmpty else { return .none }
            shortId.text = ""
            notice = nil
            return .redraw
        case .control("r"):
            loadStats()
            return .redraw
        case .escape:
            if shortId.text.isEmpty {
                focus = .recent
            } else {
                shortId.text = ""
            }
            notice = nil
            return .redraw
        case .tab, .backTab:
            focus = .recent
            notice = nil
            return .redraw
        case .up, .down, .home, .end, .pageUp, .pageDown:
            focus = .recent
            _ = moveRecent(key)
            return .redraw
        default:
            return .none
        }
    }

    private func typeShortId(_ character: Character) -> ScreenAction {
        guard TextInput.isPrintable(character) else {
            notice = .error("Control characters cannot be typed into the short id; nothing was changed.")
            return .redraw
        }
        guard Self.isShortIdCharacter(character) else {
            notice = .error("A short id has only letters and digits, like K7Q2M9XD; that character was not typed.")
            return .redraw
        }
        guard shortId.insert(character) else {
            notice = .error("A short id has 8 characters; the field takes at most \(Self.shortIdLimit), so the rest was not typed. Press Enter to check it, or Ctrl-U to clear it.")
            return .redraw
        }
        notice = nil
        return .redraw
    }

    private func submitShortId() -> ScreenAction {
        let typed = shortId.text
        guard !typed.isEmpty else {
            notice = .error("Type a short id (8 letters and digits, like K7Q2M9XD), then press Enter.")
            return .redraw
        }
        let id: ShortID
        do {
            id = try QRPayload.shortID(from: typed)
        } catch {
            // Kept as typed, so the guard can fix one character instead of typing it all again.
            notice = .error("“\(ConsoleFormat.fit(typed, width: 40))” is not a short id: 8 characters from 0–9 and A–Z without U (I, L, O count as 1, 1, 0), like K7Q2M9XD. Nothing was sent.")
            return .redraw
        }
        shortId.text = ""
        notice = nil
        return checkIn(code: id.rawValue)
    }

    private func handleRecentList(_ key: Key) -> ScreenAction {
        switch key {
        case .up, .down, .home, .end, .pageUp, .pageDown, .character("j"), .character("k"):
            return moveRecent(key)
        case .enter:
            guard recent.indices.contains(recentSelection) else { return .none }
            guard let visitorId = recent[recentSelection].decision.visitorId else {
                notice = .error("That scan matched no visitor, so there is nothing to open.")
                return .redraw
            }
            return .openVisitor(id: visitorId)
        case .character("/"):
            return openLookup()
        case .character("w"):
            return openWalkIn()
        case .character("r"):
            loadStats()
            return .redraw
        case .character("i"), .escape:
            focus = .shortId
            notice = nil
            return .redraw
        default:
            return .none
        }
    }

    private func moveRecent(_ key: Key) -> ScreenAction {
        guard !recent.isEmpty else { return .none }
        let target: Int
        switch key {
        case .up, .character("k"): target = recentSelection - 1
        case .down, .character("j"): target = recentSelection + 1
        case .pageUp: target = recentSelection - max(1, recentPageRows)
        case .pageDown: target = recentSelection + max(1, recentPageRows)
        case .home: target = 0
        case .end: target = recent.count - 1
        default: return .none
        }
        let clamped = max(0, min(target, recent.count - 1))
        guard clamped != recentSelection else { return .none }
        recentSelection = clamped
        return .redraw
    }

    // MARK: - Lookup

    private func openLookup() -> ScreenAction {
        lookup = Lookup()
        notice = nil
        return .redraw
    }

    private func handleLookup(_ key: Key) -> ScreenAction {
        guard var state = lookup else { return .none }
        defer { if lookup != nil { lookup = state } }
        if state.onResults, let results = state.results, !results.isEmpty {
            var target: Int?
            switch key {
            case .up, .character("k"): target = state.selection - 1
            case .down, .character("j"): target = state.selection + 1
            case .pageUp: target = state.selection - 10
            case .pageDown: target = state.selection + 10
            case .home: target = 0
            case .end: target = results.count - 1
            case .enter:
                guard let visitor = state.selectedVisitor else { return .none }
                lookup = nil
                return checkIn(code: visitor.shortId.rawValue)
            case .escape:
                lookup = nil
                return .redraw
            case .backspace, .tab, .backTab, .character("/"):
                // Back to the search, to change it.
                state.onResults = false
                return .redraw
            case .character:
                // Typing means searching again: the key goes to the query.
                state.onResults = false
            default:
                return .none
            }
            if let target {
                let clamped = max(0, min(target, results.count - 1))
                guard clamped != state.selection else { return .none }
                state.selection = clamped
                return .redraw
            }
        }
        switch key {
        case .character(let character):
            state.notice = Self.typingNotice(state.query.insert(character), character: character,
                                             full: "A lookup takes at most \(Self.lookupLimit) characters; the rest was not typed.")
            return .redraw
        case .backspace, .delete:
            guard state.query.deleteBackward() else { return .none }
            state.notice = nil
            return .redraw
        case .control("u"):
            state.query.text = ""
            state.notice = nil
            return .redraw
        case .enter:
            search(&state)
            return .redraw
        case .down, .tab:
            guard let results = state.results, !results.isEmpty else { return .none }
            state.onResults = true
            return .redraw
        case .escape:
            lookup = nil
            return .redraw
        default:
            return .none
        }
    }

    /// The notice after typing `character` into a field: nil when it was taken.
    private static func typingNotice(_ taken: Bool, character: Character, full: String) -> Notice? {
        if taken { return nil }
        if !TextInput.isPrintable(character) {
            return .error("Control characters cannot be typed here; nothing was changed.")
        }
        return .error(full)
    }

    private func search(_ state: inout Lookup) {
        let query = state.query.text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !query.isEmpty else {
            state.notice = .error("Type a name, phone or email, then press Enter.")
            return
        }
        do {
            let found = try services.lookup(query)
            state.results = found
            state.selection = 0
            state.top = 0
            state.onResults = !found.isEmpty
            state.notice = found.isEmpty ? .info("No visitor matches “\(query)”.") : nil
        } catch {
            // The query and the results so far stay: the search can be sent again as it is.
            state.notice = .error("Could not look up. " + error.sentence)
        }
    }

    // MARK: - Walk-in

    private func openWalkIn() -> ScreenAction {
        walkIn = WalkInForm()
        notice = nil
        return .redraw
    }

    private func handleWalkIn(_ key: Key) -> ScreenAction {
        guard var form = walkIn else { return .none }
        let fields = WalkInRegistration.Field.allCases
        switch key {
        case .character(let character):
            let field = form.focus
            form.notice = Self.typingNotice(form.inputs[field.rawValue].insert(character), character: character,
                                            full: "\(field.label) takes at most \(field.limit) characters; the rest was not typed.")
        case .backspace, .delete:
            guard form.inputs[form.focus.rawValue].deleteBackward() else { return .none }
            form.notice = nil
        case .control("u"):
            form.inputs[form.focus.rawValue].text = ""
            form.notice = nil
        case .tab, .down:
            form.focus = fields[(form.focus.rawValue + 1) % fields.count]
        case .backTab, .up:
            form.focus = fields[(form.focus.rawValue + fields.count - 1) % fields.count]
        case .enter where form.focus != fields.last:
            form.focus = fields[form.focus.rawValue + 1]
        case .enter, .control("s"):
            return submitWalkIn(form)
        case .escape:
            walkIn = nil
            notice = .info("Walk-in cancelled: nothing was sent.")
            return .redraw
        default:
            return .none
        }
        walkIn = form
        return .redraw
    }

    private func submitWalkIn(_ form: WalkInForm) -> ScreenAction {
        var form = form
        let registration: WalkInRegistration
        do {
            registration = try form.registration.validated()
        } catch {
            // Everything typed stays; the field at fault gets the keyboard.
            form.focus = error.field
            form.notice = .error(error.message)
            walkIn = form
            return .redraw
        }
        switch services.walkIn(registration) {
        case .applied(let visitor):
            walkIn = nil
            notice = nil
            let code = visitor.shortId.rawValue
            return record(GateDecision(outcome: .approvalRequested, code: code, visitorName: visitor.name, visitorId: visitor.id,
                                       shortId: code, result: visitor.status.rawValue,
                                       reason: "walk-in registered; waiting for an approver"), code: code)
        case .queued:
            walkIn = nil
            notice = nil
            return record(GateDecision(outcome: .queuedOffline, code: registration.name, visitorName: registration.name,
                                       reason: "walk-in queued; it is sent when the server is back"),
                          code: registration.name)
        case .refused(let message):
            form.notice = .error("Not registered: \(message)")
            walkIn = form
            return .alert
        case .needsLogin(let message):
            walkIn = nil
            notice = nil
            return record(GateDecision(outcome: .queuedOffline, code: registration.name, visitorName: registration.name,
                                       reason: "your session has ended (\(message)); log in again — the walk-in stays queued until then"),
                          code: registration.name)
        }
    }

    // MARK: - Drawing

    /// The outcome in capitals, as drawn large. A pass that needs approval is not yet
    /// "requested": it waits for the guard's y/n.
    static func headline(_ decision: GateDecision) -> String {
        switch decision.outcome {
        case .admitted: "ADMITTED"
        case .denied: "DENIED"
        case .approvalRequested:
            decision.result == ScanResult.approvalRequired.rawValue ? "APPROVAL NEEDED" : "APPROVAL REQUESTED"
        case .queuedOffline: "QUEUED OFFLINE"
        }
    }

    static func role(_ outcome: GateDecision.Outcome) -> Canvas.Style.Role {
        switch outcome {
        case .admitted: .ok
        case .denied: .danger
        case .approvalRequested, .queuedOffline: .warning
        }
    }

    /// "Ana Pop (K7Q2M9XD)", or the code when no visitor is known.
    static func who(_ decision: GateDecision) -> String {
        guard let name = decision.visitorName else { return decision.code }
        return decision.shortId.map { "\(name) (\($0))" } ?? name
    }

    /// One row of the layout: text pieces in their styles, a background style for the whole
    /// width, and how much the row matters when the terminal is too short for all of them.
    private struct Row {
        var pieces: [(text: String, style: Canvas.Style)]
        var background: Canvas.Style?
        var priority: Int
        /// Where an input's value starts, to underline it as an input box.
        var inputStart: Int?

        init(_ text: String, _ style: Canvas.Style = .plain, priority: Int, background: Canvas.Style? = nil,
             inputStart: Int? = nil) {
            pieces = [(text, style)]
            self.background = background
            self.priority = priority
            self.inputStart = inputStart
        }
    }

    public func render(into canvas: inout Canvas, area: Area) {
        guard area.width > 0, area.height > 0 else { return }
        if showingHelp {
            renderHelp(into: &canvas, area: area)
            return
        }
        let now = clock()
        var rows: [Row] = [statsRow(now: now),
                           Row(sourceText, sourceIsProblem ? Canvas.Style(.warning, bold: true) : .dim, priority: 40)]
        if let statsError { rows.append(Row(statsError, Canvas.Style(.danger, bold: true), priority: 50)) }
        var listRows: (header: Row, lines: [Row])?
        if let form = walkIn {
            if let lastDecision { rows.append(decisionLine(lastDecision, priority: 45)) }
            if let question { rows.append(questionRow(question, waiting: true)) }
            rows += walkInRows(form, width: area.width)
        } else if let state = lookup {
            if let lastDecision { rows.append(decisionLine(lastDecision, priority: 45)) }
            if let question { rows.append(questionRow(question, waiting: true)) }
            let (fixed, list) = lookupRows(state, width: area.width)
            rows += fixed
            listRows = list
        } else {
            var lower: [Row] = []
            if let question { lower.append(questionRow(question, waiting: false)) }
            lower.append(shortIdRow(width: area.width))
            if let notice { lower.append(noticeRow(notice, priority: 80)) }
            lower.append(Row(focus == .shortId
                             ? "Enter: check in · /: look up · w: walk-in · Esc: recent list · ?: help"
                             : "Enter: open · /: look up · w: walk-in · r: reload stats · i: type a short id",
                             .dim, priority: 30))
            // The decision box takes what is left after the fixed rows and a few recent ones.
            let room = area.height - rows.count - lower.count
            rows += decisionRows(width: area.width, room: room, now: now)
            rows += lower
            listRows = recentRows(width: area.width)
        }
        rows = Self.fit(rows, height: area.height)
        var y = area.y
        for row in rows {
            draw(row, y: y, into: &canvas, area: area)
            y += 1
        }
        // The list (recent decisions, lookup results) takes the rows left, scrolled so the
        // selection shows.
        let left = area.y + area.height - y
        guard let listRows, left >= 2 else {
            recentPageRows = 1
            return
        }
        draw(listRows.header, y: y, into: &canvas, area: area)
        y += 1
        let visible = left - 1
        if lookup != nil {
            guard var state = lookup else { return }
            if state.selection < state.top { state.top = state.selection }
            if state.selection >= state.top + visible { state.top = state.selection - visible + 1 }
            state.top = max(0, min(state.top, max(0, listRows.lines.count - visible)))
            for row in listRows.lines.dropFirst(state.top).prefix(visible) {
                draw(row, y: y, into: &canvas, area: area)
                y += 1
            }
            lookup = state
        } else {
            recentPageRows = max(1, visible)
            if recentSelection < recentTop { recentTop = recentSelection }
            if recentSelection >= recentTop + visible { recentTop = recentSelection - visible + 1 }
            recentTop = max(0, min(recentTop, max(0, listRows.lines.count - visible)))
            for row in listRows.lines.dropFirst(recentTop).prefix(visible) {
                draw(row, y: y, into: &canvas, area: area)
                y += 1
            }
        }
    }

    /// Drops the rows that matter least (the later of equals first) until `height` remain.
    private static func fit(_ rows: [Row], height: Int) -> [Row] {
        var rows = rows
        while rows.count > max(0, height) {
            var drop = rows.count - 1
            for index in rows.indices.reversed() where rows[index].priority < rows[drop].priority { drop = index }
            rows.remove(at: drop)
        }
        return rows
    }

    private func draw(_ row: Row, y: Int, into canvas: inout Canvas, area: Area) {
        if let background = row.background {
            canvas.fill(y: y, from: area.x, width: area.width, style: background)
        }
        var x = area.x
        let end = area.x + area.width
        for piece in row.pieces where x < end {
            x = canvas.put(ConsoleFormat.fit(piece.text, width: end - x), x: x, y: y, style: piece.style, maxWidth: end - x)
        }
        if let start = row.inputStart, start < area.width {
            canvas.fill(y: y, from: area.x + start, width: area.width - start, style: Canvas.Style(.normal, underline: true))
        }
    }

    private func statsRow(now: Date) -> Row {
        guard let stats else {
            renderedStatsAge = nil
            return Row(statsError == nil ? "Loading the stats…" : "Stats not available", .dim, priority: 90)
        }
        var row = Row("Checked in \(stats.checkedInToday) · Awaiting \(stats.awaitingApproval) · Expected \(stats.expectedToday) · On site \(stats.onSite)",
                      .title, priority: 90)
        if let statsLoaded, statsLoaded.fromCache {
            let age = ConsoleFormat.age(since: statsLoaded.updatedAt, now: now)
            renderedStatsAge = age
            row.pieces.append(("  (cached, \(age) old)", Canvas.Style(.warning, bold: true)))
        } else {
            renderedStatsAge = nil
        }
        return row
    }

    private func noticeRow(_ notice: Notice, priority: Int) -> Row {
        Row(notice.text, notice.kind == .error ? Canvas.Style(.danger, bold: true) : Canvas.Style(.ok), priority: priority)
    }

    private func questionRow(_ question: ApprovalQuestion, waiting: Bool) -> Row {
        Row("Request approval for \(Self.who(question.decision))? y/n" + (waiting ? " (close this form first)" : ""),
            Canvas.Style(.warning, bold: true), priority: 95)
    }

    private func shortIdRow(width: Int) -> Row {
        let label = "Short id  "
        guard focus == .shortId else {
            return Row(label + (shortId.text.isEmpty ? "(Esc or i to type one)" : shortId.text), .dim, priority: 100)
        }
        return Row(label + shortId.visibleTail(width: width - label.count, cursor: true), Canvas.Style(.normal, bold: true),
                   priority: 100, inputStart: label.count)
    }

    /// The last decision on one row (under an open form, or on a short terminal).
    private func decisionLine(_ decision: GateDecision, priority: Int) -> Row {
        let style = Canvas.Style(Self.role(decision.outcome), bold: true, reverse: true)
        return Row("\(Self.headline(decision))  \(Self.who(decision)) — \(decision.reason)", style, priority: priority,
                   background: style)
    }

    /// The last decision as large as `room` allows: block letters in a coloured box (8 rows),
    /// the word spaced out (3 rows), or one row.
    private func decisionRows(width: Int, room: Int, now: Date) -> [Row] {
        guard let decision = lastDecision else {
            return [Row("Show a pass to the camera, or type its short id and press Enter.", .dim, priority: 70)]
        }
        let style = Canvas.Style(Self.role(decision.outcome), bold: true, reverse: true)
        let headline = Self.headline(decision)
        let when = lastDecisionAt.map { " · " + timeFormatter.string(from: $0) } ?? ""
        func boxRow(_ text: String, priority: Int = 70) -> Row { Row("  " + text, style, priority: priority, background: style) }
        let recentKept = 3
        if room - 8 >= recentKept, let letters = BlockLetters.rows(headline), letters[0].count + 4 <= width {
            return [boxRow(headline + when, priority: 72)] + letters.map { boxRow($0, priority: 65) }
                + [boxRow(Self.who(decision), priority: 71), boxRow(decision.reason, priority: 69)]
        }
        if room >= 3 {
            let spaced = headline.map(String.init).joined(separator: " ")
            return [boxRow((spaced.count + 4 <= width ? spaced : headline) + when, priority: 72),
                    boxRow(Self.who(decision), priority: 71), boxRow(decision.reason, priority: 69)]
        }
        return [decisionLine(decision, priority: 72)]
    }

    private func recentRows(width: Int) -> (header: Row, lines: [Row]) {
        let header = Row(recent.isEmpty ? "Recent: none yet in this session" : "Recent (\(recent.count))",
                         Canvas.Style(.muted, bold: true), priority: 20)
        let lines = recent.enumerated().map { index, entry in
            let decision = entry.decision
            let headline = Self.headline(decision)
            let text = "\(timeFormatter.string(from: entry.at))  \(headline.padding(toLength: 18, withPad: " ", startingAt: 0))  \(Self.who(decision)) — \(decision.reason)"
            if focus == .recent && index == recentSelection {
                return Row(text, .selected, priority: 10, background: .selected)
            }
            return Row(text, Canvas.Style(Self.role(decision.outcome)), priority: 10)
        }
        return (header, lines)
    }

    private func lookupRows(_ state: Lookup, width: Int) -> (fixed: [Row], list: (header: Row, lines: [Row])?) {
        var fixed = [Row("Look up a visitor by name, phone or email", .title, priority: 60)]
        let label = "Find  "
        fixed.append(state.onResults
                     ? Row(label + state.query.text, .dim, priority: 100)
                     : Row(label + state.query.visibleTail(width: width - label.count, cursor: true),
                           Canvas.Style(.normal, bold: true), priority: 100, inputStart: label.count))
        if let notice = state.notice { fixed.append(noticeRow(notice, priority: 85)) }
        fixed.append(Row(state.onResults
                         ? "Up/Down: choose · Enter: check in · Backspace: edit the search · Esc: close"
                         : "Enter: search · Down: the results · Esc: close", .dim, priority: 30))
        guard let results = state.results, !results.isEmpty else { return (fixed, nil) }
        let header = Row(Self.lookupLine(width: width, name: "Name", shortId: "Short id", company: "Company", status: "Status"),
                         Canvas.Style(.muted, bold: true), priority: 20)
        let lines = results.enumerated().map { index, visitor in
            let text = Self.lookupLine(width: width, name: visitor.name, shortId: visitor.shortId.rawValue,
                                       company: visitor.company ?? "", status: VisitorDetailScreen.describe(visitor.status))
            return index == state.selection && state.onResults
                ? Row(text, .selected, priority: 10, background: .selected)
                : Row(text, .plain, priority: 10)
        }
        return (fixed, (header, lines))
    }

    /// A lookup result: name 40 % and company 30 % of what the short id leaves, status last.
    private static func lookupLine(width: Int, name: String, shortId: String, company: String, status: String) -> String {
        let idWidth = min(max(0, width), 10)
        let rest = max(0, width - idWidth)
        let nameWidth = rest * 4 / 10, companyWidth = rest * 3 / 10
        let statusWidth = rest - nameWidth - companyWidth
        return ApprovalsScreen.Columns.cell(name, nameWidth) + ApprovalsScreen.Columns.cell(shortId, idWidth)
            + ApprovalsScreen.Columns.cell(company, companyWidth) + ConsoleFormat.fit(status, width: statusWidth)
    }

    private func walkInRows(_ form: WalkInForm, width: Int) -> [Row] {
        var rows = [Row("Walk-in visitor: a name is required; an approver decides", .title, priority: 60)]
        let label = 10
        for field in WalkInRegistration.Field.allCases {
            let focused = form.focus == field
            let marker = focused ? "> " : "  "
            let input = form.inputs[field.rawValue]
            let room = max(0, width - 2 - label)
            rows.append(Row(marker + field.label.padding(toLength: label, withPad: " ", startingAt: 0)
                                + input.visibleTail(width: room, cursor: focused),
                            focused ? Canvas.Style(.normal, bold: true) : .plain,
                            priority: focused ? 100 : 55, inputStart: focused ? 2 + label : nil))
        }
        if let notice = form.notice { rows.append(noticeRow(notice, priority: 90)) }
        rows.append(Row("Tab: next field · Shift-Tab: back · Ctrl-S: register · Esc: cancel",
                        .dim, priority: 30))
        return rows
    }

    /// The help over the screen, laid out like the shell's (`?` cannot reach the shell while
    /// the field has the keyboard, so the screen shows it; the shell's keys are listed too).
    private func renderHelp(into canvas: inout Canvas, area: Area) {
        let shellKeys: [(String, String)] = [("1–9, Tab, Shift-Tab", "switch tabs (from the recent list)"),
                                             ("Ctrl-C", "quit from anywhere")]
        let rows = [("Keys of \(title)", "")] + keyHelp.map { ($0.key, $0.action) } + [("", "")] + shellKeys
        for row in 0..<min(rows.count, area.height) {
            let y = area.y + row
            let (key, action) = rows[row]
            let end = canvas.put(ConsoleFormat.fit(key, width: max(0, area.width - 2)), x: area.x + 2, y: y,
                                 style: action.isEmpty ? .title : Canvas.Style(.accent, bold: true), maxWidth: max(0, area.width - 2))
            if !action.isEmpty {
                let start = max(end + 2, area.x + 26)
                let room = area.x + area.width - start
                if room > 0 { canvas.put(ConsoleFormat.fit(action, width: room), x: start, y: y, maxWidth: room) }
            }
        }
    }
}

// MARK: - Block letters

/// The outcome words in letters five rows tall, so a guard reads the decision from across
/// the gate. Only the letters of the headlines are drawn; a word with another letter has no
/// block form and is drawn as text.
enum BlockLetters {
    /// Each letter as five rows of three cells (M and N need more to read as themselves);
    /// `#` is ink.
    static let glyphs: [Character: [String]] = [
        "A": [".#.", "#.#", "###", "#.#", "#.#"],
        "C": ["###", "#..", "#..", "#..", "###"],
        "D": ["##.", "#.#", "#.#", "#.#", "##."],
        "E": ["###", "#..", "##.", "#..", "###"],
        "F": ["###", "#..", "##.", "#..", "#.."],
        "I": ["###", ".#.", ".#.", ".#.", "###"],
        "L": ["#..", "#..", "#..", "#..", "###"],
        "M": ["#...#", "##.##", "#.#.#", "#...#", "#...#"],
        "N": ["#..#", "##.#", "#.##", "#..#", "#..#"],
        "O": ["###", "#.#", "#.#", "#.#", "###"],
        "P": ["##.", "#.#", "##.", "#..", "#.."],
        "Q": ["###", "#.#", "#.#", "###", "..#"],
        "R": ["##.", "#.#", "##.", "#.#", "#.#"],
        "S": ["###", "#..", "###", "..#", "###"],
        "T": ["###", ".#.", ".#.", ".#.", ".#."],
        "U": ["#.#", "#.#", "#.#", "#.#", "###"],
        "V": ["#.#", "#.#", "#.#", "#.#", ".#."],
        " ": ["...", "...", "...", "...", "..."],
    ]

    /// `word` as five rows (letters one cell apart), or nil when a letter has no glyph.
    static func rows(_ word: String) -> [String]? {
        var rows = Array(repeating: "", count: 5)
        for (index, letter) in word.enumerated() {
            guard let glyph = glyphs[letter] else { return nil }
            for row in 0..<5 {
                if index > 0 { rows[row] += " " }
                rows[row] += String(glyph[row].map { $0 == "#" ? Character("█") : Character(" ") })
            }
        }
        return rows
    }
}
