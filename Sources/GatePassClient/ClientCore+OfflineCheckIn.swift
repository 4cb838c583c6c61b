import Foundation
import GatePassCore
import SQLite

/// Offline scans in the outbox (api.md "Offline passes"): every scan the kiosk decided by
/// itself — admitted or refused — is replayed once with its `scannedAt`, its `offlineDecision`
/// and the idempotency key of its first attempt.
extension ClientCore {
    /// Queues a scan decided offline without an online attempt (the server was known to be away).
    /// `confirmApprovalRequest` is false: an approval is asked for only once the replay answers
    /// `APPROVAL_REQUIRED`, from a kiosk that is back online.
    @discardableResult
    public func queueOfflineCheckIn(code: String, decision: ScanResult, scannedAt: Date) throws(ClientError) -> OutboxEntry {
        try enqueue(kind: "checkin", .scannerCheckIn, [],
                    body: CheckInBody(shortId: code, confirmApprovalRequest: false, offlineDecision: decision),
                    credential: .scanner, scannedAt: scannedAt)
    }

    /// Adds the offline decision to the entry of an online attempt that got no answer. The key,
    /// the scan time and `confirmApprovalRequest` stay what the first attempt had: the server's
    /// fingerprint covers `shortId` and `confirmApprovalRequest`, so if that attempt did reach
    /// it, the replay is recognised as the same check-in.
    public func attachOfflineDecision(_ decision: ScanResult, to entry: OutboxEntry) throws(ClientError) {
        try store.attachOfflineDecision(decision, entryId: entry.id)
    }
}

extension ClientDatabase {
    func attachOfflineDecision(_ decision: ScanResult, entryId: Int64) throws(ClientError) {
        try transaction { connection in
            guard let text = try connection.queryFirst("SELECT body FROM outbox WHERE id = ? AND kind = 'checkin'", [entryId], {
                try $0.optionalBlob(0)
            }) else {
                // Already delivered meanwhile (the server answered after all): nothing to add.
                return
            }
            guard let text, var body = try? JSONDecoder().decode(CheckInBody.self, from: Data(text)) else {
                throw ClientError.local("outbox entry \(entryId) is not a check-in this version can read")
            }
            body.offlineDecision = decision
            try connection.execute("UPDATE outbox SET body = ? WHERE id = ?", [CanonicalJSON.encode(body), entryId])
        }
    }
}
