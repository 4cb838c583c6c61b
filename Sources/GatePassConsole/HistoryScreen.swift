import Foundation
import GatePassCore

/// The scan log (OWNER/ADMIN): the scans of the chosen days with result and checkpoint
/// filters, a bar chart per hour, and a CSV export.
///
/// ```
/// Scan history — 2026-11-30 (Mon)
/// Result: all · Checkpoint: all · 17 scans
/// CHECKED_IN per hour: 12 in all, at most 5 at 09:00
/// 5                            ██
///                           ▃▃ ██
///                        ██ ██ ██ ▅▅
/// 00 01 02 03 04 05 06 07 08 09 10 11 …
/// Time     Result             Pass     Visitor         Checkpoint
/// 09:12:40 CHECKED_IN         K7Q2M9XD Ana Pop         Main gate
/// ```
/// Days are calendar days of `timeZone`: `[` and `]` step back and forward, `t` returns to
/// today, `d` asks for a day or a range. `r` cycles the result filter (all, CHECKED_IN, then
/// every other result), `c` the checkpoints seen so far; both are sent to the services, so
/// the list, the chart and the export agree. The chart counts CHECKED_IN per hour, or the
/// filtered result when one is chosen. `e` saves the CSV of the current filters to a file.
/// Offline, the scans come from the cache and a line says how old they are. Live events
/// that mean a new scan on the chosen days mark the list stale; `tick` reloads it at most
/// once every `liveReloadInterval`.
public final class HistoryScreen: ConsoleScreen {
    // MARK: - Types

    /// A calendar day, without a time zone: what a person picks.
    public struct Day: Sendable, Hashable, Comparable, CustomStringConvertible {
        public let year: Int
        public let month: Int
        public let day: Int

        /// Nil unless the date exists (month 1–12, a day the month has, years 1–9999).
        public init?(year: Int, month: Int, day: Int) {
            guard (1...9999).contains(year), (1...12).contains(month), day >= 1,
                  day <= Self.daysIn(month: month, year: year) else { return nil }
            self.year = year; self.month = month; self.day = day
        }

        /// "2026-11-30".
        public var description: String {
            func pad(_ value: Int, _ width: Int) -> String {
                let digits = String(value)
                return String(repeating: "0", count: max(0, width - digits.count)) + digits
            }
            return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
        }

        public static func < (lhs: Day, rhs: Day) -> Bool { lhs.dayNumber < rhs.dayNumber }

        /// The day `count` days later (earlier when negative). Plain civil arithmetic: a day
        /// is a day, whatever a time zone does to its length.
        public func adding(days count: Int) -> Day { Day(dayNumber: dayNumber + count) }

        /// Days between two days (`to` minus self).
        public func days(to other: Day) -> Int { other.dayNumber - dayNumber }

        /// "Mon".
        public var weekdayName: String {
            // 1970-01-01 was a Thursday.
            let index = ((dayNumber + 4) % 7 + 7) % 7
            return ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][index]
        }

        static func daysIn(month: Int, year: Int) -> Int {
            switch month {
            case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
            case 4, 6, 9, 11: 30
            default: 31
            }
        }

