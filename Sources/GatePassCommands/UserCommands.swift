import Foundation
import GatePassClient
import GatePassCore
import GatePassServer

/// `gatepass user …`: the site's users through the API (OWNER/ADMIN, as logged in with
/// `gatepass login`); `user add --db` also bootstraps a database file before anyone can log in.
enum UserCommands {
    static let members: [GatePassCLI.Subcommand] = [
        .init("list", "The organization's users: role, scanning right, disabled, last login.", UserListCommand.self),
        .init("add", "Add a user (with --db: to a database file, for bootstrapping).", UserAddCommand.self),
        .init("update", "Change a user's name, role or scanning right, or enable them again.", UserUpdateCommand.self),
        .init("disable", "Disable a user: their sessions, scanner tokens and event streams end at once.", UserDisableCommand.self),
    ]

    static let role = Option<Role>("--role", value: "R", help: "OWNER, ADMIN, APPROVER or HOST.") { (text: String) throws(UsageError) in
        guard let role = Role(rawValue: text.uppercased()), role != .platformAdmin else {
            throw UsageError("--role must be OWNER, ADMIN, APPROVER or HOST")
        }
        return role
    }

    static let user = Argument<String>("USER", missing: "the user's id or email is required",
                                       help: "The user's id, or their email.")

    /// One line per user, for a person (text from outside is made visible when printed).
    static func describe(_ user: UserSummary, _ clock: SiteClock) -> String {
        var line = "\(user.profile.role.rawValue)  \(user.profile.name) <\(user.profile.email)>"
        if user.profile.role == .approver && user.profile.canScanCheckpoint { line += "  can scan" }
        if user.disabled { line += "  DISABLED" }
        line += "  last login \(user.lastLoginAt.map(clock.stamped) ?? "never")"
        return line + "  id \(user.profile.id)"
    }

    /// The id of the user `reference` names: an id as it is, an email looked up in the list.
    static func userId(_ reference: String, _ core: ClientCore) throws -> String {
        guard reference.contains("@") else { return reference }
        let email = reference.lowercased()
        if let user = try core.user(email: email) { return user.profile.id }
        throw CommandFailure("no user of your organization has the email \(email); see gatepass user list")
    }

    static func change(_ reference: String, _ changes: UserChanges, json: Bool, _ context: CommandContext) throws -> Int32 {
        let core = try context.core()
        let id = try userId(reference, core)
        let user = try core.online { api, token throws(ClientError) in
            try api.updateUser(token: token, id: id, changes, idempotencyKey: OfficeCommands.idempotencyKey())
        }
        context.terminal.out(json ? ClientCommands.json(user) : TerminalText.visible(describe(user, try OfficeCommands.SiteZone(core).clock())))
        return 0
    }
}

struct UserListCommand: GatePassCommand {
    static let limit = PageOptions.limit(of: "users")
    static let configuration = CommandConfiguration(
        name: "gatepass user list",
        overview: "The users of your organization, newest first (OWNER/ADMIN): role, whether an APPROVER can scan, disabled, last login.",
        options: [limit, OutputOptions.flag("Print the API's page: {\"items\": [Profile plus disabled, lastLoginAt], \"nextCursor\"}.")])

    var limit: Int
    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) {
        limit = try arguments.value(Self.limit) ?? PageOptions.defaultLimit
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core()
        let page = try core.online { api, token throws(ClientError) in try api.users(token: token, limit: limit) }
        if json {
            context.terminal.out(ClientCommands.json(page))
        } else {
            let clock = try OfficeCommands.SiteZone(core).clock()
            for user in page.items { context.terminal.out(visible: UserCommands.describe(user, clock)) }
            PageOptions.noteMore(page, of: "users", on: context.terminal)
        }
        return 0
    }
}

struct UserAddCommand: GatePassCommand {
    static let database = ServerOptions.database(
        "Add to this database instead (a SQLite file is created if missing): for the first OWNER, before anyone can log in.")
    static let email = Option<String>("--email", value: "E", required: true,
                                      help: "The user's email; they log in with a code sent to it.")
    static let name = Option<String>("--name", value: "N", required: true, help: "The user's full name.")
    static let role = Option<Role>("--role", value: "R", required: true,
                                   help: "OWNER, ADMIN, APPROVER or HOST (PLATFORM_ADMIN with --db only).") { (text: String) throws(UsageError) in
        guard let role = Role(rawValue: text.uppercased()) else {
            throw UsageError("--role must be OWNER, ADMIN, APPROVER, HOST or PLATFORM_ADMIN")
        }
        return role
    }
    static let organization = Option<String>(
        "--organization", value: "NAME",
        help: "With --db: the organization (default: \"Default\"), created with a \"Main gate\" checkpoint if new. Without, yours.")
    static let canScan = Flag("--can-scan", help: "Let an APPROVER obtain scanner tokens (owners and admins always can).")
    static let configuration = CommandConfiguration(
        name: "gatepass user add",
        overview: "Add a user to your organization through the server (an OWNER adds any role, an ADMIN an ADMIN, APPROVER or HOST). With --db, add them to a database file directly, creating the organization if needed.",
        usage: "gatepass user add [--db PATH|URL [--organization NAME] [--secret-file FILE]] --email E --name N --role OWNER|ADMIN|APPROVER|HOST|PLATFORM_ADMIN [--can-scan] [--json]",
        options: [database, email, name, role, organization, canScan,
                  OutputOptions.flag("Print the new user as the API shapes it (without --db)."), ServerOptions.secretFile])

