import Foundation
import GatePassClient
import GatePassConsole
import GatePassConsoleServices
import GatePassCore

/// `gatepass visitor …`: what the office does with visitors (api.md "Site operations"). Each
/// call is made at once with the login token (`ClientCore.online`), never queued; POSTs carry
/// a fresh Idempotency-Key, so a request the network lost and a person re-ran is applied once.
enum OfficeCommands {
    static let visitorMembers: [GatePassCLI.Subcommand] = [
        .init("add", "Register an expected visitor (with --invite, mail them the invitation).", VisitorAddCommand.self),
        .init("list", "List visitors, newest first: by status, day or search text.", VisitorListCommand.self),
        .init("show", "Show one visitor.", VisitorShowCommand.self),
        .init("edit", "Change a visitor's details or reschedule the visit (a new window re-issues the pass).", VisitorEditCommand.self),
        .init("cancel", "Cancel a visit; the pass stops working.", VisitorCancelCommand.self),
        .init("checkout", "Check a visitor out from the office.", VisitorCheckOutCommand.self),
        .init("invite", "Send, or send again, the invitation mail with the pass.", VisitorInviteCommand.self),
        .init("pass", "Save a visitor's pass as a PNG (printable) or SVG file.", VisitorPassCommand.self),
    ]

    /// The organization's time zone: the one site-local times are read and shown in, with the
    /// name the organization gives it (Foundation would call `UTC` "GMT").
    static func siteZone(_ core: ClientCore) throws -> (zone: TimeZone, name: String) {
        let organization = try core.online { api, token throws(ClientError) in try api.organization(token: token) }
        guard let zone = TimeZone(identifier: organization.timeZone) else {
            throw CommandFailure("the organization's time zone \(organization.timeZone) is not known on this computer; give RFC 3339 times")
        }
        return (zone, organization.timeZone)
    }

    /// A fresh key per run: the server applies a POST that was retried with it only once.
    static func idempotencyKey() -> String { UUID().uuidString }

    /// `call`, with the server's `BLOCKLIST_MATCH` turned into the sentence that says what to
    /// do: confirm with --confirm-blocked, or (already confirmed) register without --invite,
    /// since a blocked visitor is never mailed an invitation.
    static func explainingBlocklistMatch<T>(confirmed: Bool, _ call: () throws -> T) throws -> T {
        do {
            return try call()
        } catch ClientError.permanent(_, "BLOCKLIST_MATCH", _) {
            throw CommandFailure(confirmed
                ? "the visitor matches the blocklist and a blocked visitor is never mailed an invitation, so nothing was saved; run the command again without --invite"
                : "the visitor matches the blocklist, so nothing was saved; if you mean to register them anyway, run the command again with --confirm-blocked")
        }
    }

    /// Everything about one visitor, a line per field, for a person (text from outside made
    /// visible): times in the site's zone, people by name where `names` knows them.
    static func detail(_ visitor: Visitor, _ clock: SiteClock, names: [String: String] = [:]) -> String {
        func time(_ date: Date?) -> String { date.map(clock.dateTime) ?? "-" }
        func person(_ id: String?) -> String { id.map { names[$0] ?? $0 } ?? "-" }
        var status = visitor.status.rawValue
        if visitor.requiresApproval { status += ", approval required" }
        if visitor.walkIn { status += ", walk-in" }
        var host = visitor.hostName ?? "-"
        if let email = visitor.hostEmail { host += " <\(email)>" }
        var decided = "-"
        if let at = visitor.decidedAt {
            decided = "\(time(at)) by \(person(visitor.decidedBy))"
            if let note = visitor.decisionNote { decided += ": \(note)" }
        }
        var checkedIn = time(visitor.checkedInAt)
        if visitor.checkedInAt != nil, let checkpoint = visitor.checkpointId { checkedIn += " at checkpoint \(checkpoint)" }
        let rows: [(String, String)] = [
            ("status", status), ("valid", clock.window(from: visitor.validity.from, until: visitor.validity.until)),
            ("email", visitor.email ?? "-"), ("phone", visitor.phone ?? "-"), ("company", visitor.company ?? "-"),
            ("purpose", visitor.purpose ?? "-"), ("host", host), ("approver", person(visitor.approverId)),
            ("created", time(visitor.createdAt)), ("approval asked", time(visitor.approvalRequestedAt)),
            ("decided", decided), ("checked in", checkedIn), ("checked out", time(visitor.checkedOutAt)),
            ("id", visitor.id),
        ]
        let lines = ["\(visitor.shortId)  \(visitor.name)"] + rows.map { "\($0.0): \($0.1)" }
        return lines.map(TerminalText.visible).joined(separator: "\n")
    }

