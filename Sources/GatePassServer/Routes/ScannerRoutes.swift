import Foundation
import GatePassAPI
import GatePassCore
import HTTPServer

extension GatePassApplication {
    /// The scanner controller: the gate.
    static let scannerRoutes: [Route] = [
        .write(.scannerToken) { app, call, tx in try app.issueScannerToken(call, tx) },
        .read(.scannerStats, cachedAnswer: { app, call in app.cachedStats(call) }) { app, call, tx in try app.stats(call, tx) },
        .read(.scannerHistory) { app, call, tx in try app.scanHistory(call, tx) },
        .write(.scannerCheckIn, idempotency: .init(fingerprintedBody: CheckInBody.fingerprinted,
                                                   replay: { app, call, stored, tx in try app.replayedCheckIn(call, stored: stored, tx) })) {
            app, call, tx in try app.checkIn(call, tx)
        },
        .write(.scannerCheckOut) { app, call, tx in try app.checkOut(call, tx) },
        .read(.scannerLookup) { app, call, tx in try app.lookup(call, tx) },
        .write(.scannerWalkIn) { app, call, tx in try app.walkIn(call, tx) },
        .read(.scannerOnSite) { app, call, tx in try app.onSite(call, tx) },
        .deferred(.scannerExpected) { app, call, reply in try app.expected(call, reply: reply) },
        .read(.scannerPassKeys) { app, call, tx in try app.passKeyList(call, tx) },
    ]

    struct ScannerTokenBody: Decodable {
        var checkpointId: String?
        /// The scanner token this one renews (the client's renewal, or a re-login on the same
        /// device): the new token continues its device, so what that device was told by
        /// `/expected` still judges its offline claims (api.md "Which offline claims count").
        var previousScannerToken: String?
    }

    /// A scanner token bound to a checkpoint, ended by the logout of the session that made it.
    func issueScannerToken(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let body = try JSONBody.decodeOptional(ScannerTokenBody.self, from: call.request.body)
        let caller = call.caller
        let checkpoint: Checkpoint?
        if let id = body.checkpointId {
            checkpoint = try tx.checkpoints.find(id: id, organizationId: caller.organizationId)
        } else {
            checkpoint = try tx.checkpoints.defaultCheckpoint(organizationId: caller.organizationId)
        }
        guard let checkpoint else { throw APIError.notFound("checkpoint") }
        guard !checkpoint.retired else { throw APIError.conflict("the checkpoint \(checkpoint.name) is retired; choose another") }
        let claims = try Sessions.create(userId: caller.user.id, kind: .scanner, parent: caller.sessionId,
                                         checkpointId: checkpoint.id, now: call.now,
                                         lifetime: configuration.scannerTokenLifetimeSeconds, tx)
        if let previous = body.previousScannerToken, let device = try renewedDevice(previous, call, tx) {
            try tx.scannerDevices.link(sessionId: claims.sessionId, deviceId: device)
        }
        try audit(.scannerTokenCreate, id: claims.sessionId, .facts(["checkpointId": checkpoint.id]), call, tx)
        return JSONBody.response(status: 201, ScannerTokenAnswer(
            scannerToken: signer.sign(claims), checkpoint: CheckpointSummary(id: checkpoint.id, name: checkpoint.name),
            expiresAt: Timestamp(Date(timeIntervalSince1970: TimeInterval(claims.expiresAt)))))
    }

    /// The device of the scanner token a new one renews: a scanner session of the caller's own
    /// user, expired or ended by a logout. A token this server cannot place (not signed with its
    /// secret, its session gone: a restored database) or one an admin revoked hands nothing on:
    /// nil, the new token starts a device afresh, so a renewal never fails over it. A login
    /// token, or a scanner token of another user, is 400: no client sends one.
    private func renewedDevice(_ token: String, _ call: Call, _ tx: any Transaction) throws -> String? {
        guard let claims = signer.verify(token), let session = try tx.sessions.find(id: claims.sessionId) else { return nil }
        guard claims.kind == .scanner, session.kind == .scanner, session.user.id == call.caller.user.id,
              case .scanner = session.credential
        else { throw APIError.badRequest("previousScannerToken is not a scanner token of this user") }
        guard session.revokedReason == nil else { return nil }
        return try tx.scannerDevices.deviceId(sessionId: claims.sessionId) ?? claims.sessionId
    }

