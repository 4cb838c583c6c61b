import Foundation
import GatePassCore
import SQLBinding

struct SQLVisitorRepository<Database: SQLRunner>: VisitorRepository {
    let db: Database

    static var columns: String { """
        id, short_id, name, email, phone, company, purpose, host_name, approver_id, requires_approval, walk_in,
        status, valid_from, valid_until, created_at, approval_requested_at, decided_at, decided_by, decision_note,
        checked_in_at, checked_out_at, checkpoint_id, organization_id, approval_checkpoint_id, seq, host_email,
        created_by
        """ }

    /// A row of `columns`. A value not understood (an unknown status, a malformed short id,
    /// a time that is not an integer) throws: the request fails rather than guess at a pass.
    static func record(_ row: Database.Row) throws -> VisitorRecord {
        let visitor = Visitor(
            id: try row.string(named: "id"), shortId: try row.parsed(named: "short_id", as: "short id", ShortID.init(stored:)),
            name: try row.string(named: "name"), email: try row.optionalString(named: "email"),
            phone: try row.optionalString(named: "phone"), company: try row.optionalString(named: "company"),
            purpose: try row.optionalString(named: "purpose"), hostName: try row.optionalString(named: "host_name"),
            hostEmail: try row.optionalString(named: "host_email"), approverId: try row.optionalString(named: "approver_id"),
            requiresApproval: try row.bool(named: "requires_approval"), walkIn: try row.bool(named: "walk_in"),
            status: try row.parsed(named: "status", as: "visitor status", VisitorStatus.init(rawValue:)),
            validity: ValidityWindow(from: try row.date(named: "valid_from"), until: try row.date(named: "valid_until")),
            createdAt: try row.date(named: "created_at"),
            approvalRequestedAt: try row.optionalDate(named: "approval_requested_at"),
            decidedAt: try row.optionalDate(named: "decided_at"), decidedBy: try row.optionalString(named: "decided_by"),
            decisionNote: try row.optionalString(named: "decision_note"),
            checkedInAt: try row.optionalDate(named: "checked_in_at"), checkedOutAt: try row.optionalDate(named: "checked_out_at"),
            checkpointId: try row.optionalString(named: "checkpoint_id"))
        return VisitorRecord(visitor: visitor, organizationId: try row.string(named: "organization_id"),
                             approvalCheckpointId: try row.optionalString(named: "approval_checkpoint_id"),
                             createdBy: try row.optionalString(named: "created_by"), seq: try row.int64(named: "seq"))
    }

    func find(id: String) throws -> VisitorRecord? {
        try db.queryFirst("SELECT \(Self.columns) FROM visitors WHERE id = ?", [id], Self.record)
    }

    func find(shortId: ShortID) throws -> VisitorRecord? {
        try db.queryFirst("SELECT \(Self.columns) FROM visitors WHERE short_id = ?", [shortId.rawValue], Self.record)
    }

    func find(passTokenHash: [UInt8]) throws -> VisitorRecord? {
        try db.queryFirst("SELECT \(Self.columns) FROM visitors WHERE pass_token_hash = ?", [passTokenHash], Self.record)
    }

    func setPassToken(hash: [UInt8]?, visitorId: String) throws {
        try db.execute("UPDATE visitors SET pass_token_hash = ? WHERE id = ?", [hash, visitorId])
    }

    func hasPassToken(visitorId: String) throws -> Bool {
        try db.scalarInt("SELECT COUNT(*) FROM visitors WHERE id = ? AND pass_token_hash IS NOT NULL", [visitorId]) == 1
    }

    func isTaken(shortId: ShortID) throws -> Bool {
        try db.scalarInt("SELECT COUNT(*) FROM visitors WHERE short_id = ?", [shortId.rawValue]) != 0
    }

    /// The lowercased text `q` searches (name, email, phone, company, short id) and the
    /// narrower text lookup searches (short id, name, phone, email). Fields are joined by a
    /// control character no query may contain, so a match never spans two fields.
    static func searchTexts(_ visitor: Visitor) -> (search: String, lookup: String) {
        let separator = "\u{1}"
        let lookup = [visitor.shortId.rawValue, visitor.name, visitor.phone ?? "", visitor.email ?? ""]
            .joined(separator: separator).lowercased()
        return (lookup + separator + (visitor.company ?? "").lowercased(), lookup)
    }

    func markChanged(visitorIds: [String]) throws {
        for id in visitorIds {
            try db.execute("UPDATE visitors SET change_seq = ? WHERE id = ?", [try nextChangeSeq(), id])
        }
    }