        static let monthNames = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                                 "October", "November", "December"]

        // Days since 1970-01-01 (Howard Hinnant's civil-from-days algorithms, public domain).
        var dayNumber: Int {
            let y = month <= 2 ? year - 1 : year
            let era = (y >= 0 ? y : y - 399) / 400
            let yearOfEra = y - era * 400
            let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
            let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
            return era * 146_097 + dayOfEra - 719_468
        }

        init(dayNumber: Int) {
            let z = dayNumber + 719_468
            let era = (z >= 0 ? z : z - 146_096) / 146_097
            let dayOfEra = z - era * 146_097
            let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
            let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
            let monthPrime = (5 * dayOfYear + 2) / 153
            day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
            month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
            year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        }
    }

    /// The chosen days, first to last inclusive.
    public struct DayRange: Sendable, Equatable, CustomStringConvertible {
        public var first: Day
        public var last: Day

        public init(_ day: Day) { first = day; last = day }

        /// Nil when `last` comes before `first`.
        public init?(first: Day, last: Day) {
            guard first <= last else { return nil }
            self.first = first; self.last = last
        }

        public var dayCount: Int { first.days(to: last) + 1 }

        /// "2026-11-30", or "2026-11-01..2026-11-30": what the `d` prompt takes.
        public var description: String { dayCount == 1 ? first.description : "\(first)..\(last)" }

        func shifted(by count: Int) -> DayRange {
            var moved = self
            moved.first = first.adding(days: count)
            moved.last = last.adding(days: count)
            return moved
        }

        /// Parses what was typed at the `d` prompt: "YYYY-MM-DD" or "YYYY-MM-DD..YYYY-MM-DD".
        /// - Returns: the range, or a sentence that says what is wrong and how to write it.
        public static func parse(_ typed: String, maxDays: Int = HistoryScreen.maxRangeDays) -> Result<DayRange, InputError> {
            let example = "type a day like 2026-11-30, or a range like 2026-11-01..2026-11-30"
            let text = typed.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty else { return .failure(InputError(message: "Nothing typed: \(example).")) }
            // Two days, the dots and some spaces fit in 32; more is no date, and echoing it
            // whole would push the explanation off the line.
            guard text.count <= 32 else {
                return .failure(InputError(message: "That is too long for a day or a range (\(text.count) characters): \(example)."))
            }
            let parts = text.components(separatedBy: "..")
            guard parts.count <= 2 else {
                return .failure(InputError(message: "“\(text)” is not a day or a range: \(example)."))
            }
            var days: [Day] = []
            for part in parts {
                let day = part.trimmingCharacters(in: .whitespaces)
                guard !day.isEmpty else {
                    return .failure(InputError(message: "A day is missing beside “..”: type a range like 2026-11-01..2026-11-30."))
                }
                switch parseDay(day) {
                case .success(let day): days.append(day)
                case .failure(let error): return .failure(error)
                }
            }
            guard let range = DayRange(first: days[0], last: days[days.count - 1]) else {
                return .failure(InputError(message: "The range ends before it starts (\(days[0])..\(days[1])): put the earlier day first."))
            }
            guard range.dayCount <= maxDays else {
                return .failure(InputError(message: "The range covers \(range.dayCount) days; choose at most \(maxDays)."))
            }
            return .success(range)
        }

        static func parseDay(_ text: String) -> Result<Day, InputError> {
            let characters = Array(text)
            let digitPositions = [0, 1, 2, 3, 5, 6, 8, 9]
            guard characters.count == 10, characters[4] == "-", characters[7] == "-",
                  digitPositions.allSatisfy({ characters[$0].isASCII && characters[$0].isWholeNumber })
            else {
                return .failure(InputError(message: "“\(text)” is not a day: write it as YYYY-MM-DD, like 2026-11-30."))
            }
            let number = { (range: Range<Int>) in Int(String(characters[range]))! }
            let (year, month, day) = (number(0..<4), number(5..<7), number(8..<10))
            guard year >= 1970 else {
                return .failure(InputError(message: "“\(text)” is before 1970: the scan log holds nothing that old."))
            }
            guard (1...12).contains(month) else {
                return .failure(InputError(message: "“\(text)” is not a day: there is no month \(month)."))
            }
            guard let parsed = Day(year: year, month: month, day: day) else {
                return .failure(InputError(
                    message: "“\(text)” is not a day: \(Day.monthNames[month - 1]) \(year) has \(Day.daysIn(month: month, year: year)) days."))
            }
            return .success(parsed)
        }
    }

    /// Why typed days or a typed path were not taken, as a sentence for the notice line.
    public struct InputError: Error, Sendable, Equatable {
        public var message: String
    }

    /// The prompt at the bottom while one is open.
    public enum Prompt: Sendable, Equatable {
        /// A day or a range of days (`d`).
        case dates
        /// Where to save the CSV (`e`).
        case exportPath
        /// The file is already there: y overwrites, n or Esc goes back to the path.
        case overwrite(path: String)
    }

    /// The line above the prompt or the key hint: what the last action did.
    public struct Notice: Sendable, Equatable {
        public typealias Kind = OutcomeKind
        public var kind: Kind
        public var text: String
    }

    // MARK: - Limits

    /// Most scans read for one view (the services page through the server up to this).
    public static let defaultRowCap = 5_000
    /// Longest range the `d` prompt takes.
    public static let maxRangeDays = 366
    /// Longest text the `d` prompt takes.
    public static let dateInputLimit = 64
    /// Longest path the `e` prompt takes (Linux's PATH_MAX).
    public static let pathInputLimit = 4_096
    /// Least time between two reloads caused by live events.
    public static let liveReloadInterval: TimeInterval = 2

    // MARK: - State

    private let services: any HistoryServices
    private let clock: () -> Date
    private let calendar: Calendar
    private let homeDirectory: String
    /// Most scans read for one view.
    public let rowCap: Int

    /// The chosen days.
    public private(set) var range: DayRange
    /// True while the range is "today" by default, so it moves on at midnight.
    private var followsToday = true
    /// Only scans with this result (nil: all).
    public private(set) var resultFilter: ScanResult?
    /// Only scans at this checkpoint id (nil: all).
    public private(set) var checkpointFilter: String?
    /// The scans of the chosen days, newest first.
    public private(set) var scans: [Scan] = []
    /// True when more scans matched than `rowCap`.
    public private(set) var isCapped = false
    /// When the scans were read and whether the cache answered; nil before a read succeeded.
    public private(set) var loaded: (updatedAt: Date, fromCache: Bool)?
    /// The filter the shown scans were read with.
    private var loadedFilter: ScanHistoryFilter?
    /// The last failure to read the scans, in words.
    public private(set) var errorLine: String?
    public private(set) var notice: Notice?
    public private(set) var prompt: Prompt?
    var input = TextInput(limit: 0)
    /// The row of the selection bar (0 when the list is empty).
    public private(set) var selection = 0
    /// The first row drawn.
    public private(set) var top = 0
    private var pageRows = 10
    /// Checkpoint ids seen in any scan read so far, in the order `c` visits them.
    public private(set) var knownCheckpoints: [String] = []
    private var checkpointNames: [String: String] = [:]
    private var namedCheckpointsAsked = false
    private var visitorNames: [String: String] = [:]
    private var visitorNamesAsked: Set<String> = []
    /// True when a live event said the chosen days have new scans.
    public private(set) var isStale = false
    private var lastLoadAt: Date?

    /// - Parameters:
    ///   - services: the scan log, the export and names (the client core, or a fake).
    ///   - clock: "now", for today, cache ages and the live reload pace (tests move it).
    ///   - timeZone: the zone whose calendar days and hours are shown.
    ///   - homeDirectory: what `~` means in the export path, and where a relative path goes.
    ///   - rowCap: most scans read for one view.
    public init(services: any HistoryServices, clock: @escaping () -> Date, timeZone: TimeZone, homeDirectory: String,
                rowCap: Int = HistoryScreen.defaultRowCap) {
        self.services = services
        self.clock = clock
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        calendar.locale = Locale(identifier: "en_US_POSIX")
        self.calendar = calendar
        self.homeDirectory = homeDirectory
        self.rowCap = max(1, rowCap)
        range = DayRange(Self.day(of: clock(), in: calendar))
    }

    public var title: String { "History" }

    public var isCapturingText: Bool { prompt != nil }

    public var keyHelp: [(key: String, action: String)] {
        switch prompt {
        case .dates?:
            return [("Enter", "show these days"), ("Esc", "cancel"), ("Backspace", "delete the last character"),
                    ("Ctrl-U", "clear the field")]
        case .exportPath?:
            return [("Enter", "save the CSV to this file"), ("Esc", "cancel"), ("Backspace", "delete the last character"),
                    ("Ctrl-U", "clear the field")]
        case .overwrite?:
            return [("y", "overwrite the file"), ("n, Esc", "keep it and choose another name")]
        case nil:
            return [("Up, k", "previous scan"),
                    ("Down, j", "next scan"),
                    ("PgUp, PgDn", "a page up or down"),
                    ("Home, End", "newest or oldest scan"),
                    ("Enter", "open the scan's visitor"),
                    ("[, ]", "previous or next day (or range)"),
                    ("t", "today"),
                    ("d", "choose a day or a range of days"),
                    ("r", "next result filter"),
                    ("c", "next checkpoint filter"),
                    ("e", "export these scans as CSV to a file"),
                    ("g, R", "reload"),
                    ("Esc", "clear the message")]
        }
    }

    /// What the services are asked for: the chosen days and filters. The days run from local
    /// midnight to the next local midnight; the server includes that last instant, so the
    /// list drops a scan made exactly then (the CSV export keeps it). Asking up to one second
    /// earlier instead would lose the day's last second: the API's times are whole seconds.
    public var filter: ScanHistoryFilter {
        let (start, end) = bounds
        return ScanHistoryFilter(from: start, to: end, result: resultFilter, checkpointId: checkpointFilter)
    }

    /// The result the chart counts: the filtered one, else CHECKED_IN.
    public var chartResult: ScanResult { resultFilter ?? .checkedIn }

    /// Scans of `chartResult` per local hour 0–23, over the chosen days. On a day that
    /// repeats an hour (the end of summer time) both fall in the same bar.
    public var hourlyCounts: [Int] {
        var counts = Array(repeating: 0, count: 24)
        for scan in scans where scan.result == chartResult {
            counts[calendar.component(.hour, from: scan.scannedAt.date)] += 1
        }
        return counts
    }

    /// The text of the open prompt's field.
    public var promptText: String { input.text }

    public var selectedScan: Scan? { scans.indices.contains(selection) ? scans[selection] : nil }

    // MARK: - Days

    func today() -> Day { Self.day(of: clock(), in: calendar) }

    static func day(of date: Date, in calendar: Calendar) -> Day {
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        // The Gregorian calendar always answers a valid date for years 1–9999.
        return Day(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1) ?? Day(dayNumber: 0)
    }

    /// The first day `[`, `]` and `d` reach: the scan log holds nothing older.
    public static let earliestDay = Day(year: 1970, month: 1, day: 1)!
    /// The last day `[`, `]` and `d` reach.
    public static let latestDay = Day(year: 9999, month: 12, day: 31)!

    /// The first instant of `day` in the screen's zone (not always 00:00: some zones skip midnight).
    func start(of day: Day) -> Date {
        guard let noon = calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day, hour: 12)) else {
            return .distantFuture   // Unreachable for the days `show` lets through.
        }
        return calendar.startOfDay(for: noon)
    }

    private var bounds: (start: Date, end: Date) { (start(of: range.first), start(of: range.last.adding(days: 1))) }

    private func contains(_ date: Date) -> Bool {
        let (start, end) = bounds
        return date >= start && date < end
    }

    // MARK: - Loading

    public func appear() -> ScreenAction {
        if followsToday { range = DayRange(today()) }
        reload()
        return .redraw
    }

    /// Reads the scans for the current days and filters. On failure, scans read with the
    /// same filters stay (and the error is said); scans of other days or filters are dropped,
    /// since showing them under the new title would mislead.
    public func reload() {
        let keep = selectedScan?.id
        let wanted = filter
        lastLoadAt = clock()
        isStale = false
        do {
            let read = try services.scanHistory(filter: wanted, limit: rowCap)
            scans = read.value.scans.filter { contains($0.scannedAt.date) }
            isCapped = read.value.isCapped
            loaded = (read.updatedAt, read.fromCache)
            loadedFilter = wanted
            errorLine = nil
            learnNames()
        } catch {
            errorLine = "Could not load the scans. " + error.sentence
            if loadedFilter != wanted {
                scans = []
                isCapped = false
                loaded = nil
                loadedFilter = nil
            }
        }
        select(id: keep, fallback: selection)
    }

    private func learnNames() {
        for id in scans.map(\.checkpointId) where !knownCheckpoints.contains(id) { knownCheckpoints.append(id) }
        let unnamedCheckpoint = knownCheckpoints.contains { checkpointNames[$0] == nil }
        if unnamedCheckpoint && !namedCheckpointsAsked {
            namedCheckpointsAsked = true
            checkpointNames.merge(services.historyCheckpointNames()) { _, new in new }
        }
        knownCheckpoints.sort { checkpointLabel($0).lowercased() < checkpointLabel($1).lowercased() }
        let unnamed = Set(scans.compactMap(\.visitorId)).subtracting(visitorNames.keys).subtracting(visitorNamesAsked)
        if !unnamed.isEmpty {
            visitorNamesAsked.formUnion(unnamed)
            visitorNames.merge(services.historyVisitorNames(ids: unnamed)) { _, new in new }
        }
    }

    private func select(id: String?, fallback: Int) {
        if let id, let index = scans.firstIndex(where: { $0.id == id }) {
            selection = index
        } else {
            selection = max(0, min(fallback, scans.count - 1))
        }
        top = max(0, min(top, selection))
    }

    // MARK: - Live

    public func receive(_ event: ServerEvent) -> ScreenAction {
        guard let kind = event.kind else { return .none }
        if kind == .streamGap {
            // Events were missed: any of them may have been a scan.
            isStale = true
            return .none
        }
        guard kind.carriesVisitor, case .visitor(let data)? = try? event.payload() else { return .none }
        let visitor = data.visitor
        let renamed = visitorNames[visitor.id] != visitor.name && scans.contains { $0.visitorId == visitor.id }
        visitorNames[visitor.id] = visitor.name
        // The kinds a check-in attempt causes. Other results (already checked in, expired,
        // unknown pass) send no event and show with the next reload.
        switch kind {
        case .visitorArrived, .visitorAwaiting, .securityAlert:
            // A replayed offline check-in is dated when the pass was scanned.
            let when = kind == .visitorArrived ? (visitor.checkedInAt ?? clock()) : clock()
            if contains(when) { isStale = true }
        default:
            break
        }
        return renamed ? .redraw : .none
    }

    public func tick(now: Date) -> ScreenAction {
        // A tab that was never shown has nothing to keep fresh (and no request to make).
        guard let lastLoadAt else { return .none }
        if followsToday, prompt == nil, today() != range.first {
            // Midnight passed while "today" was shown: show the new today.
            range = DayRange(today())
            reload()
            return .redraw
        }
        guard isStale, now.timeIntervalSince(lastLoadAt) >= Self.liveReloadInterval else { return .none }
        reload()
        return .redraw
    }

    // MARK: - Keys

    public func handle(_ key: Key) -> ScreenAction {
        if prompt != nil { return handlePrompt(key) }
        switch key {
        case .up, .character("k"): return move(to: selection - 1)
        case .down, .character("j"): return move(to: selection + 1)
        case .pageUp: return move(to: selection - max(1, pageRows))
        case .pageDown: return move(to: selection + max(1, pageRows))
        case .home: return move(to: 0)
        case .end: return move(to: scans.count - 1)
        case .enter:
            guard let scan = selectedScan else { return .none }
            guard let visitorId = scan.visitorId else {
                notice = Notice(kind: .warning, text: "This scan matched no visitor (\(scan.result.rawValue)): there is nothing to open.")
                return .redraw
            }
            return .openVisitor(id: visitorId)
        case .character("["): return show(range.shifted(by: -range.dayCount))
        case .character("]"): return show(range.shifted(by: range.dayCount))
        case .character("t"): return show(DayRange(today()))
        case .character("d"):
            input = TextInput(limit: Self.dateInputLimit, text: range.description)
            prompt = .dates
            notice = nil
            return .redraw
        case .character("r"):
            let order: [ScanResult?] = [nil, .checkedIn] + ScanResult.allCases.filter { $0 != .checkedIn }
            let index = order.firstIndex(of: resultFilter) ?? 0
            resultFilter = order[(index + 1) % order.count]
            notice = nil
            reload()
            return .redraw
        case .character("c"):
            guard !knownCheckpoints.isEmpty else {
                notice = Notice(kind: .warning, text: "No checkpoints to choose from: none appears in the scans read so far.")
                return .redraw
            }
            let order: [String?] = [nil] + knownCheckpoints
            let index = order.firstIndex(of: checkpointFilter) ?? 0
            checkpointFilter = order[(index + 1) % order.count]
            notice = nil
            reload()
            return .redraw
        case .character("e"):
            input = TextInput(limit: Self.pathInputLimit, text: "~/gatepass-scans-\(fileStem).csv")
            prompt = .exportPath
            notice = nil
            return .redraw
        case .character("g"), .character("R"):
            notice = nil
            namedCheckpointsAsked = false
            reload()
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

    /// "2026-11-30", or "2026-11-01_2026-11-30" for a range (no dots or slashes in a file name).
    private var fileStem: String { range.dayCount == 1 ? range.first.description : "\(range.first)_\(range.last)" }

    private func show(_ days: DayRange) -> ScreenAction {
        guard days.first >= Self.earliestDay, days.last <= Self.latestDay else {
            notice = Notice(kind: .warning, text: "The scan log covers \(Self.earliestDay) to \(Self.latestDay): there is nothing further.")
            return .redraw
        }
        followsToday = days == DayRange(today())
        notice = nil
        guard days != range else { return .none }
        range = days
        top = 0
        selection = 0
        reload()
        return .redraw
    }

    private func move(to row: Int) -> ScreenAction {
        guard !scans.isEmpty else { return .none }
        let target = max(0, min(row, scans.count - 1))
        guard target != selection else { return .none }
        selection = target
        return .redraw
    }

    private func handlePrompt(_ key: Key) -> ScreenAction {
        guard let current = prompt else { return .none }
        if case .overwrite(let path) = current {
            switch key {
            case .character("y"), .character("Y"):
                return export(to: path, overwrite: true)
            case .character("n"), .character("N"), .escape:
                prompt = .exportPath
                notice = Notice(kind: .warning, text: "Not saved: \(path) was kept. Change the name, or Esc to stop.")
                return .redraw
            case .resize:
                return .redraw
            default:
                return .none
            }
        }
        switch key {
        case .escape:
            prompt = nil
            notice = current == .exportPath ? Notice(kind: .warning, text: "Export cancelled: nothing was saved.") : nil
            return .redraw
        case .enter:
            return current == .dates ? submitDates() : submitPath()
        case .backspace, .delete:
            return input.deleteBackward() ? .redraw : .none
        case .control("u"):
            guard !input.text.isEmpty else { return .none }
            input.text = ""
            return .redraw
        case .character(let character):
            if input.insert(character) { return .redraw }
            if TextInput.isPrintable(character), input.text.count >= input.limit {
                let full = "The field is full: it takes at most \(input.limit) characters."
                guard notice?.text != full else { return .none }
                notice = Notice(kind: .error, text: full)
                return .redraw
            }
            // Control characters (escape sequences from a paste) are never typed in.
            return .none
        case .resize:
            return .redraw
        default:
            return .none
        }
    }

    private func submitDates() -> ScreenAction {
        switch DayRange.parse(input.text) {
        case .failure(let error):
            // The prompt stays open with what was typed, so it can be corrected.
            notice = Notice(kind: .error, text: error.message)
            return .redraw
        case .success(let days):
            prompt = nil
            notice = nil
            if show(days) == .none { reload() }
            return .redraw
        }
    }

    private func submitPath() -> ScreenAction {
        switch Self.resolve(path: input.text, home: homeDirectory) {
        case .failure(let error):
            notice = Notice(kind: .error, text: error.message)
            return .redraw
        case .success(let path):
            return export(to: path, overwrite: false)
        }
    }

    /// The absolute path for what was typed: `~` and `~/…` are the home directory, a path
    /// without `/` in front is taken inside the home directory (the console's working
    /// directory is invisible to whoever looks at it).
    static func resolve(path typed: String, home: String) -> Result<String, InputError> {
        let text = typed.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else {
            return .failure(InputError(message: "Type a file name, like ~/gatepass-scans.csv."))
        }
        if text.hasPrefix("/") { return .success(text) }
        if text.hasPrefix("~") && !(text == "~" || text.hasPrefix("~/")) {
            return .failure(InputError(message: "Only ~/ is understood here, not ~user: type the full path instead."))
        }
        var homeFolder = home
        while homeFolder.count > 1, homeFolder.hasSuffix("/") { homeFolder.removeLast() }
        guard homeFolder.hasPrefix("/") else {
            return .failure(InputError(message: "Your home folder is not known here: type a full path, starting with /."))
        }
        let rest = text == "~" ? "" : text.hasPrefix("~/") ? String(text.dropFirst(2)) : text
        return .success(homeFolder == "/" ? "/" + rest : homeFolder + "/" + rest)
    }

    private func export(to path: String, overwrite: Bool) -> ScreenAction {
        do {
            switch try services.exportScanHistoryCSV(filter: filter, toPath: path, overwrite: overwrite) {
            case .saved(let rows, let savedPath):
                prompt = nil
                notice = Notice(kind: .ok, text: "Saved \(rows) \(rows == 1 ? "row" : "rows") to \(savedPath)")
            case .fileExists(let existing):
                prompt = .overwrite(path: existing)
                notice = nil
            }
        } catch {
            // Back to the path, as typed, so another folder or name is one edit away.
            prompt = .exportPath
            notice = Notice(kind: .error, text: "Could not save the CSV. " + error.sentence)
        }
        return .redraw
    }

    // MARK: - Drawing

    /// The colour of a result: admitted, needs attention, or turned away.
    static func role(of result: ScanResult) -> Canvas.Style.Role {
        switch result {
        case .checkedIn: .ok
        case .alreadyCheckedIn, .approvalRequired, .awaitingApproval: .warning
        case .rejected, .cancelled, .checkedOut, .expired, .notYetValid, .blocked, .notFound, .invalid: .danger
        }
    }

    private func checkpointLabel(_ id: String) -> String {
        if let name = checkpointNames[id], !name.isEmpty { return name }
        return id.count > 8 ? String(id.prefix(8)) + "…" : id
    }

    private func visitorLabel(_ scan: Scan) -> (String, Canvas.Style.Role) {
        if let id = scan.visitorId { return (visitorNames[id] ?? "—", visitorNames[id] == nil ? .muted : .normal) }
        // No visitor: what was scanned says most (an unknown pass, a stray QR code).
        return ("“\(scan.raw)”", .muted)
    }

    private func timeLabel(_ date: Date) -> String {
        let parts = calendar.dateComponents([.month, .day, .hour, .minute, .second], from: date)
        func pad(_ value: Int?) -> String { value.map { $0 < 10 ? "0\($0)" : "\($0)" } ?? "--" }
        if range.dayCount == 1 { return "\(pad(parts.hour)):\(pad(parts.minute)):\(pad(parts.second))" }
        return "\(pad(parts.month))-\(pad(parts.day)) \(pad(parts.hour)):\(pad(parts.minute))"
    }

    static func grouped(_ number: Int) -> String {
        let digits = String(number)
        guard digits.count > 3 else { return digits }
        var result = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(character)
        }
        return result
    }

    /// Bar rows the chart gets in an area this tall (0: the one-line summary only).
    static func chartRows(forHeight height: Int) -> Int {
        let rows = min(8, (height - 10) / 2)
        return rows >= 2 ? rows : 0
    }

    static let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    public func render(into canvas: inout Canvas, area: Area) {
        guard area.width > 0, area.height > 0 else { return }
        let now = clock()
        // The bottom: the notice, then the prompt or the key hint. Drawn first so they win
        // over the list on a short screen.
        var footer: [(String, Canvas.Style)] = []
        if let notice {
            footer.append((notice.text, notice.kind.style))
        }
        switch prompt {
        case .dates?, .exportPath?:
            let label = prompt == .dates ? "Days (YYYY-MM-DD or YYYY-MM-DD..YYYY-MM-DD): " : "Save the CSV to: "
            let fittedLabel = ConsoleFormat.fit(label, width: max(0, area.width - 10))
            footer.append((fittedLabel + input.visibleTail(width: area.width - fittedLabel.count, cursor: true),
                           Canvas.Style(.normal, bold: true)))
            footer.append((prompt == .dates ? "Enter: show these days · Esc: cancel" : "Enter: save · Esc: cancel", .dim))
        case .overwrite(let path)?:
            footer.append(("\(path) exists. Overwrite it? y/n", Canvas.Style(.warning, bold: true)))
            footer.append(("y: overwrite · n, Esc: choose another name", .dim))
        case nil:
            footer.append(("[ ] day · t today · d days · r result · c checkpoint · e export · g reload", .dim))
        }
        footer = Array(footer.suffix(area.height))
        let footerTop = area.y + area.height - footer.count
        for (offset, row) in footer.enumerated() {
            canvas.put(ConsoleFormat.fit(row.0, width: area.width), x: area.x, y: footerTop + offset, style: row.1,
                       maxWidth: area.width)
        }

        var y = area.y
        func line(_ text: String, _ style: Canvas.Style) {
            guard y < footerTop else { return }
            canvas.put(ConsoleFormat.fit(text, width: area.width), x: area.x, y: y, style: style, maxWidth: area.width)
            y += 1
        }
        let days = range.dayCount == 1 ? "\(range.first) (\(range.first.weekdayName))" : "\(range) (\(range.dayCount) days)"
        line("Scan history — \(days)", .title)
        let count = loaded == nil ? "" : " · \(Self.grouped(scans.count)) \(scans.count == 1 ? "scan" : "scans")"
        line("Result: \(resultFilter?.rawValue ?? "all") · Checkpoint: \(checkpointFilter.map(checkpointLabel) ?? "all")\(count)",
             .plain)
        if let loaded, loaded.fromCache {
            line("Offline: showing the scans as they were \(ConsoleFormat.age(since: loaded.updatedAt, now: now)) ago.",
                 Canvas.Style(.warning, bold: true))
        }
        if isCapped {
            line("Only the newest \(Self.grouped(rowCap)) scans are shown: choose fewer days or a filter to see the rest.",
                 Canvas.Style(.warning, bold: true))
        }
        if let errorLine { line(errorLine, Canvas.Style(.danger, bold: true)) }
        guard loaded != nil else {
            if errorLine == nil { line("Loading…", .dim) }
            return
        }
        renderChart(into: &canvas, area: area, y: &y, bottom: footerTop)
        if scans.isEmpty {
            let filtered = resultFilter != nil || checkpointFilter != nil
            line(filtered ? "No scans match these filters on these days." : "No scans on these days.", .plain)
            line("New scans appear here as they are made.", .dim)
            return
        }
        let columns = Columns(width: area.width, timeWidth: range.dayCount == 1 ? 8 : 11)
        line(columns.row(time: "Time", result: "Result", pass: "Pass", visitor: "Visitor", checkpoint: "Checkpoint",
                         flag: "Offline"), Canvas.Style(.muted, bold: true))
        let rows = max(0, footerTop - y)
        pageRows = max(1, rows)
        guard rows > 0 else { return }
        if selection < top { top = selection }
        if selection >= top + rows { top = selection - rows + 1 }
        top = max(0, min(top, max(0, scans.count - rows)))
        for index in top..<min(scans.count, top + rows) {
            let scan = scans[index]
            let selected = index == selection
            let (visitor, visitorRole) = visitorLabel(scan)
            let base: Canvas.Style = selected ? .selected : .plain
            canvas.put(columns.row(time: timeLabel(scan.scannedAt.date), result: scan.result.rawValue,
                                   pass: scan.shortId ?? "-", visitor: visitor, checkpoint: checkpointLabel(scan.checkpointId),
                                   flag: scan.offline ? "offline" : ""),
                       x: area.x, y: y, style: base, maxWidth: area.width)
            if selected { canvas.fill(y: y, from: area.x, width: area.width, style: .selected) }
            // Colour says how a scan went at a glance; the selection keeps it, reversed.
            canvas.fill(y: y, from: area.x + columns.resultStart, width: columns.result - 1,
                        style: Canvas.Style(Self.role(of: scan.result), bold: true, reverse: selected))
            if visitorRole == .muted {
                canvas.fill(y: y, from: area.x + columns.visitorStart, width: columns.visitor - 1,
                            style: Canvas.Style(.muted, reverse: selected))
            }
            if scan.offline {
                canvas.fill(y: y, from: area.x + columns.flagStart, width: columns.flag,
                            style: Canvas.Style(.warning, reverse: selected))
            }
            y += 1
        }
    }

    /// The chart: a title with the total and the peak, then (when there is room) one bar per
    /// hour in eighth-block steps, scaled so the peak fills the bar rows, the peak's count on
    /// the top row, and the hours under the bars.
    private func renderChart(into canvas: inout Canvas, area: Area, y: inout Int, bottom: Int) {
        let counts = hourlyCounts
        let total = counts.reduce(0, +)
        let peak = counts.max() ?? 0
        let name = chartResult.rawValue
        let summed = range.dayCount > 1 ? ", \(range.dayCount) days added up" : ""
        let titleText: String
        if total == 0 {
            titleText = "\(name) per hour: none\(summed)"
        } else {
            let peakHour = counts.firstIndex(of: peak) ?? 0
            titleText = "\(name) per hour: \(Self.grouped(total)) in all, at most \(Self.grouped(peak)) at \(peakHour < 10 ? "0" : "")\(peakHour):00\(summed)"
        }
        guard y < bottom else { return }
        canvas.put(ConsoleFormat.fit(titleText, width: area.width), x: area.x, y: y, style: Canvas.Style(.muted, bold: true),
                   maxWidth: area.width)
        y += 1
        let barRows = Self.chartRows(forHeight: area.height)
        let gutter = String(peak).count + 1
        let slot = min(3, (area.width - gutter) / 24)
        // Bars only when they fit and leave the list a header and two rows.
        guard total > 0, barRows > 0, slot >= 1, bottom - y >= barRows + 1 + 3 else { return }
        let barWidth = slot == 1 ? 1 : slot - 1
        let role = Self.role(of: chartResult)
        let units = counts.map { count in
            count == 0 ? 0 : max(1, Int((Double(count) * Double(barRows * 8) / Double(peak)).rounded()))
        }
        for row in 0..<barRows {
            let level = barRows - 1 - row   // 0 is the bottom row
            if row == 0 {
                let label = String(peak)
                canvas.put(String(repeating: " ", count: gutter - 1 - label.count) + label, x: area.x, y: y, style: .dim)
            }
            for hour in 0..<24 {
                let filled = min(8, max(0, units[hour] - level * 8))
                guard filled > 0 else { continue }
                let x = area.x + gutter + hour * slot
                canvas.put(String(repeating: Self.blocks[filled - 1], count: barWidth), x: x, y: y, style: Canvas.Style(role),
                           maxWidth: area.x + area.width - x)
            }
            y += 1
        }
        // Hour labels: every hour when a slot holds "00 ", else every second or third hour.
        let step = slot >= 3 ? 1 : slot == 2 ? 2 : 3
        for hour in stride(from: 0, to: 24, by: step) {
            let x = area.x + gutter + hour * slot
            canvas.put(hour < 10 ? "0\(hour)" : "\(hour)", x: x, y: y, style: .dim, maxWidth: area.x + area.width - x)
        }
        y += 1
    }

    /// The list's columns for a width: time, result, pass, visitor (60 % of what is left),
    /// checkpoint (40 %), and the offline flag.
    struct Columns {
        let time: Int, result: Int, pass: Int, visitor: Int, checkpoint: Int, flag: Int

        init(width: Int, timeWidth: Int) {
            var rest = max(0, width)
            func take(_ wanted: Int) -> Int {
                let taken = min(rest, wanted)
                rest -= taken
                return taken
            }
            time = take(timeWidth + 1)
            result = take(19)   // "ALREADY_CHECKED_IN" and a space
            pass = take(9)
            flag = take(7)
            visitor = rest * 6 / 10
            checkpoint = rest - visitor
        }

        var resultStart: Int { time }
        var visitorStart: Int { time + result + pass }
        var flagStart: Int { time + result + pass + visitor + checkpoint }

        func row(time timeText: String, result resultText: String, pass passText: String, visitor visitorText: String,
                 checkpoint checkpointText: String, flag flagText: String) -> String {
            ApprovalsScreen.Columns.cell(timeText, time) + ApprovalsScreen.Columns.cell(resultText, result)
                + ApprovalsScreen.Columns.cell(passText, pass) + ApprovalsScreen.Columns.cell(visitorText, visitor)
                + ApprovalsScreen.Columns.cell(checkpointText, checkpoint) + ConsoleFormat.fit(flagText, width: flag)
        }
    }
}