    /// The device a scanner principal scans as (api.md "Which offline claims count"): a kiosk's
    /// enrolment, or the first token of a chain of renewals.
    func scanningDevice(_ caller: Principal, _ tx: any Transaction) throws -> String {
        switch caller.credential {
        case .kiosk(let kioskId, _): "kiosk:" + kioskId
        case .scanner, .login: try tx.scannerDevices.deviceId(sessionId: caller.sessionId) ?? caller.sessionId
        }
    }

    // MARK: - Check-in and check-out

    struct CheckInBody: Decodable {
        var shortId: String
        var confirmApprovalRequest: Bool?
        var offline: Bool?
        var scannedAt: Timestamp?
        /// What the kiosk decided offline, on the replay of an offline scan.
        var offlineDecision: ScanResult?

        /// What a check-in's idempotency fingerprint covers (api.md "Offline passes"):
        /// `shortId` and `confirmApprovalRequest` only, so the replay of an attempt that did
        /// reach the server, which adds `offline`, `scannedAt` and `offlineDecision`, is
        /// recognised as that attempt. A body that is no check-in is covered whole (the two
        /// forms start with different bytes, so they cannot meet).
        @Sendable static func fingerprinted(_ body: [UInt8]) -> [UInt8] {
            struct Covered: Decodable { var shortId: String; var confirmApprovalRequest: Bool? }
            guard let covered = try? JSONDecoder().decode(Covered.self, from: Data(body)) else { return [2] + body }
            return [1] + Array("\(covered.shortId.utf8.count):\(covered.shortId)\(covered.confirmApprovalRequest == true ? 1 : 0)".utf8)
        }
    }

    /// The check-in of api.md: decided by the domain's table, stored with its scan in the
    /// same transaction. The visitor's change is conditional on the status it was decided from
    /// (`VisitorRepository.updateState`), so on any database two kiosks scanning one
    /// pass at once get exactly one CHECKED_IN.
    ///
    /// A GP2 text is judged by its signature first, so a forged text naming a real short id is
    /// INVALID, not that visitor's scan. A replayed offline scan (`offlineDecision`) is
    /// reconciled with what happened at the gate (`CheckIn.reconcile`).
    func checkIn(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let body = try JSONBody.decode(CheckInBody.self, from: call.request.body)
        let caller = call.caller
        let checkpointId = caller.checkpointId!
        let request = CheckInRequest(confirmApprovalRequest: body.confirmApprovalRequest ?? false,
                                     offline: body.offline ?? false, scannedAt: body.scannedAt?.date)
        var scan = Scan(id: newIdentifier(), shortId: nil, raw: Self.truncated(body.shortId, bytes: QRPayload.maximumRawBytes),
                        result: .invalid, visitorId: nil, checkpointId: checkpointId, scannedBy: caller.user.id,
                        scannedAt: Timestamp(request.scannedAt ?? call.now), receivedAt: Timestamp(call.now),
                        offline: request.offline, offlineDecision: body.offlineDecision)
        func invalid(_ message: String) throws -> HTTPResponse {
            scan.result = .invalid
            try recordRefusedScan(scan, organizationId: caller.organizationId, kioskId: caller.kioskId, now: call.now, tx)
            metrics.recordCheckIn(result: ScanResult.invalid.rawValue)
            try alertOfAdmittedForgery(body, scan: scan, call, tx)
            return APIError.badRequest(message).response
        }
        let reference: QRPayload.Reference
        do {
            reference = try QRPayload.reference(from: body.shortId)
        } catch {
            return try invalid(error.description)
        }
        var signingKey: PassKey?
        if case .signed(let text) = reference {
            switch try passes.keyring.check(text, organizationId: caller.organizationId, now: call.now) {
            case .verified(let key): signingKey = key
            case .unknownKey: return try invalid("the pass is signed with a key this site does not have")
            case .revokedKey: return try invalid("the pass is signed with a revoked key; the visitor needs the re-issued pass")
            case .badSignature: return try invalid("the pass's signature does not verify")
            }
        }
        let shortId = reference.shortId
        scan.shortId = shortId.rawValue
        guard let record = try tx.visitors.find(shortId: shortId), record.organizationId == caller.organizationId else {
            scan.result = .notFound
            try recordRefusedScan(scan, organizationId: caller.organizationId, kioskId: caller.kioskId, now: call.now, tx)
            metrics.recordCheckIn(result: ScanResult.notFound.rawValue)
            return APIError(code: .notFound, message: "no pass with short id \(shortId.rawValue)").response
        }
        if case .signed(let text) = reference, let signingKey, !text.matches(record.visitor, signedBy: signingKey) {
            scan.visitorId = record.visitor.id
            return try invalid("this pass was re-issued (its window or its need for approval changed): the visitor needs the new pass")
        }
        var decision = CheckIn.decide(visitor: record.visitor, receivedAt: call.now, request: request,
                                      checkpointId: checkpointId,
                                      blocklist: try tx.blocklist.candidates(for: record.visitor, organizationId: caller.organizationId,
                                                                             now: call.now))
        var conflict = false
        var claimFailure: OfflineClaimFailure?
        if let offlineDecision = body.offlineDecision {
            if offlineDecision == .checkedIn {
                claimFailure = try offlineClaimFailure(call, scannedAt: request.scannedAt, visitor: record.visitor,
                                                       text: signingKey.map { .signed($0.purpose) } ?? .unsigned, tx)
            }
            (decision, conflict) = CheckIn.reconcile(decision, offlineDecision: offlineDecision, visitor: record.visitor,
                                                     checkpointId: checkpointId, claimFailure: claimFailure)
        }
        if decision.changesVisitor {
            try tx.visitors.changeState(decision.visitor, from: record.visitor,
                                        approvalCheckpointId: decision.event == .awaiting ? checkpointId : nil)
            try auditStateChange(from: record.visitor, to: decision.visitor, call, tx)
        }
        scan.result = decision.result
        scan.visitorId = record.visitor.id
        try tx.scans.insert(scan, organizationId: caller.organizationId, kioskId: caller.kioskId)
        if let event = decision.event, let kind = EventKind(rawValue: event.rawValue) {
            try tx.events.appendVisitorEvent(kind, visitor: decision.visitor, organizationId: caller.organizationId,
                                             checkpointId: checkpointId, scanId: scan.id, now: call.now)
            try queueNotices(for: kind, visitor: decision.visitor, organizationId: caller.organizationId, call, tx)
        }
        if conflict && body.offlineDecision == .checkedIn {
            // One alert with both decisions (and the blocklist entry, when a block was one of them).
            try tx.events.appendSecurityAlert(visitor: decision.visitor, entryId: decision.blockingEntry?.id,
                                              organizationId: caller.organizationId, checkpointId: checkpointId, scanId: scan.id,
                                              offlineDecision: .checkedIn, decision: decision.result, failedCondition: claimFailure,
                                              now: call.now)
        } else if let entry = decision.blockingEntry {
            try tx.events.appendSecurityAlert(visitor: decision.visitor, entryId: entry.id, organizationId: caller.organizationId,
                                              checkpointId: checkpointId, scanId: scan.id, now: call.now)
        }
        metrics.recordCheckIn(result: decision.result.rawValue)
        return JSONBody.response(json: CheckInAnswer(result: decision.result, visitor: decision.visitor, scanId: scan.id,
                                                     conflict: conflict ? true : nil).jsonText)
    }

