import Foundation
import GatePassCore
import GatePassServer

/// `gatepass user add` and `gatepass checkpoint add`: bootstrapping on the database file.
enum AdministrationCommands {
    static let userAddHelp = HelpText(
        overview: "Add a user to a Gate Pass database file, creating its organization if needed.",
        usage: "gatepass user add --db PATH --email E --name N --role OWNER|ADMIN|APPROVER|PLATFORM_ADMIN [--organization NAME] [--can-scan]",
        options: [
            ("--db PATH", "The SQLite database file (created if missing)."),
            ("--email E", "The user's email; they log in with a code sent to it."),
            ("--name N", "The user's full name."),
            ("--role R", "OWNER, ADMIN, APPROVER or PLATFORM_ADMIN."),
            ("--organization NAME", "The organization (default: \"Default\"); created with a \"Main gate\" checkpoint if new."),
            ("--can-scan", "Let an APPROVER obtain scanner tokens (owners and admins always can)."),
        ])

    static let checkpointAddHelp = HelpText(
        overview: "Add a checkpoint (a gate) to an organization in a Gate Pass database file.",
        usage: "gatepass checkpoint add --db PATH --organization NAME --name N",
        options: [
            ("--db PATH", "The SQLite database file."),
            ("--organization NAME", "The organization's name."),
            ("--name N", "The checkpoint's name, unique in its organization."),
        ])

    static func user(_ arguments: [String], terminal: any Terminal) throws -> Int32 {
        guard arguments.first == "add" else {
            if arguments.first == "--help" || arguments.first == "-h" { terminal.out(userAddHelp.rendered); return 0 }
            throw UsageError("the user command has one subcommand: gatepass user add")
        }
        var reader = ArgumentReader(Array(arguments.dropFirst()))
        if reader.wantsHelp { terminal.out(userAddHelp.rendered); return 0 }
        let database = try reader.requiredOption("--db")
        let email = try reader.requiredOption("--email")
        let name = try reader.requiredOption("--name")
        let roleText = try reader.requiredOption("--role")
        let organization = try reader.option("--organization") ?? "Default"
        let canScan = reader.flag("--can-scan")
        try reader.finish()
        guard let role = Role(rawValue: roleText.uppercased()) else {
            throw UsageError("--role must be OWNER, ADMIN, APPROVER or PLATFORM_ADMIN")
        }
        let store = try openStore(database)
        defer { store.close() }
        do {
            let user = try Administration.addUser(store: store, email: email, name: name, role: role,
                                                  organization: organization, canScan: canScan, now: Date())
            terminal.out(visible: "added \(user.email) (\(user.role.rawValue)\(user.principalKind.mayScan ? ", can scan" : "")) to \(organization); id \(user.id)")
            return 0
        } catch let failure as Administration.Failure {
            throw CommandFailure(failure.message)
        }
    }

    static func checkpoint(_ arguments: [String], terminal: any Terminal) throws -> Int32 {
        guard arguments.first == "add" else {
            if arguments.first == "--help" || arguments.first == "-h" { terminal.out(checkpointAddHelp.rendered); return 0 }
            throw UsageError("the checkpoint command has one subcommand: gatepass checkpoint add")
        }
        var reader = ArgumentReader(Array(arguments.dropFirst()))
        if reader.wantsHelp { terminal.out(checkpointAddHelp.rendered); return 0 }
        let database = try reader.requiredOption("--db")
        let organization = try reader.requiredOption("--organization")
        let name = try reader.requiredOption("--name")
        try reader.finish()
        guard FileManager.default.fileExists(atPath: database) else {
            throw CommandFailure("no database at \(database); create it with 'gatepass user add' first")
        }
        let store = try openStore(database)
        defer { store.close() }
        do {
            let checkpoint = try Administration.addCheckpoint(store: store, organization: organization, name: name, now: Date())
            terminal.out(visible: "added checkpoint \(checkpoint.name) to \(organization); id \(checkpoint.id)")
            return 0
        } catch let failure as Administration.Failure {
            throw CommandFailure(failure.message)
        }
    }

    static func openStore(_ path: String) throws -> ServerDatabase {
        do {
            return try ServerDatabase(path: path)
        } catch {
            throw CommandFailure("cannot open the database \(path): \(error)")
        }
    }
}
