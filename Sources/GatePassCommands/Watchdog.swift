import Foundation

/// Pings systemd's watchdog while `healthy` says the kiosk works, on its own thread.
final class Watchdog: @unchecked Sendable {
    private let stopped = DispatchSemaphore(value: 0)

    init(interval: Duration, healthy: @escaping @Sendable () -> Bool, ping: @escaping @Sendable () -> Void) {
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        let thread = Thread { [stopped] in
            while stopped.wait(timeout: .now() + seconds) == .timedOut {
                if healthy() { ping() }
            }
        }
        thread.name = "gatepass-watchdog"
        thread.start()
    }

    func stop() { stopped.signal() }
}
