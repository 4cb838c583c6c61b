import CSpawn
import Foundation
import Postgres

/// A PostgreSQL cluster of its own, made with `initdb` in a temporary folder and started on a
/// free loopback port: the tests' throw-away database server (GatePassTestSupport keeps one per
/// test process) and the bench's (`gatepass-bench server --database postgres`). `stop()` ends
/// the server (`pg_ctl stop -m immediate`) and removes the folder.
///
/// `initdb` refuses to run as root, and CI runs as root: then the cluster belongs to the
/// `postgres` user (which Debian's postgresql package creates) and every server command runs
/// through `runuser -u postgres --`.
///
/// A process that is killed (SIGKILL) before it stops its cluster leaves the server running;
/// its folder is under the temporary directory, named `gatepass-postgres-…`.
public final class PostgresCluster: Sendable {
    public let port: Int
    /// The cluster's folder: `data` (the cluster), `log` (the server's log), the server's socket.
    public let folder: String
    private let binaries: String
    private let runsAsPostgresUser: Bool

    /// The folder of the newest installed server binaries (`/usr/lib/postgresql/<major>/bin`).
    static let binaryFolder: String? = {
        let root = "/usr/lib/postgresql"
        let majors = (try? FileManager.default.contentsOfDirectory(atPath: root))?.compactMap(Int.init) ?? []
        return majors.sorted(by: >).lazy.map { "\(root)/\($0)/bin" }.first {
            FileManager.default.isExecutableFile(atPath: "\($0)/initdb")
                && FileManager.default.isExecutableFile(atPath: "\($0)/pg_ctl")
        }
    }()

    static let runuser = "/usr/sbin/runuser"
    static let serverUser = "postgres"

    /// Whether a cluster can be started here: the server binaries are installed and, when
    /// running as root, so are the `postgres` user and `runuser`.
    public static var isAvailable: Bool {
        guard binaryFolder != nil else { return false }
        guard geteuid() == 0 else { return true }
        return getpwnam(serverUser) != nil && FileManager.default.isExecutableFile(atPath: runuser)
    }

    public static let unavailableReason =
        "PostgreSQL server binaries (initdb, pg_ctl) are not installed: .ci/install-packages installs postgresql"

    // MARK: - Databases

    /// Creates an empty database and returns its URL, `postgres://gatepass@127.0.0.1:PORT/gp_…`.
    public func makeDatabase() throws -> String {
        let name = "gp_" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        let maintenance = try PGConnection(url: url(database: "postgres"), applicationName: "gatepass-cluster")
        defer { maintenance.close() }
        try maintenance.executeScript("CREATE DATABASE \(name)")
        return url(database: name)
    }

    /// The URL of `database` on this cluster, as its superuser `gatepass` (trust: no password).
    public func url(database: String) -> String { "postgres://gatepass@127.0.0.1:\(port)/\(database)" }

    /// A loopback port nothing listens on right now (bound with port 0, then released), for a
    /// server to take or a test of a refused connection.
    public static func unusedLoopbackPort() throws(ClusterFailure) -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ClusterFailure("socket: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else { throw ClusterFailure("bind on 127.0.0.1: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    // MARK: - Starting and stopping

    private init(port: Int, folder: String, binaries: String, runsAsPostgresUser: Bool) {
        self.port = port
        self.folder = folder
        self.binaries = binaries
        self.runsAsPostgresUser = runsAsPostgresUser
    }

    /// Makes the cluster (initdb) and starts it on a free port, trying another port up to
    /// three times: a port found free can be taken by another process before the server binds it.
    public static func start(_ settings: PostgresClusterSettings) throws(ClusterFailure) -> PostgresCluster {
        guard let binaries = binaryFolder, isAvailable else { throw ClusterFailure(unavailableReason) }
        let runsAsPostgresUser = geteuid() == 0
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("gatepass-postgres-\(UUID().uuidString)").path
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw ClusterFailure("cannot create \(folder): \(error)")
        }
        do throws(ClusterFailure) {
            if runsAsPostgresUser {
                guard let user = getpwnam(serverUser), chown(folder, user.pointee.pw_uid, user.pointee.pw_gid) == 0 else {
                    throw ClusterFailure("cannot give \(folder) to the \(serverUser) user: \(String(cString: strerror(errno)))")
                }
            }
            let data = folder + "/data"
            try runServerCommand("initdb", ["-D", data, "-A", "trust", "-U", "gatepass", "--no-sync", "-E", "UTF8", "--locale=C"],
                                 binaries: binaries, folder: folder, runsAsPostgresUser: runsAsPostgresUser)
            var failure = ClusterFailure("the server did not start")
            for _ in 1...3 {
                let port = try unusedLoopbackPort()
                let options = "-c listen_addresses=127.0.0.1 -p \(port) -k \(folder) " + settings.serverOptions
                do throws(ClusterFailure) {
                    // -w: pg_ctl returns once the server accepts connections (or has failed).
                    try runServerCommand("pg_ctl", ["-D", data, "-w", "-l", folder + "/log", "start", "-o", options],
                                         binaries: binaries, folder: folder, runsAsPostgresUser: runsAsPostgresUser)
                    return PostgresCluster(port: port, folder: folder, binaries: binaries, runsAsPostgresUser: runsAsPostgresUser)
                } catch {
                    failure = error
                }
            }
            throw failure
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw error
        }
    }

