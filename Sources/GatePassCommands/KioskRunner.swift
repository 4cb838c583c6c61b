import Foundation
import GatePassClient
import GatePassCore
import GatePassScanner

/// The unattended gate: frames in, one decision line per new pass out.
///
/// The frame loop runs on the caller's thread and never waits for the network: each new code
/// (after the held-code/cooldown rules) is handed to a serial queue that checks it in through
/// the client core, so a slow or absent server never stalls the camera. A pass that needs
/// approval gets it requested at once; the approver's decision arrives on the event stream
/// (the scanner token's stream carries `visitor.decided` for what its checkpoint asked) and an
/// approval is followed by the check-in. While the outbox service says the server is
/// unreachable, check-ins are queued without a connect attempt, so the gate answers at once.
///
/// Offline (issue 13): a check-in that gets no answer within `offlineAfter` (its request
/// timeout), and every scan while the server is known to be away, is decided by the kiosk
/// itself from its pass cache (`ClientCore.decideOffline`, the domain's `OfflineDecision`) as
/// `offlinePolicy` allows, and queued with that decision for the replay. A kiosk the server
/// refused (401, 403, `REVOKED`) never decides offline. The pass cache is kept current by a
/// `PassCacheService` (every 30 s, and at once when the server comes back).
public final class KioskRunner: @unchecked Sendable {
    public struct Options: Sendable {
        public var cooldown: TimeInterval = 3
        public var json = false
        /// Color and bell: only on a terminal.
        public var decorate = false
        /// What the kiosk may decide while the server does not answer.
        public var offlinePolicy: OfflinePolicy = .signed
        /// The site's zone: "today" for the pass cache.
        public var siteTimeZone: TimeZone = .current
        /// How often the pass cache is brought up to date.
        public var cacheInterval: TimeInterval = 30

        public init(cooldown: TimeInterval = 3, json: Bool = false, decorate: Bool = false, offlinePolicy: OfflinePolicy = .signed,
                    siteTimeZone: TimeZone = .current, cacheInterval: TimeInterval = 30) {
            self.cooldown = cooldown
            self.json = json
            self.decorate = decorate
            self.offlinePolicy = offlinePolicy
            self.siteTimeZone = siteTimeZone
            self.cacheInterval = cacheInterval
        }
    }

    /// How long a scan waits for the server before the kiosk decides by itself (`offlineAfterMs`).
    public static let defaultOfflineAfterMilliseconds = 1500

    private let core: ClientCore
    private let terminal: any Terminal
    private let clock: any WallClock
    private let options: Options
    private let readCodes: (FrameView) throws -> [String]
    private let notifier: SystemdNotifier
    /// The first try of each check-in goes over this handle, whose request timeout is
    /// `offlineAfterMs`: the guard never waits longer for a decision. Nil: the core's handle.
    private let checkInTransport: (any HTTPTransport)?

    private let lock = NSLock()
    // Guarded by `lock`.
    private var deduplicator: CodeDeduplicator
    private var awaitingDecision: [String: String] = [:]   // visitor id → scanned code
    /// Whether a scan's first try is made, or the scan is decided offline at once.
    private var reachability = GateReachability()
    private var stopping = false
    private var lastHeartbeat = ContinuousClock.now
    private var sourceEnded = false
    /// Set when an admin revoked the gate's token or retired its checkpoint (401 `REVOKED`):
    /// the outbox and the event stream are stopped, nothing is sent, and each pass is answered
    /// with this until a new enrolment is found in the state file.
    private var signedOut: String?
    /// The clock warning last said (nil: the kiosk's clock agrees with the server's).
    private var clockWarning: String?
    /// Whether the last pass-cache sync failed (said once per failure streak).
    private var cacheSyncFailing = false

    private let checkIns = DispatchQueue(label: "gatepass.kiosk.checkins")
    // Guarded by `lock`: a gate signed out and enrolled again replaces them on the check-in queue.
    private var outbox: OutboxService?
    private var events: EventStreamConsumer?
    private var passCache: PassCacheService?
    private var network: (outbox: OutboxService?, events: EventStreamConsumer?, passCache: PassCacheService?) {
        lock.withLock { (outbox, events, passCache) }
    }

