// gatepass-bench: measures the Gate Pass API server against a bare libmicrohttpd ceiling,
// in one run, on loopback only. See `gatepass-bench --help`.

import Foundation
import GatePassCommands
import GatePassAPI
import GatePassCore
import GatePassServer
import HTTPServer
import LoopbackHTTP
import Synchronization

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
/// approval and is valid from an hour ago to a day from now; each has a host email, so each
/// check-in also queues the host's arrival mail (sent by the mail worker meanwhile, in dev
/// mode to `.eml` files). Returns their short ids.
/// - Parameter validSince: how long before now the passes' window opens.
func seedVisitors(count: Int, startingAt first: Int, port: UInt16, token: String, connections: Int,
                  validSince: TimeInterval = 3600) throws -> [String] {
    final class Next: Sendable { let value = Atomic<Int>(0) }
    let next = Next()
    let now = Date()
    let validFrom = Timestamp.format(now.addingTimeInterval(-validSince))
    let validUntil = Timestamp.format(now.addingTimeInterval(86_400))
    let results = (0..<connections).map { _ in ConnectionLog() }
    let shortIds = Locked<[String]>([])
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
                + #""purpose":"Benchmark","hostName":"Olivia Owner","hostEmail":"host\#(number % 13)@bench.example","#
                + #""validFrom":"\#(validFrom)","validUntil":"\#(validUntil)"}"#
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

/// The group-commit counters of the server's writer (`ServerDatabase.writerStatistics`).
/// Read while no write is in flight, so that two reads bracket one phase exactly.
func groupCommitCounters(_ store: ServerDatabase) -> (commits: Int, jobs: Int)? {
    let statistics = store.writerStatistics
    return (statistics.commits, statistics.jobs)
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

    /// - Parameter store: the SQLite store whose writer is counted; nil on PostgreSQL.
    init(_ store: ServerDatabase?) {
        groupCommit = store.flatMap { groupCommitCounters($0) }
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

/// The server scenario's report (`--json` prints it as it is; README "Benchmarks" lists the keys).
struct Report: Codable, Sendable {
    var cores: Int
    /// How the load was made, e.g. "wrk -t2 -c32".
    var loadGenerator: String
    var connections: Int
    var serverThreads: Int
    /// wrk's whole seconds per measured run, and per warm-up run.
    var seconds: Double
    var warmupSeconds: Double
    var sqliteSynchronous: String
    /// "sqlite" or "postgres".
    var database: String
    /// Servers sharing the database (1 on SQLite).
    var instances: Int
    var databaseDescription: String
    /// The check-in phase's writes as PostgreSQL counts them; nil on SQLite.
    var postgresCheckin: PostgresWriteFigures?
    var visitors: Int
    var seedSeconds: Double
    var seedCommits: CommitCounts?
    var visitorsAtCheckin: Int
    /// The size of the C ceiling's answer: the real stats answer's bytes.
    var ceilingBodyBytes: Int
    /// The C ceiling (gatepass-ceiling) under wrk, before and after the server's runs.
    var ceilingBefore: Measurement
    var ceilingAfter: Measurement
    /// The mean of the two C ceiling runs: the denominator of every ratio.
    var ceilingRequestsPerSecond: Double
    /// The secondary line: a fixed answer behind our own HTTPServer wrapper, under wrk too.
    var wrapperCeiling: Measurement
    var wrapperCeilingRatio: Double
    var stats: Measurement
    var checkin: Measurement
    var statsRatio: Double
    var checkinRatio: Double
    /// Fresh passes handed to the measured check-in run, and what its answers said.
    var checkinPasses: Int
    var checkinAdmitted: Int
    var checkinRefused: Int
    var checkinCommits: CommitCounts?
    var statsGoal: Double
    var checkinGoal: Double
    var p99GoalMilliseconds: Double
    /// Ratio, no errors and p99 under the goal.
    var statsGoalMet: Bool
    /// Nil when the run did not use durable commits (the goal is stated for SQLite's FULL;
    /// the bench's PostgreSQL commits are durable too).
    var checkinGoalMet: Bool?
}

// MARK: - Entry point

/// Prints a scenario's report: one JSON object with `--json`, else its table.
func emit<Report: Encodable>(_ report: Report, json: Bool, _ table: (Report) -> Void) throws {
    guard json else { return table(report) }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    print(String(decoding: try encoder.encode(report), as: UTF8.self))
}

func benchMain() -> Int32 {
    signal(SIGPIPE, SIG_IGN)
    // The console scenario parses its own options (ConsoleScenario.swift).
    if CommandLine.arguments.dropFirst().first == "console" {
        return consoleBenchMain(Array(CommandLine.arguments.dropFirst(2)))
    }
    let options: Options
    do {
        guard let parsed = try BenchCommandLine.parse(Array(CommandLine.arguments.dropFirst())) else {
            return BenchCommandLine.report(nil)
        }
        options = parsed
    } catch {
        return BenchCommandLine.report(error)
    }
    do {
        switch options.scenario {
        case "outbox": try emit(try runOutboxScenario(options), json: options.json, printOutboxReport)
        case "kiosk-offline": try emit(try runKioskOfflineScenario(options), json: options.json, printKioskOfflineReport)
        case "scanner": try emit(try runScannerScenario(options), json: options.json, printScannerReport)
        case "passes": try emit(try runPassScenario(options), json: options.json, printPassReport)
        case "events": try emit(try runEventsScenario(options), json: options.json, printEventsReport)
        default: try emit(try runServerScenario(options), json: options.json, printTable)
        }
        return 0
    } catch {
        progress("failed: \(error)")
        return 1
    }
}

exit(benchMain())
