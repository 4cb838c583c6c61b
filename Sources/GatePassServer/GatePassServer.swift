import Foundation
import GatePassCore
import GatePassMail
import GatePassPass
import HTTPServer

/// A running Gate Pass API server: store, application and HTTP listener, started together
/// and stopped together. Tests start one on port 0; `gatepass serve` runs one until a signal.
// @unchecked: every stored property is immutable; the timer is only cancelled, which is thread-safe.
public final class GatePassServer: @unchecked Sendable {
    public let application: GatePassApplication
    public let store: ServerDatabase
    let http: HTTPServer
    public let port: UInt16
    private let maintenance: DispatchSourceTimer
    private let autoCheckoutTimer: DispatchSourceTimer
    private let reissueTimer: DispatchSourceTimer
    /// Held from the start to the end of `stop`: one server per SQLite file (nil on PostgreSQL,
    /// which several servers share by design).
    private let databaseLock: DatabaseLock?

    /// Opens the database (migrating it), loads or creates the secret, takes the audit head
    /// over (`AuditLog.takeOver`), and starts listening.
    /// - Parameters:
    ///   - recreateAuditHead: write a new audit head, recorded in the log, where the one found
    ///     does not hold (`serve --recreate-audit-head`, after a restore); without it such a
    ///     head stops the start.
    ///   - retryTimer: what retries the store's journal truncations after an erase (tests pass
    ///     one they run by hand).
    /// - Throws: `ConfigurationError` when another server holds the SQLite file (`DatabaseLock`);
    ///   also when the SQLite database, its WAL or shm may be used by group or others,
    ///   or cannot be written (see `SQLiteEngine.init`).
    public init(configuration: ServerConfiguration, devMode: Bool = false, clock: any WallClock = SystemWallClock(),
                logSink: any LogSink = StandardErrorLog(), recreateAuditHead: Bool = false,
                retryTimer: any RetryTimer = DispatchRetryTimer()) throws {
        try configuration.validate()
        // Before the database is opened: a second server must not migrate or write it. On a
        // failed start the lock goes with this scope (its descriptor closes).
        let lock: DatabaseLock?
        if case .sqlite(let path) = configuration.databaseLocation {
            lock = try DatabaseLock(databaseAt: path)
        } else {
            lock = nil
        }
        let store = try ServerDatabase.open(configuration.databaseLocation, synchronous: configuration.sqliteSynchronous,
                                            busyTimeoutMilliseconds: Int32(configuration.sqliteBusyTimeoutMilliseconds),
                                            serving: true, retryTimer: retryTimer)
        let secret: ServerSecret
        do {
            secret = try ServerSecret.loadOrCreate(path: configuration.resolvedSecretFile)
        } catch {
            store.close()
            throw error
        }
        let mail: MailSettings
        let passes: PassRenderer
        do {
            mail = try MailSettings.resolve(configuration, devMode: devMode)
            let keyring = try PassKeyring(path: configuration.resolvedPassKeysFile)
            // Every site has its keys from the first start on (a site made later gets them
            // when its first pass is drawn).
            try keyring.ensureKeys(organizationIds: try store.read { tx in try tx.directory.organizationIds() }, now: clock.now())
            passes = PassRenderer(fonts: try PassFonts.dejaVu(), keyring: keyring, clock: clock)
            // The retention of organizations that set none is this file's: written into the
            // database, so that `gatepass admin retention --db` (which runs without the
            // server's configuration) follows it.
            try store.write { tx in try tx.directory.setServerRetentionDays(configuration.retentionDays) }
        } catch {
            store.close()
            throw error
        }
        let application = GatePassApplication(configuration: configuration, store: store, secret: secret, clock: clock,
                                              logSink: logSink, devMode: devMode, mail: mail, passes: passes)
        // Before this process writes any entry: a head that does not hold stops the start here.
        do {
            let takeOver = try application.auditLog.takeOver(store, now: clock.now(), recreate: recreateAuditHead,
                                                             requirePrivate: true)
            if let line = takeOver.logLine { application.logSink.log(line) }
        } catch {
            store.close()
            throw error
        }
        // A peer that closes a socket or pipe early (a client, the OTP delivery program) must
        // make a write fail with EPIPE, never end the server.
        signal(SIGPIPE, SIG_IGN)
        let http = HTTPServer(
            configuration: .init(host: configuration.host, port: UInt16(configuration.port), threads: configuration.threads,
                                 bodyLimit: configuration.bodyLimitBytes, connectionLimit: configuration.maxConnections,
                                 maxConnectionsPerIP: configuration.maxConnectionsPerIP,
                                 trustedProxies: configuration.trustedProxies,
                                 headerTimeoutSeconds: configuration.headerTimeoutSeconds,
                                 bodyTimeoutSeconds: configuration.bodyTimeoutSeconds,
                                 keepAliveTimeoutSeconds: configuration.keepAliveTimeoutSeconds,
                                 unansweredAtStop: APIError.serverStopping.response,
                                 daemonLog: { [application] line in
                                     application.logSink.log("http: " + TerminalText.visible(line))
                                 }),
            responder: application)
        // A day's retention run missed while the server was down is caught up before it serves.
        store.runExclusively(.maintenance) { application.runDueRetention() }
        do {
            try application.eventHub.start()
            store.startListening({ [application] announcement in application.heard(announcement) },
                                 log: { [application] line in application.logSink.log("database: \(line)") })
            port = try http.start()
        } catch {
            application.eventHub.stop()
            store.close()
            throw error
        }
        self.application = application
        self.store = store
        self.http = http
        databaseLock = lock
        // What outlived its limit is purged every 10 minutes, and each organization's daily
        // retention run starts at the first sweep after 03:30 its time.
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
        timer.schedule(deadline: .now() + 60, repeating: 600)
        timer.setEventHandler { [application, store] in
            store.runExclusively(.maintenance) {
                application.purgeExpiredRecords()
                application.runDueRetention()
            }
        }
        timer.resume()
        maintenance = timer
        // The end-of-day check-out catches up at start (the server may have been down at its
        // time), then looks every minute; it runs once per site-local day whatever the calls.
        store.runExclusively(.autoCheckout) { application.runAutoCheckout() }
        let endOfDay = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
        endOfDay.schedule(deadline: .now() + 60, repeating: 60)
        endOfDay.setEventHandler { [application, store] in store.runExclusively(.autoCheckout) { application.runAutoCheckout() } }
        endOfDay.resume()
        autoCheckoutTimer = endOfDay
        // `gatepass keys revoke` changes only the keys file: a serving instance re-issues
        // the revoked key's passes within two seconds of it (and at start, if it was down).
        store.runExclusively(.reissue) { application.reissueRevokedPasses() }
        let reissue = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
        reissue.schedule(deadline: .now() + 2, repeating: 2)
        reissue.setEventHandler { [application, store] in store.runExclusively(.reissue) { application.reissueRevokedPasses() } }
        reissue.resume()
        reissueTimer = reissue
        mail.listening(at: baseURL)
        application.mailWorker.start()
        // A bad mail setting is named at start (in the log, and on stderr when the log is
        // elsewhere), never found by the first visitor whose invitation does not arrive.
        let logsToStandardError = logSink is StandardErrorLog
        application.mailWorker.probe { line in
            if !logsToStandardError { FileHandle.standardError.write(Data((TerminalText.visible(line) + "\n").utf8)) }
        }
    }

