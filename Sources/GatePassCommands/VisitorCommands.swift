import Foundation
import GatePassClient
import GatePassCore

// MARK: - Reads

struct ApprovalsCommand: GatePassCommand {
    static let configuration = CommandConfiguration(
        name: "gatepass approvals",
        overview: "List visitors awaiting approval, newest request first (from the cache when offline).",
        options: [OutputOptions.json])

    var json: Bool
    init(parsing arguments: ParsedArguments) { json = arguments.has(OutputOptions.json) }

    func run(_ context: CommandContext) throws -> Int32 {
        let read = try context.core().approvals()
        ClientCommands.noteIfCached(read, context)
        ClientCommands.printVisitors(read.value, asJSON: json, whenEmpty: "no visitors are waiting for approval", context)
        return 0
    }
}

struct LookupCommand: GatePassCommand {
    static let query = Argument<String>("QUERY", help: "A short id, or part of a name, phone number or email.")
    static let configuration = CommandConfiguration(
        name: "gatepass lookup", overview: "Find visitors by short id, name, phone or email (at most \(ListBounds.lookupLimit)).",
        arguments: [query.spec], options: [OutputOptions.json])

    var query: String
    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) {
        query = try arguments.required(Self.query)
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let page = try context.core().lookup(query)
        ClientCommands.printVisitors(page, asJSON: json, whenEmpty: "no visitor matches \(query)", context)
        // The lookup has no cursor: a full answer may have left some out.
        if !json && page.items.count >= ListBounds.lookupLimit {
            context.terminal.err("a lookup shows at most \(ListBounds.lookupLimit) visitors; there may be more: type more of the name, or the short id")
        }
        return 0
    }
}

struct StatsCommand: GatePassCommand {
    static let configuration = CommandConfiguration(
        name: "gatepass stats",
        overview: "Today's counters: checked in, checked out, awaiting approval, expected, on site.",
        options: [OutputOptions.json])

    var json: Bool
    init(parsing arguments: ParsedArguments) { json = arguments.has(OutputOptions.json) }

    func run(_ context: CommandContext) throws -> Int32 {
        let read = try context.core().stats()
        ClientCommands.noteIfCached(read, context)
        if json {
            context.terminal.out(ClientCommands.json(read.value))
        } else {
            let stats = read.value
            context.terminal.out("checked in today: \(stats.checkedInToday)\nchecked out today: \(stats.checkedOutToday)\nawaiting approval: \(stats.awaitingApproval)\nexpected today: \(stats.expectedToday)\non site: \(stats.onSite)")
        }
        return 0
    }
}