    /// The visitor as the API shapes it (`--json`), or its detail in the site's time with
    /// people by name.
    static func show(_ visitor: Visitor, asJSON: Bool, _ site: SiteZone, _ context: CommandContext) throws {
        if asJSON {
            context.terminal.out(ClientCommands.json(visitor))
            return
        }
        let names = personNames([visitor.decidedBy, visitor.approverId].compactMap { $0 }, site.core)
        context.terminal.out(detail(visitor, try site.clock(), names: names))
    }

    /// Names of the users `ids` point at: the logged-in user's own, then the users list, which
    /// only owners and admins may read. The lookup is best effort: the visitor was read, so a
    /// list that cannot be (403 for an approver or a host, a network fault) leaves the ids.
    static func personNames(_ ids: [String], _ core: ClientCore) -> [String: String] {
        var names: [String: String] = [:]
        if let session = try? core.session() { names[session.user.id] = session.user.name }
        for id in Set(ids) where names[id] == nil {
            if let user = try? core.user(id: id) { names[id] = user.profile.name }
        }
        return names
    }

    /// The organization's zone, asked of the server once, and only when something needs it.
    final class SiteZone {
        let core: ClientCore
        private var known: (zone: TimeZone, name: String)?
        /// - Parameter needed: ask the server now (the zone will be needed), rather than at the first use.
        init(_ core: ClientCore, needed: Bool = false) throws {
            self.core = core
            if needed { _ = try zone() }
        }
        func zone() throws -> TimeZone { try site().zone }
        func name() throws -> String { try site().name }
        /// The site's clock: times as people read them, under the zone's name as the
        /// organization gives it.
        func clock() throws -> SiteClock {
            let site = try site()
            return SiteClock(zoneNamed: site.name) ?? SiteClock(timeZone: site.zone)
        }
        private func site() throws -> (zone: TimeZone, name: String) {
            if let known { return known }
            let fetched = try OfficeCommands.siteZone(core)
            known = fetched
            return fetched
        }
    }

    /// `--valid-from`/`--valid-until` as instants; the zone is asked for only when a time is site-local.
    static func validity(from: SiteTime?, until: SiteTime?, _ site: SiteZone) throws -> (from: Timestamp?, until: Timestamp?) {
        func instant(_ time: SiteTime?, _ name: String) throws -> Timestamp? {
            guard let time else { return nil }
            if case .instant(let date) = time { return Timestamp(date) }
            let zone = try site.zone()
            do throws(SiteTime.Failure) { return Timestamp(try time.instant(in: zone, name)) } catch { throw UsageError(error.message) }
        }
        let resolved = (from: try instant(from, "--valid-from"), until: try instant(until, "--valid-until"))
        if let start = resolved.from, let end = resolved.until, end.date < start.date {
            let clock = try site.clock()
            throw UsageError("--valid-until (\(clock.dateTime(end.date))) is before --valid-from (\(clock.dateTime(start.date))) in \(clock.zoneName): give an end after the start")
        }
        return resolved
    }
}

// MARK: - Register and edit

