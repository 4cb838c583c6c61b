import Foundation

/// Waiting for SIGTERM or SIGINT in a long-running command (`serve`, `outbox watch`).
/// The signals are taken off their default action and delivered on a dispatch queue, so the
/// shutdown that follows runs as ordinary code that may take locks.
// @unchecked: `sources` is set in init and only cancelled after; the semaphore is thread-safe.
final class TerminationSignals: @unchecked Sendable {
    private let received = DispatchSemaphore(value: 0)
    private var sources: [any DispatchSourceSignal] = []

    init() {
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [received] in received.signal() }
            source.resume()
            sources.append(source)
        }
    }

    /// Ends `wait()` as a signal would (the work being waited on ended by itself).
    func interrupt() { received.signal() }

    /// Blocks until one of the signals arrives.
    func wait() {
        received.wait()
        sources.forEach { $0.cancel() }
    }
}
