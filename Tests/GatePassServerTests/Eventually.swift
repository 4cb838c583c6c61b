import Foundation

/// Waits until `condition` holds, looking again every 10 ms; false once `timeout` has passed.
///
/// For state the server exposes only as a counter or a query (open connections, waits held,
/// a log line, a delivery row) where there is no callback to wait on. The timeout only
/// catches a hang: a test asserts what `condition` reads, never how long it took, and never
/// waits for something *not* to happen (wait for a positive signal, then assert).
func eventually(timeout: Duration = .seconds(30), _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return try condition()
}
