import Foundation
import GatePassCore
import GatePassServer

/// `gatepass keys …`: the pass keys (api.md "Offline passes"), on the keys file beside a
/// database. A serving instance sees a change within a second, and re-issues the passes of
/// a revoked key (their invitations re-sent) within a few seconds.
enum KeysCommands {
    static let members: [GatePassCLI.Subcommand] = [
        .init("list", "List the pass keys of each organization: id, purpose, made, retired, revoked.", KeysListCommand.self),
        .init("rotate", "Retire an organization's current pass keys and make new ones (old passes stay valid).",
              KeysRotateCommand.self),
        .init("revoke", "Revoke a leaked pass key: its passes are refused everywhere and re-issued.", KeysRevokeCommand.self),
    ]

    static let database = ServerOptions.database("The database (its organizations).", required: true)
    static let keysFile = Option<String>("--keys-file", value: "FILE",
                                         help: "The pass keys file (default <db>.pass-keys, as gatepass serve uses).")
    static let organization = Option<String>("--organization", value: "NAME",
                                             help: "The organization's name (needed when the database has more than one).")

    struct Target {
        var keyring: PassKeyring
        var organizations: [(id: String, name: String)]

        func organization(named name: String?) throws -> (id: String, name: String) {
            if let name {
                guard let found = organizations.first(where: { $0.name == name }) else {
                    throw CommandFailure("no organization named \(name) in the database")
                }
                return found
            }
            guard organizations.count == 1 else {
                throw CommandFailure(organizations.isEmpty ? "the database has no organization yet; add a user first"
                                     : "the database has \(organizations.count) organizations: name one with --organization")
            }
            return organizations[0]
        }
    }

    static func open(database: String, keysFile: String?) throws -> Target {
        try AdministrationCommands.requireExisting(database)
        let files = try AdministrationCommands.databaseFiles(database, passKeysFile: keysFile)
        let store = try AdministrationCommands.openStore(files)
        defer { store.close() }
        do {
            return Target(keyring: try PassKeyring(path: try files.passKeysFile()),
                          organizations: try Administration.organizations(store: store))
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure("cannot open the pass keys: \(error)")
        }
    }

    static func line(_ key: PassKey) -> String {
        var text = "\(key.id)  \(key.purpose.rawValue)  made \(key.createdAt)"
        if let retired = key.retiredAt { text += "  retired \(retired)" }
        if let revoked = key.revokedAt { text += "  REVOKED \(revoked)" }
        if key.retiredAt == nil && key.revokedAt == nil { text += "  current" }
        return text
    }
}

struct KeysListCommand: GatePassCommand {
    static let configuration = CommandConfiguration(
        name: "gatepass keys list",
        overview: "List the pass keys of each organization of a database file (public facts only: no private key is printed).",
        options: [KeysCommands.database, KeysCommands.keysFile])

    var database: String
    var keysFile: String?

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        database = try arguments.required(KeysCommands.database)
        keysFile = try arguments.value(KeysCommands.keysFile)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let target = try KeysCommands.open(database: database, keysFile: keysFile)
        for organization in target.organizations {
            context.terminal.out(visible: organization.name)
            for key in try target.keyring.publicKeys(organizationId: organization.id, now: context.clock.now()) {
                context.terminal.out(visible: "  " + KeysCommands.line(key))
            }
        }
        return 0
    }
}

struct KeysRotateCommand: GatePassCommand {
    static let purpose = Option<PassKeyPurpose>("--purpose", value: "P",
                                                help: "Only the key of this purpose: admit or approval (default both).") {
        (text: String) throws(UsageError) in
        guard let purpose = PassKeyPurpose(rawValue: text) else { throw UsageError("--purpose must be admit or approval") }
        return purpose
    }
    static let configuration = CommandConfiguration(
        name: "gatepass keys rotate",
        overview: "Retire an organization's current pass keys and make new ones. Passes drawn from now on carry the new key; passes signed with a retired key stay valid until they end, online and at offline kiosks.",
        options: [KeysCommands.database, KeysCommands.keysFile, KeysCommands.organization, purpose])

    var database: String
    var keysFile: String?
    var organization: String?
    var purpose: PassKeyPurpose?

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        database = try arguments.required(KeysCommands.database)
        keysFile = try arguments.value(KeysCommands.keysFile)
        organization = try arguments.value(KeysCommands.organization)
        purpose = try arguments.value(Self.purpose)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let target = try KeysCommands.open(database: database, keysFile: keysFile)
        let site = try target.organization(named: organization)
        let changes = try target.keyring.rotate(organizationId: site.id, purposes: purpose.map { [$0] } ?? PassKeyPurpose.allCases,
                                                now: context.clock.now())
        for change in changes {
            context.terminal.out(visible: "\(site.name): \(change.purpose.rawValue) key \(change.created ?? "?") is current"
                                 + (change.retired.map { "; \($0) retired (its passes stay valid until they end)" } ?? ""))
        }
        return 0
    }
}

struct KeysRevokeCommand: GatePassCommand {
    static let key = Argument<String>("KEY", help: "The key's id, as gatepass keys list shows it.") { (text: String) throws(UsageError) in
        guard SignedPassText.isKeyId(text) else { throw UsageError("KEY must be a pass key id: 1 to 4 characters of 0-9 and A-Z") }
        return text
    }
    static let configuration = CommandConfiguration(
        name: "gatepass keys revoke",
        overview: "Revoke a pass key that leaked: every pass it signed is refused, online and at offline kiosks once they sync. A current key is replaced by a new one; the server re-issues its passes and re-sends their invitations within a few seconds (at its next start if it is not running).",
        arguments: [key.spec], options: [KeysCommands.database, KeysCommands.keysFile])

    var key: String
    var database: String
    var keysFile: String?

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        key = try arguments.required(Self.key)
        database = try arguments.required(KeysCommands.database)
        keysFile = try arguments.value(KeysCommands.keysFile)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let target = try KeysCommands.open(database: database, keysFile: keysFile)
        let change: PassKeyring.Change
        do {
            change = try target.keyring.revoke(keyId: key, now: context.clock.now())
        } catch {
            throw CommandFailure("\(error)")
        }
        let site = target.organizations.first { $0.id == change.organizationId }?.name ?? change.organizationId
        context.terminal.out(visible: "\(site): \(change.purpose.rawValue) key \(key) revoked"
                             + (change.created.map { "; \($0) is the new current key" } ?? "")
                             + ". The server re-issues its passes and re-sends their invitations.")
        return 0
    }
}
