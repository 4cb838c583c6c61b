import Foundation
import GatePassCore

// How the History screen is drawn: the filters, the hourly chart and the list of scans.

extension HistoryScreen {
    /// The colour of a result: admitted, needs attention, or turned away.
    static func role(of result: ScanResult) -> Canvas.Style.Role {
        switch result {
        case .checkedIn: .ok
        case .alreadyCheckedIn, .approvalRequired, .awaitingApproval: .warning
        case .rejected, .cancelled, .checkedOut, .expired, .notYetValid, .blocked, .notFound, .invalid: .danger
        }
    }

    /// " · per gate: Main gate 9, Dock 2" over every checkpoint when the scans shown come from
    /// more than one (busiest first); empty otherwise.
    var perGateCounts: String {
        guard checkpointFilter == nil else { return "" }
        let counts = Dictionary(grouping: scans, by: \.checkpointId).mapValues(\.count)
        guard counts.count > 1 else { return "" }
        let ordered = counts.sorted { ($1.value, checkpointLabel($0.key)) < ($0.value, checkpointLabel($1.key)) }
        return " · per gate: " + ordered.map { "\(checkpointLabel($0.key)) \(Self.grouped($0.value))" }.joined(separator: ", ")
    }

    func checkpointLabel(_ id: String) -> String {
        if let name = checkpointNames[id], !name.isEmpty { return name }
        return id.count > 8 ? String(id.prefix(8)) + "…" : id
    }

    private func visitorLabel(_ scan: Scan) -> (String, Canvas.Style.Role) {
        if let id = scan.visitorId { return (visitorNames[id] ?? "—", visitorNames[id] == nil ? .muted : .normal) }
        // No visitor: what was scanned says most (an unknown pass, a stray QR code).
        guard let raw = scan.raw else { return ("(erased)", .muted) }
        return ("“\(raw)”", .muted)
    }

    /// One day: `09:12:40`; several: the day as well when it is not today (`29 Nov 22:10`).
    private func timeLabel(_ date: Date, now: Date) -> String {
        range.dayCount == 1 ? siteClock.timeWithSeconds(date) : siteClock.short(date, now: now)
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
            footer.append((input.promptLine(label: label, width: area.width), Canvas.Style(.normal, bold: true)))
            footer.append((prompt == .dates ? "Enter: show these days · Esc: cancel" : "Enter: save · Esc: cancel", .dim))
        case .overwrite(let path)?:
            footer.append(("\(path) exists. Overwrite it? y/n", Canvas.Style(.warning, bold: true)))
            footer.append(("y: overwrite · n, Esc: choose another name", .dim))
        case nil:
            footer.append(("[ ] day · t today · d days · r result · c checkpoint · e export · g reload", .dim))
        }
        let footerTop = canvas.putFooter(footer, in: area)

        var y = area.y
        func line(_ text: String, _ style: Canvas.Style) {
            guard y < footerTop else { return }
            canvas.put(ConsoleFormat.fit(text, width: area.width), x: area.x, y: y, style: style, maxWidth: area.width)
            y += 1
        }
        let days = range.dayCount == 1 ? "\(range.first) (\(range.first.weekdayName))" : "\(range) (\(range.dayCount) days)"
        line("Scan history — \(days) · times in \(siteClock.zoneName)", .title)
        let count = loaded == nil ? "" : " · \(Self.grouped(scans.count)) \(scans.count == 1 ? "scan" : "scans")"
        line("Result: \(resultFilter?.rawValue ?? "all") · Checkpoint: \(checkpointFilter.map(checkpointLabel) ?? "all")\(count)"
             + perGateCounts, .plain)
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
        let columns = Columns(width: area.width, timeWidth: range.dayCount == 1 ? 8 : 12)
        line(columns.row(time: "Time", result: "Result", pass: "Pass", visitor: "Visitor", checkpoint: "Checkpoint",
                         flag: "Offline"), Canvas.Style(.muted, bold: true))
        for index in list.scroll(visibleRows: max(0, footerTop - y), count: scans.count) {
            let scan = scans[index]
            let selected = index == selection
            let (visitor, visitorRole) = visitorLabel(scan)
            let base: Canvas.Style = selected ? .selected : .plain
            canvas.put(columns.row(time: timeLabel(scan.scannedAt.date, now: now), result: scan.result.rawValue,
                                   pass: scan.shortId ?? "-", visitor: visitor, checkpoint: checkpointLabel(scan.checkpointId),
                                   flag: scan.isOfflineConflict ? "conflict" : scan.offline ? "offline" : ""),
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
                            style: Canvas.Style(scan.isOfflineConflict ? .danger : .warning, bold: scan.isOfflineConflict,
                                                reverse: selected))
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
            flag = take(8)   // "conflict": an offline admission the server decided otherwise
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
