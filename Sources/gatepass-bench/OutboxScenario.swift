import CurlHTTP
import Foundation
import GatePassAPI
import GatePassClient
import GatePassCore
import GatePassServer
import LoopbackHTTP

// MARK: - The outbox scenario (issue: client core)

struct OutboxReport: Codable, Sendable {
    var entries: Int
    var enqueueP50Milliseconds: Double
    var enqueueP99Milliseconds: Double
    var fsyncAnchorP50Milliseconds: Double
    var fsyncAnchorP99Milliseconds: Double
    var drainSeconds: Double
    var drainEntriesPerSecond: Double
    var directCheckInsPerSecond: Double
    var drainRatioToDirect: Double
    var duplicatesOnServer: Int
    var scansOnServer: Int
    var remainingInOutbox: Int
    var drainGoalMet: Bool
    var enqueueGoalMet: Bool
}

final class SilentLog: LogSink { func log(_ line: String) {} }

func percentile(_ values: [Double], _ fraction: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
}

/// The anchor for the enqueue: what one durable 4 KiB append costs on this disk, now.
func fsyncAnchor(directory: String, count: Int) -> [Double] {
    let path = directory + "/fsync-anchor"
    let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
    defer { close(descriptor); unlink(path) }
    let block = [UInt8](repeating: 7, count: 4096)
    return (0..<count).map { _ in
        let start = monotonicNanoseconds()
        _ = block.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        fdatasync(descriptor)
        return Double(monotonicNanoseconds() - start) / 1e6
    }
}

func runOutboxScenario(_ options: Options) throws -> OutboxReport {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-bench-outbox-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let count = options.entries
    let anchorCount = min(1000, count)

    var configuration = ServerConfiguration()
    // The seeding (one owner) and the direct online check-ins (one scanner token, measuring the
    // server's ceiling) go beyond the limits meant for people and gates; the replay keeps the
    // default offline bucket (500/s, burst 10,000): the drain of --entries 10,000 replays
    // shows it does not slow a replay of that size.
    configuration.limits.userWriteBurst = 10_000_000
    configuration.limits.scannerCheckInBurst = 10_000_000
    configuration.database = directory + "/server.db"
    configuration.port = 0
    configuration.otpResendIntervalSeconds = 0
    configuration.otpSendsPerHour = 1000
    var server = try GatePassServer(configuration: configuration, devMode: true, logSink: SilentLog())
    configuration.port = Int(server.port)
    let port = server.port
    _ = try Administration.addUser(store: server.store, email: "guard@bench.example", name: "Guard", role: .admin,
                                   organization: "Bench", canScan: true, now: Date())
    let token = try login(email: "guard@bench.example", port: port)
    progress("seeding \(count + anchorCount) visitors")
    let passes = try seedVisitors(count: count + anchorCount, startingAt: 0, port: port, token: token, connections: 16)
    let queued = Array(passes.prefix(count))
    let direct = Array(passes.suffix(anchorCount))

    // Anchor for the drain: the same server, check-ins sent one after another without an outbox.
    let scanner = try scannerToken(loginToken: token, port: port)
    let http = LoopbackHTTPClient(host: "127.0.0.1", port: port, timeoutSeconds: 10)
    let directStart = monotonicNanoseconds()
    for shortId in direct {
        let answer = try http.send("POST", Endpoint.scannerCheckIn.path(), token: scanner, json: ["shortId": shortId])
        guard answer.status == 200 else { throw BenchFailure("direct check-in answered \(answer.status)") }
    }
    let directRate = Double(direct.count) / (Double(monotonicNanoseconds() - directStart) / 1e9)
    http.disconnect()

    // A client logs in, then the server goes away.
    let state = StateDirectory(path: directory + "/state")
    let core = try ClientCore(directory: state, transport: CurlSession(options: .init(connectTimeout: .seconds(2))))
    _ = try core.login(server: "http://127.0.0.1:\(port)", email: "guard@bench.example",
                       otp: try devCode(email: "guard@bench.example", port: port), allowPurge: false)
    server.stop()

    progress("queueing \(count) check-ins while the server is down")
    let anchor = fsyncAnchor(directory: directory, count: 1000)
    var enqueueTimes: [Double] = []
    enqueueTimes.reserveCapacity(count)
    for shortId in queued {
        let start = monotonicNanoseconds()
        _ = try core.queueCheckIn(code: "GP1:\(shortId)", confirmApprovalRequest: false)
        enqueueTimes.append(Double(monotonicNanoseconds() - start) / 1e6)
    }

    server = try GatePassServer(configuration: configuration, devMode: true, logSink: SilentLog())
    defer { server.stop() }
    progress("draining")
    let drainStart = monotonicNanoseconds()
    var report = core.drainer.drain()
    while report.remaining > 0 && report.applied.count > 0 { report = core.drainer.drain() }
    let drainSeconds = Double(monotonicNanoseconds() - drainStart) / 1e9
    let remaining = try core.store.outboxCount()

    // Duplicates, as any client sees them: every offline scan in the server's scan history.
    var perPass: [String: Int] = [:]
    var cursor: String?
    let reader = LoopbackHTTPClient(host: "127.0.0.1", port: port, timeoutSeconds: 10)
    let freshToken = try login(email: "guard@bench.example", port: port)
    repeat {
        let page = try reader.get(Endpoint.scannerHistory.path(query: [("limit", "500"), ("cursor", cursor)]),
                                  token: freshToken).json
        for scan in (page?["items"] as? [[String: Any]]) ?? [] where scan["offline"] as? Bool == true {
            perPass[scan["shortId"] as? String ?? "", default: 0] += 1
        }
        cursor = page?["nextCursor"] as? String
    } while cursor != nil
    let scans = perPass.values.reduce(0, +)
    let duplicates = perPass.values.filter { $0 > 1 }.map { $0 - 1 }.reduce(0, +)
    let rate = Double(count - remaining) / drainSeconds
    let p99 = percentile(enqueueTimes, 0.99)
    return OutboxReport(entries: count, enqueueP50Milliseconds: percentile(enqueueTimes, 0.5), enqueueP99Milliseconds: p99,
                        fsyncAnchorP50Milliseconds: percentile(anchor, 0.5), fsyncAnchorP99Milliseconds: percentile(anchor, 0.99),
                        drainSeconds: drainSeconds, drainEntriesPerSecond: rate, directCheckInsPerSecond: directRate,
                        drainRatioToDirect: rate / directRate, duplicatesOnServer: duplicates, scansOnServer: scans,
                        remainingInOutbox: remaining,
                        drainGoalMet: remaining == 0 && duplicates == 0 && drainSeconds * 10_000 / Double(count) < 10,
                        enqueueGoalMet: p99 < 2)
}

