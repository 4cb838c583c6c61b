// gatepass-bench: measures the Gate Pass API server against a bare libmicrohttpd ceiling,
// in one run, on loopback only. See `gatepass-bench --help`.

import Foundation
import GatePassAPI
import GatePassCore
import GatePassServer
import HTTPServer
import LoopbackHTTP
import Synchronization

// MARK: - Command line

struct Options: Sendable {
    var scenario = "server"
    var entries = 10_000
    var visitors = 10_000
    var connections = 32
    var seconds = 5.0
    var warmup = 1.0
    var threads = ServerConfiguration().threads
    var synchronous = ServerConfiguration().sqliteSynchronous
    var json = false
    // events
    var subscribers = [100, 1000]
    var events = 200
    var rate = 20.0
    var anchor = 200
    // scanner
    var frames = 100_000
    var distinct = 300
    var rounds = 5
    var passes = 200
    var scannerSeconds = 10.0
}

let usageText = """
    usage: gatepass-bench server [--visitors N] [--connections N] [--seconds S] [--warmup S]
                                 [--threads N] [--synchronous OFF|NORMAL|FULL|EXTRA] [--json]
           gatepass-bench outbox [--entries N] [--json]
           gatepass-bench scanner [--distinct N] [--rounds R] [--seconds S] [--frames N] [--passes K]
                                  [--threads N] [--synchronous OFF|NORMAL|FULL|EXTRA] [--json]
           gatepass-bench events [--subscribers N,N...] [--events K] [--rate R] [--anchor A]
                                 [--threads N] [--synchronous OFF|NORMAL|FULL|EXTRA] [--json]
           gatepass-bench console [--pending N] [--repeats N] [--startups N] [--logins N] [--json]

    console: needs tmux and the gatepass executable of the same build (swift build --product
    gatepass). Starts an in-process server (dev mode, demo data) with --pending N walk-ins
    awaiting approval (default 10000), then measures, each against an anchor in the same run:
    (1) start -> login screen drawn: the real `gatepass console` in a tmux pane 100x30 with a
    fresh empty state folder, the pane polled with capture-pane about every 2 ms until "> Email"
    shows, --startups N times (default 20), interleaved with the same procedure for `printf` in
    sh and for `gatepass console --help` (the same binary starting without state or curses).
    (2) End to end in the pane (--logins N, default 5; 0 skips): Enter on the typed code -> the
    approvals title drawn. (3) In-process, --repeats N times (default 30), logged in as OWNER:
    the request the console makes (ClientCoreServices.pendingApprovals(): GET
    /api/visitors?status=AWAITING_APPROVAL&limit=500, decode, re-encode and cache write; the
    console reads that first page only), against GET /api/healthz on the same curl session; then
    response -> painted: the tabs a login builds, Approvals appear, one tick, the status line,
    ConsoleApp render into a 200x60 canvas and the real CursesTerminal.draw on a pseudo-terminal
    (read by a thread, as a terminal would; the login frame drawn before), against JSONDecoder
    on the same body. The paint is measured for the first page and with every pending visitor
    loaded into the screen. p50/p95 and ratios; --json prints the report as one JSON object.
    Goal: response -> painted p95 under 100 ms.

    events: for each N of --subscribers (default 100,1000), opens N GET /api/events streams
    (raw sockets, one epoll reader thread; OWNER/ADMIN/APPROVER logins shared), then checks in
    --events K EXPECTED visitors (default 200) one at a time, first paced at --rate R per second
    (default 20), then back-to-back; each visitor.arrived a subscriber receives is matched by
    scanId to its check-in. Reports the delay send-of-check-in -> receipt (p50/p99/max over every
    subscriber x event), missing and duplicate deliveries, frames fanned out per second, and the
    check-in latency with the streams open. Anchor in the same run, before any stream opens: the
    same check-ins (--anchor A of each kind, default 200) with no subscriber, and a fan-out floor
    (the same reader fed by one thread writing frames of the same size to N plain loopback sockets).
    Goal: p99 under 50 ms at 1,000 subscribers (paced).

    outbox: queues --entries check-ins (default 10000) in a client's outbox while the server
    is down, starts the server, and times one drain to empty; reports the enqueue cost per
    entry (p50/p99, each entry durable on disk), drain entries/s, and duplicates found in the
    server's scan history (must be 0). Anchors in the same run: a bare 4 KiB write+fdatasync
    for the enqueue, and sequential direct check-ins (no outbox) for the drain.
    Goals: 10,000 replayed in under 10 s; enqueue p99 under 2 ms.

    scanner: draws --distinct 640x480 grey frames (default 300; a fixed camera's scenes with noise,
    passes GP1:<id> held up for 6-14 frames at module 3-6 px, about a third empty) and writes them
    to a temporary Y4M file. Measures, anchored to zbar called directly (same configuration) in
    the same run: median/p95 decode ms/frame of QRDecoder vs zbar_scan_image, interleaved frame
    by frame over --rounds R rounds (default 5); frames/s of Y4MSource -> QRDecoder ->
    CodeDeduplicator from the file; CPU % of one core at a steady 30 fps for --seconds S (default
    10); RSS before/after --frames N frames (default 100000); then, against an in-process server
    (dev mode), a KioskRunner fed 30 fps frames checks in --passes K visitors (default 200) and the
    time from the first frame with a new code to its decision line is reported (p50/p95), against
    a plain check-in POST sent in each gap. Goals: decode ratio <= 1.1; p95 under 60 ms online.

    Starts, in one process and on 127.0.0.1 only:
      - a bare libmicrohttpd responder answering a fixed small JSON 200 (the ceiling), and
      - the Gate Pass server (dev mode, SQLite file in a temporary folder) holding
        --visitors visitors, logged into as an OWNER through the OTP routes, with a scanner token;
    then drives each with --connections keep-alive connections (one thread each) for
    --seconds after --warmup seconds, and prints req/s, p50 and p99 per scenario:
      ceiling   GET  /                               (fixed answer; measured before and after)
      stats     GET  /api/visitor-scanner/stats      (scanner token)
      checkin   POST /api/visitor-scanner/checkin    (scanner token; a different EXPECTED pass
                                                      every request, so each one commits a change)
    Defaults: --visitors 10000 --connections 32 --seconds 5 --warmup 1
              --threads \(ServerConfiguration().threads) --synchronous \(ServerConfiguration().sqliteSynchronous)
    --json prints one JSON object on stdout instead of the table (progress still goes to stderr).

    Goals: stats >= 0.5 of the ceiling; checkin >= 0.1 of the ceiling with synchronous=FULL.
    """

