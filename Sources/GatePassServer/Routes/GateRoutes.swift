import Foundation
import GatePassAPI
import GatePassCore
import GatePassCrypto
import HTTPServer

extension GatePassApplication {
    /// The gates controller: renaming and retiring checkpoints, the scanner tokens an admin
    /// sees and revokes, and kiosk enrolment (api.md "Users, checkpoints, scanner tokens").
    static let gateRoutes: [Route] = [
        .write(.checkpointsUpdate) { app, call, tx in try app.updateCheckpoint(call, tx) },
        .read(.adminScannerTokens) { app, call, tx in try app.listScannerTokens(call, tx) },
        .write(.adminScannerTokenRevoke) { app, call, tx in try app.revokeScannerToken(call, tx) },
        .write(.adminKiosksCreate) { app, call, tx in try app.createKioskEnrolment(call, tx) },
        .write(.scannerEnrol) { app, call, tx in try app.enrolKiosk(call, tx) },
    ]

    // MARK: - Checkpoints

    /// `PATCH /api/checkpoints/:id`: rename, retire (its scanner tokens end now, kiosks
    /// included: their next request is 401 `REVOKED`), or bring back (its old tokens stay ended).
    func updateCheckpoint(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let changes = try JSONBody.decode(CheckpointChanges.self, from: call.request.body)
        let organizationId = call.caller.organizationId
        guard let checkpoint = try tx.checkpoints.find(id: call.parameter("id"), organizationId: organizationId) else {
            throw APIError.notFound("checkpoint")
        }
        var updated = checkpoint
        if let name = changes.name {
            updated.name = try Field.requiredText(name, "name", maxLength: 100)
            if updated.name != checkpoint.name, try tx.checkpoints.exists(named: updated.name, organizationId: organizationId) {
                throw APIError.conflict("a checkpoint named \(updated.name) already exists")
            }
        }
        if let retired = changes.retired {
            if retired && checkpoint.isDefault {
                throw APIError.conflict("the default checkpoint cannot be retired; scanner tokens made without a checkpoint bind it")
            }
            updated.retired = retired
        }
        guard updated != checkpoint else { return JSONBody.response(checkpoint) }
        try tx.checkpoints.update(id: checkpoint.id, name: updated.name, retired: updated.retired, at: call.now)
        if updated.retired && !checkpoint.retired, try tx.sessions.revoke(scannerTokensOfCheckpoint: checkpoint.id, at: call.now) > 0 {
            call.effects.noteEndedSessions()
        }
        try audit(.checkpointUpdate, id: checkpoint.id, .changed(from: checkpoint, to: updated), call, tx)
        return JSONBody.response(updated)
    }

    // MARK: - Scanner tokens

    func listScannerTokens(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let query = call.request.query
        let limit = try Field.limit(query)
        let rows = try tx.sessions.scannerTokens(organizationId: call.caller.organizationId, now: call.now,
                                                 after: try Field.cursor(query), limit: limit + 1)
        return JSONBody.response(page(of: rows, limit: limit, item: { $0.token }, cursor: { $0.cursor }))
    }

    /// 204; the token's next request is 401 `REVOKED`, its event stream ends now. An unknown,
    /// ended or other organization's token is 404.
    func revokeScannerToken(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let id = call.parameter("id")
        guard try tx.sessions.revoke(scannerToken: id, organizationId: call.caller.organizationId, reason: .admin,
                                     at: call.now)
        else { throw APIError.notFound("scanner token") }
        call.effects.noteEndedSessions()
        try audit(.scannerTokenRevoke, id: id, .facts(["revoked": true]), call, tx)
        return HTTPResponse(status: 204, headers: [], body: [])
    }

    // MARK: - Kiosk enrolment

    /// An enrolment code lives 10 minutes (api.md).
    static let enrolmentCodeLifetime: TimeInterval = 600

    /// `POST /api/admin/kiosks`: a one-time code for one kiosk at an active checkpoint. The code
    /// is answered once and stored only as an HMAC.
    func createKioskEnrolment(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let body = try JSONBody.decode(KioskRequest.self, from: call.request.body)
        let name = try Field.requiredText(body.name, "name", maxLength: 100)
        let caller = call.caller
        guard body.checkpointId.utf8.count <= 64,
              let checkpoint = try tx.checkpoints.find(id: body.checkpointId, organizationId: caller.organizationId)
        else { throw APIError.notFound("checkpoint") }
        guard !checkpoint.retired else { throw APIError.conflict("the checkpoint \(checkpoint.name) is retired") }
        let code = try EnrolmentCode.random()
        let kiosk = StoredKiosk(id: newIdentifier(), organizationId: caller.organizationId, checkpointId: checkpoint.id,
                                name: name, createdBy: caller.user.id,
                                codeExpiresAt: call.now.addingTimeInterval(Self.enrolmentCodeLifetime), enrolledAt: nil)
        try tx.kiosks.insert(kiosk, codeHash: EnrolmentCode.hash(code, key: enrolmentCodeKey), createdAt: call.now)
        try audit(.kioskCreate, id: kiosk.id, .facts(["checkpointId": checkpoint.id, "name": name]), call, tx)
        return JSONBody.response(status: 201, KioskEnrolmentCode(id: kiosk.id, enrolmentCode: code,
                                                                  expiresAt: Timestamp(kiosk.codeExpiresAt)))
    }

