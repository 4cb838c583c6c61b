import Foundation
import GatePassAPI
import GatePassCore
import HTTPServer
import QRCode

extension GatePassApplication {
    /// The visitors controller: what a site's managers do with its visitors.
    static let visitorRoutes: [Route] = [
        .read(.visitorsList) { app, call, tx in try app.listVisitors(call, tx) },
        .write(.visitorsCreate) { app, call, tx in try app.createVisitor(call, tx) },
        .read(.visitorsAdminMe) { app, call, _ in try app.adminMe(call) },
        .read(.visitorsGet) { app, call, tx in JSONBody.response(try app.visibleVisitor(call, tx).visitor) },
        .write(.visitorsCancel) { app, call, tx in try app.cancelVisitor(call, tx) },
        .write(.visitorsApprove) { app, call, tx in try app.decide(.approve, call, tx) },
        .write(.visitorsReject) { app, call, tx in try app.decide(.reject, call, tx) },
        .read(.visitorsPass) { app, call, tx in try app.passSVG(call, tx) },
    ]

    struct CreateVisitorBody: Decodable {
        var name: String
        var email: String?
        var phone: String?
        var company: String?
        var purpose: String?
        var hostName: String?
        var approverId: String?
        var requiresApproval: Bool?
        var validFrom: Timestamp?
        var validUntil: Timestamp?
    }

    /// The longest validity a pass may have.
    static let maximumValidity: TimeInterval = 366 * 86_400

    func createVisitor(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let body = try JSONBody.decode(CreateVisitorBody.self, from: call.request.body)
        let caller = call.caller.user
        let name = try Field.requiredText(body.name, "name")
        let email = try Field.email(body.email)
        let phone = try Field.phone(body.phone)
        let company = try Field.text(body.company, "company")
        let purpose = try Field.text(body.purpose, "purpose", maxLength: 500)
        let hostName = try Field.text(body.hostName, "hostName")
        if let approverId = body.approverId {
            let approver = try tx.directory.user(id: approverId)
            guard let approver, approver.organizationId == caller.organizationId, approver.role == .approver else {
                throw APIError.badRequest("approverId must be the id of an APPROVER of this organization")
            }
        }
        // Defaults (api.md): today 00:00:00–23:59:59 server-local. With only validFrom, the
        // pass lasts to the end of that local day.
        let from = body.validFrom?.date ?? ValidityWindow.day(containing: call.now, in: timeZone).from
        let until = body.validUntil?.date ?? ValidityWindow.day(containing: from, in: timeZone).until
        guard from <= until else { throw APIError.badRequest("validUntil must not be before validFrom") }
        guard until.timeIntervalSince(from) <= Self.maximumValidity else {
            throw APIError.badRequest("a pass may be valid for at most 366 days (validFrom to validUntil)")
        }
        let visitor = try tx.visitors.insertWithFreshShortID(organizationId: caller.organizationId) { shortId in
            Visitor(id: newIdentifier(), shortId: shortId, name: name, email: email, phone: phone, company: company,
                    purpose: purpose, hostName: hostName, approverId: body.approverId,
                    requiresApproval: body.requiresApproval ?? false, walkIn: false, status: .expected,
                    validity: ValidityWindow(from: from, until: until), createdAt: call.now)
        }
        return JSONBody.response(status: 201, visitor, headers: [("Location", Endpoint.visitorsGet.path(visitor.id))])
    }

    /// The visitor named by `:id`, if the caller may see it; 404 otherwise (never 403, so
    /// nothing leaks about other organizations or other approvers' visitors).
    func visibleVisitor(_ call: Call, _ tx: any Transaction) throws -> VisitorRecord {
        let caller = call.caller
        guard let record = try tx.visitors.find(id: call.parameter("id")) else { throw APIError.notFound("visitor") }
        switch caller.user.role {
        case .platformAdmin:
            return record
        case .approver:
            guard record.organizationId == caller.organizationId,
                  record.visitor.approverId == nil || record.visitor.approverId == caller.user.id
            else { throw APIError.notFound("visitor") }
            return record
        case .owner, .admin:
            guard record.organizationId == caller.organizationId else { throw APIError.notFound("visitor") }
            return record
        }
    }

    /// The organization a read covers: the caller's own, or for PLATFORM_ADMIN the one named
    /// by `?organizationId=` (nil = every organization).
    func readScope(_ call: Call) -> String? {
        let caller = call.caller
        if caller.user.role == .platformAdmin { return call.request.query["organizationId"] }
        return caller.organizationId
    }

    func listVisitors(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let query = call.request.query
        let status = try Field.visitorStatus(query["status"])
        let search = try Field.search(query["q"], "q")
        let limit = try Field.limit(query)
        let cursor = try Field.cursor(query)
        let filter = VisitorListFilter(organizationId: readScope(call), status: status, search: search)
        let records = try tx.visitors.list(filter, after: cursor, limit: limit + 1)
        return JSONBody.response(page(records, limit: limit) { ListCursor(time: $0.visitor.createdAt.milliseconds, seq: $0.seq) })
    }

    /// One page of `limit` items from `limit + 1` fetched rows, with the cursor of the last.
    func page(_ records: [VisitorRecord], limit: Int, cursor: (VisitorRecord) -> ListCursor) -> Page<Visitor> {
        let items = Array(records.prefix(limit))
        let next = records.count > limit ? items.last.map { cursor($0).token } : nil
        return Page(items: items.map(\.visitor), nextCursor: next)
    }

    func cancelVisitor(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let record = try visibleVisitor(call, tx)
        let updated = try Cancellation.apply(to: record.visitor)
        try tx.visitors.changeState(updated, from: record.visitor)
        return JSONBody.response(updated)
    }

    /// approve-scan / reject-scan (OWNER/ADMIN) and approve / reject (APPROVER, own or unassigned).
    func decide(_ decision: ApprovalDecision, _ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let body = try JSONBody.decodeOptional(NoteBody.self, from: call.request.body)
        let note = try Field.text(body.note, "note", maxLength: 1000)
        let record = try visibleVisitor(call, tx)
        let updated = try decision.apply(to: record.visitor, by: call.caller.user.id, note: note, at: call.now)
        try tx.visitors.changeState(updated, from: record.visitor)
        // The decision reaches the checkpoint that asked for it (api.md: the scanner that requested approval).
        try tx.events.appendVisitorEvent(.visitorDecided, visitor: updated, organizationId: record.organizationId,
                                         checkpointId: record.approvalCheckpointId, now: call.now)
        return JSONBody.response(updated)
    }

    func passSVG(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let visitor = try visibleVisitor(call, tx).visitor
        let code = try QRCode("GP1:\(visitor.shortId.rawValue)", errorCorrection: .medium)
        return HTTPResponse(status: 200, headers: [("Content-Type", "image/svg+xml"),
                                                   ("Cache-Control", "private, max-age=300")],
                            body: Array(code.svg(caption: visitor.shortId.rawValue).utf8))
    }
}