    public init(core: ClientCore, terminal: any Terminal, clock: any WallClock, options: Options, notifier: SystemdNotifier,
                checkInTransport: (any HTTPTransport)? = nil, readCodes: @escaping (FrameView) throws -> [String]) {
        self.core = core
        self.terminal = terminal
        self.clock = clock
        self.options = options
        self.notifier = notifier
        self.checkInTransport = checkInTransport
        self.readCodes = readCodes
        deduplicator = CodeDeduplicator(cooldown: options.cooldown)
    }

    /// Signalled after every pass-cache sync, whatever its outcome (what tests wait on).
    public let cacheSyncs = ChangeSignal()

    var isStopping: Bool { lock.withLock { stopping } }

    /// Why the gate is signed out, if it is (for tests and the status line).
    public var signedOutReason: String? { lock.withLock { signedOut } }
    /// Signalled when the gate signs out or comes back (what tests wait on).
    public let signedOutChanges = ChangeSignal()

    /// Starts the outbox drain and the event stream; call before `scan`. A gate whose token was
    /// revoked starts signed out.
    public func start() throws(ClientError) {
        if let revoked = try core.scannerRevocation() {
            signOut(revoked)
            return
        }
        try startNetwork()
    }

    private func startNetwork() throws(ClientError) {
        let passCache = PassCacheService(core: core, timeZone: options.siteTimeZone, interval: options.cacheInterval,
                                         onSync: { [weak self] result in self?.cacheSynced(result) })
        lock.withLock { self.passCache = passCache }
        passCache.start()
        let outbox = OutboxService(core: core) { [weak self] report, online in
            guard let self else { return }
            let cameBack = lock.withLock { reachability.probed(online: online) }
            // Back online: the cache catches up at once (what changed while the kiosk was away).
            if cameBack { network.passCache?.poke() }
            for entry in report.applied where entry.kind == "checkin" { replayed(entry, answer: report.answers[entry.id]) }
        }
        lock.withLock { self.outbox = outbox }
        outbox.start()
        let events = try core.eventConsumer(credential: .scanner, onStatus: { [weak self] status in
            guard let self else { return }
            switch status {
            case .connected:
                log("event stream: live")
                checkIns.async { [self] in catchUpDecisions() }
            case .waiting(let retryIn, let error):
                log("event stream: offline (\(ClientCommands.sentence(for: error))); retrying in \(Int(retryIn.rounded(.up))) s")
            case .stopped(let reason?):
                log("event stream stopped: \(ClientCommands.sentence(for: reason))")
                // A refused stream may mean an admin revoked the gate: one request tells.
                if case .unauthorized = reason { checkIns.async { [self] in checkRevocation() } }
            case .connecting, .stopped(nil): break
            }
        }, onEvent: { [weak self] event in self?.handle(event) })
        lock.withLock { self.events = events }
        events.start()
    }

    /// Reads frames until the source ends or `stop()`; returns how many frames were read.
    @discardableResult
    public func scan(_ source: any FrameSource) throws -> Int {
        var frames = 0
        while !isStopping {
            let more = try source.withNextFrame { frame in
                frames += 1
                let codes = (try? readCodes(frame)) ?? []
                let now = clock.now()
                let fresh = lock.withLock {
                    lastHeartbeat = .now
                    return deduplicator.observe(Set(codes), at: now).filter { deduplicator.beginProcessing($0) }
                }
                for code in fresh { checkIns.async { [self] in process(code) } }
            }
            if !more { break }
        }
        lock.withLock { sourceEnded = true }
        return frames
    }

    /// For the watchdog: the frame loop went round lately, or has nothing left to read.
    public func isResponsive(within interval: Duration) -> Bool {
        lock.withLock { sourceEnded || ContinuousClock.now - lastHeartbeat < interval }
    }

    /// Waits until every queued check-in and requested approval has an answer (for finite
    /// sources), or `timeout` passes.
    public func settle(timeout: TimeInterval) {
        let deadline = Date().addingTimeInterval(timeout)
        checkIns.sync {}
        while Date() < deadline, lock.withLock({ !awaitingDecision.isEmpty }) {
            Thread.sleep(forTimeInterval: 0.05)
        }
        checkIns.sync {}
    }

