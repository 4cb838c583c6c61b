import Foundation
import GatePassCore

/// Bootstrapping on the database file directly (`gatepass user add`, `checkpoint add`,
/// `serve --demo-data`), for before anyone can log in.
public enum Administration {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// The audit log of a database file, for changes made on the file directly: they are
    /// recorded by `system`, chained under the key of the server's secret like the server's own.
    public struct Audit: Sendable {
        let log: AuditLog

        /// Takes the audit head over as `serve` does at start (moved forward when it lags,
        /// signed when an earlier version left it unsigned), so that these changes move it on.
        /// - Parameters:
        ///   - files: the database's state files; its secret is made if missing, as
        ///     `gatepass serve` would.
        ///   - store: the database, open.
        /// - Throws: `AuditHeadError` when the head does not hold (missing on a log with
        ///   entries, not signed, ahead of the log): the change is not made, as `serve` would not start.
        public init(files: DatabaseFiles, store: ServerDatabase, now: Date) throws {
            let secret = try ServerSecret.loadOrCreate(path: try files.secretFile())
            log = AuditLog(chain: AuditChain(key: secret.key(for: "audit-chain")), headPath: try files.auditHeadFile())
            try log.takeOver(store, now: now, recreate: false, requirePrivate: false)
        }

        func record(_ action: AuditAction, id: String, _ values: AuditValues, organizationId: String, at time: Date,
                    _ tx: any Transaction) throws {
            let entry = AuditEntry(id: newIdentifier(), at: time, actorKind: .system, actorId: nil, action: action.rawValue,
                                   entity: action.entity, entityId: id, before: values.before, after: values.after)
            try log.append(entry, organizationId: organizationId, tx)
        }
    }

    /// Adds a user, creating its organization (with the default checkpoint) if needed;
    /// recorded in `audit` when given (tests that seed a store leave it out).
    public static func addUser(store: ServerDatabase, email rawEmail: String, name rawName: String, role: Role,
                               organization: String, canScan: Bool, now: Date, audit: Audit? = nil) throws -> Profile {
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
        let user = try store.write { tx in
            if try tx.directory.user(email: email) != nil {
                throw Failure(message: "a user with email \(email) already exists")
            }
            let organizationId = try tx.directory.organizationId(named: organizationName)
                ?? tx.directory.createOrganization(name: organizationName, now: now)
            let user = try tx.directory.createUser(organizationId: organizationId, email: email, name: name, role: role,
                                                   canScan: canScan, now: now)
            try audit?.record(.userCreate, id: user.id, .created(user), organizationId: organizationId, at: now, tx)
            return user
        }
        try audit?.log.committed(store)
        return user
    }

    public static func addCheckpoint(store: ServerDatabase, organization: String, name rawName: String, now: Date,
                                     audit: Audit? = nil) throws -> Checkpoint {
        let name: String
        do {
            name = try Field.requiredText(rawName, "name", maxLength: 100)
        } catch {
            throw Failure(message: error.message)
        }
        let checkpoint = try store.write { tx in
            guard let organizationId = try tx.directory.organizationId(named: organization) else {
                throw Failure(message: "no organization named \(organization); add a user to create it")
            }
            if try tx.checkpoints.exists(named: name, organizationId: organizationId) {
                throw Failure(message: "\(organization) already has a checkpoint named \(name)")
            }
            let checkpoint = try tx.checkpoints.create(organizationId: organizationId, name: name, now: now)
            try audit?.record(.checkpointCreate, id: checkpoint.id, .created(checkpoint), organizationId: organizationId,
                              at: now, tx)
            return checkpoint
        }
        try audit?.log.committed(store)
        return checkpoint
    }
}

extension Administration {
    /// The organizations of a database file, by name (`gatepass keys` names them).
    public static func organizations(store: ServerDatabase) throws -> [(id: String, name: String)] {
        try store.read { tx in
            try tx.directory.organizationIds().compactMap { id in
                try tx.directory.organization(id: id).map { (id, $0.name) }
            }
        }
    }
}
