import Foundation
import GatePassCore
import GatePassMail

/// Everything `gatepass serve` can be told, with the documented defaults of
/// Config/server.json. Command-line flags override the file.
///
/// Each key is declared once: its property here holds the default, and its row in `keys`
/// holds its name, its meaning and the values it takes. The table reads the file (refusing a
/// key it does not list) and `validate` checks every row.
public struct ServerConfiguration: Decodable, Sendable, Equatable {
    public var host = "127.0.0.1"
    public var port: Int = 8080
    public var database = "gatepass.db"
    public var secretFile: String?
    public var passKeysFile: String?
    public var otpLifetimeSeconds: Int = 600
    public var otpMaxWrongTries: Int = 5
    public var otpSendsPerHour: Int = 5
    public var otpResendIntervalSeconds: Int = 30
    public var otpDeliveryCommand: String?
    public var tokenLifetimeSeconds: Int = 43_200
    public var scannerTokenLifetimeSeconds: Int = 2_592_000
    public var kioskTokenLifetimeDays: Int = 365
    public var enrolmentAttemptsPerMinute: Int = 10
    public var bodyLimitBytes: Int = 65_536
    public var threads: Int = 16
    public var idempotencyRetentionHours: Int = 24
    public var sqliteSynchronous = "FULL"
    public var sqliteBusyTimeoutMilliseconds: Int = 5_000
    public var metricsToken: String?
    public var timeZone: String?
    public var retentionDays: Int = Organization.defaultRetentionDays
    public var eventRetentionHours: Int = 720
    public var pushDeliveryRetentionHours: Int = 168
    public var mailLogRetentionHours: Int = 720
    public var eventPingSeconds: Int = 10
    public var pushFailAfterSeconds: Int = 300
    public var maxConnections: Int = 4_096
    public var maxConnectionsPerIP: Int = 64
    public var trustedProxies: [String] = []
    public var headerTimeoutSeconds: Int = 10
    public var bodyTimeoutSeconds: Int = 30
    public var keepAliveTimeoutSeconds: Int = 30
    public var maxPushTestWaits: Int = 32
    public var otpDeliveryTimeoutSeconds: Int = 10
    public var smtpURL: String?
    public var smtpUsername: String?
    public var smtpPasswordFile: String?
    public var smtpCAFile: String?
    public var mailFrom: String?
    public var publicBaseURL: String?
    public var mailDirectory: String?
    public var corsOrigins: [String] = []
    public var limits = LimitsConfiguration()

    public init() {}

