import Foundation
import GatePassAPI
import GatePassCore
import GatePassCrypto
import HTTPServer
import Synchronization

/// The Gate Pass API: everything between a parsed HTTP request and its response.
///
/// Order of work for each request: CORS preflight → body limit → route → credential →
/// permission table → rate limits (writes: `WriteLimits`) → handler (GETs on a reader connection; POSTs in a durable write
/// transaction, with idempotency recorded in the same transaction) → CORS headers, metrics
/// and one log line.
public final class GatePassApplication: HTTPResponder {
    public let configuration: ServerConfiguration
    let store: ServerDatabase
    let clock: any WallClock
    let logSink: any LogSink
    let signer: TokenSigner
    let ticketSigner: EventTicketSigner
    let crossOrigin: CrossOriginPolicy
    let otp: OneTimePasswords
    let metrics = Metrics()
    let statsCache = StatsCache()
    let sessionCache = SessionCache()
    let eventHub: EventHub
    let writeProbe: WriteProbe
    let router = Router(routes: GatePassApplication.routes)
    let pushTestWaits: PushTestWaits
    let timeZone: TimeZone
    let devMode: Bool
    let mail: MailSettings
    let mailWorker: MailWorker
    let passes: PassRenderer
    let composer: MailComposer
    /// Every change's entry, chained (api.md "Audit log").
    let auditLog: AuditLog
    /// When each scanner token's use was last written (see `noteUse`); emptied by the purge.
    private let lastUseRecorded = Locked<[String: Date]>([:])
    /// Wrong kiosk enrolment codes in the current minute (see `EnrolmentThrottle`).
    let enrolmentThrottle: EnrolmentThrottle
    /// Keys the HMAC under which enrolment codes are stored.
    let enrolmentCodeKey: [UInt8]
    /// The token buckets of writes (`WriteLimits` decides which a write is charged to).
    let rateLimiter: RateLimiter
    let writeLimits: WriteLimits
    /// Idempotency keys whose first request is still running (api.md: a second one gets 409).
    private let keysInProgress = Locked<Set<String>>([])
    /// Names each column whose stored values cannot be read once, not per request.
    private let unreadableValues = UnreadableValueLog()

    /// How many idempotent requests are being processed now (for tests and diagnostics).
    var idempotentRequestsInProgress: Int { keysInProgress.withLock { $0.count } }
    /// Signalled after an idempotent request starts or ends (what tests wait on).
    let changes = ChangeSignal()
    private let fingerprintKey: [UInt8]

    init(configuration: ServerConfiguration, store: ServerDatabase, secret: ServerSecret, clock: any WallClock,
         logSink: any LogSink, devMode: Bool, mail: MailSettings, passes: PassRenderer) {
        self.configuration = configuration
        self.store = store
        self.clock = clock
        let logSink = VisibleLineLog(logSink)
        self.logSink = logSink
        self.devMode = devMode
        signer = TokenSigner(secret: secret)
        ticketSigner = EventTicketSigner(secret: secret)
        crossOrigin = CrossOriginPolicy(configured: configuration.corsOrigins)
        otp = OneTimePasswords(
            rules: .init(lifetimeSeconds: configuration.otpLifetimeSeconds, maxWrongTries: configuration.otpMaxWrongTries,
                         sendsPerHour: configuration.otpSendsPerHour,
                         resendIntervalSeconds: configuration.otpResendIntervalSeconds),
            secret: secret, devMode: devMode)
        timeZone = configuration.resolvedTimeZone
        fingerprintKey = secret.key(for: "idempotency-fingerprint")
        enrolmentCodeKey = secret.key(for: "kiosk-enrolment-code")
        enrolmentThrottle = EnrolmentThrottle(perMinute: configuration.enrolmentAttemptsPerMinute)
        rateLimiter = RateLimiter(clock: clock)
        writeLimits = WriteLimits(configuration)
        let passTokenKey = secret.key(for: "pass-page-token")
        self.mail = mail
        self.passes = passes
        auditLog = AuditLog(chain: AuditChain(key: secret.key(for: "audit-chain")),
                            headPath: configuration.resolvedAuditHeadFile)
        composer = MailComposer(settings: mail, passes: passes, serverTimeZone: configuration.resolvedTimeZone,
                               serverTimeZoneName: configuration.timeZone ?? TimeZone.current.identifier,
                               passTokenKey: passTokenKey)
        mailWorker = MailWorker(store: store, settings: mail, composer: composer, clock: clock, log: logSink)
        pushTestWaits = PushTestWaits(store: store, capacity: configuration.maxPushTestWaits)
        store.health.report(to: { [logSink] line in logSink.log(line) })
        writeProbe = WriteProbe(clock: clock, logSink: logSink) { [store] in
            try store.probeReadable()
            try store.probeWritable()
        }
        eventHub = EventHub(store: store, clock: clock,
                            settings: .init(pingInterval: .seconds(configuration.eventPingSeconds),
                                            pushFailAfterSeconds: configuration.pushFailAfterSeconds),
                            logSink: logSink)
    }