struct VisitorAddCommand: GatePassCommand {
    static let name = VisitorFieldOptions.name(required: true)
    static let invite = Flag("--invite", help: "Queue the invitation mail (pass attached, pass page linked) with the registration; needs --email.")
    static let configuration = CommandConfiguration(
        name: "gatepass visitor add",
        overview: "Register an expected visitor (OWNER/ADMIN) and print the visitor, with the short id the gate takes.",
        options: [name, VisitorFieldOptions.email, VisitorFieldOptions.phone, VisitorFieldOptions.company,
                  VisitorFieldOptions.purpose, VisitorFieldOptions.host, VisitorFieldOptions.hostEmail,
                  VisitorFieldOptions.approver, VisitorFieldOptions.requiresApproval, VisitorFieldOptions.validFrom,
                  VisitorFieldOptions.validUntil, invite, VisitorFieldOptions.confirmBlocked,
                  OutputOptions.flag("Print the visitor as the API shapes it.")],
        discussion: "Without --valid-from the pass starts at the start of today; without --valid-until it ends at the end of the day it starts. "
            + VisitorFieldOptions.timesNote)

    var visitor: APIClient.NewVisitor
    var approverEmail: String?
    var validFrom: SiteTime?
    var validUntil: SiteTime?
    var json: Bool

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        visitor = APIClient.NewVisitor(
            name: try arguments.required(Self.name), email: try arguments.value(VisitorFieldOptions.email),
            phone: try arguments.value(VisitorFieldOptions.phone), company: try arguments.value(VisitorFieldOptions.company),
            purpose: try arguments.value(VisitorFieldOptions.purpose), hostName: try arguments.value(VisitorFieldOptions.host),
            hostEmail: try arguments.value(VisitorFieldOptions.hostEmail),
            requiresApproval: arguments.has(VisitorFieldOptions.requiresApproval) ? true : nil,
            invite: arguments.has(Self.invite) ? true : nil,
            confirmBlocked: arguments.has(VisitorFieldOptions.confirmBlocked) ? true : nil)
        approverEmail = try arguments.value(VisitorFieldOptions.approver)
        validFrom = try arguments.value(VisitorFieldOptions.validFrom)
        validUntil = try arguments.value(VisitorFieldOptions.validUntil)
        json = arguments.has(OutputOptions.json)
    }

    func validate() throws(UsageError) {
        if visitor.invite == true, visitor.email == nil {
            throw UsageError("--invite needs --email: the invitation is mailed to the visitor")
        }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core()
        // Everything that can fail is asked before the visitor is created, the zone the text
        // is shown in included: a failure after it would hide a registration that was made.
        let site = try OfficeCommands.SiteZone(core, needed: !json)
        var body = visitor
        let times = try OfficeCommands.validity(from: validFrom, until: validUntil, site)
        (body.validFrom, body.validUntil) = times
        if let approverEmail { body.approverId = try core.approver(email: approverEmail).profile.id }
        let created = try OfficeCommands.explainingBlocklistMatch(confirmed: body.confirmBlocked == true) {
            try core.online { api, token throws(ClientError) in
                try api.createVisitor(token: token, body, idempotencyKey: OfficeCommands.idempotencyKey())
            }
        }
        try OfficeCommands.show(created, asJSON: json, site, context)
        if body.invite == true, !json { context.terminal.out("invitation queued (see gatepass mail list)") }
        return 0
    }
}

struct VisitorEditCommand: GatePassCommand {
    static let noRequiresApproval = Flag("--no-requires-approval", help: "The visitor no longer needs an approver at the gate.")
    static let clearEmail = clear(VisitorFieldOptions.email, "the visitor's email")
    static let clearPhone = clear(VisitorFieldOptions.phone, "the phone number")
    static let clearCompany = clear(VisitorFieldOptions.company, "the company")
    static let clearPurpose = clear(VisitorFieldOptions.purpose, "the purpose")
    static let clearHost = clear(VisitorFieldOptions.host, "the host's name")
    static let clearHostEmail = clear(VisitorFieldOptions.hostEmail, "the host's email (nobody is told of the arrival)")
    static let clearApprover = clear(VisitorFieldOptions.approver, "the assigned approver (any approver may decide)")
    static let name = VisitorFieldOptions.name(required: false)
    static let configuration = CommandConfiguration(
        name: "gatepass visitor edit",
        overview: "Change an EXPECTED, APPROVED or AWAITING_APPROVAL visitor: only the options given change. A new validity window re-issues the pass (the old pass and pass page stop working).",
        arguments: [VisitorArgument.id.spec],
        options: [name, VisitorFieldOptions.email, clearEmail, VisitorFieldOptions.phone, clearPhone,
                  VisitorFieldOptions.company, clearCompany, VisitorFieldOptions.purpose, clearPurpose,
                  VisitorFieldOptions.host, clearHost, VisitorFieldOptions.hostEmail, clearHostEmail,
                  VisitorFieldOptions.approver, clearApprover, VisitorFieldOptions.requiresApproval, noRequiresApproval,
                  VisitorFieldOptions.validFrom, VisitorFieldOptions.validUntil, VisitorFieldOptions.confirmBlocked,
                  OutputOptions.flag("Print the changed visitor as the API shapes it.")],
        discussion: "A --clear-… option removes that field (sends null); it cannot be combined with the option it clears. "
            + VisitorFieldOptions.timesNote)

