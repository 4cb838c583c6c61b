import Foundation
import GatePassCore

/// The scan log (OWNER/ADMIN): the scans of the chosen days with result and checkpoint
/// filters, a bar chart per hour, and a CSV export.
///
/// ```
/// Scan history — 2026-11-30 (Mon) · times in Europe/Bucharest
/// Result: all · Checkpoint: all · 17 scans
/// CHECKED_IN per hour: 12 in all, at most 5 at 09:00
/// 5                            ██
///                           ▃▃ ██
///                        ██ ██ ██ ▅▅
/// 00 01 02 03 04 05 06 07 08 09 10 11 …
/// Time     Result             Pass     Visitor         Checkpoint
/// 09:12:40 CHECKED_IN         K7Q2M9XD Ana Pop         Main gate
/// ```
/// Days and times are the organization's (its zone read from the services, as the On-site
/// tab reads it; the `timeZone` given until it is known): `[` and `]` step back and forward, `t` returns to
/// today, `d` asks for a day or a range. `r` cycles the result filter (all, CHECKED_IN, then
/// every other result), `c` the checkpoints seen so far; both are sent to the services, so
/// the list, the chart and the export agree. The chart counts CHECKED_IN per hour, or the
/// filtered result when one is chosen. `e` saves the CSV of the current filters to a file.
/// Offline, the scans come from the cache and a line says how old they are. Live events
/// that mean a new scan on the chosen days mark the list stale; `tick` reloads it at most
/// once every `liveReloadInterval`.
public final class HistoryScreen: ConsoleScreen {
    // MARK: - Types

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

    let services: any HistoryServices
    let clock: () -> Date
    /// The calendar of the site's zone: its days and hours.
    private(set) var calendar: Calendar
    /// The organization's clock, which every time on the screen is read in.
    public private(set) var siteClock: SiteClock
    /// The organization, once read; nil until then (the console's own zone stands in).
    public private(set) var site: Organization?
    let homeDirectory: String
    /// Most scans read for one view.
    public let rowCap: Int

    /// The chosen days.
    public internal(set) var range: DayRange
    /// True while the range is "today" by default, so it moves on at midnight.
    var followsToday = true
    /// Only scans with this result (nil: all).
    public internal(set) var resultFilter: ScanResult?
    /// Only scans at this checkpoint id (nil: all).
    public internal(set) var checkpointFilter: String?
    /// The scans of the chosen days, newest first.
    public internal(set) var scans: [Scan] = []
    /// True when more scans matched than `rowCap`.
    public internal(set) var isCapped = false
    /// When the scans were read and whether the cache answered; nil before a read succeeded.
    public internal(set) var loaded: (updatedAt: Date, fromCache: Bool)?
    /// The filter the shown scans were read with.
    private var loadedFilter: ScanHistoryFilter?
    /// The last failure to read the scans, in words.
    public internal(set) var errorLine: String?
    public internal(set) var notice: Notice?
    public internal(set) var prompt: Prompt?
    var input = TextInput(limit: 0)
    /// The row of the selection bar (0 when the list is empty).
    public var selection: Int { list.index }
    /// The first row drawn.
    public var top: Int { list.top }
    /// The selection bar and the first row drawn; PgUp/PgDn move by the rows of the last render.
    var list = ListSelection()
    /// Checkpoint ids seen in any scan read so far, in the order `c` visits them.
    public internal(set) var knownCheckpoints: [String] = []
    var checkpointNames: [String: String] = [:]
    var namedCheckpointsAsked = false
    var visitorNames: [String: String] = [:]
    private var visitorNamesAsked: Set<String> = []
    /// True when a live event said the chosen days have new scans.
    public private(set) var isStale = false
    private var lastLoadAt: Date?

    /// - Parameters:
    ///   - services: the scan log, the export and names (the client core, or a fake).
    ///   - clock: "now", for today, cache ages and the live reload pace (tests move it).
    ///   - timeZone: the zone days and hours are shown in until the organization's is known
    ///     (offline at the first open, with nothing cached).
    ///   - homeDirectory: what `~` means in the export path, and where a relative path goes.
    ///   - rowCap: most scans read for one view.
    public init(services: any HistoryServices, clock: @escaping () -> Date, timeZone: TimeZone, homeDirectory: String,
                rowCap: Int = HistoryScreen.defaultRowCap) {
        self.services = services
        self.clock = clock
        self.calendar = Self.calendar(in: timeZone)
        siteClock = SiteClock(timeZone: timeZone)
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


    // MARK: - Loading

    public func appear() -> ScreenAction {
        learnSite()
        if followsToday { range = DayRange(today()) }
        reload()
        return .redraw
    }

    /// Reads the organization once, for its zone: days, hours and times are then the site's.
    private func learnSite() {
        guard site == nil, let read = try? services.site().value, let clock = SiteClock(zoneNamed: read.timeZone) else { return }
        site = read
        siteClock = clock
        calendar = Self.calendar(in: clock.timeZone)
    }

    static func calendar(in zone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        calendar.locale = Locale(identifier: "en_US_POSIX")
        return calendar
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

    func select(id: String?, fallback: Int) {
        list.select(id.flatMap { id in scans.firstIndex(where: { $0.id == id }) } ?? fallback, count: scans.count)
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

}
