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
        .read(.scannerExpected) { app, call, tx in try app.expected(call, tx) },
        .read(.scannerPassKeys) { app, call, tx in try app.passKeyList(call, tx) },
    ]

    struct ScannerTokenBody: Decodable { var checkpointId: String? }

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
        try audit(.scannerTokenCreate, id: claims.sessionId, .facts(["checkpointId": checkpoint.id]), call, tx)
        return JSONBody.response(status: 201, ScannerTokenAnswer(
            scannerToken: signer.sign(claims), checkpoint: CheckpointSummary(id: checkpoint.id, name: checkpoint.name),
            expiresAt: Timestamp(Date(timeIntervalSince1970: TimeInterval(claims.expiresAt)))))
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
            try recordRefusedScan(scan, organizationId: caller.organizationId, now: call.now, tx)
            metrics.recordCheckIn(result: ScanResult.invalid.rawValue)
            return APIError.badRequest(message).response
        }
        let reference: QRPayload.Reference
        do {
            reference = try QRPayload.reference(from: body.shortId)
        } catch {
            return try invalid(error.description)
        }
        if case .signed(let text) = reference {
            switch try passes.keyring.check(text, organizationId: caller.organizationId, now: call.now) {
            case .verified: break
            case .unknownKey: return try invalid("the pass is signed with a key this site does not have")
            case .revokedKey: return try invalid("the pass is signed with a revoked key; the visitor needs the re-issued pass")
            case .badSignature: return try invalid("the pass's signature does not verify")
            }
        }
        let shortId = reference.shortId
        scan.shortId = shortId.rawValue
        guard let record = try tx.visitors.find(shortId: shortId), record.organizationId == caller.organizationId else {
            scan.result = .notFound
            try recordRefusedScan(scan, organizationId: caller.organizationId, now: call.now, tx)
            metrics.recordCheckIn(result: ScanResult.notFound.rawValue)
            return APIError(code: .notFound, message: "no pass with short id \(shortId.rawValue)").response
        }
        if case .signed(let text) = reference, !text.matches(record.visitor) {
            scan.visitorId = record.visitor.id
            return try invalid("this pass was re-issued (its window changed): the visitor needs the new pass")
        }
        var decision = CheckIn.decide(visitor: record.visitor, receivedAt: call.now, request: request,
                                      checkpointId: checkpointId,
                                      blocklist: try tx.blocklist.candidates(for: record.visitor, organizationId: caller.organizationId,
                                                                             now: call.now))
        var conflict = false
        if let offlineDecision = body.offlineDecision {
            (decision, conflict) = CheckIn.reconcile(decision, offlineDecision: offlineDecision, visitor: record.visitor,
                                                     checkpointId: checkpointId)
        }
        if decision.changesVisitor {
            try tx.visitors.changeState(decision.visitor, from: record.visitor,
                                        approvalCheckpointId: decision.event == .awaiting ? checkpointId : nil)
            try auditStateChange(from: record.visitor, to: decision.visitor, call, tx)
        }
        scan.result = decision.result
        scan.visitorId = record.visitor.id
        try tx.scans.insert(scan, organizationId: caller.organizationId)
        if let event = decision.event, let kind = EventKind(rawValue: event.rawValue) {
            try tx.events.appendVisitorEvent(kind, visitor: decision.visitor, organizationId: caller.organizationId,
                                             checkpointId: checkpointId, scanId: scan.id, now: call.now)
            try queueNotices(for: kind, visitor: decision.visitor, organizationId: caller.organizationId, call, tx)
        }
        if conflict && body.offlineDecision == .checkedIn {
            // One alert with both decisions (and the blocklist entry, when a block was one of them).
            try tx.events.appendSecurityAlert(visitor: decision.visitor, entryId: decision.blockingEntry?.id,
                                              organizationId: caller.organizationId, checkpointId: checkpointId, scanId: scan.id,
                                              offlineDecision: .checkedIn, decision: decision.result, now: call.now)
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
            if visitor.status != .checkedIn {
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
                                              decision: answer.result, now: call.now)
        }
        return JSONBody.response(CheckInAnswer(result: answer.result, visitor: visitor, scanId: answer.scanId, conflict: true))
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
    func expected(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
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
        for row in rows {
            let visitor = row.visitor
            let blocked = Blocklist.firstMatch(try tx.blocklist.candidates(for: visitor, organizationId: organization, now: call.now),
                                               for: visitor, at: call.now) != nil
            if blocked || visitor.status == .cancelled { revoked.append(visitor.shortId.rawValue) }
            if !blocked { items.append(visitor) }
        }
        return JSONBody.response(ExpectedPasses(items: items, cursor: String(rows.last?.changeSequence ?? since), revoked: revoked))
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

