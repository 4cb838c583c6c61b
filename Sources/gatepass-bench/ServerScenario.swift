import Foundation
import GatePassAPI
import GatePassCore
import GatePassServer
import HTTPServer
import LoopbackHTTP
import Postgres
import WrkOutput

func format(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }

func printTable(_ report: Report) {
    func row(_ label: String, _ m: Measurement, ratio: String, goal: String) -> String {
        label.padding(toLength: 40, withPad: " ", startingAt: 0)
            + format(m.requestsPerSecond, 0).leftPadded(9)
            + format(m.p50Milliseconds, 2).leftPadded(9)
            + format(m.p99Milliseconds, 2).leftPadded(9)
            + String(m.errors).leftPadded(8)
            + (m.serverCPUPercent.map { format($0, 0) } ?? "-").leftPadded(6)
            + ratio.leftPadded(8) + "  " + goal
    }
    func verdict(_ met: Bool?) -> String {
        switch met {
        case .some(true): "met"
        case .some(false): "NOT met"
        case .none: "applies to durable commits (SQLite's synchronous=FULL, or PostgreSQL)"
        }
    }
    var out = """
        gatepass-bench server: \(report.cores) cores; load: \(report.loadGenerator) on 127.0.0.1 (a separate process, \
        sharing the cores), \(format(report.seconds, 0)) s per scenario after \(format(report.warmupSeconds, 0)) s warm-up
        C ceiling: gatepass-ceiling (libmicrohttpd alone, C -O2, MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, \
        \(report.serverThreads) threads as the server), answering the real stats answer's \(report.ceilingBodyBytes) bytes
        \(report.databaseDescription); \(report.visitors) visitors seeded through POST /api/visitors in \
        \(format(report.seedSeconds, 1)) s (\(format(Double(report.visitors) / report.seedSeconds, 0))/s)
        (cpu% = CPU of the answering process, 100% = one core: the child for the C ceiling, the bench's own for ours; wrk's own not included)

        """
    out += "scenario".padding(toLength: 40, withPad: " ", startingAt: 0)
        + "req/s".leftPadded(9) + "p50 ms".leftPadded(9) + "p99 ms".leftPadded(9) + "errors".leftPadded(8)
        + "cpu%".leftPadded(6) + "ratio".leftPadded(8) + "  goal\n"
    out += row("C ceiling GET / (before)", report.ceilingBefore, ratio: "", goal: "") + "\n"
    out += row("C ceiling GET / (after)", report.ceilingAfter, ratio: "", goal: "") + "\n"
    out += "C ceiling (mean of both)".padding(toLength: 40, withPad: " ", startingAt: 0)
        + format(report.ceilingRequestsPerSecond, 0).leftPadded(9) + "\n"
    out += row("wrapper ceiling GET / (our HTTPServer)", report.wrapperCeiling, ratio: format(report.wrapperCeilingRatio, 3),
               goal: "(secondary: our wrapper's own cost)") + "\n"
    let p99Goal = format(report.p99GoalMilliseconds, 0)
    out += row(Endpoint.scannerStats.name, report.stats, ratio: format(report.statsRatio, 3),
               goal: ">= \(report.statsGoal), p99 < \(p99Goal) ms: " + verdict(report.statsGoalMet)) + "\n"
    // Four digits: check-in ratios are small, and two runs an order apart should still differ.
    out += row(Endpoint.scannerCheckIn.name, report.checkin, ratio: format(report.checkinRatio, 4),
               goal: ">= \(report.checkinGoal), p99 < \(p99Goal) ms, durable: " + verdict(report.checkinGoalMet)) + "\n\n"
    out += "checkin: \(report.checkinPasses) fresh passes handed to wrk (each request a different one), "
        + "\(report.checkinAdmitted) admitted, \(report.checkinRefused) refused\n"
    if let c = report.checkinCommits {
        out += "checkin: \(c.jobs) write jobs in \(c.commits) group commits (\(format(c.jobsPerCommit, 1)) jobs per commit/fsync); "
            + "\(report.visitorsAtCheckin) visitors in the store"
            + (c.storageBytesPerCommit.map { "; \(format($0 / 1024, 1)) KiB sent to storage per commit" } ?? "") + "\n"
    } else if report.postgresCheckin == nil {
        out += "checkin: group-commit counters not reachable\n"
    }
    if let p = report.postgresCheckin {
        out += "checkin on PostgreSQL (\(format(p.seconds, 1)) s): \(p.writeTransactions) write transactions "
            + "(\(format(p.writeTransactionsPerSecond, 0))/s, \(format(p.writeTransactionsPerSecond / max(1, report.checkin.requestsPerSecond), 2)) "
            + "per check-in: the mail worker's writes too), \(p.walSyncs) WAL flushes, \(p.commits) commits with reads'; "
            + "\(report.visitorsAtCheckin) visitors in the store\n"
            + "  write lock (pg_locks, \(p.lockSamples) samples): held \(format(p.writeLockBusyShare * 100, 0))% of the time, "
            + "\(format(p.meanSessionsWaitingForWriteLock, 1)) sessions waiting on average, mean wait \(format(p.meanWriteLockWaitMilliseconds, 1)) ms "
            + "(requests beyond the servers' pooled connections wait for one first), "
            + "held \(format(p.writeLockHoldMillisecondsPerTransaction, 2)) ms per write transaction\n"
    }
    if let c = report.seedCommits {
        out += "seeding: \(c.jobs) write jobs in \(c.commits) group commits (\(format(c.jobsPerCommit, 1)) jobs per commit)\n"
    }
    for m in [report.stats, report.checkin] {
        if let cpu = m.databaseServerCPUPercent { out += "\(m.name): PostgreSQL's own processes used \(format(cpu, 0))% of a core\n" }
    }
    for m in [report.ceilingBefore, report.ceilingAfter, report.wrapperCeiling, report.stats, report.checkin] {
        if let error = m.firstError { out += "\(m.name): first error: \(error)\n" }
        if m.passesRanOut { out += "\(m.name): the pool of passes ran out before wrk stopped (later requests repeated passes)\n" }
    }
    print(out, terminator: "")
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? " " + self : String(repeating: " ", count: width - count) + self
    }
}

