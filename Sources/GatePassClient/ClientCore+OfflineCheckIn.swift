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

    /// What became of a person's check-in that the server did not answer (`gatepass checkin`).
    public enum UnansweredCheckIn: Sendable, Equatable {
        /// A short id, `GP1:` text or pass URL: nothing here can vouch for it, so it waits in the
        /// outbox for the server to judge, as it was queued.
        case queuedForTheServer
        /// A GP2 text, but this device holds no pass keys (never fetched): queued unchecked.
        case queuedWithoutKeys
        /// Judged here as the kiosk judges it (`OfflineDecision.decide`, policy `signed`) and
        /// queued with that decision for the replay.
        case decided(OfflineDecision)
        /// Not a pass, or a GP2 text whose signature does not check out: taken out of the
        /// outbox, so a forgery is never sent as a check-in.
        case refused(OfflineDecision)
    }

    /// Judges a queued check-in whose first try got no answer: a signed pass is verified with
    /// the pass keys this device was last given (and the pass cache, where there is one), as an
    /// offline kiosk does; a text that is not a pass, or a forgery, leaves the outbox.
    public func judgeUnansweredCheckIn(_ entry: OutboxEntry, code: String) throws(ClientError) -> UnansweredCheckIn {
        let reference: QRPayload.Reference
        do {
            reference = try QRPayload.reference(from: code)
        } catch {
            try store.completeEntry(id: entry.id)
            return .refused(OfflineDecision(result: .invalid, basis: .none))
        }
        guard case .signed = reference else { return .queuedForTheServer }
        guard try !store.passKeys().isEmpty else { return .queuedWithoutKeys }
        let decision = try decideOffline(code: code, scannedAt: entry.scannedAt ?? clock.now(), policy: .signed)
        if decision.result == .invalid {
            try store.completeEntry(id: entry.id)
            return .refused(decision)
        }
        try attachOfflineDecision(decision.result, to: entry)
        return .decided(decision)
    }

    /// Fetches the organization's pass keys with the scanner token and keeps them, so a signed
    /// pass can be checked while the server is away. Called at login and by the online gate
    /// commands; best effort for them (the keys they hold stay when it fails).
    public func refreshPassKeys() throws(ClientError) {
        let (server, scanner) = try scannerCredential()
        guard let scanner else { return }
        try store.savePassKeys(try api(server).passKeys(token: scanner.scannerToken))
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
