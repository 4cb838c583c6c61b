import Foundation
import GatePassAPI
import GatePassCore

/// The client core shared by the console, the kiosk and the scriptable commands: session,
/// offline cache, outbox and push-token registry over one state folder.
///
/// Two HTTP handles: `transport` for what a person waits for (reads, the first try of a
/// mutation, a drain asked for), and its `separateHandle()` for the background drain and
/// its reachability probe, so a drain request hanging on a silent server never holds a key
/// press. (The event stream has a third, its own: `eventConsumer`.)
public final class ClientCore: Sendable {
    public let store: ClientDatabase
    public let directory: StateDirectory
    let transport: any HTTPTransport
    /// The background drain's own handle (`transport.separateHandle()`).
    let backgroundTransport: any HTTPTransport
    let clock: any WallClock
    /// `console` or `kiosk`: how this device registers its push token.
    public let platform: String
    /// Drains on the caller's thread over `transport`: `gatepass outbox drain`, the More tab.
    public let drainer: OutboxDrainer
    /// Drains over the background handle: what `OutboxService` runs.
    public let backgroundDrainer: OutboxDrainer

    public convenience init(directory: StateDirectory, transport: any HTTPTransport, clock: any WallClock = SystemWallClock(),
                            platform: String = "console", backoff: Backoff = Backoff()) throws(ClientError) {
        self.init(store: try ClientDatabase(directory: directory), directory: directory, transport: transport, clock: clock,
                  platform: platform, backoff: backoff)
    }

    /// - Parameter store: the state file of `directory`, already open.
    public init(store: ClientDatabase, directory: StateDirectory, transport: any HTTPTransport, clock: any WallClock = SystemWallClock(),
                platform: String = "console", backoff: Backoff = Backoff()) {
        precondition(Device.platforms.contains(platform), "unknown platform \(platform)")
        self.directory = directory
        self.store = store
        self.transport = transport
        backgroundTransport = transport.separateHandle()
        self.clock = clock
        self.platform = platform
        drainer = OutboxDrainer(store: store, transport: transport, clock: clock, backoff: backoff, directory: directory)
        backgroundDrainer = OutboxDrainer(store: store, transport: backgroundTransport, clock: clock, backoff: backoff,
                                          directory: directory)
    }

    public func session() throws(ClientError) -> Session? { try store.session() }

    func requireSession() throws(ClientError) -> Session {
        guard let session = try store.session() else {
            throw .local("no one is logged in on this device; run: gatepass login --email YOU@EXAMPLE.COM")
        }
        return session
    }

    func api(_ server: String) -> APIClient { APIClient(baseURL: server, transport: transport) }

    /// The API over the background handle (the drain's reachability probe).
    func backgroundAPI(_ server: String) -> APIClient { APIClient(baseURL: server, transport: backgroundTransport) }

    // MARK: - Login and logout

    /// What happens to local data if `email` logs in to `server`.
    public struct IdentityCheck: Sendable {
        /// True when the previous identity differs (different server, or a different email).
        public var changesIdentity: Bool
        public var previous: Scope?
        /// Queued and dead-lettered entries that a change of identity would delete.
        public var entriesAtRisk: Int
    }

    public func identityCheck(server: String, email: String) throws(ClientError) -> IdentityCheck {
        let previous = try store.scope()
        let changes = previous.map { $0.server != normalized(server) || $0.email != email.lowercased() } ?? false
        let atRisk = changes ? try store.outboxCount() + store.deadLetters().count : 0
        return IdentityCheck(changesIdentity: changes, previous: previous, entriesAtRisk: atRisk)
    }

    public func normalized(_ server: String) -> String {
        var base = server
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }

    public func sendCode(server: String, email: String) throws(ClientError) {
        try api(normalized(server)).sendOTP(email: email)
    }

    /// The result of a login.
    public struct LoginOutcome: Sendable {
        public var session: Session
        /// Entries deleted because a different identity signed in.
        public var purgedEntries: Int
        public var device: Device?
        /// Why the device could not be registered (the login still counts).
        public var deviceProblem: String?
    }

