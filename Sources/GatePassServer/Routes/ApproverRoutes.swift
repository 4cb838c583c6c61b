import Foundation
import GatePassAPI
import GatePassCore
import HTTPServer

extension GatePassApplication {
    /// The approver controller: the approvals queue.
    static let approverRoutes: [Route] = [
        .read(.approverMe) { _, call, _ in JSONBody.response(call.caller.user) },
        .read(.approverList) { app, call, tx in try app.approverQueue(call, tx) },
        .read(.approverGet) { app, call, tx in try app.approverVisitor(call, tx) },
        .write(.approverApprove) { app, call, tx in try app.decide(.approve, call, tx) },
        .write(.approverReject) { app, call, tx in try app.decide(.reject, call, tx) },
    ]

    /// The approvals queue: visitors assigned to the caller or unassigned, newest request first.
    /// `status` defaults to AWAITING_APPROVAL (the queue); any other status may be asked for.
    func approverQueue(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let query = call.request.query
        let status = try Field.visitorStatus(query["status"]) ?? .awaitingApproval
        let limit = try Field.limit(query)
        let cursor = try Field.cursor(query)
        let caller = call.caller.user
        let records = try tx.visitors.approvalQueue(organizationId: caller.organizationId, approverId: caller.id,
                                                    status: status, after: cursor, limit: limit + 1)
        return JSONBody.response(page(records, limit: limit) {
            ListCursor(time: $0.visitor.approvalRequestedAt?.milliseconds ?? 0, seq: $0.seq)
        })
    }

    /// A visitor with what an approver needs to decide: how often the same person (same
    /// email, or same phone when there is no email) came before, and at which gate they wait.
    func approverVisitor(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let record = try visibleVisitor(call, tx)
        let visitor = record.visitor
        let previous = try tx.visitors.previousVisits(of: visitor, organizationId: record.organizationId)
        var checkpoint: CheckpointSummary?
        if let checkpointId = record.approvalCheckpointId,
           let found = try tx.checkpoints.find(id: checkpointId, organizationId: record.organizationId) {
            checkpoint = CheckpointSummary(id: found.id, name: found.name)
        }
        return JSONBody.response(VisitorWithContext(
            visitor: visitor,
            context: ApprovalContext(previousVisits: previous.count, lastVisitAt: previous.last.map(Timestamp.init),
                                     requestedAtCheckpoint: checkpoint)))
    }
}