    static func clear(_ option: Option<String>, _ what: String) -> Flag {
        Flag("--clear-" + option.spec.name.dropFirst(2), help: "Remove \(what).")
    }

    var id: VisitorReference
    var changes = VisitorChanges()
    var approver: FieldChange<String>
    var validFrom: SiteTime?
    var validUntil: SiteTime?
    var confirmBlocked: Bool
    var json: Bool

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        func change(_ option: Option<String>, _ clear: Flag) throws(UsageError) -> FieldChange<String> {
            let value = try arguments.value(option)
            guard !(value != nil && arguments.has(clear)) else {
                throw UsageError("choose one of \(option.spec.name) and \(clear.spec.name)")
            }
            if arguments.has(clear) { return .cleared }
            return value.map { .set($0) } ?? .unchanged
        }
        id = try arguments.required(VisitorArgument.id)
        changes.name = try arguments.value(Self.name).map { .set($0) } ?? .unchanged
        changes.email = try change(VisitorFieldOptions.email, Self.clearEmail)
        changes.phone = try change(VisitorFieldOptions.phone, Self.clearPhone)
        changes.company = try change(VisitorFieldOptions.company, Self.clearCompany)
        changes.purpose = try change(VisitorFieldOptions.purpose, Self.clearPurpose)
        changes.hostName = try change(VisitorFieldOptions.host, Self.clearHost)
        changes.hostEmail = try change(VisitorFieldOptions.hostEmail, Self.clearHostEmail)
        approver = try change(VisitorFieldOptions.approver, Self.clearApprover)
        switch (arguments.has(VisitorFieldOptions.requiresApproval), arguments.has(Self.noRequiresApproval)) {
        case (true, true): throw UsageError("choose one of --requires-approval and --no-requires-approval")
        case (true, false): changes.requiresApproval = .set(true)
        case (false, true): changes.requiresApproval = .set(false)
        case (false, false): break
        }
        validFrom = try arguments.value(VisitorFieldOptions.validFrom)
        validUntil = try arguments.value(VisitorFieldOptions.validUntil)
        confirmBlocked = arguments.has(VisitorFieldOptions.confirmBlocked)
        json = arguments.has(OutputOptions.json)
    }

    func validate() throws(UsageError) {
        guard !changes.isEmpty || approver != .unchanged || validFrom != nil || validUntil != nil else {
            throw UsageError("give at least one change, such as --valid-until TIME or --clear-email (see --help)")
        }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core()
        let site = try OfficeCommands.SiteZone(core, needed: !json)
        var body = changes
        let times = try OfficeCommands.validity(from: validFrom, until: validUntil, site)
        if let from = times.from { body.validFrom = .set(from) }
        if let until = times.until { body.validUntil = .set(until) }
        switch approver {
        case .set(let email): body.approverId = .set(try core.approver(email: email).profile.id)
        case .cleared: body.approverId = .cleared
        case .unchanged: break
        }
        // A new window re-issues the pass under a new short id; the one before is read first so
        // the person is told which pass stopped working.
        let before = validFrom == nil && validUntil == nil ? nil : try core.online { api, token throws(ClientError) in
            try api.visitor(token: token, id: id.pathValue)
        }
        let updated = try OfficeCommands.explainingBlocklistMatch(confirmed: confirmBlocked) {
            try core.online { api, token throws(ClientError) in
                try api.updateVisitor(token: token, id: (before?.id).map(VisitorReference.id)?.pathValue ?? id.pathValue, body,
                                      confirmBlocked: confirmBlocked, idempotencyKey: OfficeCommands.idempotencyKey())
            }
        }
        try OfficeCommands.show(updated, asJSON: json, site, context)
        if let before, before.shortId != updated.shortId {
            context.terminal.err("the pass was re-issued for the new window: the short id is now \(updated.shortId) and \(before.shortId) no longer works; send the new pass with: gatepass visitor invite \(updated.shortId)")
        }
        return 0
    }
}