    /// Verifies the code, scopes local data to (server, user), obtains a scanner token when
    /// the user may scan, and registers this device's push token.
    /// - Parameter allowPurge: whether queued entries of another identity may be deleted.
    public func login(server rawServer: String, email: String, otp: String, allowPurge: Bool) throws(ClientError) -> LoginOutcome {
        let server = normalized(rawServer)
        let check = try identityCheck(server: server, email: email)
        if check.changesIdentity && check.entriesAtRisk > 0 && !allowPurge {
            throw .local("\(check.entriesAtRisk) queued or dead-lettered entries of \(check.previous?.email ?? "the previous user") on \(check.previous?.server ?? "the previous server") would be deleted; use --force to log in anyway")
        }
        let client = api(server)
        let answer = try client.verifyOTP(email: email, otp: otp)
        var purged = 0
        let previous = try store.scope()
        let newScope = Scope(server: server, userId: answer.profile.id, email: answer.profile.email)
        let sameIdentity = previous.map { $0.server == newScope.server && $0.userId == newScope.userId } ?? false
        // The scanner token this device held for this identity: the new one continues it, so
        // the server judges offline scans still queued by what this device was told.
        var previousScanner: String?
        if sameIdentity, let current = try store.session() { previousScanner = try store.scannerTokenToContinue(current) }
        if sameIdentity, previousScanner == nil { previousScanner = try store.meta(ClientDatabase.previousScannerTokenKey) }
        if let previous, previous.server != newScope.server || previous.userId != newScope.userId {
            purged = try store.outboxCount() + store.deadLetters().count
            try store.purgeIdentityData()
            try store.setMeta(ClientDatabase.deviceRegistrationKey, nil)
        }
        var session = Session(server: server, token: answer.token, expiresAt: answer.expiresAt, user: answer.profile, scanner: nil)
        if answer.profile.principalKind.mayScan {
            // Best effort: without it check-ins still queue, and the drain makes one later.
            session.scanner = try? client.scannerToken(token: answer.token, previous: previousScanner)
        }
        try store.saveSession(session)
        // Kept while no new scanner token continues it (the server was away): the renewal uses it.
        // Another identity's is of no use here (the server refuses to continue it).
        if session.scanner != nil || !sameIdentity { try store.setMeta(ClientDatabase.previousScannerTokenKey, nil) }
        try store.saveScope(newScope)
        try store.setDrainPaused(nil)
        try store.setScannerRevocation(nil)
        // The keys a signed pass is checked with while the server is away; the login counts without them.
        if session.scanner != nil { try? refreshPassKeys() }
        var device: Device?
        var deviceProblem: String?
        do throws(ClientError) {
            device = try client.registerDevice(token: answer.token, role: answer.role, deviceToken: try store.deviceToken(),
                                               platform: platform)
            try store.setMeta(ClientDatabase.deviceRegistrationKey, device.map { _ in "\(server) \(answer.profile.id)" })
        } catch {
            deviceProblem = error.description
        }
        return LoginOutcome(session: session, purgedEntries: purged, device: device, deviceProblem: deviceProblem)
    }

    /// Unregisters the push token while the token still works, then ends the session on
    /// the server and drops it here. Local data stays (the same user may come back).
    /// - Returns: problems met on the way; the local session is dropped regardless.
    @discardableResult
    public func logout() throws(ClientError) -> [String] {
        let session = try requireSession()
        let client = api(session.server)
        var problems: [String] = []
        do throws(ClientError) {
            try client.unregisterDevice(token: session.token, role: session.user.role, deviceToken: try store.deviceToken())
            try store.setMeta(ClientDatabase.deviceRegistrationKey, nil)
        } catch {
            problems.append("push token not unregistered: \(error)")
        }
        do throws(ClientError) {
            try client.logout(token: session.token)
        } catch {
            if case .unauthorized = error {} else { problems.append("server session not ended: \(error)") }
        }
        // Kept for the next login of the same user here, which continues this device.
        try store.setMeta(ClientDatabase.previousScannerTokenKey, session.scanner?.scannerToken)
        try store.saveSession(nil)
        return problems
    }

    // MARK: - Reads with an offline fallback

