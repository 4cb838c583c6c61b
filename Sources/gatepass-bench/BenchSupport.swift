import Foundation
import GatePassCore
import GatePassServer
import HTTPServer
import LoopbackHTTP
import Synchronization

// MARK: - Small utilities

func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// CPU seconds used by this process (user + system): server and load generator together.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func seconds(_ value: timeval) -> Double { Double(value.tv_sec) + Double(value.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Context switches (voluntary + involuntary) of the whole process so far.
func processContextSwitches() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_nvcsw + usage.ru_nivcsw
}

/// Bytes this process caused to be sent to the storage layer so far (`write_bytes` of
/// /proc/self/io), nil where unavailable.
func processStorageWriteBytes() -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("write_bytes:") {
        return Int(line.dropFirst("write_bytes:".count).trimmingCharacters(in: .whitespaces))
    }
    return nil
}

func progress(_ line: String) {
    let bytes = Array(("gatepass-bench: " + line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The server's request log goes to /dev/null through the server's own buffered file log: the
/// line is still formatted and written as with a real log file, without flooding the terminal.
final class DevNullLog: LogSink {
    private let file: FileLog
    init() throws { file = try FileLog(path: "/dev/null") }
    func log(_ line: String) { file.log(line) }
    func flush() { file.flush() }
}

/// The wrapper ceiling: libmicrohttpd through the same HTTPServer wrapper, answering a fixed JSON.
struct FixedResponder: HTTPResponder {
    static let body = Array(#"{"status":"ok"}"#.utf8)
    func respond(to request: HTTPRequest, reply: @escaping @Sendable (HTTPResponse) -> Void) {
        reply(HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: Self.body))
    }
}

/// Runs `body(index)` on `count` new threads and waits for all of them, at most `limit`.
func runThreads(_ count: Int, limit: Double, _ body: @escaping @Sendable (Int) -> Void) throws {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    guard group.wait(timeout: .now() + limit) == .success else {
        throw BenchFailure("some load threads did not finish within \(Int(limit)) s; giving up")
    }
}

