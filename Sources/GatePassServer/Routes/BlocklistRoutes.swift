import Foundation
import GatePassAPI
import GatePassCore
import HTTPServer

extension GatePassApplication {
    /// The blocklist controller (api.md "Blocklist"): who must not enter the site, for its
    /// OWNERs and ADMINs. The gate never reads it: the check-in and walk-in routes consult it
    /// (`tx.blocklist.candidates`) and answer `BLOCKED` without the entry or its reason.
    static let blocklistRoutes: [Route] = [
        .read(.blocklistList) { app, call, tx in try app.listBlocklist(call, tx) },
        .write(.blocklistAdd) { app, call, tx in try app.addBlocklistEntry(call, tx) },
        .write(.blocklistRemove) { app, call, tx in try app.removeBlocklistEntry(call, tx) },
    ]

    func listBlocklist(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let query = call.request.query
        let limit = try Field.limit(query)
        let rows = try tx.blocklist.list(organizationId: call.caller.organizationId, after: try Field.cursor(query),
                                         limit: limit + 1)
        return JSONBody.response(page(of: rows, limit: limit, item: { $0.entry }, cursor: { $0.cursor }))
    }

    func addBlocklistEntry(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let body = try JSONBody.decode(NewBlocklistEntry.self, from: call.request.body)
        let checked: NewBlocklistEntry
        do { checked = try body.validated(now: call.now) } catch { throw APIError.badRequest(error.message) }
        let entry = BlocklistEntry(id: newIdentifier(), name: checked.name, email: checked.email, phone: checked.phone,
                                   company: checked.company, reason: checked.reason, expiresAt: checked.expiresAt?.date,
                                   createdAt: call.now, createdBy: call.caller.user.id)
        try tx.blocklist.insert(entry, organizationId: call.caller.organizationId)
        try markPassesChanged(matching: entry, call, tx)
        try audit(.blocklistAdd, id: entry.id, .created(entry), call, tx)
        return JSONBody.response(status: 201, entry)
    }

    func removeBlocklistEntry(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let id = call.parameter("id")
        // Ids are UUIDs: anything longer is no id of ours, and is not looked up.
        guard id.utf8.count <= 64, let removed = try tx.blocklist.remove(id: id, organizationId: call.caller.organizationId) else {
            throw APIError.notFound("blocklist entry")
        }
        try markPassesChanged(matching: removed, call, tx)
        try audit(.blocklistRemove, id: id, .none, call, tx)
        return Self.noContent
    }

    /// A new or removed entry changes the passes it matches (api.md "Offline passes"): they
    /// move to the end of `/expected`'s feed, so kiosks learn of the revocation, or of its end.
    private func markPassesChanged(matching entry: BlocklistEntry, _ call: Call, _ tx: any Transaction) throws {
        // From the start of the site's today: `/expected` carries every pass valid today,
        // also one whose window already ended (a replay of an earlier scan is judged by it).
        let today = ValidityWindow.day(containing: call.now, in: try site(call.caller.organizationId, tx).timeZone)
        let current = ValidityWindow(from: today.from, until: .distantFuture)
        let passes = try tx.visitors.changed(organizationId: call.caller.organizationId, after: 0, validDuring: current,
                                             limit: Int.max)
        let matched = passes.map(\.visitor).filter { entry.matches($0, at: call.now) }
        try tx.visitors.markChanged(visitorIds: matched.map(\.id))
    }
}