func devCode(email: String, port: UInt16) throws -> String {
    let http = LoopbackHTTPClient(host: "127.0.0.1", port: port, timeoutSeconds: 10)
    _ = try http.send("POST", Endpoint.authSendOTP.path(), json: ["email": email])
    guard let otp = try http.get(Endpoint.authDevPeekOTP.path(query: [("email", email)])).json?["otp"] as? String else {
        throw BenchFailure("no dev code for \(email)")
    }
    return otp
}

func printOutboxReport(_ report: OutboxReport) {
    print("gatepass-bench outbox: \(report.entries) check-ins queued offline, then drained against a real server (loopback)")
    print("enqueue per entry (durable, synchronous=FULL): p50 \(format(report.enqueueP50Milliseconds, 3)) ms, p99 \(format(report.enqueueP99Milliseconds, 3)) ms"
          + "   [anchor: 4 KiB write+fdatasync p50 \(format(report.fsyncAnchorP50Milliseconds, 3)) ms, p99 \(format(report.fsyncAnchorP99Milliseconds, 3)) ms;"
          + " ratio p50 \(format(report.enqueueP50Milliseconds / max(report.fsyncAnchorP50Milliseconds, 0.000_1), 2))]")
    print("drain: \(report.entries - report.remainingInOutbox) entries in \(format(report.drainSeconds, 2)) s = \(format(report.drainEntriesPerSecond, 0)) entries/s"
          + "   [anchor: direct sequential check-ins \(format(report.directCheckInsPerSecond, 0))/s; ratio \(format(report.drainRatioToDirect, 2))]")
    print("server scan history: \(report.scansOnServer) offline scans, duplicates \(report.duplicatesOnServer); left in outbox \(report.remainingInOutbox)")
    print("goals: 10,000 replayed in under 10 s: \(report.drainGoalMet ? "met" : "NOT met"); enqueue p99 under 2 ms: \(report.enqueueGoalMet ? "met" : "NOT met")")
}