    public func stop() {
        lock.withLock { stopping = true }
        let (outbox, events, passCache) = network
        events?.stop()
        outbox?.stop()
        passCache?.stop()
        checkIns.sync {}
    }

    // MARK: - Check-ins

    private func process(_ code: String) {
        defer { lock.withLock { deduplicator.finishProcessing(code, at: clock.now()) } }
        if let reason = lock.withLock({ signedOut }) {
            guard resumeIfEnrolledAgain() else {
                show(.signedOut(code: code, reason: reason))
                return
            }
        }
        let decision = checkIn(code, confirmApprovalRequest: false)
        guard let decision else { return }
        // Offline, nobody can be asked: the replay's APPROVAL_REQUIRED asks (see `replayed`).
        if decision.result == ScanResult.approvalRequired.rawValue, decision.offlineBasis == nil {
            // Unattended: nobody could press a key, so the gate asks for approval itself.
            if let requested = checkIn(code, confirmApprovalRequest: true) { record(requested) }
        } else {
            record(decision)
        }
    }

    /// One check-in through the client core; nil when the kiosk is not logged in (said once).
    private func checkIn(_ code: String, confirmApprovalRequest: Bool) -> GateDecision? {
        let offline = lock.withLock { !reachability.triesFirst }
        do {
            if offline {
                // The server is known to be away: decided here at once, no connect attempt.
                return try decideOffline(code, scannedAt: clock.now(), attempt: nil)
            }
            switch try core.checkIn(code: code, confirmApprovalRequest: confirmApprovalRequest, over: checkInTransport) {
            case .applied(let response):
                lock.withLock { reachability.answered() }
                let answer = try APIClient.decode(CheckInAnswer.self, from: response.body)
                return GateDecision.from(answer, code: code)
            case .queued(let entry, _):
                // No answer within offlineAfterMs (or a failure): this scan is decided here.
                // After two in a row the scans that follow are decided at once, without a try,
                // until the outbox's probe finds the server again.
                lock.withLock { reachability.failed() }
                // The decision goes into the entry before the drain is asked to replay it.
                let decision = try decideOffline(code, scannedAt: entry.scannedAt ?? clock.now(), attempt: entry)
                network.outbox?.poke()
                return decision
            case .refused(let status, _, _):
                lock.withLock { reachability.answered() }
                return .refused(ScanResult(refusalStatus: status), code: code)
            case .needsLogin(_, let message):
                if let revoked = try core.scannerRevocation() {
                    signOut(revoked)
                    return .signedOut(code: code, reason: revoked)
                }
                log("the server refused this kiosk's session (\(message)); log in again — scans are queued meanwhile")
                return .queued(code: code)
            }
        } catch {
            log("check-in of a scanned code failed: \(ClientCommands.sentence(for: error))")
            return nil
        }
    }

    // MARK: - Offline

    /// Decides `code` from the pass cache at the scan's time and queues the scan with that
    /// decision: in the entry of the attempt that got no answer (same key), or a new one.
    private func decideOffline(_ code: String, scannedAt: Date, attempt: OutboxEntry?) throws(ClientError) -> GateDecision {
        let decision = try core.decideOffline(code: code, scannedAt: scannedAt, policy: options.offlinePolicy)
        if let attempt {
            try core.attachOfflineDecision(decision.result, to: attempt)
        } else {
            try core.queueOfflineCheckIn(code: code, decision: decision.result, scannedAt: scannedAt)
        }
        let age = try core.passCacheSyncedAt().map { clock.now().timeIntervalSince($0) }
        return GateDecision.offline(decision, code: code, cacheAge: age)
    }

