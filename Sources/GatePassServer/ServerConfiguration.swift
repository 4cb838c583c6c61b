import Foundation
import GatePassMail

/// Everything `gatepass serve` can be told, with the documented defaults of
/// Config/server.json. Command-line flags override the file.
public struct ServerConfiguration: Codable, Sendable, Equatable {
    /// Address to listen on (IPv4).
    public var host = "127.0.0.1"
    /// TCP port; 0 picks a free one and prints it.
    public var port: Int = 8080
    /// The database: a SQLite file (`PATH` or `sqlite:PATH`) or a PostgreSQL URL
    /// (`postgres://USER@HOST:PORT/DATABASE`, the password from PGPASSWORD or a passfile).
    public var database = "gatepass.db"
    /// Where the token/OTP signing secret lives; by default beside the database (`<db>.secret`).
    public var secretFile: String?
    /// The pass keys (api.md "Offline passes"); default `<database>.pass-keys`.
    public var passKeysFile: String?
    /// OTP lifetime (api.md: 10 minutes).
    public var otpLifetimeSeconds: Int = 600
    /// Wrong tries before a code dies (api.md: 5).
    public var otpMaxWrongTries: Int = 5
    /// Codes sent per email per hour (api.md: 5).
    public var otpSendsPerHour: Int = 5
    /// Minimum time between two codes for one email (api.md: 30 s).
    public var otpResendIntervalSeconds: Int = 30
    /// A program run for each code sent to a known user: the email as its only argument, the
    /// code on standard input (a sendmail wrapper, an SMS gateway script). Without it codes
    /// can only be read with --dev.
    public var otpDeliveryCommand: String?
    /// Login token lifetime (api.md: 12 hours).
    public var tokenLifetimeSeconds: Int = 43_200
    /// Scanner token lifetime (api.md: 30 days).
    public var scannerTokenLifetimeSeconds: Int = 2_592_000
    /// An enrolled kiosk's credential lifetime (api.md: `kioskTokenLifetimeDays`, default 365).
    public var kioskTokenLifetimeDays: Int = 365
    /// Wrong kiosk enrolment codes the server takes per minute, from everyone together
    /// (requests carry no client address here); beyond, 429 until the minute is over.
    public var enrolmentAttemptsPerMinute: Int = 10
    /// Largest request body accepted (api.md: 65,536 bytes).
    public var bodyLimitBytes: Int = 65_536
    /// HTTP worker threads. Writers wait for their commit, so more threads than cores lets
    /// more commits share one fsync.
    public var threads: Int = 16
    /// How long idempotency records are kept (api.md: at least 24 hours).
    public var idempotencyRetentionHours: Int = 24
    /// SQLite `synchronous` mode: FULL survives a power cut (see README).
    public var sqliteSynchronous = "FULL"
    /// How long SQLite waits for another process's lock before a request answers 503.
    public var sqliteBusyTimeoutMilliseconds: Int = 5_000
    /// When set, /metrics needs `Authorization: Bearer <metricsToken>`.
    public var metricsToken: String?
    /// IANA time zone for "today" (validity defaults, stats); default the machine's.
    public var timeZone: String?
    /// How long events (and so notification lists, which are the events with a title) are kept;
    /// api.md asks for at least 24 hours of replay.
    public var eventRetentionHours: Int = 720
    /// How long the push delivery log keeps a row (a delivery also goes with its event).
    public var pushDeliveryRetentionHours: Int = 168
    /// How long the mail log keeps a sent or given-up mail (queued mail is never purged).
    public var mailLogRetentionHours: Int = 720
    /// An idle event stream gets a `: ping` this often (api.md: at least every 15 s).
    public var eventPingSeconds: Int = 10
    /// A push delivery still pending after this long is marked failed.
    public var pushFailAfterSeconds: Int = 300
    /// Open connections at most, event streams included.
    public var maxConnections: Int = 4_096
    /// Open connections per client address at most (loopback included); `trustedProxies`
    /// are exempt, since behind a reverse proxy the proxy limits per client.
    public var maxConnectionsPerIP: Int = 64
    /// IPv4 addresses exempt from `maxConnectionsPerIP` (a reverse proxy's).
    public var trustedProxies: [String] = []
    /// A request's headers must be complete within this long (a deadline, not an idle timeout).
    public var headerTimeoutSeconds: Int = 10
    /// A request's body must be complete within this long after its headers.
    public var bodyTimeoutSeconds: Int = 30
    /// A kept-alive connection must begin its next request within this long.
    public var keepAliveTimeoutSeconds: Int = 30
    /// `POST /api/admin/push-test` answers waiting at the same time at most; more get 503.
    public var maxPushTestWaits: Int = 32
    /// An `otpDeliveryCommand` still running after this long is killed (and logged).
    public var otpDeliveryTimeoutSeconds: Int = 10
    /// Web origins (`scheme://host[:port]`) whose pages may call `/api/*` from a browser
    /// (api.md "Browser clients"); none by default.
    public var corsOrigins: [String] = []
    /// The SMTP relay: `smtp://host:port` (STARTTLS required unless the host is loopback) or
    /// `smtps://host:port`. Without it mail is off (with `--dev`: written to `mailDirectory`).
    public var smtpURL: String?
    public var smtpUsername: String?
    /// A file holding the SMTP password (first line); never the password itself.
    public var smtpPasswordFile: String?
    /// A PEM file of CA certificates for the relay's TLS certificate (default: the system's).
    public var smtpCAFile: String?
    /// The sender of every mail, e.g. `Gate Pass <gate@example.com>` or `gate@example.com`.
    public var mailFrom: String?
    /// The server's address as visitors reach it, for pass page links (`https://gate.example.com`).
    public var publicBaseURL: String?
    /// `--dev` without `smtpURL`: where each mail is written as an `.eml` file (default `mail/` beside the database).
    public var mailDirectory: String?

