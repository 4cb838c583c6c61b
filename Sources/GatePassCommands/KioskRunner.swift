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
public final class KioskRunner: @unchecked Sendable {
    public struct Options: Sendable {
        public var cooldown: TimeInterval = 3
        public var json = false
        /// Color and bell: only on a terminal.
        public var decorate = false

        public init(cooldown: TimeInterval = 3, json: Bool = false, decorate: Bool = false) {
            self.cooldown = cooldown
            self.json = json
            self.decorate = decorate
        }
    }

    private let core: ClientCore
    private let terminal: any Terminal
    private let clock: any WallClock
    private let options: Options
    private let readCodes: (FrameView) throws -> [String]
    private let notifier: SystemdNotifier

    private let lock = NSLock()
    // Guarded by `lock`.
    private var deduplicator: CodeDeduplicator
    private var awaitingDecision: [String: String] = [:]   // visitor id → scanned code
    private var online = true
    private var stopping = false
    private var lastHeartbeat = ContinuousClock.now
    private var sourceEnded = false
    /// Set when an admin revoked the gate's token or retired its checkpoint (401 `REVOKED`):
    /// the outbox and the event stream are stopped, nothing is sent, and each pass is answered
    /// with this until a new enrolment is found in the state file.
    private var signedOut: String?

    private let checkIns = DispatchQueue(label: "gatepass.kiosk.checkins")
    // Guarded by `lock`: a gate signed out and enrolled again replaces them on the check-in queue.
    private var outbox: OutboxService?
    private var events: EventStreamConsumer?
    private var network: (outbox: OutboxService?, events: EventStreamConsumer?) { lock.withLock { (outbox, events) } }

    public init(core: ClientCore, terminal: any Terminal, clock: any WallClock, options: Options, notifier: SystemdNotifier,
         readCodes: @escaping (FrameView) throws -> [String]) {
        self.core = core
        self.terminal = terminal
        self.clock = clock
        self.options = options
        self.notifier = notifier
        self.readCodes = readCodes
        deduplicator = CodeDeduplicator(cooldown: options.cooldown)
    }

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
        let outbox = OutboxService(core: core) { [weak self] report, online in
            self?.lock.withLock { self?.online = online }
            // Check-ins queued while offline have now been decided: show what they became.
            for entry in report.applied where entry.kind == "checkin" {
                guard let body = report.answers[entry.id],
                      let answer = try? APIClient.decode(CheckInAnswer.self, from: body) else { continue }
                let code = answer.visitor.shortId.rawValue
                var decision = GateDecision.from(answer, code: code)
                decision.reason += " (sent after the server came back)"
                self?.record(decision)
            }
        }
        lock.withLock { self.outbox = outbox }
        outbox.start()
        let events = try core.eventConsumer(credential: .scanner, onStatus: { [weak self] status in
            guard let self else { return }
            switch status {
            case .connected: log("event stream: live")
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
        let (outbox, events) = network
        events?.stop()
        outbox?.stop()
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
        if decision.result == ScanResult.approvalRequired.rawValue {
            // Unattended: nobody could press a key, so the gate asks for approval itself.
            if let requested = checkIn(code, confirmApprovalRequest: true) { record(requested) }
        } else {
            record(decision)
        }
    }

    /// One check-in through the client core; nil when the kiosk is not logged in (said once).
    private func checkIn(_ code: String, confirmApprovalRequest: Bool) -> GateDecision? {
        let offline = lock.withLock { !online }
        do {
            if offline {
                // The drain sends it; queued offline scans ask for approval if the pass needs
                // it, since nobody can be asked to scan again.
                _ = try core.queueCheckIn(code: code, confirmApprovalRequest: true)
                return .queued(code: code)
            }
            switch try core.checkIn(code: code, confirmApprovalRequest: confirmApprovalRequest) {
            case .applied(let response):
                let answer = try APIClient.decode(CheckInAnswer.self, from: response.body)
                return GateDecision.from(answer, code: code)
            case .queued:
                lock.withLock { online = false }
                network.outbox?.poke()
                return .queued(code: code)
            case .refused(let status, _, _):
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

    // MARK: - Signed out by an admin

    /// Stops the network work for good (no retry, no renewal), says why once, and waits.
    private func signOut(_ reason: String) {
        let first = lock.withLock { () -> Bool in
            guard signedOut == nil else { return false }
            signedOut = reason
            return true
        }
        guard first else { return }
        let (outbox, events) = network
        events?.stop()
        outbox?.stop()
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
        lock.withLock { signedOut = nil; online = true }
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
        guard event.kind == .visitorDecided, case .visitor(let data)? = try? event.payload() else { return }
        guard let code = lock.withLock({ awaitingDecision.removeValue(forKey: data.visitor.id) }) else { return }
        checkIns.async { [self] in
            if data.visitor.status == .approved, let admitted = checkIn(code, confirmApprovalRequest: false) {
                show(admitted)
            } else {
                show(.decided(data.visitor, code: code))
            }
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