    private func auditStateChange(from previous: Visitor, to visitor: Visitor, _ call: Call, _ tx: any Transaction) throws {
        let action: AuditAction = switch visitor.status {
        case .checkedIn: .visitorCheckIn
        case .checkedOut: .visitorCheckOut
        case .awaitingApproval: .visitorRequestApproval
        default: .visitorUpdate
        }
        try audit(action, id: previous.id, .changed(from: previous, to: visitor), call, tx)
    }

    /// A check-in whose Idempotency-Key has an answer: the attempt reached the server before.
    /// When the kiosk, not hearing back in time, admitted the visitor offline and the stored
    /// answer did not admit, the visitor is inside all the same: the conflict is raised as for
    /// any offline admission, once (the stored scan then carries the offline decision).
    func replayedCheckIn(_ call: Call, stored: HTTPResponse, _ tx: any Transaction) throws -> HTTPResponse {
        guard stored.status == 200,
              let body = try? JSONBody.decode(CheckInBody.self, from: call.request.body), body.offlineDecision == .checkedIn,
              let answer = try? JSONDecoder().decode(CheckInAnswer.self, from: Data(stored.body)), answer.result != .checkedIn,
              let record = try tx.visitors.find(id: answer.visitor.id), record.organizationId == call.caller.organizationId
        else { return stored }
        let checkpointId = call.caller.checkpointId!
        var visitor = record.visitor
        if try tx.scans.setOfflineDecision(.checkedIn, scanId: answer.scanId) {
            var text = OfflineClaim.Text.unsigned
            if case .signed(let signed)? = try? QRPayload.reference(from: body.shortId),
               case .verified(let key) = try passes.keyring.check(signed, organizationId: record.organizationId, now: call.now) {
                text = .signed(key.purpose)
            }
            let failure = try offlineClaimFailure(call, scannedAt: body.scannedAt?.date, visitor: visitor, text: text, tx)
            // A claim that does not count admits no one: only the alert says what the gate did.
            if failure == nil && visitor.status != .checkedIn {
                let judgedAt = CheckIn.judgementTime(receivedAt: call.now, scannedAt: body.scannedAt?.date)
                let inside = CheckIn.admittedVisitor(visitor, at: judgedAt, checkpointId: checkpointId)
                try tx.visitors.changeState(inside, from: visitor)
                try auditStateChange(from: visitor, to: inside, call, tx)
                try tx.events.appendVisitorEvent(.visitorArrived, visitor: inside, organizationId: record.organizationId,
                                                 checkpointId: checkpointId, scanId: answer.scanId, now: call.now)
                try queueNotices(for: .visitorArrived, visitor: inside, organizationId: record.organizationId, call, tx)
                visitor = inside
            }
            try tx.events.appendSecurityAlert(visitor: visitor, entryId: nil, organizationId: record.organizationId,
                                              checkpointId: checkpointId, scanId: answer.scanId, offlineDecision: .checkedIn,
                                              decision: answer.result, failedCondition: failure, now: call.now)
        }
        return JSONBody.response(CheckInAnswer(result: answer.result, visitor: visitor, scanId: answer.scanId, conflict: true))
    }