    /// Stops the server at once (nothing it holds is worth a clean shutdown) and removes its folder.
    public func stop() {
        _ = try? Self.runServerCommand("pg_ctl", ["-D", folder + "/data", "-m", "immediate", "-w", "stop"],
                                       binaries: binaries, folder: folder, runsAsPostgresUser: runsAsPostgresUser)
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Runs one of the server's tools, as the `postgres` user when the tests run as root, and
    /// throws with its output when it fails. The output goes to a file, not a pipe, and the
    /// tool is started with `posix_spawn`, keeping nothing of this process but that file:
    /// the server `pg_ctl start` leaves running inherits every descriptor it is given, and
    /// Foundation's `Process` learns that its child ended from a descriptor the child holds,
    /// so with the server holding it too, `waitUntilExit` would never return.
    private static func runServerCommand(_ tool: String, _ arguments: [String], binaries: String, folder: String,
                                         runsAsPostgresUser: Bool) throws(ClusterFailure) {
        // The postgres user may not be allowed into the test's working directory, so the tool
        // starts in the cluster's folder (glibc's addchdir file action needs _GNU_SOURCE).
        let inFolder = ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", folder, "\(binaries)/\(tool)"] + arguments
        let argv = runsAsPostgresUser ? [runuser, "-u", serverUser, "--"] + inFolder : inFolder
        let outputPath = folder + "/\(tool).out"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        gatepass_spawn_close_from(&actions, 3)
        let cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, argv[0], &actions, nil, cArguments, environ)
        guard spawned == 0 else {
            throw ClusterFailure("cannot run \(argv[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 {
            guard errno == EINTR else { throw ClusterFailure("waitpid for \(tool): \(String(cString: strerror(errno)))") }
        }
        // WIFEXITED and WEXITSTATUS are macros: exited normally when the low 7 bits are 0.
        let exitedCleanly = status & 0x7F == 0 && (status >> 8) & 0xFF == 0
        guard exitedCleanly else {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            let log = (try? String(contentsOfFile: folder + "/log", encoding: .utf8)) ?? ""
            throw ClusterFailure("\(tool) \(arguments.first ?? "") failed (wait status \(status)): "
                                 + String(text.suffix(2_000)) + String(log.suffix(2_000)))
        }
    }
}

/// Why the cluster could not be made or started, with the tool's own output.
public struct ClusterFailure: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// How a cluster's server runs: what a commit waits for, and its memory.
public struct PostgresClusterSettings: Sendable {
    /// fsync, synchronous_commit and full_page_writes on: a commit is on disk when it returns,
    /// as with SQLite's synchronous=FULL. Off, commits are only in memory (fine for tests).
    public var durable: Bool
    public var sharedBuffers: String
    public var maxConnections: Int

    public init(durable: Bool, sharedBuffers: String, maxConnections: Int = 200) {
        self.durable = durable
        self.sharedBuffers = sharedBuffers
        self.maxConnections = maxConnections
    }

    /// For tests: nothing waits for the disk, since nothing must survive the test process.
    public static let throwAway = PostgresClusterSettings(durable: false, sharedBuffers: "32MB")
    /// For measurements: every commit survives a power cut.
    public static let durableCommits = PostgresClusterSettings(durable: true, sharedBuffers: "128MB")

    var serverOptions: String {
        let onOrOff = durable ? "on" : "off"
        return "-c fsync=\(onOrOff) -c synchronous_commit=\(onOrOff) -c full_page_writes=\(onOrOff) "
            + "-c max_connections=\(maxConnections) -c shared_buffers=\(sharedBuffers)"
    }
}
