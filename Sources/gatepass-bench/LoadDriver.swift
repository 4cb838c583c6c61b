import Foundation
import GatePassCore
import GatePassServer
import HTTPServer
import LoopbackHTTP
import Synchronization

// MARK: - Load driver

enum Outcome {
    case ok
    case failed(String)
    /// No more work (the pool of passes ran out): this connection stops.
    case exhausted
}

/// One request on the connection's own client.
typealias Work = @Sendable (LoopbackHTTPClient) -> Outcome

/// What one connection saw; written only by its thread, read after the threads are joined.
final class ConnectionLog: @unchecked Sendable {
    /// Latencies in units of 100 ns of the successful requests that started after the
    /// warm-up and ended in the window.
    var latencies: [UInt32] = []
    /// Successful and failed requests that ended in the window.
    var succeeded = 0
    var failed = 0
    var firstError: String?
    /// Set when the pool of work ran out.
    var stoppedAt: UInt64?
    var lastFinish: UInt64 = 0
}

struct Measurement: Codable, Sendable {
    var name: String
    var route: String
    var requests: Int
    var errors: Int
    var seconds: Double
    var requestsPerSecond: Double
    var p50Milliseconds: Double
    var p99Milliseconds: Double
    var maxMilliseconds: Double
    /// CPU used by the whole process (server + load generator) during the window, in % of one core.
    var processCPUPercent: Double
    /// Context switches of the whole process per successful request during the window.
    var contextSwitchesPerRequest: Double
    var endedEarly: Bool
    var firstError: String?
    /// CPU of the bench's own PostgreSQL cluster over the run (warm-up included), in % of one
    /// core: its processes are not the bench's, so `processCPUPercent` leaves them out.
    var databaseServerCPUPercent: Double?
}

/// Drives `ports` with `connections` keep-alive connections for `warmup + seconds`, connection
/// `i` on `ports[i % ports.count]` (several servers of one database share the load evenly).
func drive(_ name: String, route: String, ports: [UInt16], connections: Int, warmup: Double, seconds: Double,
           work: @escaping Work) throws -> Measurement {
    let logs = (0..<connections).map { _ in ConnectionLog() }
    let begin = monotonicNanoseconds()
    let warmEnd = begin + UInt64(warmup * 1e9)
    let end = warmEnd + UInt64(seconds * 1e9)
    // A sampler thread reads the process's CPU time and context switches at the window's edges.
    let cpuSamples = Mutex<[Double]>([])
    let switchSamples = Mutex<[Int]>([])
    let sampler = Thread {
        func sleep(until deadline: UInt64) {
            let now = monotonicNanoseconds()
            if deadline > now { Thread.sleep(forTimeInterval: Double(deadline - now) / 1e9) }
        }
        sleep(until: warmEnd)
        let first = processCPUSeconds()
        let firstSwitches = processContextSwitches()
        sleep(until: end)
        let second = processCPUSeconds()
        let secondSwitches = processContextSwitches()
        switchSamples.withLock { $0 = [firstSwitches, secondSwitches] }
        cpuSamples.withLock { $0 = [first, second] }
    }
    sampler.start()
    try runThreads(connections, limit: warmup + seconds + 25) { index in
        let log = logs[index]
        log.latencies.reserveCapacity(min(Int(seconds * 10_000), 1 << 20))
        let client = LoopbackHTTPClient(host: "127.0.0.1", port: ports[index % ports.count], timeoutSeconds: 10)
        while true {
            let started = monotonicNanoseconds()
            if started >= end { break }
            let outcome = work(client)
            let finished = monotonicNanoseconds()
            switch outcome {
            case .exhausted:
                log.stoppedAt = started
            case .ok:
                if finished >= warmEnd && finished <= end {
                    log.succeeded += 1
                    if started >= warmEnd {
                        log.latencies.append(UInt32(clamping: (finished - started) / 100))
                    }
                }
            case .failed(let message):
                if finished >= warmEnd && finished <= end { log.failed += 1 }
                if log.firstError == nil { log.firstError = message }
            }
            log.lastFinish = finished
            if log.stoppedAt != nil { break }
        }
        client.disconnect()
    }
    // Let the sampler finish (it ends at `end`, which has passed unless the pool ran out).
    while cpuSamples.withLock({ $0.isEmpty }) && monotonicNanoseconds() < end + 2_000_000_000 {
        Thread.sleep(forTimeInterval: 0.01)
    }
    let endedEarly = logs.contains { $0.stoppedAt != nil }
    let windowEnd = endedEarly ? min(end, logs.map(\.lastFinish).max() ?? end) : end
    guard windowEnd > warmEnd else {
        throw BenchFailure("\(name): the pool of passes ran out during the warm-up; seed more visitors")
    }
    let window = Double(windowEnd - warmEnd) / 1e9
    // When the pool ran out, every request ended by `windowEnd` (the last one to finish).
    let requests = logs.reduce(0) { $0 + $1.succeeded }
    let errors = logs.reduce(0) { $0 + $1.failed }
    var latencies = logs.flatMap(\.latencies)
    latencies.sort()
    func percentile(_ p: Double) -> Double {
        guard !latencies.isEmpty else { return 0 }
        return Double(latencies[Int((p * Double(latencies.count - 1)).rounded())]) / 1e4
    }
    var cpu = 0.0
    let samples = cpuSamples.withLock { $0 }
    var switches = 0.0
    let switchCounts = switchSamples.withLock { $0 }
    if samples.count == 2, !endedEarly {
        cpu = (samples[1] - samples[0]) / window * 100
        switches = Double(switchCounts[1] - switchCounts[0]) / Double(max(1, requests))
    }
    return Measurement(name: name, route: route, requests: requests, errors: errors, seconds: window,
                       requestsPerSecond: Double(requests) / window, p50Milliseconds: percentile(0.50),
                       p99Milliseconds: percentile(0.99), maxMilliseconds: percentile(1.0), processCPUPercent: cpu,
                       contextSwitchesPerRequest: switches,
                       endedEarly: endedEarly, firstError: logs.lazy.compactMap(\.firstError).first)
}