enum UsageError: Error {
    case help
    case bad(String)
}

func parseOptions(_ arguments: [String]) throws(UsageError) -> Options {
    var options = Options()
    var rest = arguments[...]
    guard let command = rest.popFirst() else { throw .bad("missing scenario: gatepass-bench server") }
    if command == "--help" || command == "-h" || command == "help" { throw .help }
    guard command == "server" || command == "outbox" || command == "events" || command == "scanner" else {
        throw .bad("unknown scenario \(command); the scenarios are: server, outbox, events, scanner, console")
    }
    options.scenario = command
    func value(_ flag: String) throws(UsageError) -> String {
        guard let next = rest.popFirst() else { throw .bad("\(flag) needs a value") }
        return next
    }
    func integer(_ flag: String, _ range: ClosedRange<Int>) throws(UsageError) -> Int {
        let text = try value(flag)
        guard let number = Int(text), range.contains(number) else {
            throw .bad("\(flag) must be an integer from \(range.lowerBound) to \(range.upperBound), not \(text)")
        }
        return number
    }
    func seconds(_ flag: String, _ range: ClosedRange<Double>) throws(UsageError) -> Double {
        let text = try value(flag)
        guard let number = Double(text), range.contains(number) else {
            throw .bad("\(flag) must be a number of seconds from \(range.lowerBound) to \(range.upperBound), not \(text)")
        }
        return number
    }
    while let flag = rest.popFirst() {
        switch flag {
        case "--visitors": options.visitors = try integer(flag, 1...1_000_000)
        case "--entries": options.entries = try integer(flag, 1...1_000_000)
        case "--connections": options.connections = try integer(flag, 1...1024)
        case "--seconds":
            options.seconds = try seconds(flag, 0.2...600)
            options.scannerSeconds = options.seconds
        case "--frames": options.frames = try integer(flag, 1...10_000_000)
        case "--distinct": options.distinct = try integer(flag, 30...10_000)
        case "--rounds": options.rounds = try integer(flag, 1...1000)
        case "--passes": options.passes = try integer(flag, 1...100_000)
        case "--warmup": options.warmup = try seconds(flag, 0...60)
        case "--threads": options.threads = try integer(flag, 1...256)
        case "--synchronous":
            let mode = try value(flag).uppercased()
            guard ["OFF", "NORMAL", "FULL", "EXTRA"].contains(mode) else {
                throw .bad("--synchronous must be OFF, NORMAL, FULL or EXTRA")
            }
            options.synchronous = mode
        case "--json": options.json = true
        case "--subscribers":
            let text = try value(flag)
            guard let counts = parseSubscriberCounts(text) else {
                throw .bad("--subscribers must be a comma-separated list of counts from 1 to 20000, not \(text)")
            }
            options.subscribers = counts
        case "--events": options.events = try integer(flag, 1...100_000)
        case "--anchor": options.anchor = try integer(flag, 10...100_000)
        case "--rate":
            let text = try value(flag)
            guard let rate = Double(text), rate > 0, rate <= 10_000 else {
                throw .bad("--rate must be check-ins per second, above 0 and at most 10000, not \(text)")
            }
            options.rate = rate
        case "--help", "-h": throw .help
        default: throw .bad("unknown option \(flag)")
        }
    }
    return options
}

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

