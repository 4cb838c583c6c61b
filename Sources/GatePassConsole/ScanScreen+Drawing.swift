import Foundation
import GatePassCore

// How the Scan screen is drawn: stats, source, the last decision large, the field and the lists.

extension ScanScreen {
    /// The outcome in capitals, as drawn large. A pass that needs approval is not yet
    /// "requested": it waits for the guard's y/n.
    static func headline(_ decision: GateDecision) -> String {
        switch decision.outcome {
        case .admitted: "ADMITTED"
        case .denied: "DENIED"
        case .approvalRequested:
            decision.result == ScanResult.approvalRequired.rawValue ? "APPROVAL NEEDED" : "APPROVAL REQUESTED"
        case .queuedOffline: "QUEUED OFFLINE"
        case .signedOut: "SIGNED OUT"
        }
    }

    static func role(_ outcome: GateDecision.Outcome) -> Canvas.Style.Role {
        switch outcome {
        case .admitted: .ok
        case .denied, .signedOut: .danger
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
    struct Row {
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
            // The field is a text field: say where digits go and the way out (first to go on a small screen).
            if focus == .shortId {
                lower.append(Row(shortId.text.isEmpty ? Self.digitsHint : Self.digitsHintWithText, .dim, priority: 29))
            }
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
            recentList.setPageSize(1)
            return
        }
        draw(listRows.header, y: y, into: &canvas, area: area)
        y += 1
        let visible = left - 1
        if lookup != nil {
            guard var state = lookup else { return }
            for index in state.list.scroll(visibleRows: visible, count: listRows.lines.count) {
                draw(listRows.lines[index], y: y, into: &canvas, area: area)
                y += 1
            }
            lookup = state
        } else {
            for index in recentList.scroll(visibleRows: visible, count: listRows.lines.count) {
                draw(listRows.lines[index], y: y, into: &canvas, area: area)
                y += 1
            }
        }
    }

    /// Drops the rows that matter least (the later of equals first) until `height` remain.
    static func fit(_ rows: [Row], height: Int) -> [Row] {
        var rows = rows
        while rows.count > max(0, height) {
            var drop = rows.count - 1
            for index in rows.indices.reversed() where rows[index].priority < rows[drop].priority { drop = index }
            rows.remove(at: drop)
        }
        return rows
    }

    func draw(_ row: Row, y: Int, into canvas: inout Canvas, area: Area) {
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
        // What an offline decision here would be judged against.
        renderedPassCacheAge = passCacheSyncedAt.map { ConsoleFormat.age(since: $0, now: now) }
        row.pieces.append((renderedPassCacheAge.map { "  · pass cache \($0) old" } ?? "  · no pass cache", .dim))
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
        let when = lastDecisionAt.map { " · " + siteClock.timeWithSeconds($0) } ?? ""
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
            let text = "\(siteClock.timeWithSeconds(entry.at))  \(headline.padding(toLength: 18, withPad: " ", startingAt: 0))  \(Self.who(decision)) — \(decision.reason)"
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

    func walkInRows(_ form: WalkInForm, width: Int) -> [Row] {
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
    func renderHelp(into canvas: inout Canvas, area: Area) {
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
