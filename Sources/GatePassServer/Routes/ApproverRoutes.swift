import Foundation
import GatePassAPI
import GatePassCore
import HTTPServer
import SQLite

extension GatePassApplication {
    /// The approver controller: the approvals queue.
    static let approverRoutes: [Route] = [
        .read(.approverMe) { _, call, _ in JSONBody.response(call.caller.user) },
        .read(.approverList) { app, call, tx in try app.approverQueue(call, tx.connection) },
        .read(.approverGet) { app, call, tx in try app.approverVisitor(call, tx.connection) },
        .write(.approverApprove) { app, call, tx in try app.decide(.approve, call, tx.connection) },
        .write(.approverReject) { app, call, tx in try app.decide(.reject, call, tx.connection) },
    ]

    /// The approvals queue: visitors assigned to the caller or unassigned, newest request first.
    /// `status` defaults to AWAITING_APPROVAL (the queue); any other status may be asked for.
    func approverQueue(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        let query = call.request.query
        let status = try Field.visitorStatus(query["status"]) ?? .awaitingApproval
        let limit = try Field.limit(query)
        let cursor = try Field.cursor(query)
        let caller = call.caller.user
        // The queue itself names its status literally, so SQLite can use the partial index.
        var sql = "SELECT \(VisitorRecords.columns) FROM visitors WHERE organization_id = ?"
            + (status == .awaitingApproval ? " AND status = 'AWAITING_APPROVAL'" : " AND status = ?")
            + " AND (approver_id IS NULL OR approver_id = ?)"
        var arguments: [any SQLBindable] = [caller.organizationId]
        if status != .awaitingApproval { arguments.append(status.rawValue) }
        arguments.append(caller.id)
        if let cursor {
            sql += " AND (COALESCE(approval_requested_at, 0) < ? OR (COALESCE(approval_requested_at, 0) = ? AND seq < ?))"
            arguments += [cursor.time, cursor.time, cursor.seq]
        }
        sql += " ORDER BY COALESCE(approval_requested_at, 0) DESC, seq DESC LIMIT ?"
        arguments.append(limit + 1)
        let records = try db.query(sql, arguments, VisitorRecords.record)
        return JSONBody.response(page(records, limit: limit) {
            ListCursor(time: $0.visitor.approvalRequestedAt?.milliseconds ?? 0, seq: $0.seq)
        })
    }

    /// A visitor with what an approver needs to decide: how often the same person (same
    /// email, or same phone when there is no email) came before, and at which gate they wait.
    func approverVisitor(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        let record = try visibleVisitor(call, db)
        let visitor = record.visitor
        var previous: (count: Int, last: Date?) = (0, nil)
        let identity: (column: String, value: String)? = visitor.email.map { ("email", $0) } ?? visitor.phone.map { ("phone", $0) }
        if let identity {
            previous = try db.queryFirst("""
                SELECT COUNT(*), MAX(checked_in_at) FROM visitors
                WHERE organization_id = ? AND \(identity.column) = ? AND id != ? AND checked_in_at IS NOT NULL
                """, [record.organizationId, identity.value, visitor.id]) { (try $0.int(0), try $0.optionalDate(1)) } ?? (0, nil)
        }
        var checkpoint: CheckpointSummary?
        if let checkpointId = record.approvalCheckpointId,
           let found = try Directory.checkpoint(id: checkpointId, organizationId: record.organizationId, db) {
            checkpoint = CheckpointSummary(id: found.id, name: found.name)
        }
        return JSONBody.response(VisitorWithContext(
            visitor: visitor,
            context: ApprovalContext(previousVisits: previous.count, lastVisitAt: previous.last.map(Timestamp.init),
                                     requestedAtCheckpoint: checkpoint)))
    }
}