/// The server's request log goes to /dev/null: the line is still formatted and written
/// (one write(2) per request, as with the real stderr log), without flooding the terminal.
final class DevNullLog: LogSink {
    private let descriptor: Int32
    init() { descriptor = open("/dev/null", O_WRONLY) }
    deinit { close(descriptor) }
    func log(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
}

/// The ceiling: libmicrohttpd through the same HTTPServer wrapper, answering a fixed JSON.
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
}

/// Drives `port` with `connections` keep-alive connections for `warmup + seconds`.
func drive(_ name: String, route: String, port: UInt16, connections: Int, warmup: Double, seconds: Double,
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
        let client = LoopbackHTTPClient(host: "127.0.0.1", port: port, timeoutSeconds: 10)
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

// MARK: - Talking to the Gate Pass server

/// Logs in through the real OTP routes (the server runs in dev mode).
func login(email: String, port: UInt16) throws -> String {
    let http = LoopbackHTTPClient(host: "127.0.0.1", port: port, timeoutSeconds: 10)
    let sent = try http.send("POST", Endpoint.authSendOTP.path(), json: ["email": email])
    guard sent.status == 202 else { throw BenchFailure("send-otp answered \(sent.status): \(sent.text)") }
    let peek = try http.get(Endpoint.authDevPeekOTP.path(query: [("email", email)]))
    guard let otp = peek.json?["otp"] as? String else { throw BenchFailure("dev-peek-otp gave no code: \(peek.text)") }
    let verified = try http.send("POST", Endpoint.authVerifyOTP.path(), json: ["email": email, "otp": otp])
    guard verified.status == 200, let token = verified.json?["token"] as? String else {
        throw BenchFailure("verify-otp answered \(verified.status): \(verified.text)")
    }
    return token
}

func scannerToken(loginToken: String, port: UInt16) throws -> String {
    let http = LoopbackHTTPClient(host: "127.0.0.1", port: port, timeoutSeconds: 10)
    let response = try http.send("POST", Endpoint.scannerToken.path(), token: loginToken, json: [String: Any]())
    guard response.status == 201, let token = response.json?["scannerToken"] as? String else {
        throw BenchFailure("POST /api/visitor-scanner/token answered \(response.status): \(response.text)")
    }
    return token
}

/// Creates `count` visitors through POST /api/visitors with `connections` concurrent
/// clients (concurrent writes share group commits). Every pass is EXPECTED, needs no
/// approval and is valid from an hour ago to a day from now. Returns their short ids.
func seedVisitors(count: Int, startingAt first: Int, port: UInt16, token: String, connections: Int) throws -> [String] {
    final class Next: Sendable { let value = Atomic<Int>(0) }
    let next = Next()
    let now = Date()
    let validFrom = Timestamp.format(now.addingTimeInterval(-3600))
    let validUntil = Timestamp.format(now.addingTimeInterval(86_400))
    let results = (0..<connections).map { _ in ConnectionLog() }
    let shortIds = Mutex<[String]>([])
    try runThreads(connections, limit: 600) { index in
        let http = LoopbackHTTPClient(host: "127.0.0.1", port: port, timeoutSeconds: 10)
        let headers = ["Authorization": "Bearer \(token)", "Content-Type": "application/json"]
        var mine: [String] = []
        while true {
            let n = next.value.wrappingAdd(1, ordering: .relaxed).oldValue
            if n >= count || results.contains(where: { $0.firstError != nil }) { break }
            let number = first + n
            let body = #"{"name":"Bench Visitor \#(number)","company":"Company \#(number % 97)","#
                + #""email":"visitor\#(number)@bench.example","phone":"+40 7\#(String(format: "%08d", number))","#
                + #""purpose":"Benchmark","hostName":"Olivia Owner","validFrom":"\#(validFrom)","validUntil":"\#(validUntil)"}"#
            do {
                let response = try http.send("POST", Endpoint.visitorsCreate.path(), headers: headers, body: Array(body.utf8))
                guard response.status == 201, let shortId = response.json?["shortId"] as? String else {
                    results[index].firstError = "POST /api/visitors answered \(response.status): \(response.text)"
                    break
                }
                mine.append(shortId)
            } catch {
                results[index].firstError = "POST /api/visitors failed: \(error)"
                break
            }
        }
        shortIds.withLock { $0 += mine }
    }
    if let failure = results.lazy.compactMap(\.firstError).first { throw BenchFailure(failure) }
    let all = shortIds.withLock { $0 }
    guard all.count == count else { throw BenchFailure("seeded \(all.count) visitors instead of \(count)") }
    return all
}

/// EXPECTED passes handed out once each, across connections.
final class PassPool: Sendable {
    let passes: [String]
    private let next = Atomic<Int>(0)
    init(_ passes: [String]) { self.passes = passes }
    func take() -> String? {
        let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
        return index < passes.count ? passes[index] : nil
    }
    var remaining: [String] { Array(passes.dropFirst(min(passes.count, next.load(ordering: .relaxed)))) }
    var used: Int { min(passes.count, next.load(ordering: .relaxed)) }
}

/// The group-commit counters of the server's SQLite writer (`ServerDatabase.writerStatistics`).
/// Read while no write is in flight, so that two reads bracket one phase exactly.
func groupCommitCounters(_ store: ServerDatabase) -> (commits: Int, jobs: Int)? {
    let statistics = store.writerStatistics
    return (statistics.commits, statistics.jobs)
}

func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard needle.count <= haystack.count, let first = needle.first else { return needle.isEmpty }
    var index = 0
    let last = haystack.count - needle.count
    while index <= last {
        if haystack[index] == first {
            var match = true
            for offset in 1..<needle.count where haystack[index + offset] != needle[offset] {
                match = false
                break
            }
            if match { return true }
        }
        index += 1
    }
    return false
}