// MARK: - The server scenario

/// What a run's table says of its database.
func describeDatabase(_ options: Options, _ postgres: BenchPostgres?) -> String {
    guard let postgres else { return "SQLite synchronous = \(options.synchronous)" }
    let servers = options.instances == 1 ? "1 server" : "\(options.instances) servers on one database, connections split evenly"
    let origin = postgres.isOwnCluster ? "the bench's own cluster" : "the given database"
    return "PostgreSQL (\(origin): \(postgres.settings)), \(servers)"
}

// MARK: - The C ceiling

/// The C ceiling (`gatepass-ceiling`, Sources/gatepass-ceiling/main.c, built beside the bench)
/// running as a child process on a free loopback port. It stops when its standard input
/// closes — `stop()`, or the bench's own end, however it ends — so it never outlives the run.
/// Used from the scenario's thread only.
final class CeilingProcess {
    let port: UInt16
    private let process: Process
    private let input: Pipe

    var pid: Int32 { process.processIdentifier }

    /// Where the ceiling is: beside the bench binary that is running (/proc/self/exe).
    static var executablePath: String {
        let bench = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: bench).deletingLastPathComponent().appendingPathComponent("gatepass-ceiling").path
    }

    /// Starts the ceiling with `threads` polling threads answering `body`, and reads the port it bound.
    init(threads: Int, body: String) throws {
        let path = Self.executablePath
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw BenchFailure("\(path) is missing: build it with swift build -c release --product gatepass-bench (which builds gatepass-ceiling too)")
        }
        process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["0", String(threads), body]
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        guard let port = UInt16(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)), port != 0 else {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            throw BenchFailure("gatepass-ceiling did not start (exit status \(process.terminationStatus)); run \(path) 0 1 to see why")
        }
        self.port = port
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

// MARK: - The server scenario