    /// Every key of the file, in the order Config/server.json lists them. Every duration and
    /// count has an upper bound: a lifetime is added to the clock and stored as milliseconds, and
    /// an unbounded one overflowed at the first login (token lifetimes and retention
    /// periods at most ten years, a code's at most a day).
    public static let keys: [ConfigurationKey<ServerConfiguration>] = [
        .value("host", \.host, "Address to listen on (IPv4)."),
        .integer("port", \.port, 0...65_535, "TCP port; 0 picks a free one and prints it."),
        .value("database", \.database,
               "The database: a SQLite file (`PATH` or `sqlite:PATH`) or a PostgreSQL URL (`postgres://USER@HOST:PORT/DATABASE`, the password from PGPASSWORD or a passfile)."),
        .value("secretFile", \.secretFile, "Where the token/OTP signing secret lives; by default beside the database (`<db>.secret`)."),
        .value("passKeysFile", \.passKeysFile, "The pass keys (api.md \"Offline passes\"); default `<database>.pass-keys`."),
        .integer("otpLifetimeSeconds", \.otpLifetimeSeconds, 1...86_400, "OTP lifetime (api.md: 10 minutes)."),
        .integer("otpMaxWrongTries", \.otpMaxWrongTries, 1...100, "Wrong tries before a code dies (api.md: 5)."),
        .integer("otpSendsPerHour", \.otpSendsPerHour, 1...1_000, "Codes sent per email per hour (api.md: 5)."),
        .integer("otpResendIntervalSeconds", \.otpResendIntervalSeconds, 0...3_600,
                 "Minimum time between two codes for one email (api.md: 30 s)."),
        .value("otpDeliveryCommand", \.otpDeliveryCommand,
               "A program run for each code sent to a known user: the email as its only argument, the code on standard input (a sendmail wrapper, an SMS gateway script). Without it codes can only be read with --dev."),
        .integer("tokenLifetimeSeconds", \.tokenLifetimeSeconds, 1...315_360_000, "Login token lifetime (api.md: 12 hours)."),
        .integer("scannerTokenLifetimeSeconds", \.scannerTokenLifetimeSeconds, 1...315_360_000, "Scanner token lifetime (api.md: 30 days)."),
        .integer("kioskTokenLifetimeDays", \.kioskTokenLifetimeDays, 1...3650,
                 "An enrolled kiosk's credential lifetime (api.md: `kioskTokenLifetimeDays`, default 365)."),
        .integer("enrolmentAttemptsPerMinute", \.enrolmentAttemptsPerMinute, 1...100_000,
                 "Wrong kiosk enrolment codes the server takes per minute, from everyone together; beyond, 429 until the minute is over."),
        .integer("bodyLimitBytes", \.bodyLimitBytes, 1...67_108_864, "Largest request body accepted (api.md: 65,536 bytes)."),
        .integer("threads", \.threads, 1...256,
                 "HTTP worker threads. Writers wait for their commit, so more threads than cores lets more commits share one fsync."),
        .integer("idempotencyRetentionHours", \.idempotencyRetentionHours, 24...87_600,
                 "How long idempotency records are kept (api.md: at least 24 hours).", why: "(api.md)"),
        .value("sqliteSynchronous", \.sqliteSynchronous, "SQLite `synchronous` mode: FULL survives a power cut (see README).") {
            ["OFF", "NORMAL", "FULL", "EXTRA"].contains($0.uppercased()) ? nil : "must be OFF, NORMAL, FULL or EXTRA"
        },
        .integer("sqliteBusyTimeoutMilliseconds", \.sqliteBusyTimeoutMilliseconds, 0...600_000,
                 "How long SQLite waits for another process's lock before a request answers 503."),
        .value("metricsToken", \.metricsToken, "When set, /metrics needs `Authorization: Bearer <metricsToken>`."),
        .value("timeZone", \.timeZone, "IANA time zone for \"today\" (validity defaults, stats); default the machine's.") {
            $0.map { TimeZone(identifier: $0) != nil } ?? true ? nil : "must be an IANA zone such as Europe/Bucharest"
        },
        .integer("retentionDays", \.retentionDays, OrganizationRules.retentionDaysRange,
                 "The retention of organizations that set none (api.md \"Retention\"); the server writes it into the database at start, so that `gatepass admin retention --db` follows it."),
        .integer("eventRetentionHours", \.eventRetentionHours, 24...87_600,
                 "How long events (and so notification lists) are kept; api.md asks for at least 24 hours of replay.", why: "(api.md)"),
        .integer("pushDeliveryRetentionHours", \.pushDeliveryRetentionHours, 1...87_600,
                 "How long the push delivery log keeps a row (a delivery also goes with its event)."),
        // A mail is retried for up to 24 hours: its log row must outlive that.
        .integer("mailLogRetentionHours", \.mailLogRetentionHours, 24...87_600,
                 "How long the mail log keeps a sent or given-up mail (queued mail is never purged)."),
        .integer("eventPingSeconds", \.eventPingSeconds, 1...15,
                 "An idle event stream gets a `: ping` this often (api.md: at least every 15 s).", why: "(api.md)"),
        .integer("pushFailAfterSeconds", \.pushFailAfterSeconds, 1...604_800, "A push delivery still pending after this long is marked failed."),
        .integer("maxConnections", \.maxConnections, 16...1_000_000, "Open connections at most, event streams included."),
        .integer("maxConnectionsPerIP", \.maxConnectionsPerIP, 1...100_000,
                 "Open connections per client address at most (loopback included); `trustedProxies` are exempt, since behind a reverse proxy the proxy limits per client."),
        .value("trustedProxies", \.trustedProxies,
               "IPv4 addresses of reverse proxies: exempt from `maxConnectionsPerIP`, and their requests' client address is the one they forward.") { proxies in
            for proxy in proxies {
                var address = in_addr()
                if inet_pton(AF_INET, proxy, &address) != 1 {
                    return ": \(proxy.debugDescription) is not an IPv4 address such as 10.0.0.5"
                }
            }
            return nil
        },
        .integer("headerTimeoutSeconds", \.headerTimeoutSeconds, 1...3_600,
                 "A request's headers must be complete within this long (a deadline, not an idle timeout)."),
        .integer("bodyTimeoutSeconds", \.bodyTimeoutSeconds, 1...3_600, "A request's body must be complete within this long after its headers."),
        .integer("keepAliveTimeoutSeconds", \.keepAliveTimeoutSeconds, 1...3_600,
                 "A kept-alive connection must begin its next request within this long."),
        .integer("maxPushTestWaits", \.maxPushTestWaits, 1...10_000,
                 "`POST /api/admin/push-test` answers waiting at the same time at most; more get 503."),
        .integer("otpDeliveryTimeoutSeconds", \.otpDeliveryTimeoutSeconds, 1...600,
                 "An `otpDeliveryCommand` still running after this long is killed (and logged)."),
        .value("smtpURL", \.smtpURL,
               "The SMTP relay: `smtp://host:port` (STARTTLS required unless the host is loopback) or `smtps://host:port`. Without it mail is off (with `--dev`: written to `mailDirectory`).") { url in
            guard let url else { return nil }
            let parsed = URLComponents(string: url)
            return ["smtp", "smtps"].contains(parsed?.scheme?.lowercased() ?? "") && !(parsed?.host ?? "").isEmpty
                && parsed?.user == nil && parsed?.password == nil && (parsed?.path ?? "").count <= 1
                ? nil : "must be smtp://host:port or smtps://host:port, without credentials (use smtpUsername and smtpPasswordFile)"
        },
        .value("smtpUsername", \.smtpUsername, "The relay's AUTH user."),
        .value("smtpPasswordFile", \.smtpPasswordFile, "A file holding the SMTP password (first line); never the password itself."),
        .value("smtpCAFile", \.smtpCAFile, "A PEM file of CA certificates for the relay's TLS certificate (default: the system's)."),
        .value("mailFrom", \.mailFrom, "The sender of every mail, e.g. `Gate Pass <gate@example.com>` or `gate@example.com`.") {
            $0.map { MailAddress.parse($0) != nil } ?? true
                ? nil : "must be an address such as gate@example.com or Gate Pass <gate@example.com>"
        },
        .value("publicBaseURL", \.publicBaseURL,
               "The server's address as visitors reach it, for pass page links (`https://gate.example.com`).") { url in
            guard let url else { return nil }
            let parsed = URLComponents(string: url)
            return ["http", "https"].contains(parsed?.scheme?.lowercased() ?? "") && !(parsed?.host ?? "").isEmpty
                && parsed?.query == nil && parsed?.fragment == nil
                ? nil : "must be an http(s) address such as https://gate.example.com"
        },
        .value("mailDirectory", \.mailDirectory,
               "`--dev` without `smtpURL`: where each mail is written as an `.eml` file (default `mail/` beside the database)."),
        .value("corsOrigins", \.corsOrigins,
               "Web origins (`scheme://host[:port]`) whose pages may call `/api/*` from a browser (api.md \"Browser clients\"); none by default."),
        .block("limits", \.limits,
               "Token buckets on every write a principal can repeat (429 `RATE_LIMITED` with `Retry-After` beyond); the defaults are far above normal use.",
               keys: LimitsConfiguration.keys),
    ]