// MARK: - Report

struct CommitCounts: Codable, Sendable {
    var commits: Int
    var jobs: Int
    var jobsPerCommit: Double
    /// Bytes the process sent to storage over the same span (/proc/self/io write_bytes), per commit.
    var storageBytesPerCommit: Double?
}

/// Counters sampled before and after a span of writes.
struct WriteCounters {
    var groupCommit: (commits: Int, jobs: Int)?
    var storageBytes: Int?

    init(_ store: ServerDatabase) {
        groupCommit = groupCommitCounters(store)
        storageBytes = processStorageWriteBytes()
    }

    func counts(since before: WriteCounters) -> CommitCounts? {
        guard let now = groupCommit, let then = before.groupCommit else { return nil }
        let commits = now.commits - then.commits
        let jobs = now.jobs - then.jobs
        var bytes: Double?
        if let a = storageBytes, let b = before.storageBytes, commits > 0 { bytes = Double(a - b) / Double(commits) }
        return CommitCounts(commits: commits, jobs: jobs, jobsPerCommit: Double(jobs) / Double(max(1, commits)),
                            storageBytesPerCommit: bytes)
    }
}

struct Report: Codable, Sendable {
    var cores: Int
    var connections: Int
    var serverThreads: Int
    var seconds: Double
    var warmupSeconds: Double
    var sqliteSynchronous: String
    var visitors: Int
    var seedSeconds: Double
    var seedCommits: CommitCounts?
    var visitorsAtCheckin: Int
    var ceilingBefore: Measurement
    var ceilingAfter: Measurement
    /// The mean of the two ceiling runs: the denominator of every ratio.
    var ceilingRequestsPerSecond: Double
    var stats: Measurement
    var checkin: Measurement
    var statsRatio: Double
    var checkinRatio: Double
    var checkinCommits: CommitCounts?
    var statsGoal: Double
    var checkinGoal: Double
    var statsGoalMet: Bool
    /// Nil when the run did not use synchronous=FULL (the goal is stated for FULL).
    var checkinGoalMet: Bool?
}

