import Foundation
import GatePassCore

/// `gatepass audit verify --db PATH|URL`: the chain of a database, checked with the key from
/// its server secret (a file outside the database) and the head kept beside it.
public enum AuditVerification {
    /// - Parameters:
    ///   - database: a SQLite path or a PostgreSQL URL (`DatabaseLocation`).
    ///   - secretFile: the server's secret (default `<database>.secret`; required with
    ///     PostgreSQL); it must exist: a verification never makes a new one.
    public static func verify(database: String, secretFile: String? = nil) throws -> AuditVerdict {
        let files = try DatabaseFiles(database: database, secretFile: secretFile)
        let secretPath = try files.secretFile()
        guard FileManager.default.fileExists(atPath: secretPath) else {
            throw ConfigurationError(message: "no server secret at \(secretPath): the audit key comes from it (give --secret-file)")
        }
        let secret = try ServerSecret.loadOrCreate(path: secretPath)
        let head = try AuditHead.read(path: try files.auditHeadFile())
        let store = try files.open()
        defer { store.close() }
        return try AuditVerifier.verify(store, chain: AuditChain(key: secret.key(for: "audit-chain")), head: head)
    }
}
