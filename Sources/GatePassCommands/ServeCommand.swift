import Foundation
import GatePassCore
import GatePassServer

/// `gatepass serve`: the HTTP API until SIGTERM or SIGINT.
struct ServeCommand: GatePassCommand {
    static let config = Option<String>("--config", value: "FILE",
                                       help: "A JSON configuration file (see Config/server.json); flags override it.")
    static let database = ServerOptions.database("The database (default gatepass.db).")
    static let host = Option<String>("--host", value: "H", help: "The IPv4 address to listen on (default 127.0.0.1).")
    static let port = Option<Int>("--port", value: "N", in: 0...65_535,
                                  help: "The port (default 8080); 0 picks a free one. The first line printed is the URL.")
    static let dev = Flag("--dev", help: "Development mode: log one-time codes and answer /api/auth/dev-peek-otp.")
    static let demoData = Flag("--demo-data", help: "Seed a demo organization with a user per role and visitors in every status.")
    static let recreateAuditHead = Flag("--recreate-audit-head", help: "Write a new audit head (<db>.audit-head) where the one found is missing or does not match the log, as after restoring the database from a backup; recorded in the audit log as audit-head.recreate. Without it such a head stops the start.")
    static let configuration = CommandConfiguration(
        name: "gatepass serve", overview: "Run the Gate Pass HTTP API server (api.md) on SQLite, or on PostgreSQL shared by several servers behind a load balancer.",
        options: [config, database, ServerOptions.secretFile, host, port, dev, demoData, recreateAuditHead])

    var configPath: String?
    var database: String?
    var secretFile: String?
    var host: String?
    var port: Int?
    var devMode: Bool
    var demoData: Bool
    var recreateAuditHead: Bool

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        configPath = try arguments.value(Self.config)
        database = try arguments.value(Self.database)
        secretFile = try arguments.value(ServerOptions.secretFile)
        host = try arguments.value(Self.host)
        port = try arguments.value(Self.port)
        devMode = arguments.has(Self.dev)
        demoData = arguments.has(Self.demoData)
        recreateAuditHead = arguments.has(Self.recreateAuditHead)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let terminal = context.terminal
        var configuration = ServerConfiguration()
        if let configPath {
            do { configuration = try ServerConfiguration.load(path: configPath) } catch { throw CommandFailure(error.message) }
        }
        if let database { configuration.database = database }
        if let secretFile { configuration.secretFile = secretFile }
        if let host { configuration.host = host }
        if let port { configuration.port = port }

        signal(SIGPIPE, SIG_IGN)
        let termination = TerminationSignals()

        let server: GatePassServer
        do {
            raiseOpenFileLimit()
            server = try GatePassServer(configuration: configuration, devMode: devMode, recreateAuditHead: recreateAuditHead)
        } catch {
            throw CommandFailure("cannot start: \(error)")
        }
        terminal.out("listening on \(server.baseURL)")
        if demoData {
            let seeded = try DemoData.seed(store: server.store, now: Date(), timeZone: configuration.resolvedTimeZone)
            if !seeded.isEmpty {
                try DemoData.seedUpcoming(server: server, now: Date(), timeZone: configuration.resolvedTimeZone)
            }
            Self.printDemoLogins(baseURL: server.baseURL, devMode: devMode, terminal: terminal)
        }
        if !devMode && configuration.otpDeliveryCommand == nil && configuration.smtpURL == nil {
            terminal.err("warning: neither smtpURL nor otpDeliveryCommand is configured, so one-time codes reach nobody; set one in the configuration or run with --dev")
        }
        if let folder = server.mailFolder {
            terminal.out("development mode without smtpURL: mail is written as .eml files to \(folder)")
        }
        termination.wait()
        // The request log is buffered: its lines so far come before the stop's own.
        server.flushLog()
        terminal.err("stopping: finishing requests in flight")
        server.stop()
        terminal.err("stopped")
        return 0
    }

    static func printDemoLogins(baseURL: String, devMode: Bool, terminal: any Terminal) {
        var lines = ["demo organization \"\(DemoData.organization)\"; log in as:"]
        for login in DemoData.logins {
            lines.append("  \(login.email)  \(login.role.rawValue)\(login.canScan ? " (can scan)" : "")")
        }
        let email = DemoData.logins[0].email
        lines.append("to log in with curl:")
        lines.append("  curl -s -X POST \(baseURL)/api/auth/send-otp -H 'Content-Type: application/json' -d '{\"email\":\"\(email)\"}'")
        if devMode {
            lines.append("  curl -s '\(baseURL)/api/auth/dev-peek-otp?email=\(email)'")
        } else {
            lines.append("  (the code goes to the configured otpDeliveryCommand; run with --dev to read it with dev-peek-otp)")
        }
        lines.append("  curl -s -X POST \(baseURL)/api/auth/verify-otp -H 'Content-Type: application/json' -d '{\"email\":\"\(email)\",\"otp\":\"CODE\"}'")
        lines.append("  curl -s \(baseURL)/api/visitors -H 'Authorization: Bearer TOKEN'")
        terminal.out(lines.joined(separator: "\n"))
    }
}

/// Every open event stream holds a socket: take the hard open-file limit rather than the
/// usual soft 1,024, so that `maxConnections` is what limits streams.
func raiseOpenFileLimit() {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}