func format(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }

func printTable(_ report: Report) {
    func row(_ label: String, _ m: Measurement, ratio: String, goal: String) -> String {
        label.padding(toLength: 36, withPad: " ", startingAt: 0)
            + format(m.requestsPerSecond, 0).leftPadded(9)
            + format(m.p50Milliseconds, 2).leftPadded(9)
            + format(m.p99Milliseconds, 2).leftPadded(9)
            + String(m.errors).leftPadded(8)
            + format(m.processCPUPercent, 0).leftPadded(6)
            + format(m.contextSwitchesPerRequest, 1).leftPadded(7)
            + ratio.leftPadded(8) + "  " + goal
    }
    var out = """
        gatepass-bench server: \(report.cores) cores, \(report.connections) keep-alive connections (one thread each), \
        \(report.serverThreads) server threads, \(format(report.seconds, 1)) s per scenario after \(format(report.warmupSeconds, 1)) s warm-up
        SQLite synchronous = \(report.sqliteSynchronous); \(report.visitors) visitors seeded through POST /api/visitors in \
        \(format(report.seedSeconds, 1)) s (\(format(Double(report.visitors) / report.seedSeconds, 0))/s)
        all traffic on 127.0.0.1; load generator and servers share the same cores
        (cpu% and csw/rq = CPU and context switches of the whole process: 100% = one core)

        """
    out += "scenario".padding(toLength: 36, withPad: " ", startingAt: 0)
        + "req/s".leftPadded(9) + "p50 ms".leftPadded(9) + "p99 ms".leftPadded(9) + "errors".leftPadded(8)
        + "cpu%".leftPadded(6) + "csw/rq".leftPadded(7) + "ratio".leftPadded(8) + "  goal\n"
    out += row("ceiling GET / (before)", report.ceilingBefore, ratio: "", goal: "") + "\n"
    out += row("ceiling GET / (after)", report.ceilingAfter, ratio: "", goal: "") + "\n"
    out += "ceiling (mean of both)".padding(toLength: 36, withPad: " ", startingAt: 0)
        + format(report.ceilingRequestsPerSecond, 0).leftPadded(9) + "\n"
    out += row(Endpoint.scannerStats.name, report.stats, ratio: format(report.statsRatio, 3),
               goal: ">= \(report.statsGoal): " + (report.statsGoalMet ? "met" : "NOT met")) + "\n"
    let checkinGoal: String = switch report.checkinGoalMet {
    case .some(true): "met"
    case .some(false): "NOT met"
    case .none: "applies to synchronous=FULL"
    }
    out += row(Endpoint.scannerCheckIn.name, report.checkin, ratio: format(report.checkinRatio, 3),
               goal: ">= \(report.checkinGoal) with FULL: " + checkinGoal) + "\n\n"
    if let c = report.checkinCommits {
        out += "checkin: \(c.jobs) write jobs in \(c.commits) group commits (\(format(c.jobsPerCommit, 1)) jobs per commit/fsync), "
            + "warm-up included; \(report.visitorsAtCheckin) visitors in the store"
            + (c.storageBytesPerCommit.map { "; \(format($0 / 1024, 1)) KiB sent to storage per commit" } ?? "") + "\n"
    } else {
        out += "checkin: group-commit counters not reachable\n"
    }
    if let c = report.seedCommits {
        out += "seeding: \(c.jobs) write jobs in \(c.commits) group commits (\(format(c.jobsPerCommit, 1)) jobs per commit)\n"
    }
    for m in [report.ceilingBefore, report.ceilingAfter, report.stats, report.checkin] {
        if let error = m.firstError { out += "\(m.name): first error: \(error)\n" }
        if m.endedEarly { out += "\(m.name): ended early (pool of passes ran out) after \(format(m.seconds, 2)) s\n" }
    }
    print(out, terminator: "")
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? " " + self : String(repeating: " ", count: width - count) + self
    }
}

