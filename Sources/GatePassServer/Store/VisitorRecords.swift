import Foundation
import GatePassCore
import SQLiteStore

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

    static func record(_ row: Row) -> VisitorRecord {
        let visitor = Visitor(
            id: row.string(0), shortId: ShortID(row.string(1))!, name: row.string(2), email: row.optionalString(3),
            phone: row.optionalString(4), company: row.optionalString(5), purpose: row.optionalString(6),
            hostName: row.optionalString(7), approverId: row.optionalString(8), requiresApproval: row.bool(9),
            walkIn: row.bool(10), status: VisitorStatus(rawValue: row.string(11)) ?? .expected,
            validity: ValidityWindow(from: row.date(12), until: row.date(13)), createdAt: row.date(14),
            approvalRequestedAt: row.optionalDate(15), decidedAt: row.optionalDate(16),
            decidedBy: row.optionalString(17), decisionNote: row.optionalString(18),
            checkedInAt: row.optionalDate(19), checkedOutAt: row.optionalDate(20), checkpointId: row.optionalString(21))
        return VisitorRecord(visitor: visitor, organizationId: row.string(22), approvalCheckpointId: row.optionalString(23),
                             seq: row.int64(24))
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

    private static func nextChangeSeq(_ db: Connection) throws -> Int64 {
        (try db.scalarInt("SELECT MAX(change_seq) FROM visitors") ?? 0) + 1
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

    /// Stores the state fields a decision may change, and bumps the change sequence that
    /// the kiosk's `/expected` feed follows.
    static func updateState(_ visitor: Visitor, approvalCheckpointId: String? = nil, _ db: Connection) throws {
        try db.execute("""
            UPDATE visitors SET status = ?, approval_requested_at = ?, decided_at = ?, decided_by = ?,
                decision_note = ?, checked_in_at = ?, checked_out_at = ?, checkpoint_id = ?,
                approval_checkpoint_id = COALESCE(?, approval_checkpoint_id), change_seq = ?
            WHERE id = ?
            """, [visitor.status.rawValue, visitor.approvalRequestedAt?.milliseconds, visitor.decidedAt?.milliseconds,
                  visitor.decidedBy, visitor.decisionNote, visitor.checkedInAt?.milliseconds,
                  visitor.checkedOutAt?.milliseconds, visitor.checkpointId, approvalCheckpointId,
                  try nextChangeSeq(db), visitor.id])
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
