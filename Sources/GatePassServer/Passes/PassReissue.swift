import Foundation
import GatePassCore

extension GatePassApplication {
    /// Re-issues the passes of keys revoked since the last look (`gatepass keys revoke`, which
    /// changes only the keys file): from the revocation on, every pass form is drawn with the
    /// purpose's new key, so what is left is to tell the visitors — each current pass whose
    /// invitation was sent gets it again (a new pass page; the old one ends), recorded by
    /// `system`. Runs at start and every few seconds; a key is marked done once its mails are queued.
    public func reissueRevokedPasses() {
        let now = clock.now()
        do {
            for key in try passes.keyring.keysAwaitingReissue() {
                let queued = try store.write { tx -> Int in
                    guard self.mail.isEnabled else { return 0 }
                    let current = ValidityWindow(from: now, until: .distantFuture)
                    var count = 0
                    for row in try tx.visitors.changed(organizationId: key.organizationId, after: 0, validDuring: current,
                                                       limit: Int.max) {
                        let visitor = row.visitor
                        guard PassKeyPurpose.of(visitor) == key.purpose,
                              [.expected, .approved, .awaitingApproval].contains(visitor.status),
                              visitor.createdAt <= (key.revokedAt?.date ?? now), visitor.email != nil,
                              try tx.visitors.hasPassToken(visitorId: visitor.id),
                              // A blocked visitor is never mailed a pass (api.md "Blocklist").
                              try self.blocklistMatch(visitor, organizationId: key.organizationId, now: now, tx) == nil
                        else { continue }
                        let effects = CommitEffects()
                        _ = try self.queueInvitation(visitor, organizationId: key.organizationId, now: now, effects: effects, tx)
                        try self.audit(.visitorInvite, id: visitor.id, .facts(["email": visitor.email, "reissuedAfterKey": key.id]),
                                  by: .system, organizationId: key.organizationId, at: now, tx)
                        count += 1
                    }
                    return count
                }
                try passes.keyring.markReissued(keyId: key.id, now: now)
                if queued > 0 {
                    moveAuditHead()
                    mailWorker.wake()
                }
                logSink.log(mail.isEnabled
                    ? "pass key \(key.id) was revoked: \(queued) invitations re-sent with the re-issued passes"
                    : "pass key \(key.id) was revoked: its passes are re-issued, but this server sends no mail, so no visitor was told")
            }
        } catch {
            logSink.log("re-issuing the passes of a revoked pass key failed (tried again in a few seconds): \(error)")
        }
    }
}
