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
    /// - Parameters:
    ///   - secretFile: the server's secret (default `<database>.secret`); it must exist:
    ///     entries chained under a new secret's key would break the server's chain.
    ///   - journalAttempts: how many times a run that erased something tries to empty the WAL
    ///     (each attempt waits for no lock: a running server's reader makes it answer busy).
    ///   - pause: what happens between two attempts (a second's sleep; tests pass their own).
    ///   - warn: told, in one sentence, when a reader outlasted every attempt.
    public static func runRetention(database: String, secretFile: String? = nil, dryRun: Bool, now: Date,
                                    journalAttempts: Int = 30, pause: (_ attempt: Int) -> Void = { _ in Thread.sleep(forTimeInterval: 1) },
                                    warn: (String) -> Void = { _ in }) throws -> [RetentionOutcome] {
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
        // The old versions of the erased rows' pages are still in the WAL: empty it, without
        // waiting for a running server's readers (a checkpoint that waits blocks the server's
        // writes meanwhile), trying again after a pause while one is in the way.
        if !dryRun && outcomes.contains(where: { $0.counts != .zero }) {
            var emptied = try store.truncateJournalNow()
            var attempt = 1
            while !emptied && attempt < journalAttempts {
                pause(attempt)
                attempt += 1
                emptied = try store.truncateJournalNow()
            }
            if !emptied {
                store.stopWaitingForLocks()
                warn("\(database)-wal still holds copies of the erased values: a reader of the running server held it "
                     + "through \(journalAttempts) attempts; they go at the server's next erase, retention run or stop")
            }
        }
        return outcomes
    }
}