    /// A value read from the server, or from the cache when the server cannot be reached.
    public struct Read<Value: Sendable>: Sendable {
        public var value: Value
        /// When the value was fetched from the server.
        public var updatedAt: Date
        /// True when the server could not be reached and the cache answered.
        public var fromCache: Bool
    }

    /// Fetches with `fetch`; stores the answer in the cache under `key`; on offline or
    /// transient failures answers from the cache when it can.
    func read<Value: Codable & Sendable>(_ key: String, _ fetch: (APIClient, Session) throws(ClientError) -> Value) throws(ClientError) -> Read<Value> {
        let session = try requireSession()
        do {
            let value = try fetch(api(session.server), session)
            try? store.cache(key, value: CanonicalJSON.encode(value), at: clock.now())
            return Read(value: value, updatedAt: clock.now(), fromCache: false)
        } catch {
            guard error.isRetryable, let cached = try store.cached(key),
                  let value = try? JSONDecoder().decode(Value.self, from: Data(cached.value))
            else { throw error }
            return Read(value: value, updatedAt: cached.updatedAt, fromCache: true)
        }
    }

    public func whoami() throws(ClientError) -> Read<Profile> {
        try read("profile") { api, session throws(ClientError) in try api.me(token: session.token) }
    }

    public func approvals(limit: Int = 500) throws(ClientError) -> Read<Page<Visitor>> {
        try read("approvals") { api, session throws(ClientError) in
            session.user.role == .approver
                ? try api.approvalQueue(token: session.token, limit: limit)
                : try api.visitors(token: session.token, status: .awaitingApproval, limit: limit)
        }
    }

    /// Stats with the login token for OWNER/ADMIN, else with the scanner token.
    public func stats() throws(ClientError) -> Read<ScanStats> {
        try read("stats") { api, session throws(ClientError) in
            if session.user.role.managesOrganization { return try api.stats(token: session.token) }
            guard let scanner = session.scanner else { throw .permanent(status: 403, code: "FORBIDDEN", message: "this user may not see gate stats") }
            return try api.stats(token: scanner.scannerToken)
        }
    }

    public func history(limit: Int = 50, filter: APIClient.HistoryFilter = .init()) throws(ClientError) -> Read<Page<Scan>> {
        try read("history") { api, session throws(ClientError) in
            try api.scanHistory(token: session.user.role.managesOrganization || session.user.role == .platformAdmin
                                ? session.token : session.scanner?.scannerToken ?? session.token,
                                filter: filter, limit: limit)
        }
    }

    public func historyCSV(filter: APIClient.HistoryFilter = .init()) throws(ClientError) -> String {
        let session = try requireSession()
        return try api(session.server).scanHistoryCSV(token: session.token, filter: filter)
    }

    public func lookup(_ query: String) throws(ClientError) -> Page<Visitor> {
        let session = try requireSession()
        guard let scanner = session.scanner else {
            throw .local("this user has no scanner token: only users who may scan can look visitors up")
        }
        return try api(session.server).lookup(scannerToken: scanner.scannerToken, query: query)
    }

    // MARK: - Mutations through the outbox

    /// The outcome of a mutation: applied now, queued for later, or refused by the server.
    public enum MutationOutcome: Sendable {
        case applied(HTTPResponse)
        case queued(OutboxEntry, reason: ClientError)
        case refused(status: Int, code: String, message: String)
        /// The server no longer accepts this session; the entry stays queued until a new login.
        case needsLogin(OutboxEntry, message: String)
    }

    /// Writes the mutation to the outbox (durably), then tries it once at once.
    /// A refusal (4xx) is answered to the person who is there, so that entry does not go to
    /// the dead letters; a failure to reach the server leaves it queued.
    /// - Parameter parameters: one value per path parameter of `endpoint`.
    /// - Parameter attempter: sends the first try (default: `drainer`, over the person's handle).
    func mutate(kind: String, _ endpoint: Endpoint, _ parameters: String..., body: some Encodable,
                credential: OutboxEntry.Credential, scannedAt: Date? = nil,
                attempter: OutboxDrainer? = nil) throws(ClientError) -> MutationOutcome {
        let entry = try enqueue(kind: kind, endpoint, parameters, body: body, credential: credential, scannedAt: scannedAt)
        if try store.isDrainPaused() {
            return .needsLogin(entry, message: try store.drainPauseReason() ?? "log in again")
        }
        let attempt = (attempter ?? drainer).send(entry, replay: false)
        var report = DrainReport()
        switch attempt {
        case .applied(let response):
            try store.completeEntry(id: entry.id)
            return .applied(response)
        case .refused(let status, let code, let message):
            try store.completeEntry(id: entry.id)
            return .refused(status: status, code: code, message: message)
        case .unauthorized(let message):
            try drainer.record(attempt, for: entry, into: &report)
            return .needsLogin(entry, message: message)
        case .retryable(let error):
            try drainer.record(attempt, for: entry, into: &report)
            return .queued(report.deferred.first ?? entry, reason: error)
        }
    }