    /// The printable pass of the visitor with this short id, as `pass.png` draws it (the demo's pass files).
    public func passPNG(shortId: ShortID) throws -> [UInt8] {
        let (visitor, site) = try store.read { tx -> (Visitor, SiteProfile) in
            guard let record = try tx.visitors.find(shortId: shortId) else { throw APIError.notFound("visitor") }
            return (record.visitor, try application.site(record.organizationId, tx))
        }
        return try application.passes.png(visitor, site: site)
    }

    /// Sends the mail that is due, on the caller's thread; returns how many mails it handled.
    @discardableResult
    public func deliverDueMail() -> Int { application.mailWorker.deliverDue() }

    /// The folder `--dev` writes mail to as `.eml` files, when that is where mail goes.
    public var mailFolder: String? { (application.mail.transport as? MailDirectoryTransport)?.directory }

    /// Connections refused at the per-address cap and closed for a deadline so far.
    public var httpGuardCounters: (refusedAtCap: Int, closedForDeadline: Int) { http.guardCounters }

    /// Open connections from one client address, as counted against `maxConnectionsPerIP`.
    public func openConnections(from address: String) -> Int { http.openConnections(from: address) }
    /// Signalled after a connection opens or closes (see `HTTPServer.connectionChanges`).
    public var connectionChanges: ChangeSignal { http.connectionChanges }

    /// True once `stop` has begun: every request whose head arrives from then on is 503.
    public var isStopping: Bool { http.isStopping }
    /// Signalled when a stop begins (see `HTTPServer.stopChanges`).
    public var stopChanges: ChangeSignal { http.stopChanges }

    /// Writes out the lines the (buffered) log holds now.
    public func flushLog() { application.logSink.flush() }

    public var baseURL: String { "http://\(http.configuration.host == "0.0.0.0" ? "127.0.0.1" : http.configuration.host):\(port)" }

    /// Lets requests in flight finish (up to `grace`), answers what is still waiting, then
    /// closes the database cleanly (WAL checkpointed). Whatever is in flight, every request
    /// gets an answer: a write committed by then its real one; a write still queued 503 (and
    /// it is not applied); a push-test wait, or anything else unanswered, 503 `UNAVAILABLE`.
    public func stop(grace: Duration = .seconds(10)) {
        http.beginStop()
        maintenance.cancel()
        autoCheckoutTimer.cancel()
        reissueTimer.cancel()
        application.mailWorker.stop()
        // Streams end first: they never finish by themselves, and the hub reads the store.
        application.eventHub.stop()
        http.waitForRequestsInFlight(grace: grace)
        application.abandonWaits()
        http.stop(grace: .zero)
        // The head follows the last committed entry before the database closes.
        application.auditLog.waitForHead()
        store.close()
        // The file is free for the next server, in this process or another.
        databaseLock?.release()
        // Last: every line of the stop itself is logged by now (the log is buffered).
        application.logSink.flush()
    }
}
