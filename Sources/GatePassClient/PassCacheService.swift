import Foundation
import GatePassCore

/// Keeps the kiosk's pass cache current in the background: a sync at start, every `interval`
/// (30 s) and at once when poked (the server came back). Syncs over its own HTTP handle, so
/// a sync hanging on a silent server never holds a scan's check-in.
public final class PassCacheService: @unchecked Sendable {
    // @unchecked: `worker` is guarded by `lock`; the rest is immutable.
    private let core: ClientCore
    private let interval: TimeInterval
    private let timeZone: TimeZone
    private let transport: any HTTPTransport
    /// Signalled by `poke` and `stop`: the wait between syncs ends early.
    private let wake = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    /// The running thread's stop flag and the semaphore it signals as it ends.
    private var worker: Worker?
    private struct Worker {
        var stopping: Locked<Bool>
        var ended: DispatchSemaphore
        var thread: Thread
    }
    private let onSync: @Sendable (Result<PassCacheSyncReport, ClientError>) -> Void

    /// - Parameter onSync: called on the service's thread after every sync.
    public init(core: ClientCore, timeZone: TimeZone, interval: TimeInterval = 30,
                onSync: @escaping @Sendable (Result<PassCacheSyncReport, ClientError>) -> Void = { _ in }) {
        self.core = core
        self.timeZone = timeZone
        self.interval = interval
        self.onSync = onSync
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
    public func poke() { wake.signal() }

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
            _ = wake.wait(timeout: .now() + interval)
            // Several pokes while a sync ran ask for one more sync, not several.
            while wake.wait(timeout: .now()) == .success {}
        }
    }
}
