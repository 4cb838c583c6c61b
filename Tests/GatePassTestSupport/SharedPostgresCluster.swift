import Foundation
import LocalPostgres

/// The one cluster of a test process: started by the first test that asks, shared by every
/// later one (each takes a fresh database of its own from `makeDatabase()`, so tests running
/// in parallel never see each other's rows), and stopped when the process exits.
extension PostgresCluster {
    private static let sharedLock = NSLock()
    /// Guarded by `sharedLock`: the cluster once started, or why it could not start (not tried again).
    nonisolated(unsafe) private static var sharedCluster: Result<PostgresCluster, ClusterFailure>?

    /// The test process's cluster, started by the first caller; every later caller (on any
    /// thread) waits for that start and gets the same cluster or the same failure.
    public static func shared() throws -> PostgresCluster {
        try sharedLock.withLock {
            if let sharedCluster { return try sharedCluster.get() }
            let started = Result { () throws(ClusterFailure) in try start(.throwAway) }
            sharedCluster = started
            if case .success = started {
                // A C function pointer captures nothing: the hook finds the cluster through the static.
                atexit { PostgresCluster.stopShared() }
            }
            return try started.get()
        }
    }

    private static func stopShared() {
        sharedLock.withLock {
            if case .success(let cluster) = sharedCluster { cluster.stop() }
            sharedCluster = nil
        }
    }
}