struct HistoryCommand: GatePassCommand {
    static let limit = PageOptions.limit(of: "scans")
    static let result = Option<ScanResult>("--result", value: "R", help: "Only scans with this result, e.g. CHECKED_IN.") {
        (text: String) throws(UsageError) in
        guard let parsed = ScanResult(rawValue: text.uppercased()) else {
            throw UsageError("--result must be one of \(ScanResult.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return parsed
    }
    static let from = SiteTimeOptions.option("--from", help: "Only scans at or after this time: 2026-12-06 09:00 in the site's time zone, or RFC 3339.")
    static let to = SiteTimeOptions.option("--to", help: "Only scans at or before this time (as --from).")
    static let csv = Flag("--csv", help: "Print the CSV export (OWNER/ADMIN).")
    static let configuration = CommandConfiguration(
        name: "gatepass history",
        overview: "The scan history, newest first (OWNER/ADMIN: the organization; scanners: theirs).",
        usage: "gatepass history [--limit N] [--result R] [--from TIME] [--to TIME] [--csv | --json]",
        options: [limit, result, from, to, csv, OutputOptions.json])

    var limit: Int
    var filter = APIClient.HistoryFilter()
    var from: String?
    var to: String?
    var csv: Bool
    var json: Bool

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        limit = try arguments.value(Self.limit) ?? PageOptions.defaultLimit
        filter.result = try arguments.value(Self.result)
        from = try arguments.value(Self.from)
        to = try arguments.value(Self.to)
        csv = arguments.has(Self.csv)
        json = arguments.has(OutputOptions.json)
    }

    func validate() throws(UsageError) {
        guard !(csv && json) else { throw UsageError("choose one of --csv and --json") }
    }

    /// `06 Dec 2026 09:00:05  CHECKED_IN  Ana Pop  K7M2QX  at Main gate  by Olivia Owner`: the
    /// visitor, gate and guard by name where this caller may read them (by id otherwise), never
    /// the scanned text (a GP2 pass is 103 characters); a scan of no visitor says so.
    static func line(_ scan: Scan, _ clock: SiteClock, _ names: NameDirectory) throws -> String {
        var parts = [SiteCommands.listTime(scan.scannedAt.date, clock), scan.result.rawValue]
        if let visitorId = scan.visitorId {
            parts.append(try names.visitor(visitorId) ?? "visitor \(visitorId)")
            if let shortId = scan.shortId { parts.append(shortId) }
        } else {
            parts.append("unknown pass")
        }
        parts.append("at " + (try names.checkpoint(scan.checkpointId) ?? "checkpoint \(scan.checkpointId)"))
        parts.append("by " + (try names.user(scan.scannedBy) ?? "user \(scan.scannedBy)"))
        if scan.offline { parts.append("offline") }
        return parts.joined(separator: "  ")
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core()
        var filter = filter
        (filter.from, filter.to) = try SiteTimeOptions.window(from: from, to: to, clock: { try SiteCommands.clock(core) })
        if csv {
            context.terminal.out(try core.historyCSV(filter: filter), terminator: "")
            return 0
        }
        let read = try core.history(limit: limit, filter: filter)
        ClientCommands.noteIfCached(read, context)
        if json {
            context.terminal.out(ClientCommands.json(read.value))
        } else if read.value.items.isEmpty {
            context.terminal.out("no scans")
        } else {
            let clock = try SiteCommands.clock(core)
            let names = NameDirectory(core)
            context.terminal.out(SiteCommands.zoneLine(clock))
            for scan in read.value.items { context.terminal.out(visible: try Self.line(scan, clock, names)) }
            PageOptions.noteMore(read.value, of: "scans", filtered: true, on: context.terminal)
        }
        return 0
    }
}

// MARK: - Mutations

/// What tells `approve` from `reject`: everything else about the two commands is the same.
protocol DecisionKind {
    static var decision: ApprovalDecision { get }
    static var verb: String { get }
    static var overview: String { get }
}

enum Approval: DecisionKind {
    static let decision = ApprovalDecision.approve
    static let verb = "approve"
    static let overview = "Approve a visitor awaiting approval. Queued when the server is unreachable."
}

enum Rejection: DecisionKind {
    static let decision = ApprovalDecision.reject
    static let verb = "reject"
    static let overview = "Reject a visitor awaiting approval. Queued when the server is unreachable."
}

typealias ApproveCommand = DecisionCommand<Approval>
typealias RejectCommand = DecisionCommand<Rejection>

/// `approve` and `reject`: the same arguments, one decision each.
struct DecisionCommand<Kind: DecisionKind>: GatePassCommand {
    static var note: Option<String> { Option("--note", value: "TEXT", help: "A note kept with the decision.") }
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "gatepass \(Kind.verb)", overview: Kind.overview, arguments: [VisitorArgument.id.spec],
                             options: [note, OutputOptions.json])
    }

    var id: VisitorReference
    var note: String?
    var json: Bool

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        id = try arguments.required(VisitorArgument.id)
        note = try arguments.value(Self.note)
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let outcome = try context.core().decide(Kind.decision, visitorId: id.pathValue, note: note)
        return try ClientCommands.report(outcome, as: Visitor.self, asJSON: json, context) {
            "\($0.status.rawValue)  \($0.name) (\($0.shortId))"
        }
    }
}

struct CheckInCommand: GatePassCommand {
    static let code = Argument<String>("CODE", help: "The pass's short id, or the raw text of its QR code.") {
        (code: String) throws(UsageError) in
        guard code.utf8.count <= QRPayload.maximumRawBytes else {
            throw UsageError("CODE is \(code.utf8.count) bytes; a pass holds at most \(QRPayload.maximumRawBytes)")
        }
        return code
    }
    static let confirmApproval = Flag("--confirm-approval", help: "Request approval when the pass needs it.")
    static let configuration = CommandConfiguration(
        name: "gatepass checkin",
        overview: "Check a pass in by short id or raw QR text. Queued when the server is unreachable; a signed (GP2) pass is then checked with the pass keys fetched at login, as an offline kiosk does, and a forgery is refused, not queued. " + GateExitStatus.checkInNote,
        arguments: [code.spec], options: [confirmApproval, OutputOptions.json])