// MARK: - Reads

struct VisitorListCommand: GatePassCommand {
    static let status = Option<VisitorStatus>("--status", value: "S", help: "Only visitors in this status: EXPECTED, AWAITING_APPROVAL, APPROVED, REJECTED, CHECKED_IN, CHECKED_OUT or CANCELLED.") {
        (text: String) throws(UsageError) in
        guard text.utf8.count <= 32, let status = VisitorStatus(rawValue: text.uppercased().replacingOccurrences(of: "-", with: "_")) else {
            throw UsageError("--status must be one of \(VisitorStatus.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return status
    }
    static let day = dayOption("--day", help: "Only visitors whose pass is valid on this day (site time): a date, today or tomorrow.")
    static let from = dayOption("--from", help: "Only visitors whose pass is valid on or after this day.")
    static let to = dayOption("--to", help: "Only visitors whose pass is valid on or before this day.")
    static let search = VisitorFieldOptions.text("--search", value: "TEXT", maxLength: 100,
                                                 help: "Only visitors whose name, email, phone, company or short id contains this text (any case).")
    static let limit = PageOptions.limit(of: "visitors")
    static let configuration = CommandConfiguration(
        name: "gatepass visitor list",
        overview: "List visitors, newest registration first, with their validity in site time (OWNER/ADMIN).",
        usage: "gatepass visitor list [--status S] [--day DAY | --from DAY --to DAY] [--search TEXT] [--limit N] [--json]",
        options: [status, day, from, to, search, limit, OutputOptions.flag("Print the API's page: {\"items\": [Visitor], \"nextCursor\"}.")],
        discussion: "A DAY is a date (2026-12-02), today or tomorrow: a calendar day in the organization's time zone. A visitor is listed when the pass is valid at any moment of it. --from or --to alone leaves the other end open.")

    /// A day as typed: a date, or one counted from today in the site's zone (known at run time).
    enum DayChoice: Equatable {
        case date(LocalDay)
        case fromToday(Int)

        func day(now: Date, in zone: TimeZone) -> LocalDay {
            switch self {
            case .date(let day): return day
            case .fromToday(let offset):
                var calendar = Calendar(identifier: .gregorian)
                calendar.timeZone = zone
                // Noon of today, so a day that starts at 01:00 (a clock change at midnight) still counts.
                let noon = calendar.date(bySettingHour: 12, minute: 0, second: 0, of: now) ?? now
                return LocalDay(containing: calendar.date(byAdding: .day, value: offset, to: noon) ?? noon, in: zone)
            }
        }
    }

    static func dayOption(_ name: String, help: String) -> Option<DayChoice> {
        Option(name, value: "DAY", help: help) { (text: String) throws(UsageError) in
            switch text.lowercased() {
            case "today": return .fromToday(0)
            case "tomorrow": return .fromToday(1)
            default:
                guard let day = LocalDay(text) else { throw UsageError("\(name) must be a day like 2026-12-02, today or tomorrow") }
                return .date(day)
            }
        }
    }

    var status: VisitorStatus?
    var from: DayChoice?
    var to: DayChoice?
    var search: String?
    var limit: Int
    var json: Bool

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        status = try arguments.value(Self.status)
        let day = try arguments.value(Self.day)
        from = try arguments.value(Self.from)
        to = try arguments.value(Self.to)
        if let day {
            guard from == nil, to == nil else { throw UsageError("--day is one day; give it, or --from and --to, not both") }
            (from, to) = (day, day)
        }
        search = try arguments.value(Self.search)
        limit = try arguments.value(Self.limit) ?? PageOptions.defaultLimit
        json = arguments.has(OutputOptions.json)
    }

    func validate() throws(UsageError) {
        if case .date(let first)? = from, case .date(let last)? = to, last.description < first.description {
            throw UsageError("--to (\(last)) is before --from (\(first))")
        }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core()
        let site = try OfficeCommands.SiteZone(core, needed: !json)
        func resolved(_ choice: DayChoice?) throws -> LocalDay? {
            guard let choice else { return nil }
            if case .date(let day) = choice { return day }
            return choice.day(now: context.clock.now(), in: try site.zone())
        }
        let (first, last) = (try resolved(from), try resolved(to))
        if let first, let last, last.description < first.description {
            throw UsageError("--to (\(last)) is before --from (\(first))")
        }
        let page = try core.online { api, token throws(ClientError) in
            try api.visitors(token: token, status: status, search: search, from: first?.description, to: last?.description, limit: limit)
        }
        if json {
            context.terminal.out(ClientCommands.json(page))
            return 0
        }
        let clock = try site.clock()
        if page.items.isEmpty {
            context.terminal.out("no visitors match")
        } else {
            for visitor in page.items {
                context.terminal.out(ClientCommands.visitorLine(visitor, now: context.clock.now(),
                                                                window: clock.window(from: visitor.validity.from, until: visitor.validity.until)))
            }
        }
        PageOptions.noteMore(page, of: "visitors", filtered: true, on: context.terminal)
        return 0
    }
}

struct VisitorShowCommand: GatePassCommand {
    static let configuration = CommandConfiguration(
        name: "gatepass visitor show", overview: "Show one visitor: every field, times in site time.",
        arguments: [VisitorArgument.id.spec], options: [OutputOptions.flag("Print the visitor as the API shapes it.")])

