import Foundation
import GatePassCore

/// Bootstrapping on the database file directly (`gatepass user add`, `checkpoint add`,
/// `serve --demo-data`), for before anyone can log in.
public enum Administration {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// Adds a user, creating its organization (with the default checkpoint) if needed.
    public static func addUser(store: ServerDatabase, email rawEmail: String, name rawName: String, role: Role,
                               organization: String, canScan: Bool, now: Date) throws -> Profile {
        let email: String
        let name: String
        let organizationName: String
        do {
            email = try Field.email(rawEmail, required: true)!
            name = try Field.requiredText(rawName, "name")
            organizationName = try Field.requiredText(organization, "organization")
        } catch {
            throw Failure(message: error.message)
        }
        return try store.write { tx in
            if try tx.directory.user(email: email) != nil {
                throw Failure(message: "a user with email \(email) already exists")
            }
            let organizationId = try tx.directory.organizationId(named: organizationName)
                ?? tx.directory.createOrganization(name: organizationName, now: now)
            return try tx.directory.createUser(organizationId: organizationId, email: email, name: name, role: role,
                                               canScan: canScan, now: now)
        }
    }

    public static func addCheckpoint(store: ServerDatabase, organization: String, name rawName: String, now: Date) throws -> Checkpoint {
        let name: String
        do {
            name = try Field.requiredText(rawName, "name", maxLength: 100)
        } catch {
            throw Failure(message: error.message)
        }
        return try store.write { tx in
            guard let organizationId = try tx.directory.organizationId(named: organization) else {
                throw Failure(message: "no organization named \(organization); add a user to create it")
            }
            if try tx.checkpoints.exists(named: name, organizationId: organizationId) {
                throw Failure(message: "\(organization) already has a checkpoint named \(name)")
            }
            return try tx.checkpoints.create(organizationId: organizationId, name: name, now: now)
        }
    }
}