    var code: String
    var confirm: Bool
    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) {
        code = try arguments.required(Self.code)
        confirm = arguments.has(Self.confirmApproval)
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core()
        let outcome = try core.checkIn(code: code, confirmApprovalRequest: confirm)
        switch outcome {
        case .queued(let entry, let reason):
            return try GateExitStatus.reportUnanswered(core.judgeUnansweredCheckIn(entry, code: code), entry: entry, reason: reason,
                                                       asJSON: json, context)
        case .applied:
            try? core.refreshPassKeys()
        default:
            break
        }
        return try ClientCommands.report(outcome, as: CheckInAnswer.self, asJSON: json, context,
                                         exitStatus: { GateExitStatus.of($0.result) }) { answer in
            var line = "\(answer.result.rawValue)  \(answer.visitor.name) (\(answer.visitor.shortId))"
            if answer.result == .approvalRequired { line += ": run again with --confirm-approval to ask an approver" }
            if answer.result == .blocked { line += ": " + GateDecision.blockedReason }
            return line
        }
    }
}

struct CheckOutCommand: GatePassCommand {
    static let code = Argument<String>("CODE", help: "The visitor's short id, or the raw text of their pass's QR code.")
    static let configuration = CommandConfiguration(
        name: "gatepass checkout",
        overview: "Check a visitor out by short id or raw QR text. Queued when the server is unreachable. " + GateExitStatus.checkOutNote,
        arguments: [code.spec], options: [OutputOptions.json])

    var code: String
    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) {
        code = try arguments.required(Self.code)
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core()
        let outcome = try core.checkOut(code: code)
        if case .applied = outcome { try? core.refreshPassKeys() }
        return try ClientCommands.report(outcome, as: CheckOutAnswer.self, asJSON: json, context,
                                         exitStatus: { $0.result == .notCheckedIn ? 1 : 0 }) {
            var line = "\($0.result.rawValue)  \($0.visitor.name) (\($0.visitor.shortId))"
            if $0.result == .notCheckedIn { line += ": not inside, so nothing was checked out" }
            return line
        }
    }
}

struct WalkInCommand: GatePassCommand {
    // The fields of `visitor add`, checked the same way: a walk-in is queued when the server is
    // unreachable, and a value the server would refuse is better refused while the person is here.
    static let name = VisitorFieldOptions.name(required: true)
    static let configuration = CommandConfiguration(
        name: "gatepass walk-in",
        overview: "Register a visitor who arrived without a pass; they wait for approval. Queued when the server is unreachable. " + GateExitStatus.walkInNote,
        options: [name, VisitorFieldOptions.phone, VisitorFieldOptions.email, VisitorFieldOptions.company,
                  VisitorFieldOptions.purpose, VisitorFieldOptions.host, OutputOptions.json])

    var walkIn: ClientCore.WalkIn
    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) {
        walkIn = ClientCore.WalkIn(name: try arguments.required(Self.name), phone: try arguments.value(VisitorFieldOptions.phone),
                                   email: try arguments.value(VisitorFieldOptions.email),
                                   company: try arguments.value(VisitorFieldOptions.company),
                                   purpose: try arguments.value(VisitorFieldOptions.purpose),
                                   hostName: try arguments.value(VisitorFieldOptions.host))
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core()
        let outcome = try core.walkIn(walkIn)
        if case .applied = outcome { try? core.refreshPassKeys() }
        return try ClientCommands.report(outcome, as: WalkInAnswer.self, asJSON: json, context,
                                         exitStatus: { GateExitStatus.of($0.result.scanResult) }) {
            switch $0.result {
            case .awaitingApproval: "\($0.result.rawValue)  \($0.visitor.name) (\($0.visitor.shortId)): an approver decides"
            // The gate is told no more than that (api.md "Blocklist").
            case .blocked: "\($0.result.rawValue)  \($0.visitor.name) (\($0.visitor.shortId)): \(GateDecision.blockedReason)"
            }
        }
    }
}