    /// The cache generations of one request, read before its transaction began: a row read
    /// in that transaction is at least as new as they are (see `SessionCache`).
    struct CacheGenerations {
        var sessions: UInt64?
        var answers: UInt64?
    }

    /// One request as the handlers see it.
    struct Call: Sendable {
        var request: HTTPRequest
        var endpoint: Endpoint
        var parameters: [String: String]
        var principal: Principal?
        var now: Date
        /// The generation a cached answer of this request may be keyed on (`StatsCache`), read
        /// before its transaction began; nil when none may be.
        var answerGeneration: UInt64?
        /// What the request's transaction left for after its commit (shared by copies of the call).
        let effects = CommitEffects()

        /// The principal of an authenticated route (the permission table has run already).
        var caller: Principal {
            guard let principal else { preconditionFailure("\(endpoint) reached its handler without a principal") }
            return principal
        }

        func parameter(_ name: String) -> String { parameters[name] ?? "" }
    }

    // MARK: - HTTPResponder

    public func respond(to request: HTTPRequest, reply: @escaping @Sendable (HTTPResponse) -> Void) {
        let started = ContinuousClock.now
        var routeName = "(unmatched)"
        // POSTs answer later, after their commit; everything else answers now.
        let later: @Sendable (HTTPResponse, String) -> Void = { [self] response, routeName in
            reply(finish(request, response, routeName: routeName, started: started))
        }
        do {
            if let response = try handle(request, routeName: &routeName, later: later) {
                reply(finish(request, response, routeName: routeName, started: started))
            }
        } catch {
            reply(finish(request, errorResponse(error, routeName: routeName), routeName: routeName, started: started))
        }
    }

    /// CORS headers, metrics and the log line of one answered request: every answer passes here.
    private func finish(_ request: HTTPRequest, _ response: HTTPResponse, routeName: String,
                        started: ContinuousClock.Instant) -> HTTPResponse {
        let response = crossOrigin.decorate(response, for: request)
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        metrics.recordRequest(route: routeName, status: response.status, seconds: seconds)
        // The route pattern is logged, never the raw path or query: they may carry emails or
        // an event ticket, and no token, ticket, OTP or body is ever written. The method is
        // the client's own text (an unmatched route's may be anything): shown visibly and cut short.
        let tenths = Int((seconds * 10_000).rounded())
        logSink.log("\(VisibleLineLog.field(request.method)) \(routeName) \(response.status) \(tenths / 10).\(tenths % 10)ms")
        return response
    }

