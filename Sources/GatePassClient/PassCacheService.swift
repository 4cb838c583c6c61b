import Foundation
import GatePassCore

/// Keeps the kiosk's pass cache current in the background: a sync at start, every `interval`
/// (30 s) and at once when poked (the server came back). Syncs over its own HTTP handle, so
/// a sync hanging on a silent server never holds a scan's check-in.
///
/// The interval is measured on the injected `WallClock` (the core's by default): a test that
/// moves its clock calls `clockDidAdvance()` and the service acts as if the time had passed.
public final class PassCacheService: @unchecked Sendable {
    // @unchecked: `worker` is guarded by `lock`; the rest is immutable.
    private let core: ClientCore
    private let interval: TimeInterval
    private let timeZone: TimeZone
    private let transport: any HTTPTransport
    private let clock: any WallClock
    /// Signalled by `poke`, `stop` and `clockDidAdvance`: the wait between syncs looks again.
    private let wake = DispatchSemaphore(value: 0)
    /// Set by `poke`: the wait ends whatever the clock says.
    private let poked = Locked(false)
    private let onWait: @Sendable (_ until: Date) -> Void
    private let lock = NSLock()
    /// The running thread's stop flag and the semaphore it signals as it ends.
    private var worker: Worker?
    private struct Worker {
        var stopping: Locked<Bool>
        var ended: DispatchSemaphore
        var thread: Thread
    }
    private let onSync: @Sendable (Result<PassCacheSyncReport, ClientError>) -> Void

    /// - Parameters:
    ///   - clock: what the interval is measured on; nil means the core's clock.
    ///   - onSync: called on the service's thread after every sync.
    ///   - onWait: a hook for tests that move the clock: called on the service's thread as each
    ///     wait begins, with its deadline on `clock`; a `clockDidAdvance()` after it is seen.
    public init(core: ClientCore, timeZone: TimeZone, interval: TimeInterval = 30, clock: (any WallClock)? = nil,
                onSync: @escaping @Sendable (Result<PassCacheSyncReport, ClientError>) -> Void = { _ in },
                onWait: @escaping @Sendable (_ until: Date) -> Void = { _ in }) {
        self.core = core
        self.timeZone = timeZone
        self.interval = interval
        self.clock = clock ?? core.clock
        self.onSync = onSync
        self.onWait = onWait
        transport = core.transport.separateHandle()
    }

    public func start() {
        lock.withLock {
            guard worker == nil else { return }
            let stopping = Locked(false), ended = DispatchSemaphore(value: 0)
            let thread = Thread { [self] in
                loop(stopping)
                ended.signal()
            }
            thread.name = "gatepass-pass-cache"
            worker = Worker(stopping: stopping, ended: ended, thread: thread)
            thread.start()
        }
    }

    /// Asks for a sync now (on reconnect).
    public func poke() {
        poked.withLock { $0 = true }
        wake.signal()
    }

    /// Tells a waiting service that the injected clock moved, so it checks its deadline now.
    public func clockDidAdvance() { wake.signal() }

    /// Ends the service; returns once its thread has exited (a sync in flight finishes first).
    /// Called from `onSync` it returns at once, the thread ending after.
    public func stop() {
        guard let worker = lock.withLock({ () -> Worker? in
            defer { self.worker = nil }
            return self.worker
        }) else { return }
        worker.stopping.withLock { $0 = true }
        wake.signal()
        guard Thread.current !== worker.thread else { return }
        worker.ended.wait()
    }

    private func loop(_ stopping: Locked<Bool>) {
        while !stopping.withLock({ $0 }) {
            do throws(ClientError) {
                onSync(.success(try core.syncPassCache(timeZone: timeZone, transport: transport)))
            } catch {
                onSync(.failure(error))
                // Revoked is final: nothing more is asked of the server until a new enrolment.
                if case .revoked = error { return }
            }
            waitForNextSync(stopping)
        }
    }

    /// Until the clock has moved `interval` on, a poke or a stop. Real time stands in for the
    /// clock between two looks at it; `clockDidAdvance` makes it look at once.
    private func waitForNextSync(_ stopping: Locked<Bool>) {
        let deadline = clock.now().addingTimeInterval(interval)
        onWait(deadline)
        while !stopping.withLock({ $0 }) {
            let remaining = deadline.timeIntervalSince(clock.now())
            guard remaining > 0 else { break }
            guard wake.wait(timeout: .now() + remaining) == .success else { continue }
            // Several pokes while a sync ran ask for one more sync, not several.
            if poked.withLock({ (value: inout Bool) -> Bool in defer { value = false }; return value }) { break }
        }
    }
}
