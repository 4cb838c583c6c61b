import Foundation
import GatePassCore
import GatePassCommands
import GatePassServer
import LocalPostgres
import Postgres
import Synchronization

// MARK: - Which database the server scenario runs on

/// `--database`: SQLite (a file in the run's folder), a PostgreSQL cluster started for the run
/// and stopped after, or an existing PostgreSQL database.
enum BenchDatabase: Sendable, Equatable {
    case sqlite
    case ownPostgresCluster
    case postgres(url: String)

    init(_ text: String) throws(UsageError) {
        switch text {
        case "sqlite": self = .sqlite
        case "postgres": self = .ownPostgresCluster
        case _ where text.hasPrefix("postgres://") || text.hasPrefix("postgresql://"): self = .postgres(url: text)
        default: throw UsageError("--database must be sqlite, postgres (a cluster started for the run) or a postgres:// URL, not \(text)")
        }
    }

    var isPostgres: Bool { self != .sqlite }
}

/// The PostgreSQL database of one server run: on the bench's own cluster (durable commits,
/// as SQLite's synchronous=FULL) or the database `--database postgres://…` names.
final class BenchPostgres {
    let url: String
    /// The server's settings that decide what a commit costs, as `SHOW` reports them.
    let settings: String
    private let cluster: PostgresCluster?

    /// Starts the bench's cluster and makes a database in it, or connects to the given one.
    static func open(_ database: BenchDatabase) throws -> BenchPostgres? {
        switch database {
        case .sqlite:
            return nil
        case .ownPostgresCluster:
            guard PostgresCluster.isAvailable else { throw BenchFailure(PostgresCluster.unavailableReason) }
            let cluster = try PostgresCluster.start(.durableCommits)
            do {
                return try BenchPostgres(url: cluster.makeDatabase(), cluster: cluster)
            } catch {
                cluster.stop()
                throw error
            }
        case .postgres(let url):
            return try BenchPostgres(url: url, cluster: nil)
        }
    }

    private init(url: String, cluster: PostgresCluster?) throws {
        self.url = url
        self.cluster = cluster
        let connection = try PGConnection(url: url, applicationName: "gatepass-bench")
        defer { connection.close() }
        let names = ["server_version", "fsync", "synchronous_commit", "full_page_writes", "wal_sync_method", "shared_buffers"]
        settings = try names.map { name in
            "\(name)=" + (try connection.queryFirst("SHOW \(name)") { try $0.string(0) } ?? "?")
        }.joined(separator: " ")
    }

    var isOwnCluster: Bool { cluster != nil }

    /// CPU seconds the bench's own cluster has used so far (the postmaster, its live
    /// processes and those it has reaped); nil for a database the bench did not start, whose
    /// server may be on another machine. The benchmark process's cpu% does not include it.
    func serverCPUSeconds() -> Double? {
        guard let cluster,
              let pidText = try? String(contentsOfFile: cluster.folder + "/data/postmaster.pid", encoding: .utf8),
              let postmaster = pidText.split(separator: "\n").first.flatMap({ Int32($0) }),
              let own = ProcessCPU(pid: postmaster) else { return nil }
        var ticks = own.ticks + own.reapedChildrenTicks
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap { Int32($0) } ?? []
        for pid in processes {
            if let process = ProcessCPU(pid: pid), process.parent == postmaster { ticks += process.ticks }
        }
        return Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Stops the bench's own cluster (an existing database is left as it is, with the run's rows).
    func stop() { cluster?.stop() }

    func connect() throws -> PGConnection { try PGConnection(url: url, applicationName: "gatepass-bench") }
}

/// One process's CPU from /proc/PID/stat, in clock ticks (the server scenario reads the C
/// ceiling's this way too).
struct ProcessCPU {
    var parent: Int32
    /// utime + stime.
    var ticks: Int
    /// cutime + cstime: children that ended and were waited for.
    var reapedChildrenTicks: Int

    init?(pid: Int32) {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let nameEnd = text.lastIndex(of: ")") else { return nil }
        // The fields after the command name (which may hold spaces): state, ppid, … utime is the 14th field of the line.
        let fields = text[text.index(after: nameEnd)...].split(separator: " ")
        guard fields.count > 14, let ppid = Int32(fields[1]), let utime = Int(fields[11]), let stime = Int(fields[12]),
              let cutime = Int(fields[13]), let cstime = Int(fields[14]) else { return nil }
        parent = ppid
        ticks = utime + stime
        reapedChildrenTicks = cutime + cstime
    }

    /// The process's own CPU (utime + stime) in seconds.
    var seconds: Double { Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK))) }
}

// MARK: - What the writes cost on PostgreSQL

/// Counters of the whole PostgreSQL server, read before and after a phase.
struct PostgresWriteCounters {
    /// The next transaction id to be given: only a transaction that writes gets one, so the
    /// difference counts the write transactions exactly (the server's and any other's).
    var nextTransactionId: Int64
    /// pg_stat_database.xact_commit of the database: every commit, reads' snapshots included.
    var commits: Int64
    /// pg_stat_wal.wal_sync: the WAL's flushes to disk.
    var walSyncs: Int64

