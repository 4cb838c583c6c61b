import Foundation
import GatePassCore

extension Administration {
    /// One organization's part of `gatepass admin retention`.
    public struct RetentionOutcome: Sendable, Equatable {
        public var organizationId: String
        public var organization: String
        public var counts: RetentionCounts
    }

    /// `gatepass admin retention --db PATH [--dry-run]`: every organization's retention run on
    /// the database file now, exactly as the daily job runs it (its `retentionDays`, every copy
    /// of the data), whatever the hour. A real run records `retention.run` (actor `system`) for
    /// each organization it changed, chained with the key from the server's secret; a dry run
    /// changes nothing.
    /// - Parameter secretFile: the server's secret (default `<database>.secret`); it must exist:
    ///   entries chained under a new secret's key would break the server's chain.
    public static func runRetention(database: String, secretFile: String? = nil, dryRun: Bool,
                                    now: Date) throws -> [RetentionOutcome] {
        let files = try DatabaseFiles(database: database, secretFile: secretFile)
        let secretPath = try files.secretFile()
        guard FileManager.default.fileExists(atPath: secretPath) else {
            throw Failure(message: "no server secret at \(secretPath): the audit key comes from it (give --secret-file)")
        }
        let store = try files.open()
        defer { store.close() }
        let audit = try Audit(files: files, store: store, now: now)
        var outcomes: [RetentionOutcome] = []
        for organizationId in try store.read({ tx in try tx.directory.organizationIds() }) {
            let (name, counts) = try store.write { tx -> (String, RetentionCounts) in
                let name = try tx.directory.organization(id: organizationId)?.name ?? organizationId
                let erasure = try Anonymisation.run(organizationId: organizationId, now: now, dryRun: dryRun, limit: nil, tx)
                let counts = erasure.counts
                if !dryRun && counts != .zero {
                    try audit.record(.retentionRun, id: organizationId, .erasure(erasure), organizationId: organizationId,
                                     at: now, tx)
                }
                return (name, counts)
            }
            if !dryRun && counts != .zero { try audit.log.committed(store) }
            outcomes.append(RetentionOutcome(organizationId: organizationId, organization: name, counts: counts))
        }
        // Closing checkpoints the WAL and truncates it, waiting up to the busy timeout for a
        // running server's readers: then no older copy of the erased rows stays. When a reader
        // holds on longer, the copies stay in the WAL until the server's next erase, retention
        // run or stop truncates it (README "Erasure and the files").
        return outcomes
    }
}