    /// A kiosk admitted offline on a signed text the server finds `INVALID` (a forgery, a
    /// revoked key, a re-issued pass): nobody is admitted and the answer stays 400 as for any
    /// INVALID scan, but the managers are told which visitor's pass it named, as for any claim
    /// that fails (`signature`). A text naming no visitor of the organization has no one to name.
    private func alertOfAdmittedForgery(_ body: CheckInBody, scan: Scan, _ call: Call, _ tx: any Transaction) throws {
        guard body.offlineDecision == .checkedIn, case .signed(let text)? = try? QRPayload.reference(from: body.shortId),
              let record = try tx.visitors.find(shortId: text.shortId), record.organizationId == call.caller.organizationId
        else { return }
        try tx.events.appendSecurityAlert(visitor: record.visitor, entryId: nil, organizationId: record.organizationId,
                                          checkpointId: scan.checkpointId, scanId: scan.id, offlineDecision: .checkedIn,
                                          decision: .invalid, failedCondition: .signature, now: call.now)
    }

    /// Why an offline admission claimed by the caller's device does not count, or nil when it
    /// does: judged by the domain against what the device's `/expected` answers told it.
    private func offlineClaimFailure(_ call: Call, scannedAt: Date?, visitor: Visitor, text: OfflineClaim.Text,
                                     _ tx: any Transaction) throws -> OfflineClaimFailure? {
        let device = try scanningDevice(call.caller, tx)
        return OfflineClaim.failure(scannedAt: scannedAt, receivedAt: call.now, visitor: visitor, text: text,
                                    knowledge: try tx.scannerDevices.knowledge(deviceId: device, visitorId: visitor.id))
    }

    /// The organization's pass keys, for kiosks that check GP2 signatures offline.
    func passKeyList(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        JSONBody.response(PassKeyList(keys: try passes.keyring.publicKeys(organizationId: call.caller.organizationId, now: call.now)))
    }

    static func truncated(_ text: String, bytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var out = ""
        var used = 0
        for character in text {
            let size = character.utf8.count
            guard used + size <= limit else { break }
            out.append(character)
            used += size
        }
        return out
    }

    struct CheckOutBody: Decodable { var shortId: String }

    func checkOut(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let body = try JSONBody.decode(CheckOutBody.self, from: call.request.body)
        let shortId = try QRPayload.shortID(from: body.shortId)
        guard let record = try tx.visitors.find(shortId: shortId), record.organizationId == call.caller.organizationId else {
            throw APIError(code: .notFound, message: "no pass with short id \(shortId.rawValue)")
        }
        let (result, updated) = CheckOut.decide(visitor: record.visitor, at: call.now)
        if result == .checkedOut {
            try tx.visitors.changeState(updated, from: record.visitor)
            try audit(.visitorCheckOut, id: updated.id, .changed(from: record.visitor, to: updated), call, tx)
            try tx.events.appendVisitorEvent(.visitorDeparted, visitor: updated, organizationId: record.organizationId,
                                             checkpointId: call.caller.checkpointId, now: call.now)
        }
        return JSONBody.response(CheckOutAnswer(result: result, visitor: updated))
    }

