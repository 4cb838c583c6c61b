import Foundation
import GatePassAPI
import GatePassCore
import HTTPServer
import SQLite
import Synchronization

/// Storage of scans (the shape is the domain's `Scan`).
extension Scan {
    static let columns = "id, short_id, raw, result, visitor_id, checkpoint_id, scanned_by, scanned_at, received_at, offline, seq"

    static func read(_ row: Row) throws -> (scan: Scan, seq: Int64) {
        (Scan(id: try row.string(0), shortId: try row.optionalParsed(1, as: "short id", { ShortID(stored: $0)?.rawValue }),
              raw: try row.string(2), result: try row.parsed(3, as: "scan result", ScanResult.init(rawValue:)),
              visitorId: try row.optionalString(4), checkpointId: try row.string(5), scannedBy: try row.string(6),
              scannedAt: Timestamp(try row.date(7)), receivedAt: Timestamp(try row.date(8)), offline: try row.bool(9)),
         try row.int64(10))
    }

    func insert(organizationId: String, _ db: Connection) throws {
        try db.execute("""
            INSERT INTO scans (id, organization_id, short_id, raw, result, visitor_id, checkpoint_id, scanned_by,
                               scanned_at, received_at, offline)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [id, organizationId, shortId, raw, result.rawValue, visitorId, checkpointId, scannedBy,
                  scannedAt.date.milliseconds, receivedAt.date.milliseconds, offline])
    }
}

extension GatePassApplication {
    /// The scanner controller: the gate.
    static let scannerRoutes: [Route] = [
        .write(.scannerToken) { app, call, tx in try app.issueScannerToken(call, tx.connection) },
        .read(.scannerStats) { app, call, tx in try app.stats(call, tx.connection) },
        .read(.scannerHistory) { app, call, tx in try app.scanHistory(call, tx.connection) },
        .write(.scannerCheckIn) { app, call, tx in try app.checkIn(call, tx.connection) },
        .write(.scannerCheckOut) { app, call, tx in try app.checkOut(call, tx.connection) },
        .read(.scannerLookup) { app, call, tx in try app.lookup(call, tx.connection) },
        .write(.scannerWalkIn) { app, call, tx in try app.walkIn(call, tx.connection) },
        .read(.scannerOnSite) { app, call, tx in try app.onSite(call, tx.connection) },
        .read(.scannerExpected) { app, call, tx in try app.expected(call, tx.connection) },
    ]

    /// The admin controller: the site's checkpoints, history export, push diagnostics and operations.
    static let adminRoutes: [Route] = [
        .read(.adminHistoryCSV) { app, call, tx in try app.scanHistoryCSV(call, tx.connection) },
        .read(.checkpointsList) { app, call, tx in try app.listCheckpoints(call, tx.connection) },
        .write(.checkpointsCreate) { app, call, tx in try app.createCheckpoint(call, tx.connection) },
        .deferred(.adminPushTest) { app, call, reply in try app.pushTest(call, reply: reply) },
        .read(.adminPushDeliveries) { app, call, tx in try app.pushDeliveries(call, tx.connection) },
        .read(.healthz) { app, _, tx in try app.healthz(tx.connection) },
        .sessionless(.metrics) { app, request in try app.metricsResponse(request) },
    ]

    struct ScannerTokenBody: Decodable { var checkpointId: String? }

    /// A scanner token bound to a checkpoint, ended by the logout of the session that made it.
    func issueScannerToken(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        let body = try JSONBody.decodeOptional(ScannerTokenBody.self, from: call.request.body)
        let caller = call.caller
        let checkpoint: Checkpoint?
        if let id = body.checkpointId {
            checkpoint = try Directory.checkpoint(id: id, organizationId: caller.organizationId, db)
        } else {
            checkpoint = try Directory.defaultCheckpoint(organizationId: caller.organizationId, db)
        }
        guard let checkpoint else { throw APIError.notFound("checkpoint") }
        let claims = try Sessions.create(userId: caller.user.id, kind: .scanner, parent: caller.sessionId,
                                         checkpointId: checkpoint.id, now: call.now,
                                         lifetime: configuration.scannerTokenLifetimeSeconds, db)
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
    }

    /// The check-in of api.md: decided by the domain's table, stored with its scan in the
    /// same transaction. The single writer serializes check-ins, so two kiosks scanning one
    /// pass at once get exactly one CHECKED_IN.
    func checkIn(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        let body = try JSONBody.decode(CheckInBody.self, from: call.request.body)
        let caller = call.caller
        let checkpointId = caller.checkpointId!
        let request = CheckInRequest(confirmApprovalRequest: body.confirmApprovalRequest ?? false,
                                     offline: body.offline ?? false, scannedAt: body.scannedAt?.date)
        var scan = Scan(id: newIdentifier(), shortId: nil, raw: Self.truncated(body.shortId, bytes: QRPayload.maximumRawBytes),
                        result: .invalid, visitorId: nil, checkpointId: checkpointId, scannedBy: caller.user.id,
                        scannedAt: Timestamp(request.scannedAt ?? call.now), receivedAt: Timestamp(call.now),
                        offline: request.offline)
        let shortId: ShortID
        do {
            shortId = try QRPayload.shortID(from: body.shortId)
        } catch {
            try scan.insert(organizationId: caller.organizationId, db)
            metrics.recordCheckIn(result: ScanResult.invalid.rawValue)
            return APIError.badRequest(error.description).response
        }
        scan.shortId = shortId.rawValue
        guard let record = try VisitorRecords.find(shortId: shortId, db), record.organizationId == caller.organizationId else {
            scan.result = .notFound
            try scan.insert(organizationId: caller.organizationId, db)
            metrics.recordCheckIn(result: ScanResult.notFound.rawValue)
            return APIError(code: .notFound, message: "no pass with short id \(shortId.rawValue)").response
        }
        let decision = CheckIn.decide(visitor: record.visitor, receivedAt: call.now, request: request,
                                      checkpointId: checkpointId)
        if decision.changesVisitor {
            try VisitorRecords.updateState(decision.visitor, from: record.visitor,
                                           approvalCheckpointId: decision.event == .awaiting ? checkpointId : nil, db)
        }
        scan.result = decision.result
        scan.visitorId = record.visitor.id
        try scan.insert(organizationId: caller.organizationId, db)
        if let event = decision.event, let kind = EventKind(rawValue: event.rawValue) {
            try EventLog.appendVisitorEvent(kind, visitor: decision.visitor, organizationId: caller.organizationId,
                                            checkpointId: checkpointId, scanId: scan.id, now: call.now, db)
        }
        metrics.recordCheckIn(result: decision.result.rawValue)
        return JSONBody.response(CheckInAnswer(result: decision.result, visitor: decision.visitor, scanId: scan.id))
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

    func checkOut(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        let body = try JSONBody.decode(CheckOutBody.self, from: call.request.body)
        let shortId = try QRPayload.shortID(from: body.shortId)
        guard let record = try VisitorRecords.find(shortId: shortId, db), record.organizationId == call.caller.organizationId else {
            throw APIError(code: .notFound, message: "no pass with short id \(shortId.rawValue)")
        }
        let (result, updated) = CheckOut.decide(visitor: record.visitor, at: call.now)
        if result == .checkedOut {
            try VisitorRecords.updateState(updated, from: record.visitor, db)
            try EventLog.appendVisitorEvent(.visitorDeparted, visitor: updated, organizationId: record.organizationId,
                                            checkpointId: call.caller.checkpointId, now: call.now, db)
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

    /// A visitor without a pass, registered at the gate; always waits for approval.
    func walkIn(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        let body = try JSONBody.decode(WalkInBody.self, from: call.request.body)
        let caller = call.caller
        let name = try Field.requiredText(body.name, "name")
        let phone = try Field.phone(body.phone)
        let email = try Field.email(body.email)
        let company = try Field.text(body.company, "company")
        let purpose = try Field.text(body.purpose, "purpose", maxLength: 500)
        let hostName = try Field.text(body.hostName, "hostName")
        let visitor = try VisitorRecords.insertWithFreshShortID(organizationId: caller.organizationId,
                                                                approvalCheckpointId: caller.checkpointId, db) { shortId in
            Visitor(id: newIdentifier(), shortId: shortId, name: name, email: email, phone: phone, company: company,
                    purpose: purpose, hostName: hostName, approverId: nil, requiresApproval: true, walkIn: true,
                    status: .awaitingApproval, validity: ValidityWindow.day(containing: call.now, in: timeZone),
                    createdAt: call.now, approvalRequestedAt: call.now)
        }
        try EventLog.appendVisitorEvent(.requestCreated, visitor: visitor, organizationId: caller.organizationId,
                                        checkpointId: caller.checkpointId, now: call.now, db)
        return JSONBody.response(status: 201, WalkInAnswer(result: .awaitingApproval, visitor: visitor))
    }

    // MARK: - Reads for the gate

    func lookup(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        guard let search = try Field.search(call.parameter("query"), "query") else {
            throw APIError.badRequest("query must not be empty")
        }
        var sql = "SELECT \(VisitorRecords.columns) FROM visitors WHERE organization_id = ? AND (instr(lookup_text, ?) > 0"
        var arguments: [any SQLBindable] = [call.caller.organizationId, search]
        if let shortId = ShortID(search) { sql += " OR short_id = ?"; arguments.append(shortId.rawValue) }
        sql += ") ORDER BY created_at DESC, seq DESC LIMIT 20"
        let records = try db.query(sql, arguments, VisitorRecords.record)
        return JSONBody.response(Page(items: records.map(\.visitor), nextCursor: nil))
    }

    /// Everyone inside now (the evacuation roll), latest arrival first.
    func onSite(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        let limit = try Field.limit(call.request.query)
        let cursor = try Field.cursor(call.request.query)
        var sql = "SELECT \(VisitorRecords.columns) FROM visitors WHERE organization_id = ? AND status = 'CHECKED_IN'"
        var arguments: [any SQLBindable] = [call.caller.organizationId]
        if let cursor {
            sql += " AND (checked_in_at < ? OR (checked_in_at = ? AND seq < ?))"
            arguments += [cursor.time, cursor.time, cursor.seq]
        }
        sql += " ORDER BY checked_in_at DESC, seq DESC LIMIT ?"
        arguments.append(limit + 1)
        let records = try db.query(sql, arguments, VisitorRecords.record)
        return JSONBody.response(page(records, limit: limit) {
            ListCursor(time: $0.visitor.checkedInAt?.milliseconds ?? 0, seq: $0.seq)
        })
    }

    /// Passes valid today that changed after `since`, oldest change first, 500 at a time:
    /// the kiosk's offline cache follows this feed.
    func expected(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        var since: Int64 = 0
        if let raw = call.request.query["since"] {
            guard raw.count <= 19, let value = Int64(raw), value >= 0 else {
                throw APIError.badRequest("since must be a cursor returned by this route")
            }
            since = value
        }
        let today = ValidityWindow.day(containing: call.now, in: timeZone)
        let rows = try db.query("""
            SELECT \(VisitorRecords.columns), change_seq FROM visitors
            WHERE organization_id = ? AND change_seq > ? AND valid_until >= ? AND valid_from <= ?
            ORDER BY change_seq LIMIT 500
            """, [call.caller.organizationId, since, today.from.milliseconds, today.until.milliseconds]) {
            (try VisitorRecords.record($0).visitor, try $0.int64(25))
        }
        return JSONBody.response(ExpectedPasses(items: rows.map(\.0), cursor: String(rows.last?.1 ?? since)))
    }

    /// Today's counters for the organization; `?checkpointId=` narrows the ones that belong
    /// to a gate (checked in, checked out, on site, awaiting approval requested there).
    ///
    /// Kiosks poll this constantly, so answers are cached until the next committed write
    /// (see `StatsCache`): a hit costs no query at all.
    func stats(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        let organization = call.caller.organizationId
        let checkpoint = call.request.query["checkpointId"]
        let today = ValidityWindow.day(containing: call.now, in: timeZone)
        let key = StatsCache.Key(organization: organization, checkpoint: checkpoint, day: today.from.milliseconds)
        let generation = store.writeGeneration.load(ordering: .acquiring)
        if let cached = statsCache.lookup(key, generation: generation) { return cached }
        let (from, until) = (today.from.milliseconds, today.until.milliseconds)
        func count(_ sql: String, _ arguments: [any SQLBindable], gate column: String) throws -> Int {
            if let checkpoint {
                return Int(try db.scalarInt(sql + " AND \(column) = ?", arguments + [checkpoint]) ?? 0)
            }
            return Int(try db.scalarInt(sql, arguments) ?? 0)
        }
        let stats = ScanStats(
            checkedInToday: try count("SELECT COUNT(*) FROM visitors WHERE organization_id = ? AND checked_in_at BETWEEN ? AND ?",
                                      [organization, from, until], gate: "checkpoint_id"),
            checkedOutToday: try count("SELECT COUNT(*) FROM visitors WHERE organization_id = ? AND checked_out_at BETWEEN ? AND ?",
                                       [organization, from, until], gate: "checkpoint_id"),
            awaitingApproval: try count("SELECT COUNT(*) FROM visitors WHERE organization_id = ? AND status = 'AWAITING_APPROVAL'",
                                        [organization], gate: "approval_checkpoint_id"),
            expectedToday: Int(try db.scalarInt("""
                SELECT COUNT(*) FROM visitors WHERE organization_id = ? AND status IN ('EXPECTED', 'APPROVED')
                AND valid_until >= ? AND valid_from <= ?
                """, [organization, from, until]) ?? 0),
            onSite: try count("SELECT COUNT(*) FROM visitors WHERE organization_id = ? AND status = 'CHECKED_IN'",
                              [organization], gate: "checkpoint_id"))
        let response = JSONBody.response(stats)
        statsCache.store(response, for: key, generation: generation)
        return response
    }

    // MARK: - Scan history

    private func scanFilter(_ call: Call) throws -> ScanHistoryFilter {
        let query = call.request.query
        return ScanHistoryFilter(organizationId: readScope(call), checkpointId: query["checkpointId"],
                                 from: try Field.time(query, "from"), to: try Field.time(query, "to"),
                                 result: try Field.scanResult(query["result"]))
    }

    func scanHistory(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        let limit = try Field.limit(call.request.query)
        let rows = try ScanRecords.page(try scanFilter(call), after: try Field.cursor(call.request.query), limit: limit + 1, db)
        let items = Array(rows.prefix(limit))
        let next = rows.count > limit ? items.last.map { ScanRecords.cursor(after: $0).token } : nil
        return JSONBody.response(Page(items: items.map(\.scan), nextCursor: next))
    }

    /// The most rows one export holds; narrow with from/to for more.
    static let csvRowLimit = 100_000

    /// The export streams: the first page is read here (a bad filter or a failing database
    /// is still an error answer), the rest as the client takes the bytes.
    func scanHistoryCSV(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        let filter = try scanFilter(call)
        let pageSize = min(CSVExportStream.pageSize, Self.csvRowLimit)
        let first = try ScanRecords.page(filter, after: nil, limit: pageSize, db)
        let stream = CSVExportStream(firstPage: first, rowLimit: Self.csvRowLimit, pageSize: pageSize,
                                     readPage: { [store] cursor, limit in
                                         try store.readConnection { db in try ScanRecords.page(filter, after: cursor, limit: limit, db) }
                                     },
                                     onError: { [logSink] error in
                                         logSink.log("the CSV export ended early: \(error)")
                                     })
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/csv; charset=utf-8"),
                                                   ("Content-Disposition", "attachment; filename=\"scan-history.csv\"")],
                            stream: stream)
    }

    // MARK: - Checkpoints and health

    func listCheckpoints(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        let checkpoints = try Directory.checkpoints(organizationId: readScope(call), db)
        return JSONBody.response(Page(items: checkpoints, nextCursor: nil))
    }

    struct CheckpointBody: Decodable { var name: String }

    func createCheckpoint(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        let body = try JSONBody.decode(CheckpointBody.self, from: call.request.body)
        let name = try Field.requiredText(body.name, "name", maxLength: 100)
        let organization = call.caller.organizationId
        if try db.scalarInt("SELECT COUNT(*) FROM checkpoints WHERE organization_id = ? AND name = ?", [organization, name]) != 0 {
            throw APIError.conflict("a checkpoint named \(name) already exists")
        }
        let checkpoint = try Directory.createCheckpoint(organizationId: organization, name: name, now: call.now, db)
        return JSONBody.response(status: 201, checkpoint)
    }

    /// 200 only while the database answers reads and can be written (see `WriteProbe`).
    func healthz(_ db: Connection) throws -> HTTPResponse {
        do {
            _ = try db.scalarInt("SELECT 1")
        } catch {
            logSink.log("healthz: the database cannot be read: \(error)")
            throw APIError.unavailable("the database cannot be read")
        }
        if writeProbe.failure() != nil { throw APIError.unavailable("the database cannot be written") }
        return JSONBody.response(["status": "ok"])
    }
}

/// Stats answers, valid while no write has committed since they were computed.
///
/// Correctness: the generation is read *before* the counting queries run, and a writer bumps
/// it only after its commit; so an entry is reused only if no commit finished after the
/// generation it was computed at — and every commit counted in that generation is visible to
/// the queries that followed.
final class StatsCache: Sendable {
    struct Key: Hashable, Sendable {
        var organization: String
        var checkpoint: String?
        var day: Int64
    }

    /// The encoded answer is kept, so a hit costs neither a query nor JSON encoding.
    private let entries = Locked<[Key: (generation: UInt64, response: HTTPResponse)]>([:])

    func lookup(_ key: Key, generation: UInt64) -> HTTPResponse? {
        entries.withLock { entries in
            guard let entry = entries[key], entry.generation == generation else { return nil }
            return entry.response
        }
    }

    func store(_ response: HTTPResponse, for key: Key, generation: UInt64) {
        entries.withLock { entries in
            // Stale generations are useless; dropping them bounds the cache to the live keys.
            if entries.count > 1_000 { entries = entries.filter { $0.value.generation == generation } }
            entries[key] = (generation, response)
        }
    }
}