    var id: VisitorReference
    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) {
        id = try arguments.required(VisitorArgument.id)
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core()
        let visitor = try core.online { api, token throws(ClientError) in try api.visitor(token: token, id: id.pathValue) }
        try OfficeCommands.show(visitor, asJSON: json, try OfficeCommands.SiteZone(core), context)
        return 0
    }
}

// MARK: - Cancel, check out, invite

/// What tells `visitor cancel`, `checkout` and `invite` apart: one POST on the visitor each.
protocol VisitorActionKind {
    associatedtype Answer: Encodable
    static var verb: String { get }
    static var overview: String { get }
    /// What `--json` prints.
    static var jsonHelp: String { get }
    static func perform(_ api: APIClient, token: String, id: String, idempotencyKey: String) throws(ClientError) -> Answer
    /// The answer as one line for a person (made visible when printed).
    static func describe(_ answer: Answer) -> String
}

/// Cancel and check out answer the visitor.
protocol VisitorChangeKind: VisitorActionKind where Answer == Visitor {}

extension VisitorChangeKind {
    static var jsonHelp: String { "Print the visitor as the API shapes it." }
    static func describe(_ visitor: Visitor) -> String { "\(visitor.status.rawValue)  \(visitor.name) (\(visitor.shortId))" }
}

enum Cancelling: VisitorChangeKind {
    static let verb = "cancel"
    static let overview = "Cancel a visit: the pass and pass page stop working at once. A visitor already checked in or out cannot be cancelled."
    static func perform(_ api: APIClient, token: String, id: String, idempotencyKey: String) throws(ClientError) -> Visitor {
        try api.cancelVisitor(token: token, id: id, idempotencyKey: idempotencyKey)
    }
}

enum CheckingOut: VisitorChangeKind {
    static let verb = "checkout"
    static let overview = "Check a visitor out from the office (POST /api/visitors/ID/checkout): for a visitor who left without passing the gate's scanner. Only a CHECKED_IN visitor can be checked out."
    static func perform(_ api: APIClient, token: String, id: String, idempotencyKey: String) throws(ClientError) -> Visitor {
        try api.checkOutVisitor(token: token, id: id, idempotencyKey: idempotencyKey)
    }
}