    // Every key is optional in the file: what it leaves out keeps its default.
    public init(from decoder: any Decoder) throws {
        self.init()
        try ConfigurationKeys.read(&self, from: decoder.container(keyedBy: ConfigurationKeyName.self), keys: Self.keys)
    }

    /// Reads a configuration file; every problem is named in the error.
    public static func load(path: String) throws(ConfigurationError) -> ServerConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(message: "cannot read the configuration file \(path)")
        }
        let configuration: ServerConfiguration
        do {
            configuration = try JSONDecoder().decode(ServerConfiguration.self, from: data)
        } catch let error as ConfigurationError {
            throw ConfigurationError(message: "\(path): \(error.message)")
        } catch {
            throw ConfigurationError(message: "\(path): \(JSONBody.describe(error))")
        }
        try configuration.validate()
        return configuration
    }

    /// Checks every key's value (the table), then the rules that join several keys.
    public func validate() throws(ConfigurationError) {
        if let problem = ConfigurationKeys.problem(of: self, keys: Self.keys) { throw ConfigurationError(message: problem) }
        func require(_ condition: Bool, _ message: String) throws(ConfigurationError) {
            if !condition { throw ConfigurationError(message: message) }
        }
        // Every server of a PostgreSQL database signs and checks with one secret: it is named,
        // never made per machine (DatabaseFiles).
        _ = try DatabaseFiles(database: database, secretFile: secretFile, passKeysFile: passKeysFile).secretFile()
        for origin in corsOrigins { _ = try WebOrigin(configured: origin) }
        if smtpURL != nil {
            try require(mailFrom != nil, "mailFrom is required with smtpURL (the sender of every mail)")
            try require(publicBaseURL != nil, "publicBaseURL is required with smtpURL (the address visitors open their pass page at)")
        }
        try require(smtpPasswordFile == nil || smtpUsername != nil, "smtpPasswordFile needs smtpUsername")
    }

    public var resolvedTimeZone: TimeZone { timeZone.flatMap(TimeZone.init(identifier:)) ?? .current }
    /// The database and its state files (checked by `validate`, so a validated configuration
    /// never traps here).
    public var files: DatabaseFiles {
        guard let files = try? DatabaseFiles(database: database, secretFile: secretFile, passKeysFile: passKeysFile),
              (try? files.secretFile()) != nil
        else { preconditionFailure("an unvalidated configuration") }
        return files
    }
    public var databaseLocation: DatabaseLocation { files.location }
    public var resolvedSecretFile: String { (try? files.secretFile()) ?? "" }
    public var resolvedAuditHeadFile: String { (try? files.auditHeadFile()) ?? "" }
    var resolvedStateFolder: String { (try? files.stateFolder()) ?? "." }
    public var resolvedPassKeysFile: String { (try? files.passKeysFile()) ?? "" }
}

