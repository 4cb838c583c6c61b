import Foundation
import GatePassAPI
import GatePassCore

/// api.md "Users, checkpoints, scanner tokens": the gates an admin manages and a kiosk's enrolment.
extension APIClient {
    /// `PATCH /api/checkpoints/:id`: rename and/or retire (a retired gate's tokens end at once).
    public func updateCheckpoint(token: String, id: String, _ changes: CheckpointChanges) throws(ClientError) -> Checkpoint {
        try request(Checkpoint.self, .checkpointsUpdate, id, token: token, json: changes)
    }

    public func scannerTokens(token: String, limit: Int? = nil, cursor: String? = nil) throws(ClientError) -> Page<ScannerTokenSummary> {
        try request(Page<ScannerTokenSummary>.self, .adminScannerTokens,
                    query: [("limit", limit.map(String.init)), ("cursor", cursor)], token: token)
    }

    /// 204; the token's next request is 401 `REVOKED`.
    public func revokeScannerToken(token: String, id: String) throws(ClientError) {
        _ = try send(.adminScannerTokenRevoke, id, token: token, body: CanonicalJSON.encode([String: String]()))
    }

    /// A one-time enrolment code (10 minutes) for a kiosk at `checkpointId`.
    public func createKioskEnrolment(token: String, checkpointId: String, name: String) throws(ClientError) -> KioskEnrolmentCode {
        try request(KioskEnrolmentCode.self, .adminKiosksCreate, token: token,
                    json: KioskRequest(checkpointId: checkpointId, name: name))
    }

    /// Uses an enrolment code (no token): the kiosk's own credential, bound to the gate.
    public func enrolKiosk(code: String) throws(ClientError) -> ScannerTokenAnswer {
        try request(ScannerTokenAnswer.self, .scannerEnrol, token: nil, json: KioskEnrolmentRequest(enrolmentCode: code))
    }
}
