import Foundation

/// Where the server's database is, as `--db` and the configuration's `database` name it:
/// `postgres://…` or `postgresql://…` (a PostgreSQL database several instances may share),
/// `sqlite:PATH`, or a bare path (a SQLite file, the default).
public enum DatabaseLocation: Equatable, Sendable {
    case sqlite(path: String)
    case postgres(url: String)

    /// - Throws: `ConfigurationError` for an empty location, or a PostgreSQL URL that carries
    ///   a password: it would be seen in `ps` and shell history, so the password comes from
    ///   libpq's own `PGPASSWORD` or passfile (`~/.pgpass`, `PGPASSFILE`) instead.
    public init(_ text: String) throws(ConfigurationError) {
        if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            guard let url = URLComponents(string: text), url.host?.isEmpty == false || url.path.count > 1 else {
                throw ConfigurationError(message: "database \(text.debugDescription) is not a PostgreSQL URL (postgres://USER@HOST:PORT/DATABASE)")
            }
            let namesPassword = url.password != nil
                || (url.queryItems ?? []).contains { $0.name.lowercased() == "password" }
            guard !namesPassword else {
                throw ConfigurationError(message: "the PostgreSQL URL must not hold the password: set PGPASSWORD or use a passfile (~/.pgpass or PGPASSFILE)")
            }
            self = .postgres(url: text)
        } else if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw ConfigurationError(message: "database sqlite: must name a file") }
            self = .sqlite(path: path)
        } else {
            guard !text.isEmpty else { throw ConfigurationError(message: "database must name a file or a postgres:// URL") }
            self = .sqlite(path: text)
        }
    }

    /// The location as it may be logged: the URL with no password (there is none, see `init`).
    public var description: String {
        switch self {
        case .sqlite(let path): return path
        case .postgres(let url): return url
        }
    }
}

extension ServerDatabase {
    /// Opens (migrating) the database at `location`.
    /// - Parameter synchronous, busyTimeoutMilliseconds, serving, retryTimer: SQLite's settings
    ///   (see `init(path:)`); `serving` for `gatepass serve`, never for a command reading a copy.
    public static func open(_ location: DatabaseLocation, synchronous: String = "FULL",
                            busyTimeoutMilliseconds: Int32 = 5_000, serving: Bool = false,
                            retryTimer: any RetryTimer = DispatchRetryTimer()) throws -> ServerDatabase {
        switch location {
        case .sqlite(let path):
            return try ServerDatabase(path: path, synchronous: synchronous, busyTimeoutMilliseconds: busyTimeoutMilliseconds,
                                      serving: serving, retryTimer: retryTimer)
        case .postgres(let url):
            return ServerDatabase(engine: try PostgresEngine(url: url))
        }
    }
}
