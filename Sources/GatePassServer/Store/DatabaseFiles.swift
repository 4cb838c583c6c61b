import Foundation

/// A database and the state files that go with it, named the one way the server and every
/// `--db` command name them. With SQLite they sit beside the file (`<db>.secret`,
/// `<db>.pass-keys`, `<db>.audit-head`). With PostgreSQL there is no file to sit beside, and
/// every server of the database must read the same ones: the secret is named (`secretFile`,
/// `--secret-file`) and the others default beside it (`gatepass.pass-keys`,
/// `gatepass.audit-head` in its folder).
public struct DatabaseFiles: Sendable, Equatable {
    public let location: DatabaseLocation
    private let namedSecretFile: String?
    private let namedPassKeysFile: String?

    /// - Throws: `ConfigurationError` for a location `DatabaseLocation` refuses.
    public init(database: String, secretFile: String? = nil, passKeysFile: String? = nil) throws(ConfigurationError) {
        location = try DatabaseLocation(database)
        namedSecretFile = secretFile
        namedPassKeysFile = passKeysFile
    }

    /// The path the state files are named after (see the type's comment); nil for PostgreSQL
    /// without a named secret.
    private var stem: String? {
        switch location {
        case .sqlite(let path): return path
        case .postgres: return namedSecretFile.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path + "/gatepass" }
        }
    }

    private func named(_ suffix: String, what: String) throws(ConfigurationError) -> String {
        guard let stem else {
            throw ConfigurationError(message: "a PostgreSQL database's \(what) is found beside its secret: name the secret (secretFile, --secret-file), which every server of the database shares")
        }
        return stem + suffix
    }

    /// The secret: token signing, OTP codes, the audit key.
    public func secretFile() throws(ConfigurationError) -> String {
        if let namedSecretFile { return namedSecretFile }
        return try named(".secret", what: "secret")
    }

    /// The pass keys (api.md "Offline passes").
    public func passKeysFile() throws(ConfigurationError) -> String {
        if let namedPassKeysFile { return namedPassKeysFile }
        return try named(".pass-keys", what: "pass keys file")
    }

    /// The audit log's head, kept outside the database so a truncation of the log shows.
    public func auditHeadFile() throws(ConfigurationError) -> String { try named(".audit-head", what: "audit head") }

    /// The folder other defaults (the `--dev` mail folder) go in: the SQLite file's, or the secret's.
    public func stateFolder() throws(ConfigurationError) -> String {
        URL(fileURLWithPath: try named("", what: "state folder")).deletingLastPathComponent().path
    }

    /// Opens (migrating) the database.
    public func open(synchronous: String = "FULL", busyTimeoutMilliseconds: Int32 = 5_000) throws -> ServerDatabase {
        try ServerDatabase.open(location, synchronous: synchronous, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
    }
}