    // MARK: - Walk-ins

    struct WalkInBody: Decodable {
        var name: String
        var phone: String?
        var email: String?
        var company: String?
        var purpose: String?
        var hostName: String?
    }

    /// A visitor without a pass, registered at the gate; waits for approval, unless the
    /// blocklist blocks them: then they are stored REJECTED, the managers get `security.alert`
    /// and no approver is asked.
    func walkIn(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let body = try JSONBody.decode(WalkInBody.self, from: call.request.body)
        let caller = call.caller
        let name = try Field.requiredText(body.name, "name")
        let phone = try Field.phone(body.phone)
        let email = try Field.email(body.email)
        let company = try Field.text(body.company, "company")
        let purpose = try Field.text(body.purpose, "purpose", maxLength: 500)
        let hostName = try Field.text(body.hostName, "hostName")
        // The walk-in's pass is for the site's today, in the site's zone.
        let zone = try site(caller.organizationId, tx).timeZone
        // Read before the insert: the entries depend on the name, email and phone alone.
        let candidates = try tx.blocklist.candidates(for: BlocklistKeys(name: name, email: email, phone: phone),
                                                     organizationId: caller.organizationId, now: call.now)
        var blocking: BlocklistEntry?
        let visitor = try tx.visitors.insertWithFreshShortID(organizationId: caller.organizationId,
                                                             approvalCheckpointId: caller.checkpointId,
                                                             createdBy: caller.user.id) { shortId in
            let arrived = Visitor(id: newIdentifier(), shortId: shortId, name: name, email: email, phone: phone, company: company,
                                  purpose: purpose, hostName: hostName, approverId: nil, requiresApproval: true, walkIn: true,
                                  status: .awaitingApproval, validity: ValidityWindow.day(containing: call.now, in: zone),
                                  createdAt: call.now, approvalRequestedAt: call.now)
            let decision = WalkIn.decide(arrived, blocklist: candidates, at: call.now)
            blocking = decision.blockingEntry
            return decision.visitor
        }
        try audit(.visitorWalkIn, id: visitor.id, .created(visitor), call, tx)
        if let blocking {
            try tx.events.appendSecurityAlert(visitor: visitor, entryId: blocking.id, organizationId: caller.organizationId,
                                              checkpointId: caller.checkpointId, scanId: nil, now: call.now)
            return JSONBody.response(status: 201, WalkInAnswer(result: .blocked, visitor: visitor))
        }
        try tx.events.appendVisitorEvent(.requestCreated, visitor: visitor, organizationId: caller.organizationId,
                                         checkpointId: caller.checkpointId, now: call.now)
        try queueNotices(for: .requestCreated, visitor: visitor, organizationId: caller.organizationId, call, tx)
        return JSONBody.response(status: 201, WalkInAnswer(result: .awaitingApproval, visitor: visitor))
    }

    // MARK: - Reads for the gate

    func lookup(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        guard let search = try Field.search(call.parameter("query"), "query") else {
            throw APIError.badRequest("query must not be empty")
        }
        let records = try tx.visitors.lookup(organizationId: call.caller.organizationId, search: search, limit: ListBounds.lookupLimit)
        return JSONBody.response(Page(items: records.map(\.visitor), nextCursor: nil))
    }

    /// Everyone inside now (the evacuation roll), latest arrival first.
    func onSite(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let limit = try Field.limit(call.request.query)
        let cursor = try Field.cursor(call.request.query)
        let records = try tx.visitors.onSite(organizationId: call.caller.organizationId, after: cursor, limit: limit + 1)
        return JSONBody.response(page(records, limit: limit) {
            ListCursor(time: $0.visitor.checkedInAt?.milliseconds ?? 0, seq: $0.seq)
        })
    }

    /// Passes valid today that changed after `since`, oldest change first, 500 at a time:
    /// the kiosk's offline cache follows this feed. A pass that is revoked now — cancelled, or
    /// matched by the blocklist — is named in `revoked`; a blocked visitor's details are not
    /// sent at all (the gate needs only to refuse them), a cancelled one is in `items` too,
    /// so the kiosk's table answers CANCELLED as the server does.
    ///
    /// The answer goes out only once what it told the device is recorded (its time, cursor and
    /// each visitor carried), so an offline claim replayed after it is judged against it.
    func expected(_ call: Call, reply: @escaping @Sendable (HTTPResponse) -> Void) throws {
        let (answer, told) = try store.read { tx in try expectedAnswer(call, tx) }
        let caller = call.caller, now = call.now
        let fullLoad = call.request.query["since"] == nil
        try store.write { tx in
            try tx.scannerDevices.recordExpected(
                deviceId: try self.scanningDevice(caller, tx), organizationId: caller.organizationId,
                sync: DeviceSync(at: now, cursor: answer.cursor), told: told,
                forgetBefore: fullLoad ? now.addingTimeInterval(-Self.deviceKnowledgeKept) : nil)
        }
        reply(JSONBody.response(answer))
    }