    /// The next value of the global change sequence (one counter row, bumped in the same
    /// transaction as the change).
    private func nextChangeSeq() throws -> Int64 {
        // The row is made by the first migration: without it the feed's order is unknown, so fail.
        guard let value = try db.scalarInt("UPDATE counters SET value = value + 1 WHERE name = 'visitor_change' RETURNING value")
        else { throw StoredDataError("the visitor_change counter is missing") }
        return value
    }

    func insert(_ visitor: Visitor, organizationId: String, approvalCheckpointId: String?, createdBy: String?) throws {
        let texts = Self.searchTexts(visitor)
        try db.execute("""
            INSERT INTO visitors (id, short_id, name, email, phone, company, purpose, host_name, approver_id,
                requires_approval, walk_in, status, valid_from, valid_until, created_at, approval_requested_at,
                decided_at, decided_by, decision_note, checked_in_at, checked_out_at, checkpoint_id,
                organization_id, approval_checkpoint_id, change_seq, search_text, lookup_text, host_email, created_by)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [visitor.id, visitor.shortId.rawValue, visitor.name, visitor.email, visitor.phone, visitor.company,
                  visitor.purpose, visitor.hostName, visitor.approverId, visitor.requiresApproval, visitor.walkIn,
                  visitor.status.rawValue, visitor.validity.from.milliseconds, visitor.validity.until.milliseconds,
                  visitor.createdAt.milliseconds, visitor.approvalRequestedAt?.milliseconds,
                  visitor.decidedAt?.milliseconds, visitor.decidedBy, visitor.decisionNote,
                  visitor.checkedInAt?.milliseconds, visitor.checkedOutAt?.milliseconds, visitor.checkpointId,
                  organizationId, approvalCheckpointId, try nextChangeSeq(), texts.search, texts.lookup, visitor.hostEmail,
                  createdBy])
    }

    /// Stores the fields a change made differ (from `previous` to `visitor`: a decision's
    /// state, or an edit's details), and bumps the change sequence that the kiosk's
    /// `/expected` feed follows, if the stored status is still `previous.status`.
    ///
    /// Only the columns that differ are written: SQLite rewrites the entry of every index
    /// that covers a column in the SET list, so naming unchanged columns would dirty index
    /// pages for nothing, and every dirty page is synced at commit.
    func updateState(_ visitor: Visitor, from previous: Visitor, approvalCheckpointId: String?) throws -> Bool {
        var assignments: [String] = []
        var arguments: [any SQLBindable] = []
        func set<Value: Equatable & SQLBindable>(_ column: String, _ new: Value, _ old: Value) {
            guard new != old else { return }
            assignments.append("\(column) = ?")
            arguments.append(new)
        }
        set("status", visitor.status.rawValue, previous.status.rawValue)
        set("approval_requested_at", visitor.approvalRequestedAt?.milliseconds, previous.approvalRequestedAt?.milliseconds)
        set("decided_at", visitor.decidedAt?.milliseconds, previous.decidedAt?.milliseconds)
        set("decided_by", visitor.decidedBy, previous.decidedBy)
        set("decision_note", visitor.decisionNote, previous.decisionNote)
        set("checked_in_at", visitor.checkedInAt?.milliseconds, previous.checkedInAt?.milliseconds)
        set("checked_out_at", visitor.checkedOutAt?.milliseconds, previous.checkedOutAt?.milliseconds)
        set("checkpoint_id", visitor.checkpointId, previous.checkpointId)
        // An edit (PATCH) changes details; a decision never does.
        set("short_id", visitor.shortId.rawValue, previous.shortId.rawValue)
        set("name", visitor.name, previous.name)
        set("email", visitor.email, previous.email)
        set("phone", visitor.phone, previous.phone)
        set("company", visitor.company, previous.company)
        set("purpose", visitor.purpose, previous.purpose)
        set("host_name", visitor.hostName, previous.hostName)
        set("host_email", visitor.hostEmail, previous.hostEmail)
        set("approver_id", visitor.approverId, previous.approverId)
        set("requires_approval", visitor.requiresApproval, previous.requiresApproval)
        set("valid_from", visitor.validity.from.milliseconds, previous.validity.from.milliseconds)
        set("valid_until", visitor.validity.until.milliseconds, previous.validity.until.milliseconds)
        let (texts, previousTexts) = (Self.searchTexts(visitor), Self.searchTexts(previous))
        set("search_text", texts.search, previousTexts.search)
        set("lookup_text", texts.lookup, previousTexts.lookup)
        if let approvalCheckpointId {
            assignments.append("approval_checkpoint_id = ?")
            arguments.append(approvalCheckpointId)
        }
        assignments.append("change_seq = ?")
        arguments.append(try nextChangeSeq())
        arguments += [visitor.id, previous.status.rawValue]
        // The status condition makes the change conditional on what was read: two racing
        // changes of one visitor cannot both apply, whatever serializes the writers.
        return try db.execute("UPDATE visitors SET \(assignments.joined(separator: ", ")) WHERE id = ? AND status = ?",
                              arguments) == 1
    }

    func list(_ filter: VisitorListFilter, after cursor: ListCursor?, limit: Int) throws -> [VisitorRecord] {
        var sql = "SELECT \(Self.columns) FROM visitors WHERE 1 = 1"
        var arguments: [any SQLBindable] = []
        if let organization = filter.organizationId { sql += " AND organization_id = ?"; arguments.append(organization) }
        if let status = filter.status { sql += " AND status = ?"; arguments.append(status.rawValue) }
        if let host = filter.hostedBy {
            sql += " AND (created_by = ? OR host_email = ?)"
            arguments += [host.id, host.email]
        }
        if let days = filter.validDuring {
            sql += " AND valid_until >= ? AND valid_from <= ?"
            arguments += [days.from.milliseconds, days.until.milliseconds]
        }
        if let search = filter.search {
            sql += " AND (\(db.dialect.substringPosition)(search_text, ?) > 0"
            arguments.append(search)
            if let shortId = ShortID(search) { sql += " OR short_id = ?"; arguments.append(shortId.rawValue) }
            sql += ")"
        }
        KeysetOrder(time: "created_at").appendPage(after: cursor, limit: limit, to: &sql, &arguments)
        return try db.query(sql, arguments, Self.record)
    }

    func approvalQueue(organizationId: String, approverId: String, status: VisitorStatus, after cursor: ListCursor?,
                       limit: Int) throws -> [VisitorRecord] {
        // The queue itself names its status literally, so SQLite can use the partial index.
        var sql = "SELECT \(Self.columns) FROM visitors WHERE organization_id = ?"
            + (status == .awaitingApproval ? " AND status = 'AWAITING_APPROVAL'" : " AND status = ?")
            + " AND (approver_id IS NULL OR approver_id = ?)"
        var arguments: [any SQLBindable] = [organizationId]
        if status != .awaitingApproval { arguments.append(status.rawValue) }
        arguments.append(approverId)
        KeysetOrder(time: "COALESCE(approval_requested_at, 0)").appendPage(after: cursor, limit: limit, to: &sql, &arguments)
        return try db.query(sql, arguments, Self.record)
    }

    func previousVisits(of visitor: Visitor, organizationId: String) throws -> PreviousVisits {
        let identity: (column: String, value: String)? = visitor.email.map { ("email", $0) } ?? visitor.phone.map { ("phone", $0) }
        guard let identity else { return PreviousVisits(count: 0, last: nil) }
        return try db.queryFirst("""
            SELECT COUNT(*) AS visits, MAX(checked_in_at) AS last_checked_in_at FROM visitors
            WHERE organization_id = ? AND \(identity.column) = ? AND id != ? AND checked_in_at IS NOT NULL
            """, [organizationId, identity.value, visitor.id]) {
            PreviousVisits(count: try $0.int(named: "visits", in: 0...Int.max), last: try $0.optionalDate(named: "last_checked_in_at"))
        } ?? PreviousVisits(count: 0, last: nil)
    }

    func lookup(organizationId: String, search: String, limit: Int) throws -> [VisitorRecord] {
        var sql = "SELECT \(Self.columns) FROM visitors WHERE organization_id = ? AND (\(db.dialect.substringPosition)(lookup_text, ?) > 0"
        var arguments: [any SQLBindable] = [organizationId, search]
        if let shortId = ShortID(search) { sql += " OR short_id = ?"; arguments.append(shortId.rawValue) }
        sql += ") ORDER BY created_at DESC, seq DESC LIMIT ?"
        arguments.append(limit)
        return try db.query(sql, arguments, Self.record)
    }

    func onSite(organizationId: String, after cursor: ListCursor?, limit: Int) throws -> [VisitorRecord] {
        var sql = "SELECT \(Self.columns) FROM visitors WHERE organization_id = ? AND status = 'CHECKED_IN'"
        var arguments: [any SQLBindable] = [organizationId]
        KeysetOrder(time: "checked_in_at").appendPage(after: cursor, limit: limit, to: &sql, &arguments)
        return try db.query(sql, arguments, Self.record)
    }

    func changed(organizationId: String, after sequence: Int64, validDuring day: ValidityWindow,
                 limit: Int) throws -> [(visitor: Visitor, changeSequence: Int64)] {
        try db.query("""
            SELECT \(Self.columns), change_seq FROM visitors
            WHERE organization_id = ? AND change_seq > ? AND valid_until >= ? AND valid_from <= ?
            ORDER BY change_seq LIMIT ?
            """, [organizationId, sequence, day.from.milliseconds, day.until.milliseconds, limit]) {
            (try Self.record($0).visitor, try $0.int64(named: "change_seq"))
        }
    }

    func dueForRetention(organizationId: String, endedBefore cutoff: Date, limit: Int) throws -> [VisitorRecord] {
        try db.query("""
            SELECT \(Self.columns) FROM visitors
            WHERE organization_id = ? AND valid_until < ? AND anonymised_at IS NULL AND status != 'CHECKED_IN'
            ORDER BY valid_until, seq LIMIT ?
            """, [organizationId, cutoff.milliseconds, limit], Self.record)
    }

    func dueForRetentionCount(organizationId: String, endedBefore cutoff: Date) throws -> Int {
        Int(try db.scalarInt("""
            SELECT COUNT(*) FROM visitors
            WHERE organization_id = ? AND valid_until < ? AND anonymised_at IS NULL AND status != 'CHECKED_IN'
            """, [organizationId, cutoff.milliseconds]) ?? 0)
    }

    func anonymise(_ anonymised: Visitor, at time: Date) throws -> Bool {
        // Every personal column is written, whatever it held: the search texts are rebuilt from
        // what is left, so no lowercased copy of the name or email stays behind.
        let texts = Self.searchTexts(anonymised)
        return try db.execute("""
            UPDATE visitors SET name = ?, email = NULL, phone = NULL, company = NULL, purpose = NULL, host_name = NULL,
                host_email = NULL, decision_note = NULL, pass_token_hash = NULL, search_text = ?, lookup_text = ?,
                change_seq = ?, anonymised_at = ?
            WHERE id = ? AND anonymised_at IS NULL
            """, [anonymised.name, texts.search, texts.lookup, try nextChangeSeq(), time.milliseconds, anonymised.id]) == 1
    }

    func anonymisedAt(visitorId: String) throws -> Date? {
        try db.queryFirst("SELECT anonymised_at FROM visitors WHERE id = ?", [visitorId]) {
            try $0.optionalDate(named: "anonymised_at")
        } ?? nil
    }

    func counts(organizationId: String, checkpointId: String?, day: ValidityWindow) throws -> ScanStats {
        let (from, until) = (day.from.milliseconds, day.until.milliseconds)
        func count(_ sql: String, _ arguments: [any SQLBindable], gate column: String) throws -> Int {
            if let checkpointId {
                return Int(try db.scalarInt(sql + " AND \(column) = ?", arguments + [checkpointId]) ?? 0)
            }
            return Int(try db.scalarInt(sql, arguments) ?? 0)
        }
        return ScanStats(
            checkedInToday: try count("SELECT COUNT(*) FROM visitors WHERE organization_id = ? AND checked_in_at BETWEEN ? AND ?",
                                 [organizationId, from, until], gate: "checkpoint_id"),
            checkedOutToday: try count("SELECT COUNT(*) FROM visitors WHERE organization_id = ? AND checked_out_at BETWEEN ? AND ?",
                                  [organizationId, from, until], gate: "checkpoint_id"),
            awaitingApproval: try count("SELECT COUNT(*) FROM visitors WHERE organization_id = ? AND status = 'AWAITING_APPROVAL'",
                                        [organizationId], gate: "approval_checkpoint_id"),
            expectedToday: Int(try db.scalarInt("""
                SELECT COUNT(*) FROM visitors WHERE organization_id = ? AND status IN ('EXPECTED', 'APPROVED')
                AND valid_until >= ? AND valid_from <= ?
                """, [organizationId, from, until]) ?? 0),
            onSite: try count("SELECT COUNT(*) FROM visitors WHERE organization_id = ? AND status = 'CHECKED_IN'",
                              [organizationId], gate: "checkpoint_id"))
    }
}