    /// A replayed check-in's answer: a conflict with what was decided offline is shown, an
    /// offline scan that needed approval gets it requested now, and a check-in queued by an
    /// older build (no offline decision) shows what it became.
    private func replayed(_ entry: OutboxEntry, answer body: [UInt8]?) {
        let sent = entry.body.flatMap { try? JSONDecoder().decode(CheckInBody.self, from: Data($0.utf8)) }
        guard let body else { return }
        guard let answer = try? APIClient.decode(CheckInAnswer.self, from: body) else {
            // A scan refused offline, answered 400 INVALID / 404 NOT_FOUND: recorded, delivered.
            if let sent, let offlineDecision = sent.offlineDecision,
               let refusal = try? APIClient.decode(APIErrorBody.self, from: body) {
                terminal.err(visible: "offline scan of \(sent.shortId) delivered: decided \(offlineDecision.rawValue) offline, "
                             + "the server answered \(refusal.error.code)")
            }
            return
        }
        let code = sent?.shortId ?? answer.visitor.shortId.rawValue
        guard let offlineDecision = sent?.offlineDecision else {
            var decision = GateDecision.from(answer, code: code)
            decision.reason += " (sent after the server came back)"
            record(decision)
            return
        }
        if answer.conflict == true {
            show(.conflict(answer, offlineDecision: offlineDecision, code: code))
        } else {
            terminal.err(visible: "offline scan of \(answer.visitor.shortId.rawValue) delivered: decided \(offlineDecision.rawValue) offline, "
                         + "the server recorded \(answer.result.rawValue)")
        }
        // Asked for only where the gate refused: a visitor admitted offline is inside already.
        if answer.result == .approvalRequired, offlineDecision != .checkedIn {
            checkIns.async { [self] in
                if let requested = checkIn(code, confirmApprovalRequest: true) { record(requested) }
            }
        }
    }

    /// After each pass-cache sync: the cache's age in the status, the clock check, and a line
    /// when syncing starts or stops failing.
    private func cacheSynced(_ result: Result<PassCacheSyncReport, ClientError>) {
        defer { cacheSyncs.signal() }
        let status = try? core.passCacheStatus()
        let age = status.map { GateDecision.ageText(Int($0.age(at: clock.now()))) } ?? "no cache"
        switch result {
        case .success(let report):
            let wasFailing = lock.withLock { () -> Bool in
                defer { cacheSyncFailing = false }
                return cacheSyncFailing
            }
            if report.fullLoad || wasFailing, let status {
                log("pass cache: \(status.passes) passes, \(status.revoked) revoked, \(status.keys) keys, \(status.onSite) on site"
                    + (report.problems.isEmpty ? "" : "; " + report.problems.joined(separator: "; ")))
            }
            noteClock(offset: report.clockOffset)
            notifier.status(clockWarningText() ?? "scanning; pass cache \(age)")
        case .failure(let error):
            if case .revoked(let message) = error {
                signOut(message)
                return
            }
            let first = lock.withLock { () -> Bool in
                defer { cacheSyncFailing = true }
                return !cacheSyncFailing
            }
            if first { log("pass cache not refreshed (\(ClientCommands.sentence(for: error))); \(age)") }
        }
    }

    /// Says when the kiosk's clock drifts more than 2 minutes from the server's, and when it is right again.
    private func noteClock(offset: TimeInterval?) {
        let warning = ServerClock.warning(offset: offset)
        let changed = lock.withLock { () -> Bool in
            defer { clockWarning = warning }
            return clockWarning != warning
        }
        guard changed else { return }
        if let warning {
            log(warning)
        } else if offset != nil {
            log("the kiosk's clock agrees with the server's again")
        }
    }

    private func clockWarningText() -> String? { lock.withLock { clockWarning } }

    /// The clock warning, if the kiosk's clock is off (for tests and the status line).
    public var clockProblem: String? { clockWarningText() }

    // MARK: - Signed out by an admin

    /// Stops the network work for good (no retry, no renewal), says why once, and waits.
    private func signOut(_ reason: String) {
        let first = lock.withLock { () -> Bool in
            guard signedOut == nil else { return false }
            signedOut = reason
            return true
        }
        guard first else { return }
        let (outbox, events, passCache) = network
        events?.stop()
        outbox?.stop()
        passCache?.stop()
        log("this kiosk was signed out by an admin (\(reason)); it checks nobody in until it is enrolled again: gatepass kiosk enrol CODE --server URL")
        signedOutChanges.signal()
    }

    /// After a stream refused: asks once whether the token was revoked, and signs out if so.
    private func checkRevocation() {
        do {
            try core.probeScannerToken()
        } catch {
            if let revoked = try? core.scannerRevocation() { signOut(revoked) }
        }
    }