    /// Queues a check-in without trying it now, for a gate that already knows the server
    /// is unreachable (no connect timeout per scan); the drain sends it.
    public func queueCheckIn(code: String, confirmApprovalRequest: Bool) throws(ClientError) -> OutboxEntry {
        try enqueue(kind: "checkin", .scannerCheckIn, [],
                    body: CheckInBody(shortId: code, confirmApprovalRequest: confirmApprovalRequest),
                    credential: .scanner, scannedAt: clock.now())
    }

    /// - Parameter transport: the handle for the first try, when it must give up sooner than the
    ///   person's handle does (the kiosk's `offlineAfterMs`); nil means the person's handle.
    public func checkIn(code: String, confirmApprovalRequest: Bool,
                        over transport: (any HTTPTransport)? = nil) throws(ClientError) -> MutationOutcome {
        let outcome = try mutate(kind: "checkin", .scannerCheckIn,
                                 body: CheckInBody(shortId: code, confirmApprovalRequest: confirmApprovalRequest),
                                 credential: .scanner, scannedAt: clock.now(),
                                 attempter: transport.map { OutboxDrainer(store: store, transport: $0, clock: clock, directory: directory) })
        if case .applied = outcome { noteOnSite(answer: outcome) }
        return outcome
    }

    /// Writes a mutation of the current session to the outbox, durably, with sorted-key JSON.
    /// The row keeps the method and the full URL as strings (the stored format predates
    /// `Endpoint`, and entries queued by older builds must still drain).
    func enqueue(kind: String, _ endpoint: Endpoint, _ parameters: [String], body: some Encodable,
                         credential: OutboxEntry.Credential, scannedAt: Date?) throws(ClientError) -> OutboxEntry {
        // A gate's mutation goes to the server of its scanner token (an enrolled kiosk has no login).
        let server = credential == .scanner ? try scannerCredential().server : try requireSession().server
        return try store.enqueue(kind: kind, method: endpoint.method.rawValue, url: server + endpoint.path(values: parameters),
                                 body: CanonicalJSON.string(body),
                                 credential: credential, scannedAt: scannedAt, now: clock.now())
    }

    public func checkOut(code: String) throws(ClientError) -> MutationOutcome {
        let outcome = try mutate(kind: "checkout", .scannerCheckOut, body: ["shortId": code], credential: .scanner)
        noteOnSite(answer: outcome, checkOutCode: code)
        return outcome
    }

    public func decide(_ decision: ApprovalDecision, visitorId: String, note: String?) throws(ClientError) -> MutationOutcome {
        let session = try requireSession()
        var body: [String: String] = [:]
        if let note { body["note"] = note }
        return try mutate(kind: decision.rawValue, APIClient.decisionEndpoint(decision, role: session.user.role), visitorId,
                          body: body, credential: .login)
    }

    public struct WalkIn: Codable, Sendable {
        public var name: String
        public var phone: String?
        public var email: String?
        public var company: String?
        public var purpose: String?
        public var hostName: String?
        public init(name: String, phone: String? = nil, email: String? = nil, company: String? = nil,
                    purpose: String? = nil, hostName: String? = nil) {
            self.name = name; self.phone = phone; self.email = email; self.company = company
            self.purpose = purpose; self.hostName = hostName
        }
    }

    public func walkIn(_ walkIn: WalkIn) throws(ClientError) -> MutationOutcome {
        try mutate(kind: "walk-in", .scannerWalkIn, body: walkIn, credential: .scanner)
    }
}