enum Inviting: VisitorActionKind {
    static let verb = "invite"
    static let overview = "Mail the visitor the invitation (the pass as a PNG, the pass page's link, a calendar entry). Sending it again issues a new pass page; the old link stops working."
    static let jsonHelp = "Print the server's answer: {\"queued\", \"passURL\"}."
    static func perform(_ api: APIClient, token: String, id: String, idempotencyKey: String) throws(ClientError) -> InvitationAnswer {
        try api.inviteVisitor(token: token, id: id, idempotencyKey: idempotencyKey)
    }
    static func describe(_ answer: InvitationAnswer) -> String {
        "invitation queued (see gatepass mail list); pass page: \(answer.passURL)"
    }
}

typealias VisitorCancelCommand = VisitorActionCommand<Cancelling>
typealias VisitorCheckOutCommand = VisitorActionCommand<CheckingOut>
typealias VisitorInviteCommand = VisitorActionCommand<Inviting>

struct VisitorActionCommand<Kind: VisitorActionKind>: GatePassCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "gatepass visitor \(Kind.verb)", overview: Kind.overview, arguments: [VisitorArgument.id.spec],
                             options: [OutputOptions.flag(Kind.jsonHelp)])
    }

    var id: VisitorReference
    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) {
        id = try arguments.required(VisitorArgument.id)
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let answer = try context.core().online { api, token throws(ClientError) in
            try Kind.perform(api, token: token, id: id.pathValue, idempotencyKey: OfficeCommands.idempotencyKey())
        }
        context.terminal.out(json ? ClientCommands.json(answer) : TerminalText.visible(Kind.describe(answer)))
        return 0
    }
}

// MARK: - The pass

struct VisitorPassCommand: GatePassCommand {
    static let png = Option<String>("--png", value: "FILE", help: "Save the printable pass (PNG, A6 at 300 dpi) here.")
    static let svg = Option<String>("--svg", value: "FILE", help: "Save the pass as SVG here.")
    static let configuration = CommandConfiguration(
        name: "gatepass visitor pass",
        overview: "Save a visitor's pass to a file. The file holds personal data: it is written with mode 0600, through a temporary file renamed into place (an existing file is replaced whole, never left half written), and never through a symbolic link.",
        usage: "gatepass visitor pass ID (--png FILE | --svg FILE)",
        arguments: [VisitorArgument.id.spec], options: [png, svg])

    enum Format { case png, svg }

    var id: VisitorReference
    var format: Format
    var path: String

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        id = try arguments.required(VisitorArgument.id)
        switch (try arguments.value(Self.png), try arguments.value(Self.svg)) {
        case (let png?, nil): (format, path) = (.png, png)
        case (nil, let svg?): (format, path) = (.svg, svg)
        case (.some, .some): throw UsageError("choose one of --png FILE and --svg FILE")
        case (nil, nil): throw UsageError("give --png FILE or --svg FILE")
        }
        guard !path.isEmpty else { throw UsageError("the file name is empty") }
        guard !path.unicodeScalars.contains(where: TerminalText.needsSpelling) else {
            throw UsageError("the file name must not contain control or invisible characters")
        }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        // Checked before the request, so a path that cannot be written costs no download.
        do { _ = try PrivateFile.check(absolute) } catch { throw CommandFailure(Self.sentence(error)) }
        let bytes: [UInt8] = try context.core().online { api, token throws(ClientError) in
            switch format {
            case .png: return try api.passPNG(token: token, id: id.pathValue)
            case .svg:
                let svg = try api.passSVG(token: token, id: id.pathValue)
                guard svg.contains("<svg") else { throw .decoding("the pass is not an SVG image (\(svg.utf8.count) bytes)") }
                return Array(svg.utf8)
            }
        }
        do { _ = try PrivateFile.write(bytes, to: absolute, overwrite: true) } catch { throw CommandFailure(Self.sentence(error)) }
        context.terminal.out(visible: "saved the pass of \(id) to \(absolute) (\(bytes.count) bytes, mode 0600)")
        return 0
    }

    static func sentence(_ error: ConsoleError) -> String {
        switch error {
        case .refused(let message), .failed(let message): message
        default: error.sentence
        }
    }
}
