import Foundation
import GatePassAPI
import GatePassCore
import GatePassServer
import HTTPServer
import LoopbackHTTP
import Postgres
import Synchronization

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
        \(report.databaseDescription); \(report.visitors) visitors seeded through POST /api/visitors in \
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
    case .none: "applies to SQLite's synchronous=FULL"
    }
    out += row(Endpoint.scannerCheckIn.name, report.checkin, ratio: format(report.checkinRatio, 3),
               goal: ">= \(report.checkinGoal) with FULL: " + checkinGoal) + "\n\n"
    if let c = report.checkinCommits {
        out += "checkin: \(c.jobs) write jobs in \(c.commits) group commits (\(format(c.jobsPerCommit, 1)) jobs per commit/fsync), "
            + "warm-up included; \(report.visitorsAtCheckin) visitors in the store"
            + (c.storageBytesPerCommit.map { "; \(format($0 / 1024, 1)) KiB sent to storage per commit" } ?? "") + "\n"
    } else if report.postgresCheckin == nil {
        out += "checkin: group-commit counters not reachable\n"
    }
    if let p = report.postgresCheckin {
        out += "checkin on PostgreSQL (warm-up included, \(format(p.seconds, 1)) s): \(p.writeTransactions) write transactions "
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
        if let cpu = m.databaseServerCPUPercent { out += "\(m.name): PostgreSQL's own processes used \(format(cpu, 0))% of a core (warm-up included)\n" }
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

/// What a run's table says of its database.
func describeDatabase(_ options: Options, _ postgres: BenchPostgres?) -> String {
    guard let postgres else { return "SQLite synchronous = \(options.synchronous)" }
    let servers = options.instances == 1 ? "1 server" : "\(options.instances) servers on one database, connections split evenly"
    let origin = postgres.isOwnCluster ? "the bench's own cluster" : "the given database"
    return "PostgreSQL (\(origin): \(postgres.settings)), \(servers)"
}

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

    // (b) The real server: one on SQLite, or --instances on one PostgreSQL database.
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
    // Started one after the other: the first migrates the database and makes the secret.
    var servers: [GatePassServer] = []
    defer { servers.forEach { $0.stop(grace: .seconds(5)) } }
    for _ in 0..<options.instances {
        servers.append(try GatePassServer(configuration: configuration, devMode: true, logSink: DevNullLog()))
    }
    let server = servers[0]
    let port = server.port
    let ports = servers.map(\.port)
    progress("ceiling on 127.0.0.1:\(ceilingPort), Gate Pass server(s) on 127.0.0.1:\(ports.map(String.init).joined(separator: ",")); "
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

    let run = { (name: String, route: String, ports: [UInt16], work: @escaping Work) throws -> Measurement in
        progress("running \(name) for \(format(options.warmup, 1)) + \(format(options.seconds, 1)) s with \(options.connections) connections")
        let cpuBefore = postgres?.serverCPUSeconds()
        let start = monotonicNanoseconds()
        var m = try drive(name, route: route, ports: ports, connections: options.connections, warmup: options.warmup,
                          seconds: options.seconds, work: work)
        if let cpuBefore, let cpuAfter = postgres?.serverCPUSeconds() {
            m.databaseServerCPUPercent = (cpuAfter - cpuBefore) / (Double(monotonicNanoseconds() - start) / 1e9) * 100
        }
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
    let ceilingBefore = try run("ceiling-before", "GET / (fixed JSON)", [ceilingPort], ceilingWork)

    // GET stats with the scanner token.
    let scannerHeaders = ["Authorization": "Bearer \(scanner)"]
    let stats = try run("stats", Endpoint.scannerStats.name, ports) { client in
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
    let probe = try drive("checkin-probe", route: Endpoint.scannerCheckIn.name, ports: ports,
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
    let beforeCheckin = WriteCounters(writerStore)
    let postgresProbe = try postgres.map { try PostgresWriteProbe($0) }
    let checkin = try run("checkin", Endpoint.scannerCheckIn.name, ports, checkinWork(pool))
    let checkinCommits = WriteCounters(writerStore).counts(since: beforeCheckin)
    let postgresCheckin = try postgresProbe?.finish()

    let ceilingAfter = try run("ceiling-after", "GET / (fixed JSON)", [ceilingPort], ceilingWork)
    let ceilingRate = (ceilingBefore.requestsPerSecond + ceilingAfter.requestsPerSecond) / 2
    let statsRatio = stats.requestsPerSecond / ceilingRate
    let checkinRatio = checkin.requestsPerSecond / ceilingRate
    let statsGoal = 0.5
    let checkinGoal = 0.1
    return Report(
        cores: cores, connections: options.connections, serverThreads: options.threads, seconds: options.seconds,
        warmupSeconds: options.warmup, sqliteSynchronous: options.synchronous,
        database: postgres == nil ? "sqlite" : "postgres", instances: options.instances,
        databaseDescription: describeDatabase(options, postgres), postgresCheckin: postgresCheckin, visitors: options.visitors,
        seedSeconds: seedSeconds, seedCommits: seedCommits, visitorsAtCheckin: visitorsAtCheckin,
        ceilingBefore: ceilingBefore, ceilingAfter: ceilingAfter, ceilingRequestsPerSecond: ceilingRate,
        stats: stats, checkin: checkin, statsRatio: statsRatio, checkinRatio: checkinRatio,
        checkinCommits: checkinCommits, statsGoal: statsGoal, checkinGoal: checkinGoal,
        statsGoalMet: statsRatio >= statsGoal && stats.errors == 0,
        checkinGoalMet: options.synchronous == "FULL" || postgres != nil ? (checkinRatio >= checkinGoal && checkin.errors == 0) : nil)
}

