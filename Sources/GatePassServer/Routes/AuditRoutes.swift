import Foundation
import GatePassAPI
import GatePassCore
import HTTPServer

extension GatePassApplication {
    /// The audit controller: the log read back (api.md "Audit log"). No route changes or
    /// deletes an entry.
    static let auditRoutes: [Route] = [
        .read(.adminAudit) { app, call, tx in try app.auditPage(call, tx) },
        .read(.adminAuditCSV) { app, call, tx in try app.auditCSV(call, tx) },
    ]

    /// `from`, `to` (RFC 3339 times), `actor` (a user's or kiosk's id, or `user`, `kiosk`,
    /// `system` for every actor of that kind), `action` (one of `AuditAction`) and `entityId`.
    func auditFilter(_ call: Call) throws -> AuditFilter {
        let query = call.request.query
        var filter = AuditFilter(organizationId: readScope(call), from: try Field.time(query, "from"),
                                 to: try Field.time(query, "to"))
        if let actor = query["actor"] {
            if let kind = AuditActorKind(rawValue: actor) {
                filter.actorKind = kind
            } else {
                filter.actorId = try Field.identifier(actor, "actor")
            }
        }
        if let raw = query["action"] {
            guard let action = AuditAction(rawValue: raw) else {
                throw APIError.badRequest("action must be one of \(AuditAction.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            filter.action = action
        }
        if let entity = query["entityId"] { filter.entityId = try Field.identifier(entity, "entityId") }
        return filter
    }

    func auditPage(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let limit = try Field.limit(call.request.query)
        let rows = try tx.audit.page(try auditFilter(call), after: try Field.cursor(call.request.query), limit: limit + 1)
        try checkEntries(rows, tx)
        return JSONBody.response(page(of: rows, limit: limit, item: { $0.entry }, cursor: { ListCursor.after($0) }))
    }

    /// The whole log (up to `csvRowLimit` rows) as CSV, streamed page by page. Its reading is
    /// itself recorded first (`audit.export`): the log holds personal data.
    func auditCSV(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let filter = try auditFilter(call)
        let table = CSVTable<StoredAuditEntry>(header: AuditLogCSV.header, line: { AuditLogCSV.row($0.entry) },
                                               cursorAfter: { ListCursor.after($0) })
        return try csvExport(table, named: "audit.csv", recordedAs: .auditExport, call, tx) { tx, cursor, limit in
            let rows = try tx.audit.page(filter, after: cursor, limit: limit)
            try self.checkEntries(rows, tx)
            return rows
        }
    }

    /// Every entry is checked before it is served: values that are not JSON objects, values
    /// that do not hash to what the link covers, an erasure no entry of its action may have
    /// (`AuditVerifier.problem`), and a link that does not follow from the entry before. Such an
    /// entry was not written by this server: the answer is an error (500, the details in the
    /// log), never the entry as if it were the one recorded. Whether each erasure is recorded
    /// and where the log ends take the whole log: `gatepass audit verify`.
    private func checkEntries(_ rows: [StoredAuditEntry], _ tx: any Transaction) throws {
        for row in rows {
            for text in [row.entry.before, row.entry.after].compactMap({ $0 }) {
                guard let value = JSONValue(text: text), case .object = value else {
                    throw APIError.internal("audit entry \(row.seq) holds values that are not a JSON object: run gatepass audit verify")
                }
            }
            if let problem = AuditVerifier.problem(with: row) {
                throw APIError.internal("\(problem): run gatepass audit verify")
            }
            let previous = try tx.audit.linkBefore(seq: row.seq) ?? AuditChain.genesis
            let chain = auditLog.chain
            // An entry of an earlier version has an untagged link; which one may stand here
            // takes the whole log, so either is accepted here.
            guard chain.link(previous: previous, hashes: row.fieldHashes) == row.link
                || chain.legacyLink(previous: previous, hashes: row.fieldHashes) == row.link
            else {
                throw APIError.internal("\(AuditVerdict.broken(seq: row.seq, id: row.entry.id)): run gatepass audit verify")
            }
        }
    }
}