/// The `limits` block: token buckets, per server process, on the writes a principal can
/// repeat (`RateLimiter`). Each rate is sustained per second, its burst what a full bucket
/// holds. `enabled: false` turns off the load limits, for benchmarks; the limits that are
/// security (per client address on unauthenticated routes, the OTP and enrolment limits,
/// the connection limits) stay.
public struct LimitsConfiguration: Decodable, Sendable, Equatable {
    public var enabled = true
    public var scannerCheckInsPerSecond: Int = 20
    public var scannerCheckInBurst: Int = 200
    public var offlineReplaysPerSecond: Int = 500
    public var offlineReplayBurst: Int = 10_000
    public var userWritesPerSecond: Int = 10
    public var userWriteBurst: Int = 600
    public var hostInvitationsPerHour: Int = 200
    public var hostInvitationsPerDay: Int = 1_000
    public var addressWritesPerSecond: Int = 10
    public var addressWriteBurst: Int = 1_000
    public var unknownScansPerGatePerDay: Int = 10_000

    public init() {}

    public init(from decoder: any Decoder) throws {
        self.init()
        try ConfigurationKeys.read(&self, from: decoder.container(keyedBy: ConfigurationKeyName.self), keys: Self.keys)
    }

    static let keys: [ConfigurationKey<LimitsConfiguration>] = [
        .value("enabled", \.enabled, "false turns the load limits off (benchmarks); the security limits stay."),
        .integer("scannerCheckInsPerSecond", \.scannerCheckInsPerSecond, 1...1_000_000, "Online check-ins per scanner token per second."),
        .integer("scannerCheckInBurst", \.scannerCheckInBurst, 1...10_000_000, "Online check-ins a scanner token may send at once."),
        .integer("offlineReplaysPerSecond", \.offlineReplaysPerSecond, 1...1_000_000,
                 "Replayed offline check-ins (`offline: true`) per scanner token per second: a bucket of their own."),
        .integer("offlineReplayBurst", \.offlineReplayBurst, 1...10_000_000, "Replayed offline check-ins a scanner token may send at once."),
        .integer("userWritesPerSecond", \.userWritesPerSecond, 1...1_000_000, "Writes per user (or scanner token) and route per second."),
        .integer("userWriteBurst", \.userWriteBurst, 1...10_000_000, "Writes per user and route at once (scripts create 500 visitors in a row)."),
        .integer("hostInvitationsPerHour", \.hostInvitationsPerHour, 1...10_000_000,
                 "Invitation mails a HOST may have sent per hour (OWNER and ADMIN are not capped)."),
        .integer("hostInvitationsPerDay", \.hostInvitationsPerDay, 1...10_000_000, "Invitation mails a HOST may have sent per day."),
        .integer("addressWritesPerSecond", \.addressWritesPerSecond, 1...1_000_000,
                 "Unauthenticated writes (send-otp, verify-otp, kiosk enrolment) per client address and route per second; stays on with enabled false."),
        .integer("addressWriteBurst", \.addressWriteBurst, 1...10_000_000, "Unauthenticated writes per client address and route at once."),
        .integer("unknownScansPerGatePerDay", \.unknownScansPerGatePerDay, 0...100_000_000,
                 "Scans of unknown text (NOT_FOUND, INVALID of no visitor) a gate stores one by one per site-local day; beyond, only counted; kept with enabled false."),
    ]
}

public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