    /// Waits first for the sessions' statistics to reach the shared counters: a backend sends
    /// its own at most once a second (and within a second of going idle).
    init(_ connection: PGConnection) throws {
        Thread.sleep(forTimeInterval: 1.2)
        nextTransactionId = try connection.scalarInt("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint") ?? 0
        commits = try connection.scalarInt("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()") ?? 0
        walSyncs = try connection.scalarInt("SELECT wal_sync FROM pg_stat_wal") ?? 0
    }
}

/// How often sessions wait for the store's write lock (the transaction advisory lock every
/// write takes first; PostgresEngine), sampled from pg_locks on a connection of its own.
final class WriteLockSampler: Sendable {
    private struct Tally {
        var samples = 0
        var waiting = 0
        var held = 0
    }
    private let tally = Locked(Tally())
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    static let interval = 0.02

    /// Starts sampling on its own thread every `interval` seconds.
    init(_ connection: PGConnection) {
        let box = UncheckedConnection(connection)
        // pg_locks shows a bigint advisory key as its high and low halves (classid, objid).
        let key = UInt64(bitPattern: ServerDatabase.postgresWriteLockKey)
        let query = """
            SELECT count(*) FILTER (WHERE NOT granted), count(*) FILTER (WHERE granted) FROM pg_locks
            WHERE locktype = 'advisory' AND objsubid = 1 AND classid = \(key >> 32) AND objid = \(key & 0xFFFF_FFFF)
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            """
        Thread { [self] in
            while !stopping.load(ordering: .relaxed) {
                let counts = try? box.connection.queryFirst(query) { (try $0.int64(0), try $0.int64(1)) }
                if let counts {
                    tally.withLock {
                        $0.samples += 1
                        $0.waiting += Int(counts.0)
                        $0.held += counts.1 > 0 ? 1 : 0
                    }
                }
                Thread.sleep(forTimeInterval: Self.interval)
            }
            finished.signal()
        }.start()
    }

    /// Stops sampling; gives the mean number of sessions waiting and the share of samples in
    /// which a write held the lock.
    func stop() -> (samples: Int, meanWaiting: Double, heldShare: Double) {
        stopping.store(true, ordering: .relaxed)
        finished.wait()
        let t = tally.withLock { $0 }
        let n = Double(max(1, t.samples))
        return (t.samples, Double(t.waiting) / n, Double(t.held) / n)
    }
}

/// A connection handed to the sampler's one thread, touched by no other until it stops.
private final class UncheckedConnection: @unchecked Sendable {
    let connection: PGConnection
    init(_ connection: PGConnection) { self.connection = connection }
}

/// The write side of one phase on PostgreSQL.
struct PostgresWriteFigures: Codable, Sendable {
    var seconds: Double
    var writeTransactions: Int
    var writeTransactionsPerSecond: Double
    /// Every commit of the database, reads' snapshot transactions included.
    var commits: Int
    var walSyncs: Int
    var lockSamples: Int
    /// Sessions waiting for the write lock, on average (pg_locks every 20 ms).
    var meanSessionsWaitingForWriteLock: Double
    /// Share of the samples in which a write held the lock: near 1, the lock is the bottleneck.
    var writeLockBusyShare: Double
    /// By Little's law: sessions waiting / write transactions per second.
    var meanWriteLockWaitMilliseconds: Double
    /// The lock's busy time per write transaction: about what one commit (its fsync included) takes.
    var writeLockHoldMillisecondsPerTransaction: Double
}

/// Brackets one phase: the counters before and after, and the lock sampled throughout.
struct PostgresWriteProbe {
    private let connection: PGConnection
    private let before: PostgresWriteCounters
    private let sampler: WriteLockSampler
    private let samplerConnection: PGConnection
    private let start: UInt64

    init(_ postgres: BenchPostgres) throws {
        connection = try postgres.connect()
        samplerConnection = try postgres.connect()
        before = try PostgresWriteCounters(connection)
        sampler = WriteLockSampler(samplerConnection)
        start = monotonicNanoseconds()
    }

    func finish() throws -> PostgresWriteFigures {
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        let lock = sampler.stop()
        samplerConnection.close()
        defer { connection.close() }
        let after = try PostgresWriteCounters(connection)
        // The sampler's own snapshots are read-only transactions: they take no transaction id.
        let writes = Int(after.nextTransactionId - before.nextTransactionId)
        let rate = Double(writes) / seconds
        return PostgresWriteFigures(
            seconds: seconds, writeTransactions: writes, writeTransactionsPerSecond: rate,
            commits: Int(after.commits - before.commits), walSyncs: Int(after.walSyncs - before.walSyncs),
            lockSamples: lock.samples, meanSessionsWaitingForWriteLock: lock.meanWaiting, writeLockBusyShare: lock.heldShare,
            meanWriteLockWaitMilliseconds: rate > 0 ? lock.meanWaiting / rate * 1000 : 0,
            writeLockHoldMillisecondsPerTransaction: rate > 0 ? lock.heldShare / rate * 1000 : 0)
    }
}
