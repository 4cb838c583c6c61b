import Foundation
import GatePassCore

/// `gatepass audit verify --db PATH`: the chain of a database file, checked with the key from
/// its server secret (a file outside the database) and the head kept beside it.
public enum AuditVerification {
    /// - Parameters:
    ///   - secretFile: the server's secret (default `<database>.secret`); it must exist: a
    ///     verification never makes a new one.
    public static func verify(databasePath: String, secretFile: String? = nil) throws -> AuditVerdict {
        let secretPath = secretFile ?? databasePath + ".secret"
        guard FileManager.default.fileExists(atPath: secretPath) else {
            throw ConfigurationError(message: "no server secret at \(secretPath): the audit key comes from it (give --secret-file)")
        }
        let secret = try ServerSecret.loadOrCreate(path: secretPath)
        let head = try AuditHead.read(path: AuditHead.path(forDatabase: databasePath))
        let store = try ServerDatabase(path: databasePath)
        defer { store.close() }
        return try AuditVerifier.verify(store, chain: AuditChain(key: secret.key(for: "audit-chain")), head: head)
    }
}
