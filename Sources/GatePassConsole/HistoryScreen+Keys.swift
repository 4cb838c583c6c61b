import Foundation
import GatePassCore

// The History screen's keys: stepping days, the filters, the date and path prompts and the CSV export.

extension HistoryScreen {
    public func handle(_ key: Key) -> ScreenAction {
        if prompt != nil { return handlePrompt(key) }
        if let moved = list.move(key, count: scans.count) { return moved ? .redraw : .none }
        switch key {
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

    func show(_ days: DayRange) -> ScreenAction {
        guard days.first >= Self.earliestDay, days.last <= Self.latestDay else {
            notice = Notice(kind: .warning, text: "The scan log covers \(Self.earliestDay) to \(Self.latestDay): there is nothing further.")
            return .redraw
        }
        followsToday = days == DayRange(today())
        notice = nil
        guard days != range else { return .none }
        range = days
        list.reset()
        reload()
        return .redraw
    }

    func handlePrompt(_ key: Key) -> ScreenAction {
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

    func export(to path: String, overwrite: Bool) -> ScreenAction {
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
}