    /// How long what a device was told of a pass is kept after the last answer that carried it:
    /// longer than the outbox's replays take (a day), so a kiosk back after a night still has
    /// its claims judged by what it knew.
    static let deviceKnowledgeKept: TimeInterval = 48 * 3600

    private func expectedAnswer(_ call: Call, _ tx: any Transaction) throws
        -> (ExpectedPasses, [(visitorId: String, knowledge: DeviceKnowledge)]) {
        var since: Int64 = 0
        if let raw = call.request.query["since"] {
            guard raw.count <= 19, let value = Int64(raw), value >= 0 else {
                throw APIError.badRequest("since must be a cursor returned by this route")
            }
            since = value
        }
        let organization = call.caller.organizationId
        let today = ValidityWindow.day(containing: call.now, in: try site(organization, tx).timeZone)
        let rows = try tx.visitors.changed(organizationId: organization, after: since, validDuring: today, limit: ListBounds.maximumLimit)
        var items: [Visitor] = []
        var revoked: [String] = []
        var told: [(visitorId: String, knowledge: DeviceKnowledge)] = []
        for row in rows {
            let visitor = row.visitor
            let blocked = Blocklist.firstMatch(try tx.blocklist.candidates(for: visitor, organizationId: organization, now: call.now),
                                               for: visitor, at: call.now) != nil
            if blocked || visitor.status == .cancelled { revoked.append(visitor.shortId.rawValue) }
            if !blocked { items.append(visitor) }
            told.append((visitor.id, DeviceKnowledge(told: visitor, blocked: blocked, at: call.now)))
        }
        return (ExpectedPasses(items: items, cursor: String(rows.last?.changeSequence ?? since), revoked: revoked), told)
    }

    /// Today's counters for the organization; `?checkpointId=` narrows the ones that belong
    /// to a gate (checked in, checked out, on site, awaiting approval requested there).
    ///
    /// Kiosks poll this constantly, so answers are cached until the next committed write
    /// (see `StatsCache`): a hit costs no query at all.
    func stats(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        if let cached = cachedStats(call) { return cached }
        let key = statsKey(call)
        // "Today" is the site's: its zone is read in this generation, so a change of it (a
        // committed write) is never answered from an entry of the old zone.
        let zone = try site(key.organization, tx).timeZone
        let today = ValidityWindow.day(containing: call.now, in: zone)
        let stats = try tx.visitors.counts(organizationId: key.organization, checkpointId: key.checkpoint, day: today)
        let response = JSONBody.response(stats)
        if let generation = call.answerGeneration { statsCache.store(response, for: key, generation: generation, day: today) }
        return response
    }

    /// The stats answer cached for this caller's site and gate, when no write has committed
    /// since it was computed (the generation was read before this request's transaction).
    func cachedStats(_ call: Call) -> HTTPResponse? {
        guard let generation = call.answerGeneration else { return nil }
        return statsCache.lookup(statsKey(call), generation: generation, now: call.now)
    }

    private func statsKey(_ call: Call) -> StatsCache.Key {
        StatsCache.Key(organization: call.caller.organizationId, checkpoint: call.request.query["checkpointId"])
    }

    // MARK: - Scan history

    func scanFilter(_ call: Call) throws -> ScanHistoryFilter {
        let query = call.request.query
        return ScanHistoryFilter(organizationId: readScope(call), checkpointId: query["checkpointId"],
                                 from: try Field.time(query, "from"), to: try Field.time(query, "to"),
                                 result: try Field.scanResult(query["result"]))
    }

    func scanHistory(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let limit = try Field.limit(call.request.query)
        let rows = try tx.scans.page(try scanFilter(call), after: try Field.cursor(call.request.query), limit: limit + 1)
        let items = Array(rows.prefix(limit))
        let next = rows.count > limit ? items.last.map { ListCursor.after($0).token } : nil
        return JSONBody.response(Page(items: items.map(\.scan), nextCursor: next))
    }

}