    var database: String?
    var email: String
    var name: String
    var role: Role
    var organization: String?
    var canScan: Bool
    var json: Bool
    var secretFile: String?

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        secretFile = try arguments.value(ServerOptions.secretFile)
        database = try arguments.value(Self.database)
        email = try arguments.required(Self.email)
        name = try arguments.required(Self.name)
        role = try arguments.required(Self.role)
        organization = try arguments.value(Self.organization)
        canScan = arguments.has(Self.canScan)
        json = arguments.has(OutputOptions.json)
        if database == nil {
            if organization != nil { throw UsageError("--organization needs --db: through the server, users join your organization") }
            if role == .platformAdmin { throw UsageError("a PLATFORM_ADMIN is added with --db only") }
            if secretFile != nil { throw UsageError("--secret-file needs --db: the server keeps its own") }
        } else if json {
            throw UsageError("--json is for the server's answer; with --db there is none")
        }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        guard let database else {
            let core = try context.core()
            let user = try core.online { api, token throws(ClientError) in
                try api.createUser(token: token, NewUser(email: email, name: name, role: role, canScanCheckpoint: canScan ? true : nil),
                                   idempotencyKey: OfficeCommands.idempotencyKey())
            }
            context.terminal.out(json ? ClientCommands.json(user) : TerminalText.visible("added " + UserCommands.describe(user, try OfficeCommands.SiteZone(core).clock())))
            return 0
        }
        let organization = organization ?? "Default"
        let user = try AdministrationCommands.withStore(database, secretFile: secretFile) { store, audit in
            try Administration.addUser(store: store, email: email, name: name, role: role,
                                       organization: organization, canScan: canScan, now: Date(), audit: audit)
        }
        context.terminal.out(visible: "added \(user.email) (\(user.role.rawValue)\(user.principalKind.mayScan ? ", can scan" : "")) to \(organization); id \(user.id)")
        return 0
    }
}

struct UserUpdateCommand: GatePassCommand {
    static let name = Option<String>("--name", value: "N", help: "The user's new name.")
    static let canScan = Flag("--can-scan", help: "Let an APPROVER obtain scanner tokens.")
    static let cannotScan = Flag("--no-can-scan", help: "Take that right away (their scanner tokens stop).")
    static let enable = Flag("--enable", help: "Enable a disabled user again (they log in anew; old tokens stay ended).")
    static let configuration = CommandConfiguration(
        name: "gatepass user update",
        overview: "Change a user of your organization. An OWNER changes anyone to any role; an ADMIN changes ADMINs, APPROVERs and HOSTs, to those roles. Nobody changes their own role, and the last OWNER stays one.",
        arguments: [UserCommands.user.spec],
        options: [name, UserCommands.role, canScan, cannotScan, enable, OutputOptions.flag("Print the user as the API shapes it.")])

    var user: String
    var changes: UserChanges
    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) {
        user = try arguments.required(UserCommands.user)
        changes = UserChanges(name: try arguments.value(Self.name), role: try arguments.value(UserCommands.role))
        switch (arguments.has(Self.canScan), arguments.has(Self.cannotScan)) {
        case (true, true): throw UsageError("give --can-scan or --no-can-scan, not both")
        case (true, false): changes.canScanCheckpoint = true
        case (false, true): changes.canScanCheckpoint = false
        case (false, false): break
        }
        if arguments.has(Self.enable) { changes.disabled = false }
        guard changes != UserChanges() else {
            throw UsageError("nothing to change: give --name, --role, --can-scan, --no-can-scan or --enable")
        }
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 { try UserCommands.change(user, changes, json: json, context) }
}

struct UserDisableCommand: GatePassCommand {
    static let configuration = CommandConfiguration(
        name: "gatepass user disable",
        overview: "Disable a user of your organization: their login sessions, scanner tokens and event streams end at once and they cannot log in until enabled again (gatepass user update USER --enable). Nobody disables themselves, and the last OWNER cannot be disabled.",
        arguments: [UserCommands.user.spec], options: [OutputOptions.flag("Print the user as the API shapes it.")])

    var user: String
    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) {
        user = try arguments.required(UserCommands.user)
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        try UserCommands.change(user, UserChanges(disabled: true), json: json, context)
    }
}