// MARK: - The server scenario

func runServerScenario(_ options: Options) throws -> Report {
    let cores = ProcessInfo.processInfo.activeProcessorCount
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("gatepass-bench-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }

    // (a) The ceiling.
    // The load comes from one address: both servers' per-address caps let all of it in.
    let ceiling = HTTPServer(configuration: .init(host: "127.0.0.1", port: 0, threads: options.threads,
                                                  maxConnectionsPerIP: options.connections + 64),
                             responder: FixedResponder())
    let ceilingPort = try ceiling.start()
    defer { ceiling.stop(grace: .seconds(2)) }

    // (b) The real server.
    var configuration = ServerConfiguration()
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configuration.database = directory + "/gatepass.db"
    configuration.threads = options.threads
    configuration.sqliteSynchronous = options.synchronous
    configuration.maxConnectionsPerIP = options.connections + 64
    let server = try GatePassServer(configuration: configuration, devMode: true, logSink: DevNullLog())
    defer { server.stop(grace: .seconds(5)) }
    let port = server.port
    progress("ceiling on 127.0.0.1:\(ceilingPort), Gate Pass server on 127.0.0.1:\(port), database \(configuration.database), synchronous=\(options.synchronous)")

    let ownerEmail = "owner@bench.gatepass"
    _ = try Administration.addUser(store: server.store, email: ownerEmail, name: "Bench Owner", role: .owner,
                                   organization: "Bench Site", canScan: true, now: Date())
    let ownerToken = try login(email: ownerEmail, port: port)
    let scanner = try scannerToken(loginToken: ownerToken, port: port)

    let seedConnections = min(options.connections, 32)
    let beforeSeed = WriteCounters(server.store)
    let seedStart = monotonicNanoseconds()
    let seeded = try seedVisitors(count: options.visitors, startingAt: 1, port: port, token: ownerToken,
                                  connections: seedConnections)
    let seedSeconds = Double(monotonicNanoseconds() - seedStart) / 1e9
    let seedCommits = WriteCounters(server.store).counts(since: beforeSeed)
    progress("seeded \(seeded.count) visitors in \(format(seedSeconds, 2)) s with \(seedConnections) concurrent clients")

    // Sanity: the stats see every seeded visitor as expected today.
    let check = try LoopbackHTTPClient(host: "127.0.0.1", port: port).get(Endpoint.scannerStats.path(), token: scanner)
    guard check.status == 200, let expected = check.json?["expectedToday"] as? Int else {
        throw BenchFailure("GET /api/visitor-scanner/stats answered \(check.status): \(check.text)")
    }
    if expected != options.visitors {
        progress("warning: stats report expectedToday=\(expected), seeded \(options.visitors)")
    }

    let run = { (name: String, route: String, port: UInt16, work: @escaping Work) throws -> Measurement in
        progress("running \(name) for \(format(options.warmup, 1)) + \(format(options.seconds, 1)) s with \(options.connections) connections")
        let m = try drive(name, route: route, port: port, connections: options.connections, warmup: options.warmup,
                          seconds: options.seconds, work: work)
        progress("\(name): \(format(m.requestsPerSecond, 0)) req/s, p50 \(format(m.p50Milliseconds, 2)) ms, p99 \(format(m.p99Milliseconds, 2)) ms, \(m.errors) errors")
        return m
    }

    // The ceiling's fixed route.
    let ceilingWork: Work = { client in
        do {
            let response = try client.send("GET", "/")
            return response.status == 200 ? .ok : .failed("ceiling answered \(response.status)")
        } catch {
            return .failed("\(error)")
        }
    }
    let ceilingBefore = try run("ceiling-before", "GET / (fixed JSON)", ceilingPort, ceilingWork)

    // GET stats with the scanner token.
    let scannerHeaders = ["Authorization": "Bearer \(scanner)"]
    let stats = try run("stats", Endpoint.scannerStats.name, port) { client in
        do {
            let response = try client.send("GET", Endpoint.scannerStats.path(), headers: scannerHeaders)
            return response.status == 200 ? .ok : .failed("stats answered \(response.status): \(response.text)")
        } catch {
            return .failed("\(error)")
        }
    }

    // POST checkin: each request admits a different EXPECTED pass.
    let checkinHeaders = ["Authorization": "Bearer \(scanner)", "Content-Type": "application/json"]
    let admitted = Array(#""result":"CHECKED_IN""#.utf8)
    func checkinWork(_ pool: PassPool) -> Work {
        { client in
            guard let shortId = pool.take() else { return .exhausted }
            do {
                let response = try client.send("POST", Endpoint.scannerCheckIn.path(), headers: checkinHeaders,
                                               body: Array(#"{"shortId":"\#(shortId)"}"#.utf8))
                guard response.status == 200 else { return .failed("checkin answered \(response.status): \(response.text)") }
                guard contains(response.body, admitted) else { return .failed("checkin did not admit: \(response.text)") }
                return .ok
            } catch {
                return .failed("\(error)")
            }
        }
    }
    // A short probe estimates the check-in rate, so the pool can be topped up beforehand
    // with enough fresh passes that no request of the measured run repeats one.
    var pool = PassPool(seeded.shuffled())
    let probeSeconds = min(1.0, options.seconds)
    let probe = try drive("checkin-probe", route: Endpoint.scannerCheckIn.name, port: port,
                          connections: options.connections, warmup: 0, seconds: probeSeconds, work: checkinWork(pool))
    progress("checkin probe: \(format(probe.requestsPerSecond, 0)) req/s over \(format(probe.seconds, 2)) s, \(pool.used) passes used, \(probe.errors) errors")
    if probe.errors > 0 { progress("checkin probe error: \(probe.firstError ?? "?")") }
    let estimate = max(probe.requestsPerSecond, Double(pool.used) / max(probe.seconds, 0.1))
    let needed = Int(estimate * (options.warmup + options.seconds) * 1.6) + 4 * options.connections
    var remaining = pool.remaining
    var visitorsAtCheckin = options.visitors
    if remaining.count < needed {
        let extra = needed - remaining.count
        progress("topping up the pool with \(extra) more visitors (\(remaining.count) unused left, about \(needed) needed)")
        remaining += try seedVisitors(count: extra, startingAt: options.visitors + 1, port: port, token: ownerToken,
                                      connections: seedConnections)
        visitorsAtCheckin += extra
    }
    pool = PassPool(remaining.shuffled())
    let beforeCheckin = WriteCounters(server.store)
    let checkin = try run("checkin", Endpoint.scannerCheckIn.name, port, checkinWork(pool))
    let checkinCommits = WriteCounters(server.store).counts(since: beforeCheckin)

    let ceilingAfter = try run("ceiling-after", "GET / (fixed JSON)", ceilingPort, ceilingWork)
    let ceilingRate = (ceilingBefore.requestsPerSecond + ceilingAfter.requestsPerSecond) / 2
    let statsRatio = stats.requestsPerSecond / ceilingRate
    let checkinRatio = checkin.requestsPerSecond / ceilingRate
    let statsGoal = 0.5
    let checkinGoal = 0.1
    return Report(
        cores: cores, connections: options.connections, serverThreads: options.threads, seconds: options.seconds,
        warmupSeconds: options.warmup, sqliteSynchronous: options.synchronous, visitors: options.visitors,
        seedSeconds: seedSeconds, seedCommits: seedCommits, visitorsAtCheckin: visitorsAtCheckin,
        ceilingBefore: ceilingBefore, ceilingAfter: ceilingAfter, ceilingRequestsPerSecond: ceilingRate,
        stats: stats, checkin: checkin, statsRatio: statsRatio, checkinRatio: checkinRatio,
        checkinCommits: checkinCommits, statsGoal: statsGoal, checkinGoal: checkinGoal,
        statsGoalMet: statsRatio >= statsGoal && stats.errors == 0,
        checkinGoalMet: options.synchronous == "FULL" ? (checkinRatio >= checkinGoal && checkin.errors == 0) : nil)
}

// MARK: - Entry point

func benchMain() -> Int32 {
    signal(SIGPIPE, SIG_IGN)
    // The console scenario parses its own options (ConsoleScenario.swift).
    if CommandLine.arguments.dropFirst().first == "console" {
        return consoleBenchMain(Array(CommandLine.arguments.dropFirst(2)))
    }
    let options: Options
    do {
        options = try parseOptions(Array(CommandLine.arguments.dropFirst()))
    } catch {
        switch error {
        case .help:
            print(usageText)
            return 0
        case .bad(let message):
            FileHandle.standardError.write(Data(("gatepass-bench: \(message)\n\n" + usageText + "\n").utf8))
            return 2
        }
    }
    do {
        if options.scenario == "outbox" {
            let report = try runOutboxScenario(options)
            if options.json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
            } else {
                printOutboxReport(report)
            }
            return 0
        }
        if options.scenario == "scanner" {
            let report = try runScannerScenario(options)
            if options.json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
            } else {
                printScannerReport(report)
            }
            return 0
        }
        if options.scenario == "events" {
            let report = try runEventsScenario(options)
            if options.json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
            } else {
                printEventsReport(report)
            }
            return 0
        }
        let report = try runServerScenario(options)
        if options.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            printTable(report)
        }
        return 0
    } catch {
        progress("failed: \(error)")
        return 1
    }
}

exit(benchMain())
