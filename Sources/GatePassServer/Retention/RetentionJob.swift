import Foundation
import GatePassCore

extension GatePassApplication {
    /// The daily retention run of every organization that is due (`Retention.isDailyRunDue`:
    /// from 03:30 site time, once per site-local day, caught up at start after downtime). The
    /// server calls this at start and with every maintenance sweep (every 10 minutes), on the
    /// injected clock. Each batch of visitors is one transaction with its own `retention.run`
    /// entry (actor `system`); the day is recorded with the last batch, so a crash mid-run runs
    /// the rest at the next sweep. Failures are logged: the next sweep tries again.
    /// - Returns: the organizations that ran, with what each anonymised (for tests and the log).
    @discardableResult
    public func runDueRetention() -> [(organizationId: String, counts: RetentionCounts)] {
        let now = clock.now()
        var ran: [(organizationId: String, counts: RetentionCounts)] = []
        let organizations: [String]
        do {
            organizations = try store.read { tx in try tx.directory.organizationIds() }
        } catch {
            logSink.log("retention failed: \(error)")
            return []
        }
        // One organization's failure (a damaged setting, say) does not hold up the others'.
        for organizationId in organizations {
            do {
                let (zone, lastDay) = try store.read { tx in
                    (try site(organizationId, tx).timeZone, try tx.directory.lastRetentionDay(organizationId: organizationId))
                }
                guard Retention.isDailyRunDue(now: now, in: zone, lastRunDay: lastDay) else { continue }
                let counts = try runRetentionInBatches(organizationId: organizationId, now: now,
                                                       day: LocalDay(containing: now, in: zone))
                if counts != .zero {
                    logSink.log("retention: organization \(organizationId): \(counts.visitors) visitors and \(counts.scans) scans anonymised")
                }
                ran.append((organizationId, counts))
            } catch {
                logSink.log("retention of organization \(organizationId) failed (the next sweep retries): \(error)")
            }
        }
        return ran
    }

    private func runRetentionInBatches(organizationId: String, now: Date, day: LocalDay) throws -> RetentionCounts {
        var total = RetentionCounts.zero
        while true {
            let batch = try store.write { tx in
                let erasure = try Anonymisation.run(organizationId: organizationId, now: now, dryRun: false,
                                                    limit: Anonymisation.batchSize, tx)
                let counts = erasure.counts
                if counts != .zero {
                    try self.audit(.retentionRun, id: organizationId, .erasure(erasure), by: .system,
                                   organizationId: organizationId, at: now, tx)
                }
                if counts.visitors < Anonymisation.batchSize {
                    try tx.directory.recordRetentionDay(day, organizationId: organizationId)
                }
                return counts
            }
            total = total + batch
            if batch != .zero { erased() }
            if batch.visitors < Anonymisation.batchSize { return total }
        }
    }

    /// After a commit that anonymised: the audit head follows, and the journal keeps no older
    /// copy of what was erased.
    func erased() {
        moveAuditHead()
        do {
            try store.truncateJournal()
        } catch {
            logSink.log("after an erase, the journal could not be truncated (the next erase retries): \(error)")
        }
    }
}
