import Foundation

/// Waits until `condition` holds, looking again every 10 ms; false once `timeout` has passed.
///
/// Only for state another process makes (a file the OTP delivery program writes), which sends
/// no signal; the server's own state is waited for on its `ChangeSignal`s. The timeout only
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
