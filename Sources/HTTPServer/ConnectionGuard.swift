import Foundation
import GatePassCore

/// Keeps any one peer from taking the server off the air: a cap on connections per IPv4
/// address, and deadlines that do not restart with every byte.
///
/// libmicrohttpd's own timeout is an idle timeout: a peer that trickles one byte a second
/// keeps a connection forever. So each connection's phase is tracked from libmicrohttpd's
/// callbacks, and a timer closes (`shutdown(2)`; libmicrohttpd then sees end-of-file and
/// cleans up) every connection whose phase outlived its deadline:
///
/// | phase | starts | must end within |
/// |---|---|---|
/// | reading headers | connection accepted, or the request line of a later request | `headerTimeout` |
/// | waiting for the next request | the previous request completed | `keepAliveTimeout` (until its request line) |
/// | reading the body | headers complete | `bodyTimeout` |
/// | processing, streaming | the request was handed to the responder | no deadline of ours |
///
/// Thread-safety: every field of every record is guarded by `lock`; libmicrohttpd closes a
/// socket only after its connection-closed notification, which removes the record under the
/// same lock, so a `shutdown` here can never reach a descriptor that was reused.
final class ConnectionGuard: @unchecked Sendable {
    enum Phase {
        case readingHeaders
        case awaitingRequest
        case readingBody
        case processing
    }

    final class Record {
        let address: UInt32
        let socket: Int32
        var phase: Phase = .readingHeaders
        var phaseStarted: ContinuousClock.Instant
        /// Counted against its address's cap (false for one refused at the cap).
        var counted: Bool
        var shutDown = false
        /// The request target as sent, recorded by the URI log callback for the access handler.
        var rawTarget: String?

        init(address: UInt32, socket: Int32, now: ContinuousClock.Instant, counted: Bool) {
            self.address = address
            self.socket = socket
            phaseStarted = now
            self.counted = counted
        }
    }

    struct Limits {
        var perAddress: Int
        var exempt: Set<UInt32>
        var headerTimeout: Duration
        var bodyTimeout: Duration
        var keepAliveTimeout: Duration
    }

    private let limits: Limits
    private let lock = NSLock()
    private var records: [ObjectIdentifier: Record] = [:]
    private var perAddress: [UInt32: Int] = [:]
    private var timer: DispatchSourceTimer?
    // Connections closed for a deadline or refused at the cap (read through `counters`).
    private var closedForDeadline = 0
    private var refusedAtCap = 0

    /// Connections refused at the cap and closed for a deadline so far, for tests and metrics.
    var counters: (refusedAtCap: Int, closedForDeadline: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (refusedAtCap, closedForDeadline)
    }

    init(limits: Limits) {
        self.limits = limits
    }

    /// Cheap early refusal from the accept policy, before libmicrohttpd allocates anything.
    /// `admit` makes the exact decision.
    func mayAccept(address: UInt32) -> Bool {
        if limits.exempt.contains(address) { return true }
        lock.lock()
        defer { lock.unlock() }
        let open = perAddress[address, default: 0]
        if open >= limits.perAddress { refusedAtCap += 1 }
        return open < limits.perAddress
    }

    /// A connection was accepted. Over the cap it is shut down at once (it is not counted).
    func admit(address: UInt32, socket: Int32) -> Record {
        lock.lock()
        defer {
            lock.unlock()
            changes.signal()
        }
        let exempt = limits.exempt.contains(address)
        let open = perAddress[address, default: 0]
        let admitted = exempt || open < limits.perAddress
        let record = Record(address: address, socket: socket, now: .now, counted: admitted && !exempt)
        records[ObjectIdentifier(record)] = record
        if record.counted { perAddress[address] = open + 1 }
        if !admitted {
            refusedAtCap += 1
            record.shutDown = true
            _ = shutdown(socket, Int32(SHUT_RDWR))
        }
        return record
    }

    func closed(_ record: Record) {
        lock.lock()
        defer {
            lock.unlock()
            changes.signal()
        }
        records.removeValue(forKey: ObjectIdentifier(record))
        guard record.counted else { return }
        let remaining = perAddress[record.address, default: 1] - 1
        perAddress[record.address] = remaining > 0 ? remaining : nil
    }

    /// The request line arrived: a connection waiting for its next request now reads headers.
    func requestLineArrived(_ record: Record, target: String) {
        lock.lock()
        defer { lock.unlock() }
        record.rawTarget = target
        if record.phase == .awaitingRequest { enter(.readingHeaders, record) }
    }

    /// Takes the target recorded by `requestLineArrived` (nil if none was recorded).
    func takeTarget(_ record: Record) -> String? {
        lock.lock()
        defer { lock.unlock() }
        defer { record.rawTarget = nil }
        return record.rawTarget
    }

    func move(_ record: Record, to phase: Phase) {
        lock.lock()
        defer { lock.unlock() }
        enter(phase, record)
    }

    private func enter(_ phase: Phase, _ record: Record) {
        record.phase = phase
        record.phaseStarted = .now
    }

    /// Open connections of one address (those counted against its cap).
    /// Signalled after a connection is admitted or closed (what tests wait on).
    let changes = ChangeSignal()

    func openConnections(from address: UInt32) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return perAddress[address, default: 0]
    }

    /// Starts the deadline timer (it holds no thread between ticks).
    func start() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .userInitiated))
        timer.schedule(deadline: .now() + .milliseconds(200), repeating: .milliseconds(200), leeway: .milliseconds(50))
        timer.setEventHandler { [weak self] in self?.enforceDeadlines(now: .now) }
        timer.resume()
        lock.lock()
        self.timer = timer
        lock.unlock()
    }

    func stop() {
        lock.lock()
        let timer = self.timer
        self.timer = nil
        lock.unlock()
        timer?.cancel()
    }

    /// Shuts down every connection whose phase has outlived its deadline.
    func enforceDeadlines(now: ContinuousClock.Instant) {
        lock.lock()
        defer { lock.unlock() }
        for record in records.values where !record.shutDown {
            let limit: Duration
            switch record.phase {
            case .readingHeaders: limit = limits.headerTimeout
            case .awaitingRequest: limit = limits.keepAliveTimeout
            case .readingBody: limit = limits.bodyTimeout
            case .processing: continue
            }
            guard now - record.phaseStarted > limit else { continue }
            record.shutDown = true
            closedForDeadline += 1
            _ = shutdown(record.socket, Int32(SHUT_RDWR))
        }
    }
}

/// Parses a dotted IPv4 address into network byte order, as the connection callbacks give it.
func ipv4Address(_ text: String) -> UInt32? {
    var address = in_addr()
    guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
    return address.s_addr
}
