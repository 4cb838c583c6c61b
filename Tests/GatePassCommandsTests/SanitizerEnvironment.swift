import Foundation

/// The sanitizers' settings of this test run (`.ci/sanitizers` sets them), for a child process
/// started with a clean environment: so that a `gatepass` built with a sanitizer reports to the
/// same place and with the same options as the test runner, instead of its defaults (which,
/// for AddressSanitizer, include leak checking at exit).
func sanitizerEnvironment() -> [String: String] {
    ProcessInfo.processInfo.environment.filter { ["ASAN_OPTIONS", "TSAN_OPTIONS", "SWIFT_BACKTRACE"].contains($0.key) }
}