    /// A new enrolment (or login) clears the revocation in the state file: the gate starts again.
    private func resumeIfEnrolledAgain() -> Bool {
        guard (try? core.scannerRevocation()) ?? nil == nil, !isStopping else { return false }
        do {
            try startNetwork()
        } catch {
            return false
        }
        lock.withLock { signedOut = nil; reachability = GateReachability() }
        log("enrolled again: scanning")
        signedOutChanges.signal()
        return true
    }

    private func record(_ decision: GateDecision) {
        if decision.outcome == .approvalRequested, let visitorId = decision.visitorId {
            lock.withLock { awaitingDecision[visitorId] = decision.code }
        }
        show(decision)
    }

    // MARK: - Events

    private func handle(_ event: ServerEvent) {
        guard case .visitor(let data)? = try? event.payload() else { return }
        // A cancellation or rejection the stream shows is honoured offline from now on.
        do throws(ClientError) {
            try core.notePassCacheEvent(data.visitor)
        } catch {
            log("pass cache: an event's revocation was not recorded (\(ClientCommands.sentence(for: error)))")
        }
        guard event.kind == .visitorDecided else { return }
        checkIns.async { [self] in decided(data.visitor) }
    }

    /// An approver decided on a pass this gate asked about: admit it, or say what was decided.
    /// Runs on the check-in queue; a visitor no longer awaited (decided already) is ignored.
    private func decided(_ visitor: Visitor) {
        guard let code = lock.withLock({ awaitingDecision.removeValue(forKey: visitor.id) }) else { return }
        if visitor.status == .approved, let admitted = checkIn(code, confirmApprovalRequest: false) {
            show(admitted)
        } else {
            show(.decided(visitor, code: code))
        }
    }

    /// A stream that connects without having seen an event starts at "now" (api.md), so a
    /// decision made while it was away — an approval requested by a replay just after the
    /// network came back — would never arrive: each pass still awaited is looked up once.
    private func catchUpDecisions() {
        let waiting = lock.withLock { awaitingDecision }
        for (visitorId, code) in waiting {
            guard let shortId = try? QRPayload.reference(from: code).shortId,
                  let visitor = try? core.scannerLookup(shortId: shortId), visitor.id == visitorId,
                  [.approved, .rejected, .cancelled].contains(visitor.status)
            else { continue }
            decided(visitor)
        }
    }

    // MARK: - Output

    private func show(_ decision: GateDecision) {
        if options.json {
            terminal.out(CanonicalJSON.string(decision))
            return
        }
        guard options.decorate else {
            terminal.out(decision.line)
            return
        }
        let (color, bell) = switch decision.outcome {
        case .admitted: ("\u{1B}[1;37;42m", "")
        case .denied: ("\u{1B}[1;37;41m", "\u{07}")
        case .approvalRequested: ("\u{1B}[1;30;43m", "")
        case .queuedOffline: ("\u{1B}[1;37;44m", "")
        case .signedOut: ("\u{1B}[1;37;41m", "\u{07}")
        }
        terminal.out("\(bell)\(color)  \(decision.line)  \u{1B}[0m")
    }

    /// Messages quote the server and the session: shown visibly, on the terminal and in systemd's status.
    private func log(_ text: String) {
        let text = TerminalText.visible(text)
        terminal.err(text)
        notifier.status(text)
    }
}

/// When the gate tries the server first and when it decides a scan offline at once (issue
/// 13): a scan whose first try got no answer within `offlineAfterMs` is decided offline; after
/// two such failures in a row, or once the outbox's probe found the server away, the scans
/// that follow are decided at once, without a try, until a try or the probe succeeds.
struct GateReachability: Equatable {
    private(set) var consecutiveFailures = 0
    private(set) var probedOffline = false

    /// Whether the next scan's first try is made.
    var triesFirst: Bool { consecutiveFailures < 2 && !probedOffline }

    mutating func failed() { consecutiveFailures += 1 }
    mutating func answered() { consecutiveFailures = 0; probedOffline = false }

    /// The outbox's probe: returns true when the server came back.
    mutating func probed(online: Bool) -> Bool {
        let cameBack = online && !triesFirst
        if online { consecutiveFailures = 0 }
        probedOffline = !online
        return cameBack
    }
}