func runServerScenario(_ options: Options) throws -> Report {
    let cores = ProcessInfo.processInfo.activeProcessorCount
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("gatepass-bench-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let load = WrkLoad(threads: 2, connections: options.connections)

    // The secondary line: a fixed answer behind our own HTTPServer wrapper, same threads.
    // The load comes from one address: both servers' per-address caps let all of it in.
    let wrapperCeiling = HTTPServer(configuration: .init(host: "127.0.0.1", port: 0, threads: options.threads,
                                                         maxConnectionsPerIP: options.connections + 64),
                                    responder: FixedResponder())
    let wrapperCeilingPort = try wrapperCeiling.start()
    defer { wrapperCeiling.stop(grace: .seconds(2)) }

    // The real server: one on SQLite, or --instances on one PostgreSQL database.
    let postgres = try BenchPostgres.open(options.database)
    defer { postgres?.stop() }
    var configuration = ServerConfiguration()
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configuration.database = postgres?.url ?? directory + "/gatepass.db"
    if postgres != nil {
        // Every server of a PostgreSQL database reads one secret (and the pass keys beside it).
        configuration.secretFile = directory + "/gatepass.secret"
    }
    configuration.threads = options.threads
    configuration.sqliteSynchronous = options.synchronous
    configuration.maxConnectionsPerIP = options.connections + 64
    // The load scenario measures the server's ceiling: its few scanner tokens and users write
    // far beyond the per-principal limits, which `limits.enabled` false turns off (the other
    // scenarios keep the defaults, which a gate's real rate never meets).
    configuration.limits.enabled = false
    // Started one after the other: the first migrates the database and makes the secret.
    var servers: [GatePassServer] = []
    defer { servers.forEach { $0.stop(grace: .seconds(5)) } }
    // Each server logs every request to a file of the run's, through the same buffered log
    // `gatepass serve` writes (a feature measured like any other).
    for instance in 0..<options.instances {
        let log = try FileLog(path: directory + "/server-\(instance).log")
        servers.append(try GatePassServer(configuration: configuration, devMode: true, logSink: log))
    }
    let server = servers[0]
    let port = server.port
    let ports = servers.map(\.port)
    progress("wrapper ceiling on 127.0.0.1:\(wrapperCeilingPort), Gate Pass server(s) on 127.0.0.1:\(ports.map(String.init).joined(separator: ",")); "
             + describeDatabase(options, postgres))

    // An existing PostgreSQL database may hold an earlier run's owner: each run logs in as its own.
    let ownerEmail = postgres == nil ? "owner@bench.gatepass" : "owner-\(UUID().uuidString.prefix(8).lowercased())@bench.gatepass"
    _ = try Administration.addUser(store: server.store, email: ownerEmail, name: "Bench Owner", role: .owner,
                                   organization: "Bench Site", canScan: true, now: Date())
    let ownerToken = try login(email: ownerEmail, port: port)
    let scanner = try scannerToken(loginToken: ownerToken, port: port)

    let seedConnections = min(options.connections, 32)
    // SQLite's group-commit counters; PostgreSQL's writes are counted by the database itself.
    // The first server's group-commit writer (on PostgreSQL with two instances, its half of the writes).
    let writerStore: ServerDatabase? = server.store
    let beforeSeed = WriteCounters(writerStore)
    let seedStart = monotonicNanoseconds()
    let seeded = try seedVisitors(count: options.visitors, startingAt: 1, port: port, token: ownerToken,
                                  connections: seedConnections)
    let seedSeconds = Double(monotonicNanoseconds() - seedStart) / 1e9
    let seedCommits = WriteCounters(writerStore).counts(since: beforeSeed)
    progress("seeded \(seeded.count) visitors in \(format(seedSeconds, 2)) s with \(seedConnections) concurrent clients")

    // Sanity: the stats see every seeded visitor as expected today.
    let check = try LoopbackHTTPClient(host: "127.0.0.1", port: port).get(Endpoint.scannerStats.path(), token: scanner)
    guard check.status == 200, let expected = check.json?["expectedToday"] as? Int else {
        throw BenchFailure("GET /api/visitor-scanner/stats answered \(check.status): \(check.text)")
    }
    if expected != options.visitors {
        progress("warning: stats report expectedToday=\(expected), seeded \(options.visitors)")
    }

    // The anchor: the C ceiling answers the stats answer's own bytes, with the server's threads.
    let ceiling = try CeilingProcess(threads: options.threads, body: check.text)
    defer { ceiling.stop() }
    progress("C ceiling on 127.0.0.1:\(ceiling.port) (\(check.body.count)-byte answer, \(options.threads) threads)")

    /// One wrk run of `targets` for `seconds`, with the answering process's CPU (`cpuSeconds`,
    /// cumulative) and, on the bench's own cluster, PostgreSQL's.
    func wrk(_ name: String, _ targets: [WrkTarget], seconds: Double, cpuSeconds: () -> Double?)
        throws -> (summaries: [WrkSummary], cpuPercent: Double?, databaseCPUPercent: Double?) {
        progress("running \(name) under wrk -t\(load.threads) -c\(load.connections) for \(wrkDuration(seconds)) s"
                 + (targets.count > 1 ? " (\(targets.count) wrk processes, one per server)" : ""))
        let cpuBefore = cpuSeconds()
        let databaseBefore = postgres?.serverCPUSeconds()
        let start = monotonicNanoseconds()
        let summaries = try runWrk(targets, seconds: seconds, load: load, scratchFolder: directory)
        let elapsed = Double(monotonicNanoseconds() - start) / 1e9
        func percent(_ before: Double?, _ after: Double?) -> Double? {
            guard let before, let after else { return nil }
            return (after - before) / elapsed * 100
        }
        return (summaries, percent(cpuBefore, cpuSeconds()), percent(databaseBefore, postgres?.serverCPUSeconds()))
    }
    /// A route answered the same way every time: warm-up (not counted), then the measured run.
    func measure(_ name: String, route: String, _ targets: [WrkTarget], cpuSeconds: () -> Double?) throws -> Measurement {
        if options.warmup > 0 { _ = try wrk(name + " warm-up", targets, seconds: options.warmup, cpuSeconds: cpuSeconds) }
        let run = try wrk(name, targets, seconds: options.seconds, cpuSeconds: cpuSeconds)
        var m = Measurement(name: name, route: route, summaries: run.summaries, serverCPUPercent: run.cpuPercent)
        m.databaseServerCPUPercent = run.databaseCPUPercent
        report(m)
        return m
    }
    func report(_ m: Measurement) {
        progress("\(m.name): \(format(m.requestsPerSecond, 0)) req/s, p50 \(format(m.p50Milliseconds, 2)) ms, "
                 + "p99 \(format(m.p99Milliseconds, 2)) ms, \(m.errors) errors")
    }
    let ceilingCPU = { ProcessCPU(pid: ceiling.pid)?.seconds }
    let ownCPU = { Optional(processCPUSeconds()) }
    let ceilingTargets = [WrkTarget(url: "http://127.0.0.1:\(ceiling.port)/")]
    let ceilingRoute = "GET / (C, the stats answer's bytes)"

    let ceilingBefore = try measure("c-ceiling-before", route: ceilingRoute, ceilingTargets, cpuSeconds: ceilingCPU)
    let wrapper = try measure("wrapper-ceiling", route: "GET / (our HTTPServer, fixed JSON)",
                              [WrkTarget(url: "http://127.0.0.1:\(wrapperCeilingPort)/")], cpuSeconds: ownCPU)

    // GET stats with the scanner token; with two servers one wrk process on each.
    let statsTargets = ports.map {
        WrkTarget(url: "http://127.0.0.1:\($0)\(Endpoint.scannerStats.path())", headers: ["Authorization: Bearer \(scanner)"])
    }
    let stats = try measure("stats", route: Endpoint.scannerStats.name, statsTargets, cpuSeconds: ownCPU)

    // POST checkin: each request admits a different EXPECTED pass (wrk's Lua script, fed a file
    // of passes per wrk process).
    func checkinRun(_ name: String, passes: [String], seconds: Double) throws
        -> (summaries: [WrkSummary], counters: [String: Int], note: String?, cpuPercent: Double?, databaseCPUPercent: Double?) {
        let targets = ports.enumerated().map { index, serverPort in
            let passFile = directory + "/\(name)-passes-\(index).txt"
            let mine = passes.enumerated().filter { $0.offset % ports.count == index }.map(\.element)
            FileManager.default.createFile(atPath: passFile, contents: Data((mine.joined(separator: "\n") + "\n").utf8))
            return WrkTarget(url: "http://127.0.0.1:\(serverPort)/") { threads in
                checkinScript(path: Endpoint.scannerCheckIn.path(), token: scanner, passFile: passFile, threads: threads)
            }
        }
        let run = try wrk(name, targets, seconds: seconds, cpuSeconds: ownCPU)
        var counters: [String: Int] = [:]
        for summary in run.summaries { counters.merge(summary.scriptCounters, uniquingKeysWith: +) }
        guard counters["admitted"] != nil, counters["refused"] != nil else {
            throw BenchFailure("\(name): wrk's check-in script printed no counters (its done() did not run)")
        }
        return (run.summaries, counters, run.summaries.lazy.compactMap(\.scriptNote).first, run.cpuPercent, run.databaseCPUPercent)
    }
    // A probe spends a third of the pool as the check-ins' warm-up; its rate sizes what the
    // measured run needs, and the pool is topped up beforehand, so that no request of the
    // measured run repeats a pass.
    var pool = seeded.shuffled()
    let probePasses = Array(pool.prefix(pool.count / 3))
    pool.removeFirst(probePasses.count)
    let probe = try checkinRun("checkin-probe", passes: probePasses, seconds: max(1, options.warmup))
    let probeSeconds = probe.summaries.map(\.seconds).max() ?? 1
    // A probe that ran out counted fast ALREADY_CHECKED_IN answers too: its req/s overestimates, which is the safe side.
    let estimate = (probe.counters["exhausted"] ?? 0) > 0
        ? probe.summaries.reduce(0) { $0 + $1.requestsPerSecond }
        : Double(probe.counters["admitted"] ?? 0) / max(probeSeconds, 0.1)
    progress("checkin probe: \(format(estimate, 0)) check-ins/s, \(probe.counters["admitted"] ?? 0) admitted, "
             + "\(probe.counters["refused"] ?? 0) refused" + (probe.note.map { " (\($0))" } ?? ""))
    let needed = Int(estimate * Double(wrkDuration(options.seconds)) * 1.6) + 4 * options.connections
    var visitorsAtCheckin = options.visitors
    if pool.count < needed {
        let extra = needed - pool.count
        progress("topping up the pool with \(extra) more visitors (\(pool.count) unused left, about \(needed) needed)")
        pool += try seedVisitors(count: extra, startingAt: options.visitors + 1, port: port, token: ownerToken,
                                 connections: seedConnections)
        visitorsAtCheckin += extra
    }
    pool.shuffle()
    let beforeCheckin = WriteCounters(writerStore)
    let postgresProbe = try postgres.map { try PostgresWriteProbe($0) }
    let checkinFigures = try checkinRun("checkin", passes: pool, seconds: options.seconds)
    let checkinCommits = WriteCounters(writerStore).counts(since: beforeCheckin)
    let postgresCheckin = try postgresProbe?.finish()
    var checkin = Measurement(name: "checkin", route: Endpoint.scannerCheckIn.name, summaries: checkinFigures.summaries,
                              refused: checkinFigures.counters["refused"], passesRanOut: (checkinFigures.counters["exhausted"] ?? 0) > 0,
                              firstError: checkinFigures.note, serverCPUPercent: checkinFigures.cpuPercent)
    checkin.databaseServerCPUPercent = checkinFigures.databaseCPUPercent
    report(checkin)

    // After, to see whether the machine changed under the run.
    let ceilingAfter = try measure("c-ceiling-after", route: ceilingRoute, ceilingTargets, cpuSeconds: ceilingCPU)
    let ceilingRate = (ceilingBefore.requestsPerSecond + ceilingAfter.requestsPerSecond) / 2
    let statsRatio = stats.requestsPerSecond / ceilingRate
    let checkinRatio = checkin.requestsPerSecond / ceilingRate
    let statsGoal = 0.5
    let checkinGoal = 0.1
    let p99Goal = 10.0
    let durable = options.synchronous == "FULL" || options.synchronous == "EXTRA" || postgres != nil
    return Report(
        cores: cores, loadGenerator: "wrk -t\(load.threads) -c\(load.connections)" + (ports.count > 1 ? " (split over \(ports.count) wrk processes)" : ""),
        connections: options.connections, serverThreads: options.threads, seconds: Double(wrkDuration(options.seconds)),
        warmupSeconds: options.warmup > 0 ? Double(wrkDuration(options.warmup)) : 0, sqliteSynchronous: options.synchronous,
        database: postgres == nil ? "sqlite" : "postgres", instances: options.instances,
        databaseDescription: describeDatabase(options, postgres), postgresCheckin: postgresCheckin, visitors: options.visitors,
        seedSeconds: seedSeconds, seedCommits: seedCommits, visitorsAtCheckin: visitorsAtCheckin,
        ceilingBodyBytes: check.body.count, ceilingBefore: ceilingBefore, ceilingAfter: ceilingAfter, ceilingRequestsPerSecond: ceilingRate,
        wrapperCeiling: wrapper, wrapperCeilingRatio: wrapper.requestsPerSecond / ceilingRate,
        stats: stats, checkin: checkin, statsRatio: statsRatio, checkinRatio: checkinRatio,
        checkinPasses: pool.count, checkinAdmitted: checkinFigures.counters["admitted"] ?? 0,
        checkinRefused: checkinFigures.counters["refused"] ?? 0,
        checkinCommits: checkinCommits, statsGoal: statsGoal, checkinGoal: checkinGoal, p99GoalMilliseconds: p99Goal,
        statsGoalMet: statsRatio >= statsGoal && stats.errors == 0 && stats.p99Milliseconds < p99Goal,
        checkinGoalMet: durable ? (checkinRatio >= checkinGoal && checkin.errors == 0 && checkin.p99Milliseconds < p99Goal) : nil)
}
