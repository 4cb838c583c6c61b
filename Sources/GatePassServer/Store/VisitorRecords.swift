import Foundation
import GatePassCore
import SQLite

/// A visitor with the columns the API does not show.
struct VisitorRecord: Sendable {
    var visitor: Visitor
    var organizationId: String
    var approvalCheckpointId: String?
    var seq: Int64
}

/// Reading and writing visitors.
enum VisitorRecords {
    static let columns = """
        id, short_id, name, email, phone, company, purpose, host_name, approver_id, requires_approval, walk_in,
        status, valid_from, valid_until, created_at, approval_requested_at, decided_at, decided_by, decision_note,
        checked_in_at, checked_out_at, checkpoint_id, organization_id, approval_checkpoint_id, seq
        """

    /// A row of `columns`. A value not understood (an unknown status, a malformed short id,
    /// a time that is not an integer) throws: the request fails rather than guess at a pass.
    static func record(_ row: Row) throws -> VisitorRecord {
        let visitor = Visitor(
            id: try row.string(0), shortId: try row.parsed(1, as: "short id", ShortID.init(stored:)), name: try row.string(2),
            email: try row.optionalString(3), phone: try row.optionalString(4), company: try row.optionalString(5),
            purpose: try row.optionalString(6), hostName: try row.optionalString(7), approverId: try row.optionalString(8),
            requiresApproval: try row.bool(9), walkIn: try row.bool(10),
            status: try row.parsed(11, as: "visitor status", VisitorStatus.init(rawValue:)),
            validity: ValidityWindow(from: try row.date(12), until: try row.date(13)), createdAt: try row.date(14),
            approvalRequestedAt: try row.optionalDate(15), decidedAt: try row.optionalDate(16),
            decidedBy: try row.optionalString(17), decisionNote: try row.optionalString(18),
            checkedInAt: try row.optionalDate(19), checkedOutAt: try row.optionalDate(20),
            checkpointId: try row.optionalString(21))
        return VisitorRecord(visitor: visitor, organizationId: try row.string(22),
                             approvalCheckpointId: try row.optionalString(23), seq: try row.int64(24))
    }

    static func find(id: String, _ db: Connection) throws -> VisitorRecord? {
        try db.queryFirst("SELECT \(columns) FROM visitors WHERE id = ?", [id], record)
    }

    static func find(shortId: ShortID, _ db: Connection) throws -> VisitorRecord? {
        try db.queryFirst("SELECT \(columns) FROM visitors WHERE short_id = ?", [shortId.rawValue], record)
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

    /// The next value of the global change sequence (one counter row, bumped in the same
    /// transaction as the change).
    private static func nextChangeSeq(_ db: Connection) throws -> Int64 {
        // The row is made by the first migration: without it the feed's order is unknown, so fail.
        guard let value = try db.scalarInt("UPDATE counters SET value = value + 1 WHERE name = 'visitor_change' RETURNING value")
        else { throw SQLiteError(code: 20 /* SQLITE_MISMATCH */, message: "the visitor_change counter is missing") }
        return value
    }

    static func insert(_ visitor: Visitor, organizationId: String, approvalCheckpointId: String? = nil,
                       _ db: Connection) throws {
        let texts = searchTexts(visitor)
        try db.execute("""
            INSERT INTO visitors (id, short_id, name, email, phone, company, purpose, host_name, approver_id,
                requires_approval, walk_in, status, valid_from, valid_until, created_at, approval_requested_at,
                decided_at, decided_by, decision_note, checked_in_at, checked_out_at, checkpoint_id,
                organization_id, approval_checkpoint_id, change_seq, search_text, lookup_text)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [visitor.id, visitor.shortId.rawValue, visitor.name, visitor.email, visitor.phone, visitor.company,
                  visitor.purpose, visitor.hostName, visitor.approverId, visitor.requiresApproval, visitor.walkIn,
                  visitor.status.rawValue, visitor.validity.from.milliseconds, visitor.validity.until.milliseconds,
                  visitor.createdAt.milliseconds, visitor.approvalRequestedAt?.milliseconds,
                  visitor.decidedAt?.milliseconds, visitor.decidedBy, visitor.decisionNote,
                  visitor.checkedInAt?.milliseconds, visitor.checkedOutAt?.milliseconds, visitor.checkpointId,
                  organizationId, approvalCheckpointId, try nextChangeSeq(db), texts.search, texts.lookup])
    }

    /// Stores the state fields a decision changed (from `previous` to `visitor`), and bumps
    /// the change sequence that the kiosk's `/expected` feed follows.
    ///
    /// Only the columns that differ are written: SQLite rewrites the entry of every index
    /// that covers a column in the SET list, so naming unchanged columns would dirty index
    /// pages for nothing, and every dirty page is synced at commit.
    static func updateState(_ visitor: Visitor, from previous: Visitor, approvalCheckpointId: String? = nil,
                            _ db: Connection) throws {
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
        if let approvalCheckpointId {
            assignments.append("approval_checkpoint_id = ?")
            arguments.append(approvalCheckpointId)
        }
        assignments.append("change_seq = ?")
        arguments.append(try nextChangeSeq(db))
        arguments.append(visitor.id)
        try db.execute("UPDATE visitors SET \(assignments.joined(separator: ", ")) WHERE id = ?", arguments)
    }

    /// Inserts `make(shortId)` with a fresh short id, drawing again on the (rare) collision.
    static func insertWithFreshShortID(organizationId: String, approvalCheckpointId: String? = nil,
                                       _ db: Connection, _ make: (ShortID) -> Visitor) throws -> Visitor {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<8 {
            let visitor = make(ShortID.random(using: &generator))
            if try db.scalarInt("SELECT COUNT(*) FROM visitors WHERE short_id = ?", [visitor.shortId.rawValue]) == 0 {
                try insert(visitor, organizationId: organizationId, approvalCheckpointId: approvalCheckpointId, db)
                return visitor
            }
        }
        throw APIError.internal("could not draw an unused short id")
    }
}