    /// The answer, or nil when `later` will be called with it (POSTs, after their commit).
    private func handle(_ request: HTTPRequest, routeName: inout String,
                        later: @escaping @Sendable (HTTPResponse, String) -> Void) throws -> HTTPResponse? {
        if let malformation = request.malformation {
            throw APIError.badRequest("malformed request: \(malformation)")
        }
        if let preflight = crossOrigin.preflightAnswer(request, methods: router.methods(segments:)) {
            routeName = "(preflight)"
            return preflight
        }
        let match = router.match(method: request.method, segments: request.pathSegments)
        if case .found(let route, _) = match { routeName = route.endpoint.pathPattern }
        if request.bodyExceededLimit {
            throw APIError(code: .payloadTooLarge,
                           message: "the body is larger than \(configuration.bodyLimitBytes) bytes")
        }
        let route: Route
        let parameters: [String: String]
        switch match {
        case .notFound:
            throw APIError(code: .notFound, message: "no route \(request.method.prefix(32)) for this path")
        case .methodNotAllowed(let allowed):
            throw APIError(code: .methodNotAllowed, message: "this path answers \(allowed.joined(separator: ", ")) only",
                           headers: ["Allow": allowed.joined(separator: ", ")])
        case .found(let found, let foundParameters):
            route = found
            parameters = foundParameters
        }
        let now = clock.now()
        let endpoint = route.endpoint
        func authorized(_ principal: Principal?, _ generations: CacheGenerations) throws -> Call {
            switch Permissions.may(principal?.kind ?? .anonymous, endpoint.action) {
            case .allowed: break
            case .unauthenticated: throw APIError.unauthorized()
            case .forbidden: throw APIError.forbidden()
            }
            return Call(request: request, endpoint: endpoint, parameters: parameters, principal: principal, now: now,
                        answerGeneration: generations.answers)
        }
        let name = endpoint.pathPattern
        // Before any transaction begins (see `SessionCache` and `StatsCache`).
        let generations = CacheGenerations(sessions: store.sessionCacheGeneration, answers: store.cacheGeneration)
        switch route.work {
        case .sessionless(let handler):
            return try handler(self, request)
        case .deferred(let handler):
            let principal = try principal(request, endpoint, generations, now: now)
            let call = try authorized(principal, generations)
            try chargeLimits(call)
            try handler(self, call) { later($0, name) }
            return nil
        case .write(let handler):
            let principal = try principal(request, endpoint, generations, now: now)
            let call = try authorized(principal, generations)
            try chargeLimits(call)
            try runWrite(call, handler, idempotency: route.idempotency) { later($0, name) }
            return nil
        case .read(let handler, let cachedAnswer):
            let credential = try presentedCredential(request, endpoint)
            // A cached session and a cached answer: no transaction at all.
            if let cachedAnswer, let principal = try cachedPrincipal(credential, generations, now: now),
               let response = try cachedAnswer(self, try authorized(principal, generations)) {
                return response
            }
            // Otherwise a GET borrows one reader for both the session check and the answer.
            return try store.read { tx in
                let principal = try cachedPrincipal(credential, generations, now: now)
                    ?? authenticate(credential, generations, now: now, tx)
                return try handler(self, try authorized(principal, generations), tx)
            }
        }
    }

    /// Takes a write's tokens, or answers 429 `RATE_LIMITED` with `Retry-After` (api.md
    /// "Conventions") before anything is read or stored.
    private func chargeLimits(_ call: Call) throws {
        // Reads (the passes drawn outside a transaction among them) are not limited here.
        guard call.endpoint.method != .get else { return }
        let charges = writeLimits.charges(endpoint: call.endpoint, principal: call.principal, request: call.request)
        if let wait = rateLimiter.take(charges) {
            throw APIError.rateLimited(retryAfter: wait, "too many requests of this kind; try again in \(wait) s")
        }
    }

    /// Takes `count` invitations from the caller's allowance (a HOST's hour and day), or
    /// answers 429 with nothing taken: before anything of the request is stored, so that a
    /// request of several invitations beyond what is left stores none of them.
    func chargeInvitations(_ count: Int, _ call: Call) throws {
        guard let principal = call.principal, count > 0 else { return }
        if let wait = rateLimiter.take(writeLimits.invitationCharges(principal: principal), count: Double(count)) {
            throw APIError.rateLimited(retryAfter: wait, "more invitations than this user may send now; try again in \(wait) s")
        }
    }