    /// `POST /api/visitor-scanner/enrol` (no token): the code is the credential. A wrong, used
    /// or expired code is 401 with one message (nothing tells them apart), and counts against
    /// the server-wide throttle of wrong codes (429 beyond it).
    func enrolKiosk(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let body = try JSONBody.decode(KioskEnrolmentRequest.self, from: call.request.body)
        try enrolmentThrottle.check(at: call.now, tx)
        let refused = APIError.unauthorized("the enrolment code is wrong, used or expired; ask an admin for a new one")
        // A wrong code is counted in the database (every server shares the limit) and answered
        // without a throw, which would undo the count with the rest of the request.
        func countedRefusal() throws -> HTTPResponse {
            try enrolmentThrottle.recordWrong(at: call.now, tx)
            return refused.response
        }
        guard let code = EnrolmentCode.canonical(body.enrolmentCode) else { return try countedRefusal() }
        let hash = EnrolmentCode.hash(code, key: enrolmentCodeKey)
        guard let kiosk = try tx.kiosks.find(codeHash: hash), kiosk.enrolledAt == nil,
              kiosk.codeExpiresAt.milliseconds > call.now.milliseconds
        else { return try countedRefusal() }
        guard let checkpoint = try tx.checkpoints.find(id: kiosk.checkpointId, organizationId: kiosk.organizationId),
              !checkpoint.retired
        else { throw APIError.conflict("this code's checkpoint was retired; ask an admin for a code at another checkpoint") }
        guard try tx.kiosks.markEnrolled(kioskId: kiosk.id, codeHash: hash, at: call.now) else { throw refused }
        let sessionId = newIdentifier()
        let expiresAt = call.now.addingTimeInterval(TimeInterval(configuration.kioskTokenLifetimeDays) * 86_400)
        try tx.sessions.insertKiosk(id: sessionId, kioskId: kiosk.id, createdBy: kiosk.createdBy, checkpointId: checkpoint.id,
                                    createdAt: call.now, expiresAt: expiresAt)
        let claims = TokenClaims(kind: .scanner, sessionId: sessionId,
                                 expiresAt: Int64(expiresAt.timeIntervalSince1970.rounded(.down)))
        try audit(.kioskEnrol, id: kiosk.id, .facts(["checkpointId": checkpoint.id, "scannerTokenId": sessionId]), call,
                  organizationId: kiosk.organizationId, actor: AuditActor(kind: .kiosk, id: kiosk.id), tx)
        return JSONBody.response(status: 201, ScannerTokenAnswer(
            scannerToken: signer.sign(claims), checkpoint: CheckpointSummary(id: checkpoint.id, name: checkpoint.name),
            expiresAt: Timestamp(Date(timeIntervalSince1970: TimeInterval(claims.expiresAt)))))
    }
}

/// Kiosk enrolment codes: 12 Crockford base32 symbols (60 bits from the CSPRNG), shown as
/// `XXXX-XXXX-XXXX` and read the Crockford way (any case, hyphens and spaces ignored, `O`→`0`,
/// `I`/`L`→`1`), so a code read aloud or typed from a screen still matches.
enum EnrolmentCode {
    static let symbols = 12

    static func random() throws -> String {
        let bytes = try SecureRandom.bytes(symbols)
        let text = String(bytes.map { ShortID.alphabet[Int($0 & 31)] })
        return stride(from: 0, to: symbols, by: 4).map { start in
            String(text.dropFirst(start).prefix(4))
        }.joined(separator: "-")
    }

    /// The code's canonical symbols, or nil when `text` cannot be one.
    static func canonical(_ text: String) -> String? {
        guard text.utf8.count <= 64 else { return nil }
        var out = ""
        for character in text.uppercased() {
            switch character {
            case "-", " ": continue
            case "O": out.append("0")
            case "I", "L": out.append("1")
            default:
                guard ShortID.alphabet.contains(character) else { return nil }
                out.append(character)
            }
        }
        return out.count == symbols ? out : nil
    }

    /// What is stored: an HMAC with a key of the server secret, so a copy of the database
    /// enrols no kiosk.
    static func hash(_ code: String, key: [UInt8]) -> [UInt8] {
        HMACSHA256.authenticate(key: key, message: Array((canonical(code) ?? code).utf8))
    }
}

/// Wrong enrolment codes across every server of the database, per clock minute: at most
/// `perMinute`, then 429 until the minute ends. With 60-bit codes this keeps guessing
/// hopeless; requests carry no client address here, so the limit is shared (a flood delays a
/// real enrolment by at most a minute, it never lets a guess through). The count is a row of
/// the database, so servers behind one load balancer share it rather than each allowing its own.
struct EnrolmentThrottle: Sendable {
    let perMinute: Int

    init(perMinute: Int) { self.perMinute = perMinute }

    private static func windowStart(_ now: Date) -> Int64 { Int64(now.timeIntervalSince1970 / 60) * 60_000 }

    func check(at now: Date, _ tx: any Transaction) throws {
        let windowStart = Self.windowStart(now)
        guard try tx.kiosks.wrongCodes(inWindowStartingAt: windowStart) < perMinute else {
            let retryAfter = Int((Double(windowStart) / 1000 + 60) - now.timeIntervalSince1970) + 1
            throw APIError.rateLimited(retryAfter: retryAfter, "too many wrong enrolment codes; try again in a minute")
        }
    }

    func recordWrong(at now: Date, _ tx: any Transaction) throws {
        try tx.kiosks.recordWrongCode(inWindowStartingAt: Self.windowStart(now))
    }
}