    public init() {}

    enum CodingKeys: String, CodingKey {
        case host, port, database, secretFile, passKeysFile, otpLifetimeSeconds, otpMaxWrongTries, otpSendsPerHour
        case otpResendIntervalSeconds, otpDeliveryCommand, tokenLifetimeSeconds, scannerTokenLifetimeSeconds
        case kioskTokenLifetimeDays, enrolmentAttemptsPerMinute
        case bodyLimitBytes, threads, idempotencyRetentionHours, sqliteSynchronous, metricsToken, timeZone
        case eventRetentionHours, pushDeliveryRetentionHours, mailLogRetentionHours, eventPingSeconds, pushFailAfterSeconds, maxConnections
        case maxConnectionsPerIP, trustedProxies, headerTimeoutSeconds, bodyTimeoutSeconds, keepAliveTimeoutSeconds
        case maxPushTestWaits, otpDeliveryTimeoutSeconds, corsOrigins
        case sqliteBusyTimeoutMilliseconds
        case smtpURL, smtpUsername, smtpPasswordFile, smtpCAFile, mailFrom, publicBaseURL, mailDirectory
    }

    // Every key is optional in the file: what it leaves out keeps its default.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = ServerConfiguration()
        host = try c.decodeIfPresent(String.self, forKey: .host) ?? d.host
        port = try c.decodeIfPresent(Int.self, forKey: .port) ?? d.port
        database = try c.decodeIfPresent(String.self, forKey: .database) ?? d.database
        secretFile = try c.decodeIfPresent(String.self, forKey: .secretFile)
        passKeysFile = try c.decodeIfPresent(String.self, forKey: .passKeysFile)
        otpLifetimeSeconds = try c.decodeIfPresent(Int.self, forKey: .otpLifetimeSeconds) ?? d.otpLifetimeSeconds
        otpMaxWrongTries = try c.decodeIfPresent(Int.self, forKey: .otpMaxWrongTries) ?? d.otpMaxWrongTries
        otpSendsPerHour = try c.decodeIfPresent(Int.self, forKey: .otpSendsPerHour) ?? d.otpSendsPerHour
        otpResendIntervalSeconds = try c.decodeIfPresent(Int.self, forKey: .otpResendIntervalSeconds) ?? d.otpResendIntervalSeconds
        otpDeliveryCommand = try c.decodeIfPresent(String.self, forKey: .otpDeliveryCommand)
        tokenLifetimeSeconds = try c.decodeIfPresent(Int.self, forKey: .tokenLifetimeSeconds) ?? d.tokenLifetimeSeconds
        scannerTokenLifetimeSeconds = try c.decodeIfPresent(Int.self, forKey: .scannerTokenLifetimeSeconds) ?? d.scannerTokenLifetimeSeconds
        kioskTokenLifetimeDays = try c.decodeIfPresent(Int.self, forKey: .kioskTokenLifetimeDays) ?? d.kioskTokenLifetimeDays
        enrolmentAttemptsPerMinute = try c.decodeIfPresent(Int.self, forKey: .enrolmentAttemptsPerMinute)
            ?? d.enrolmentAttemptsPerMinute
        bodyLimitBytes = try c.decodeIfPresent(Int.self, forKey: .bodyLimitBytes) ?? d.bodyLimitBytes
        threads = try c.decodeIfPresent(Int.self, forKey: .threads) ?? d.threads
        idempotencyRetentionHours = try c.decodeIfPresent(Int.self, forKey: .idempotencyRetentionHours) ?? d.idempotencyRetentionHours
        sqliteSynchronous = try c.decodeIfPresent(String.self, forKey: .sqliteSynchronous) ?? d.sqliteSynchronous
        sqliteBusyTimeoutMilliseconds = try c.decodeIfPresent(Int.self, forKey: .sqliteBusyTimeoutMilliseconds)
            ?? d.sqliteBusyTimeoutMilliseconds
        metricsToken = try c.decodeIfPresent(String.self, forKey: .metricsToken)
        timeZone = try c.decodeIfPresent(String.self, forKey: .timeZone)
        eventRetentionHours = try c.decodeIfPresent(Int.self, forKey: .eventRetentionHours) ?? d.eventRetentionHours
        pushDeliveryRetentionHours = try c.decodeIfPresent(Int.self, forKey: .pushDeliveryRetentionHours)
            ?? d.pushDeliveryRetentionHours
        mailLogRetentionHours = try c.decodeIfPresent(Int.self, forKey: .mailLogRetentionHours) ?? d.mailLogRetentionHours
        eventPingSeconds = try c.decodeIfPresent(Int.self, forKey: .eventPingSeconds) ?? d.eventPingSeconds
        pushFailAfterSeconds = try c.decodeIfPresent(Int.self, forKey: .pushFailAfterSeconds) ?? d.pushFailAfterSeconds
        maxConnections = try c.decodeIfPresent(Int.self, forKey: .maxConnections) ?? d.maxConnections
        maxConnectionsPerIP = try c.decodeIfPresent(Int.self, forKey: .maxConnectionsPerIP) ?? d.maxConnectionsPerIP
        trustedProxies = try c.decodeIfPresent([String].self, forKey: .trustedProxies) ?? d.trustedProxies
        headerTimeoutSeconds = try c.decodeIfPresent(Int.self, forKey: .headerTimeoutSeconds) ?? d.headerTimeoutSeconds
        bodyTimeoutSeconds = try c.decodeIfPresent(Int.self, forKey: .bodyTimeoutSeconds) ?? d.bodyTimeoutSeconds
        keepAliveTimeoutSeconds = try c.decodeIfPresent(Int.self, forKey: .keepAliveTimeoutSeconds) ?? d.keepAliveTimeoutSeconds
        maxPushTestWaits = try c.decodeIfPresent(Int.self, forKey: .maxPushTestWaits) ?? d.maxPushTestWaits
        otpDeliveryTimeoutSeconds = try c.decodeIfPresent(Int.self, forKey: .otpDeliveryTimeoutSeconds) ?? d.otpDeliveryTimeoutSeconds
        corsOrigins = try c.decodeIfPresent([String].self, forKey: .corsOrigins) ?? d.corsOrigins
        smtpURL = try c.decodeIfPresent(String.self, forKey: .smtpURL)
        smtpUsername = try c.decodeIfPresent(String.self, forKey: .smtpUsername)
        smtpPasswordFile = try c.decodeIfPresent(String.self, forKey: .smtpPasswordFile)
        smtpCAFile = try c.decodeIfPresent(String.self, forKey: .smtpCAFile)
        mailFrom = try c.decodeIfPresent(String.self, forKey: .mailFrom)
        publicBaseURL = try c.decodeIfPresent(String.self, forKey: .publicBaseURL)
        mailDirectory = try c.decodeIfPresent(String.self, forKey: .mailDirectory)
    }

    /// Reads a configuration file; every problem is named in the error.
    public static func load(path: String) throws(ConfigurationError) -> ServerConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(message: "cannot read the configuration file \(path)")
        }
        let configuration: ServerConfiguration
        do {
            configuration = try JSONDecoder().decode(ServerConfiguration.self, from: data)
        } catch {
            throw ConfigurationError(message: "\(path): \(JSONBody.describe(error))")
        }
        try configuration.validate()
        return configuration
    }

    public func validate() throws(ConfigurationError) {
        func require(_ condition: Bool, _ message: String) throws(ConfigurationError) {
            if !condition { throw ConfigurationError(message: message) }
        }
        try require((0...65_535).contains(port), "port must be between 0 and 65535")
        // Every server of a PostgreSQL database signs and checks with one secret: it is named,
        // never made per machine (DatabaseFiles).
        _ = try DatabaseFiles(database: database, secretFile: secretFile, passKeysFile: passKeysFile).secretFile()
        try require(otpLifetimeSeconds > 0, "otpLifetimeSeconds must be positive")
        try require((0...600_000).contains(sqliteBusyTimeoutMilliseconds),
                    "sqliteBusyTimeoutMilliseconds must be between 0 and 600000")
        try require(otpMaxWrongTries > 0, "otpMaxWrongTries must be positive")
        try require(otpSendsPerHour > 0, "otpSendsPerHour must be positive")
        try require(otpResendIntervalSeconds >= 0, "otpResendIntervalSeconds must not be negative")
        try require(tokenLifetimeSeconds > 0, "tokenLifetimeSeconds must be positive")
        try require(scannerTokenLifetimeSeconds > 0, "scannerTokenLifetimeSeconds must be positive")
        try require((1...3650).contains(kioskTokenLifetimeDays), "kioskTokenLifetimeDays must be 1 to 3650")
        try require(enrolmentAttemptsPerMinute > 0, "enrolmentAttemptsPerMinute must be positive")
        try require(bodyLimitBytes > 0, "bodyLimitBytes must be positive")
        try require((1...256).contains(threads), "threads must be between 1 and 256")
        try require(idempotencyRetentionHours >= 24, "idempotencyRetentionHours must be at least 24 (api.md)")
        try require(["OFF", "NORMAL", "FULL", "EXTRA"].contains(sqliteSynchronous.uppercased()),
                    "sqliteSynchronous must be OFF, NORMAL, FULL or EXTRA")
        try require(eventRetentionHours >= 24, "eventRetentionHours must be at least 24 (api.md)")
        try require(pushDeliveryRetentionHours >= 1, "pushDeliveryRetentionHours must be at least 1")
        // A mail is retried for up to 24 hours: its log row must outlive that.
        try require(mailLogRetentionHours >= 24, "mailLogRetentionHours must be at least 24")
        try require((1...15).contains(eventPingSeconds), "eventPingSeconds must be between 1 and 15 (api.md)")
        try require(pushFailAfterSeconds > 0, "pushFailAfterSeconds must be positive")
        try require((16...1_000_000).contains(maxConnections), "maxConnections must be between 16 and 1000000")
        try require((1...100_000).contains(maxConnectionsPerIP), "maxConnectionsPerIP must be between 1 and 100000")
        for proxy in trustedProxies {
            var address = in_addr()
            try require(inet_pton(AF_INET, proxy, &address) == 1,
                        "trustedProxies: \(proxy.debugDescription) is not an IPv4 address such as 10.0.0.5")
        }
        try require((1...3_600).contains(headerTimeoutSeconds), "headerTimeoutSeconds must be between 1 and 3600")
        try require((1...3_600).contains(bodyTimeoutSeconds), "bodyTimeoutSeconds must be between 1 and 3600")
        try require((1...3_600).contains(keepAliveTimeoutSeconds), "keepAliveTimeoutSeconds must be between 1 and 3600")
        try require((1...10_000).contains(maxPushTestWaits), "maxPushTestWaits must be between 1 and 10000")
        try require((1...600).contains(otpDeliveryTimeoutSeconds), "otpDeliveryTimeoutSeconds must be between 1 and 600")
        try require(timeZone.map { TimeZone(identifier: $0) != nil } ?? true,
                    "timeZone must be an IANA zone such as Europe/Bucharest")
        for origin in corsOrigins { _ = try WebOrigin(configured: origin) }
        if let smtpURL {
            let parsed = URLComponents(string: smtpURL)
            try require(["smtp", "smtps"].contains(parsed?.scheme?.lowercased() ?? "") && !(parsed?.host ?? "").isEmpty
                        && parsed?.user == nil && parsed?.password == nil && (parsed?.path ?? "").count <= 1,
                        "smtpURL must be smtp://host:port or smtps://host:port, without credentials (use smtpUsername and smtpPasswordFile)")
            try require(mailFrom != nil, "mailFrom is required with smtpURL (the sender of every mail)")
            try require(publicBaseURL != nil, "publicBaseURL is required with smtpURL (the address visitors open their pass page at)")
        }
        try require(smtpPasswordFile == nil || smtpUsername != nil, "smtpPasswordFile needs smtpUsername")
        if let mailFrom {
            try require(MailAddress.parse(mailFrom) != nil,
                        "mailFrom must be an address such as gate@example.com or Gate Pass <gate@example.com>")
        }
        if let publicBaseURL {
            let parsed = URLComponents(string: publicBaseURL)
            try require(["http", "https"].contains(parsed?.scheme?.lowercased() ?? "") && !(parsed?.host ?? "").isEmpty
                        && parsed?.query == nil && parsed?.fragment == nil,
                        "publicBaseURL must be an http(s) address such as https://gate.example.com")
        }
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

public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