    /// The principal of a route that answers outside a read transaction: from the session
    /// cache, or checked in a read transaction of its own.
    private func principal(_ request: HTTPRequest, _ endpoint: Endpoint, _ generations: CacheGenerations,
                           now: Date) throws -> Principal? {
        let credential = try presentedCredential(request, endpoint)
        return try cachedPrincipal(credential, generations, now: now)
            ?? store.read { tx in try authenticate(credential, generations, now: now, tx) }
    }

    /// The credential a request presents: `Authorization: Bearer …`, or `?ticket=` on the
    /// event stream; nil without either. A malformed header is 401 and a ticket anywhere but
    /// `GET /api/events` too, even on public routes: a client that sends a bad credential
    /// should learn at once that it is dead. Nothing is verified yet.
    private func presentedCredential(_ request: HTTPRequest, _ endpoint: Endpoint) throws -> PresentedCredential? {
        if let ticket = request.query["ticket"] {
            guard endpoint == .eventsStream else {
                throw APIError.unauthorized("an event ticket opens \(Endpoint.eventsStream.name) only")
            }
            guard request.header("authorization") == nil else {
                throw APIError.badRequest("send an event ticket or an Authorization header, not both")
            }
            return PresentedCredential(kind: .ticket, text: ticket)
        }
        guard let header = request.header("authorization") else { return nil }
        let bytes = header.utf8
        guard bytes.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw APIError.unauthorized("the Authorization header must be: Bearer <token>")
        }
        // Blanks around the token are not part of it. A byte scan for the ASCII a token is
        // made of; anything else is trimmed as before, by Foundation's (slower) rule.
        guard bytes.allSatisfy({ $0 < 0x80 }) else {
            return PresentedCredential(kind: .bearer, text: header.dropFirst(7).trimmingCharacters(in: .whitespaces))
        }
        let isBlank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        let token = bytes.dropFirst(7).drop(while: isBlank)
        let end = token.lastIndex(where: { !isBlank($0) }).map { bytes.index(after: $0) } ?? token.startIndex
        return PresentedCredential(kind: .bearer, text: String(Substring(bytes[token.startIndex..<end])))
    }

    /// The verified claims of a credential; 401 when its signature or its expiry fails.
    private func verifiedClaims(_ credential: PresentedCredential, now: Date) throws -> TokenClaims {
        let nowSeconds = Int64(now.timeIntervalSince1970)
        switch credential.kind {
        case .ticket:
            guard let verified = ticketSigner.verify(credential.text), verified.expiresAt > nowSeconds else {
                throw APIError.unauthorized("the event ticket is invalid or its session has ended; log in again")
            }
            return verified
        case .bearer:
            guard let verified = signer.verify(credential.text), verified.expiresAt > nowSeconds else {
                throw APIError.unauthorized("the token is invalid or expired; log in again")
            }
            return verified
        }
    }

    /// The principal behind `credential` when the cache holds it (its signature was verified
    /// when it was stored, and that cannot change); nil when it must be verified and its
    /// session read — also when the credential has expired since, so that the reading path
    /// gives the 401 — and nil without a credential (the anonymous caller needs no query).
    private func cachedPrincipal(_ credential: PresentedCredential?, _ generations: CacheGenerations,
                                 now: Date) throws -> Principal? {
        guard let credential, let generation = generations.sessions,
              let (claims, session) = sessionCache.lookup(credential, generation: generation, now: now),
              claims.expiresAt > Int64(now.timeIntervalSince1970)
        else { return nil }
        return try admit(claims, session, now: now)
    }

    /// The principal behind `credential`, verified and its session read in `tx` (and both
    /// cached); nil without a credential.
    private func authenticate(_ credential: PresentedCredential?, _ generations: CacheGenerations, now: Date,
                              _ tx: any Transaction) throws -> Principal? {
        guard let credential else { return nil }
        let claims = try verifiedClaims(credential, now: now)
        let session: StoredSession?
        do {
            session = try tx.sessions.find(id: claims.sessionId)
        } catch {
            // A session or user row that cannot be read admits no one (and is not a server
            // fault to the caller): 401, and the operator is told.
            guard unreadableValues.note(error, in: "authentication", to: logSink) else { throw error }
            throw APIError.unauthorized("the session cannot be read; log in again")
        }
        if let session, let generation = generations.sessions {
            sessionCache.store(session, claims: claims, for: credential, generation: generation, readAt: now)
        }
        return try admit(claims, session, now: now)
    }

    /// The session judged for this request: 401 unless it is live and its user may still
    /// use it. A scanner token outlives a change of the user's rights only as long as they
    /// still allow scanning (a kiosk's credential is not the user's: it goes on).
    private func admit(_ claims: TokenClaims, _ session: StoredSession?, now: Date) throws -> Principal {
        guard let principal = try Sessions.principal(for: claims, session: session, now: now) else {
            throw APIError.unauthorized("the session has ended; log in again")
        }
        if case .scanner = principal.credential, !principal.user.principalKind.mayScan {
            throw APIError.unauthorized("this scanner token's user may no longer scan")
        }
        if principal.tokenKind == .scanner { noteUse(ofScannerSession: principal.sessionId, at: now) }
        return principal
    }

    /// Records a scanner token's use for `GET /api/admin/scanner-tokens`, at most once a
    /// minute per token: the write joins the writer's next group commit and nobody waits for
    /// it, so a check-in does not pay a write of its own.
    private func noteUse(ofScannerSession sessionId: String, at now: Date) {
        let due = lastUseRecorded.withLock { recorded -> Bool in
            if let last = recorded[sessionId], now.timeIntervalSince(last) < 60, now >= last { return false }
            recorded[sessionId] = now
            return true
        }
        guard due else { return }
        store.writeAsync({ tx in try tx.sessions.recordUse(id: sessionId, at: now) }) { [logSink] result in
            if case .failure(let error) = result { logSink.log("a scanner token's last use was not recorded: \(error)") }
        }
    }

    func metricsResponse(_ request: HTTPRequest) throws -> HTTPResponse {
        if let required = configuration.metricsToken {
            let given = request.header("authorization").map { String($0.dropFirst(7)) } ?? ""
            guard request.header("authorization")?.lowercased().hasPrefix("bearer ") == true,
                  constantTimeEquals(Array(given.utf8), Array(required.utf8))
            else { throw APIError.unauthorized("/metrics needs the configured metrics token") }
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                            body: Array(metrics.render().utf8))
    }

    func errorResponse(_ error: any Error, routeName: String) -> HTTPResponse {
        // Also the failures a handler's savepoint caught inside a write that went on.
        store.noteFailure(error)
        let apiError = APIError.from(error)
        if !unreadableValues.note(error, in: routeName, to: logSink),
           apiError.code == .internal || apiError.code == .unavailable {
            logSink.log("error in \(routeName): \(error)")
        }
        return apiError.response
    }

    // MARK: - Writes and idempotency

    /// Runs a POST or DELETE in the writer's next group commit and replies after the commit.
    /// Throws only for problems found before anything is queued.
    private func runWrite(_ call: Call,
                          _ handler: @escaping @Sendable (GatePassApplication, Call, any Transaction) throws -> HTTPResponse,
                          idempotency: Route.Idempotency,
                          reply: @escaping @Sendable (HTTPResponse) -> Void) throws {
        let routeName = call.endpoint.pathPattern
        guard let key = call.request.header("idempotency-key"), let principal = call.principal else {
            store.writeAsync({ tx in try handler(self, call, tx) }) { result in
                self.committed(call)
                switch result {
                case .success(let response): reply(response)
                case .failure(let error): reply(self.errorResponse(error, routeName: routeName))
                }
            }
            return
        }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw APIError.badRequest("Idempotency-Key must be 1 to 255 printable ASCII characters")
        }
        let scope = principal.idempotencyScope
        let slot = scope + "\n" + key
        let claimed = keysInProgress.withLock { $0.insert(slot).inserted }
        changes.signal()
        guard claimed else {
            // Retry-After says it is not final: a client's outbox comes back instead of giving up.
            throw APIError(code: .conflict, message: "a request with this Idempotency-Key is still being processed; retry later",
                           headers: ["Retry-After": "1"])
        }
        let fingerprint = HMACSHA256.authenticate(
            key: fingerprintKey, message: Self.fingerprintMessage(call.request, body: idempotency.fingerprintedBody))
        store.writeAsync({ tx -> (HTTPResponse, Bool) in
            if let stored = try tx.idempotency.find(scope: scope, key: key) {
                // A route that fingerprints part of its body also recognises keys stored
                // when the whole body was fingerprinted (before the route narrowed it).
                guard stored.fingerprint == fingerprint
                        || (idempotency.fingerprintedBody != nil
                            && stored.fingerprint == HMACSHA256.authenticate(key: self.fingerprintKey,
                                                                             message: Self.fingerprintMessage(call.request)))
                else {
                    return (APIError(code: .idempotencyKeyReused,
                                     message: "this Idempotency-Key was used for a different request").response, false)
                }
                var response = HTTPResponse(status: stored.status, headers: stored.headers, body: stored.body)
                if let replay = idempotency.replay {
                    response = try tx.savepoint { try replay(self, call, response, tx) }
                }
                response.headers.append(("Idempotent-Replayed", "true"))
                return (response, true)
            }
            let response: HTTPResponse
            do {
                response = try tx.savepoint { try handler(self, call, tx) }
            } catch {
                response = self.errorResponse(error, routeName: routeName)
            }
            if response.status < 500 {
                try tx.idempotency.insert(scope: scope, key: key,
                                          answer: StoredAnswer(fingerprint: fingerprint, status: response.status,
                                                               headers: response.headers, body: response.body),
                                          at: call.now)
            }
            return (response, false)
        }) { [self] result in
            self.committed(call)
            _ = keysInProgress.withLock { $0.remove(slot) }
            changes.signal()
            switch result {
            case .success(let (response, replayed)):
                if replayed { metrics.recordIdempotentReplay() }
                reply(response)
            case .failure(let error):
                reply(errorResponse(error, routeName: routeName))
            }
        }
    }

    /// What follows a write's commit: the event streams hear of it, the head of the audit log
    /// moves, mail is woken, and streams of ended sessions or changed rights end.
    private func committed(_ call: Call) {
        eventHub.committed()
        if call.effects.audited { moveAuditHead() }
        if call.effects.erasedPersonalData { erased() }
        if call.effects.queuedMail { mailWorker.wake() }
        call.effects.apply(to: eventHub, announcingTo: store)
    }

    /// Another server sharing the database announced something (PostgreSQL's NOTIFY): this
    /// one's streams follow as if it had happened here.
    func heard(_ announcement: StoreAnnouncement) {
        switch announcement {
        case .committed: eventHub.committed()
        case .sessionsEnded: eventHub.sessionsEnded()
        case .rightsChanged(let userIds): eventHub.endStreams(ofUsers: Set(userIds))
        // `ServerDatabase` has moved the session cache's generation already.
        case .principalsChanged: break
        }
    }

    /// Follow-ups of one request's transaction, run after it commits (never before: a worker
    /// woken early would not see the rows yet).
    final class CommitEffects: Sendable {
        private let mail = Atomic<Bool>(false)
        private let endedSessions = Atomic<Bool>(false)
        private let changedUsers = Locked<Set<String>>([])
        private let auditEntries = Atomic<Bool>(false)
        /// Set inside the transaction when it appended an audit entry.
        func noteAudited() { auditEntries.store(true, ordering: .releasing) }
        var audited: Bool { auditEntries.load(ordering: .acquiring) }
        private let erasure = Atomic<Bool>(false)
        /// Set inside the transaction when it anonymised a visitor: the journal is truncated after.
        func noteErasedPersonalData() { erasure.store(true, ordering: .releasing) }
        var erasedPersonalData: Bool { erasure.load(ordering: .acquiring) }
        /// Set inside the transaction when it queued mail.
        func noteQueuedMail() { mail.store(true, ordering: .releasing) }
        var queuedMail: Bool { mail.load(ordering: .acquiring) }
        /// Set inside the transaction when it revoked sessions (a logout, a disabled user):
        /// their event streams must end now, not at their next connect.
        func noteEndedSessions() { endedSessions.store(true, ordering: .releasing) }
        /// Set inside the transaction when a user's role or scanning right changed: its open
        /// streams were filtered for the old rights, so they end and reconnect under the new.
        func noteChangedRights(ofUser userId: String) { changedUsers.withLock { _ = $0.insert(userId) } }

        /// What the event hub must do now that the transaction committed, here and on the
        /// other servers sharing the database.
        func apply(to hub: EventHub, announcingTo store: ServerDatabase) {
            if endedSessions.load(ordering: .acquiring) {
                hub.sessionsEnded()
                store.announce(.sessionsEnded)
            }
            let users = changedUsers.withLock { $0 }
            if !users.isEmpty {
                hub.endStreams(ofUsers: users)
                store.announce(.rightsChanged(userIds: users.sorted()))
            }
        }
    }

    /// push-test answers waiting now (for tests and diagnostics).
    public var pushTestWaitCount: Int { pushTestWaits.count }
    /// Signalled after a push-test wait starts or ends.
    public var pushTestWaitChanges: ChangeSignal { pushTestWaits.changes }

    /// The end of a stop's grace period: writes still queued are refused (503, not applied),
    /// the batch being committed finishes and gets its real answers, push-test waits are
    /// answered 503. Afterwards every write fails with 503 until the store closes.
    func abandonWaits() {
        pushTestWaits.stop()
        store.refuseQueuedWrites()
    }

    /// What an idempotency fingerprint covers (api.md: method, path with its query, body):
    /// `METHOD LF path [NUL query] LF body`. The query's pairs are sorted (their order does
    /// not count) and each key and value is length-prefixed, so `?ab=c` is not `?a=bc`. A
    /// request line holds no raw NUL or LF, so the parts cannot run into each other; without
    /// a query the bytes are those of earlier versions, and keys stored before still replay.
    /// - Parameter body: the part of the body a route fingerprints (`Route.Idempotency`); nil: all of it.
    static func fingerprintMessage(_ request: HTTPRequest, body: (@Sendable ([UInt8]) -> [UInt8])? = nil) -> [UInt8] {
        var message = Array("\(request.method)\n\(request.path)".utf8)
        if !request.query.isEmpty {
            message.append(0)
            for (key, value) in request.query.sorted(by: { $0.key == $1.key ? $0.value < $1.value : $0.key < $1.key }) {
                for part in [key, value] { message += Array("\(part.utf8.count):\(part)".utf8) }
            }
        }
        return message + [UInt8(ascii: "\n")] + (body?(request.body) ?? request.body)
    }

    /// Deletes what has outlived its own limit (README "What is kept, and for how long"):
    /// idempotency records, login codes and their send counters, events (with their
    /// notification marks and push deliveries), the push delivery log, the mail log.
    public func purgeExpiredRecords() {
        let now = clock.now()
        @Sendable func hoursAgo(_ hours: Int) -> Date { now.addingTimeInterval(-TimeInterval(hours) * 3600) }
        do {
            try store.write { tx in
                try tx.idempotency.purge(createdBefore: hoursAgo(self.configuration.idempotencyRetentionHours))
                try tx.otps.purge(sentBefore: hoursAgo(1), expiredBefore: hoursAgo(1))
                try tx.events.purge(olderThan: hoursAgo(self.configuration.eventRetentionHours))
                try tx.push.purgeDeliveries(createdBefore: hoursAgo(self.configuration.pushDeliveryRetentionHours))
                try tx.mail.purge(finishedBefore: hoursAgo(self.configuration.mailLogRetentionHours))
            }
            lastUseRecorded.withLock { $0.removeAll() }
        } catch {
            logSink.log("purge failed: \(error)")
        }
    }
}
