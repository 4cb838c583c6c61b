import Foundation
import GatePassAPI
import GatePassCore
import GatePassCrypto
import HTTPServer

extension GatePassApplication {
    /// The visitors controller: what a site's managers do with its visitors.
    static let visitorRoutes: [Route] = [
        .read(.visitorsList) { app, call, tx in try app.listVisitors(call, tx) },
        .write(.visitorsCreate) { app, call, tx in try app.createVisitor(call, tx) },
        .read(.visitorsAdminMe) { app, call, _ in try app.adminMe(call) },
        .read(.visitorsGet) { app, call, tx in JSONBody.response(try app.visibleVisitor(call, tx).visitor) },
        .write(.visitorsUpdate) { app, call, tx in try app.updateVisitor(call, tx) },
        .write(.visitorsCancel) { app, call, tx in try app.cancelVisitor(call, tx) },
        .write(.visitorsApprove) { app, call, tx in try app.decide(.approve, call, tx) },
        .write(.visitorsReject) { app, call, tx in try app.decide(.reject, call, tx) },
        .write(.visitorsInvite) { app, call, tx in try app.inviteVisitor(call, tx) },
        .write(.visitorsCheckOut) { app, call, tx in try app.checkOutVisitor(call, tx) },
        // Drawing takes longer than reading: the visitor is read in a transaction, the pass
        // drawn after it, so no reader connection waits on ImageMagick.
        .deferred(.visitorsPass) { app, call, reply in reply(try app.pass(call, as: .svg)) },
        .deferred(.visitorsPassPNG) { app, call, reply in reply(try app.pass(call, as: .png)) },
        .sessionless(.passPage) { app, request in app.passPage(request) },
    ]

    struct CreateVisitorBody: Decodable {
        var name: String
        var email: String?
        var phone: String?
        var company: String?
        var purpose: String?
        var hostName: String?
        var hostEmail: String?
        var approverId: String?
        var requiresApproval: Bool?
        var validFrom: Timestamp?
        var validUntil: Timestamp?
        /// Queue the invitation with the creation (api.md "Site operations").
        var invite: Bool?
        /// Register a visitor who matches the blocklist anyway (api.md "Blocklist").
        var confirmBlocked: Bool?
    }

    /// The part of a PATCH body that is not a change of the visitor.
    struct EditConfirmation: Decodable {
        var confirmBlocked: Bool?
    }

    func createVisitor(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let body = try JSONBody.decode(CreateVisitorBody.self, from: call.request.body)
        let caller = call.caller.user
        let name = try Field.requiredText(body.name, "name")
        let email = try Field.email(body.email)
        let phone = try Field.phone(body.phone)
        let company = try Field.text(body.company, "company")
        let purpose = try Field.text(body.purpose, "purpose", maxLength: 500)
        let namedHost = try Field.text(body.hostName, "hostName")
        let namedHostEmail = try Field.email(body.hostEmail, "hostEmail")
        // A HOST registers its own visitors: naming neither, it is their host (api.md), so its
        // name is on the pass and in the lists; naming only a name, the arrival mail still
        // reaches it.
        let registersOwn = caller.role == .host
        let hostName = namedHost ?? (registersOwn && namedHostEmail == nil ? caller.name : nil)
        let hostEmail = namedHostEmail ?? (registersOwn ? caller.email : nil)
        try checkApprover(body.approverId, organizationId: caller.organizationId, tx)
        // Defaults (api.md): today 00:00:00–23:59:59 in the site's zone. With only validFrom,
        // the pass lasts to the end of that local day.
        let zone = try site(caller.organizationId, tx).timeZone
        let from = body.validFrom?.date ?? ValidityWindow.day(containing: call.now, in: zone).from
        let until = body.validUntil?.date ?? ValidityWindow.day(containing: from, in: zone).until
        do {
            try VisitorEditing.check(ValidityWindow(from: from, until: until))
            try VisitorEditing.checkNotLongEnded(ValidityWindow(from: from, until: until), now: call.now)
        } catch {
            throw APIError.badRequest(error.message)
        }
        let visitor = try tx.visitors.insertWithFreshShortID(organizationId: caller.organizationId, createdBy: caller.id) { shortId in
            Visitor(id: newIdentifier(), shortId: shortId, name: name, email: email, phone: phone, company: company,
                    purpose: purpose, hostName: hostName, hostEmail: hostEmail, approverId: body.approverId,
                    requiresApproval: body.requiresApproval ?? false, walkIn: false, status: .expected,
                    validity: ValidityWindow(from: from, until: until), createdAt: call.now)
        }
        // A refusal below (a blocklist match not confirmed, an invitation refused: no email,
        // mail off, a blocked visitor) throws, and the transaction stores nothing: nothing is
        // half-done, and the error says what to fix.
        try refuseUnconfirmedBlocklistMatch(visitor, from: nil, confirmed: body.confirmBlocked == true,
                                            organizationId: caller.organizationId, call, tx)
        try audit(.visitorCreate, id: visitor.id, .created(visitor), call, tx)
        if body.invite == true { _ = try queueInvitation(visitor, organizationId: caller.organizationId, call, tx) }
        return JSONBody.response(status: 201, visitor, headers: [("Location", Endpoint.visitorsGet.path(visitor.id))])
    }

    /// An `approverId` must name an APPROVER of the caller's organization who is not disabled
    /// (a disabled one could never decide).
    func checkApprover(_ approverId: String?, organizationId: String, _ tx: any Transaction) throws {
        guard let approverId else { return }
        let approver = try tx.directory.user(id: approverId)
        guard let approver, approver.organizationId == organizationId, approver.role == .approver,
              try !tx.directory.isDisabled(userId: approver.id)
        else {
            throw APIError.badRequest("approverId must be the id of an APPROVER of this organization who is not disabled")
        }
    }

    /// Edits a visitor that has not come yet. A changed window re-issues the pass: a new short
    /// id (the old pass text stops working) and, when an invitation was sent, a new one with a
    /// new pass page (the old page stops working).
    func updateVisitor(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let changes = try JSONBody.decode(VisitorChanges.self, from: call.request.body)
        let confirmation = try JSONBody.decode(EditConfirmation.self, from: call.request.body)
        let record = try visibleVisitor(call, tx)
        var edited: Visitor
        do {
            edited = try VisitorEditing.apply(changes, to: record.visitor)
        } catch {
            switch error {
            case .field: throw APIError.badRequest(error.description)
            case .notEditable: throw APIError.conflict(error.description)
            }
        }
        if edited.approverId != record.visitor.approverId {
            try checkApprover(edited.approverId, organizationId: record.organizationId, tx)
        }
        guard edited != record.visitor else { return JSONBody.response(edited) }
        if edited.validity != record.visitor.validity {
            do { try VisitorEditing.checkNotLongEnded(edited.validity, now: call.now) } catch { throw APIError.badRequest(error.message) }
        }
        try refuseUnconfirmedBlocklistMatch(edited, from: record.visitor, confirmed: confirmation.confirmBlocked == true,
                                            organizationId: record.organizationId, call, tx)
        let reissued = VisitorEditing.reissuesPass(from: record.visitor, to: edited)
        if reissued { edited.shortId = try tx.visitors.freshShortID() }
        try tx.visitors.changeState(edited, from: record.visitor)
        try audit(.visitorUpdate, id: edited.id, .changed(from: record.visitor, to: edited), call, tx)
        if reissued, try tx.visitors.hasPassToken(visitorId: edited.id) {
            // A blocked visitor's new pass is never mailed: the old page just ends.
            if mail.isEnabled, edited.email != nil,
               try blocklistMatch(edited, organizationId: record.organizationId, now: call.now, tx) == nil {
                _ = try queueInvitation(edited, organizationId: record.organizationId, call, tx)
            } else {
                try tx.visitors.setPassToken(hash: nil, visitorId: edited.id)
            }
        }
        return JSONBody.response(edited)
    }

    func inviteVisitor(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let record = try visibleVisitor(call, tx)
        let url = try queueInvitation(record.visitor, organizationId: record.organizationId, call, tx)
        return JSONBody.response(status: 202, InvitationAnswer(queued: true, passURL: url))
    }

    /// Check-out from the office (a visitor who left without passing a kiosk).
    func checkOutVisitor(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let record = try visibleVisitor(call, tx)
        let (result, updated) = CheckOut.decide(visitor: record.visitor, at: call.now)
        guard result == .checkedOut else {
            throw APIError.conflict("the visitor is \(record.visitor.status.rawValue), not CHECKED_IN")
        }
        try tx.visitors.changeState(updated, from: record.visitor)
        try audit(.visitorCheckOut, id: updated.id, .changed(from: record.visitor, to: updated), call, tx)
        try tx.events.appendVisitorEvent(.visitorDeparted, visitor: updated, organizationId: record.organizationId,
                                         checkpointId: nil, now: call.now)
        return JSONBody.response(updated)
    }

    /// The visitor named by `:id`, if the caller may see it; 404 otherwise (never 403, so
    /// nothing leaks about other organizations or other approvers' visitors).
    func visibleVisitor(_ call: Call, _ tx: any Transaction) throws -> VisitorRecord {
        let caller = call.caller
        guard let record = try tx.visitors.find(idOrShortId: call.parameter("id")) else { throw APIError.notFound("visitor") }
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
        case .host:
            guard record.organizationId == caller.organizationId, Self.isHosted(record, by: caller.user)
            else { throw APIError.notFound("visitor") }
            return record
        }
    }

    /// A HOST's visitors: those it registered, and those whose `hostEmail` is its email (the
    /// list's filter, `VisitorListFilter.hostedBy`, is the same rule in SQL).
    static func isHosted(_ record: VisitorRecord, by host: Profile) -> Bool {
        record.createdBy == host.id || record.visitor.hostEmail == host.email
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
        var filter = VisitorListFilter(organizationId: readScope(call), status: status, search: search)
        if call.caller.user.role == .host { filter.hostedBy = call.caller.user }
        if query["from"] != nil || query["to"] != nil {
            // Days of the caller's site; PLATFORM_ADMIN reading every site uses the server's zone.
            let zone = try readScope(call).map { try site($0, tx).timeZone } ?? timeZone
            // One end alone leaves the other open: `from` alone is that day on, `to` alone up to it.
            func day(_ name: String) throws -> ValidityWindow? {
                guard let text = query[name] else { return nil }
                guard let date = ValidityWindow.localDay(text, in: zone) else {
                    throw APIError.badRequest("\(name) must be a day like 2026-12-01 (the site's calendar)")
                }
                return ValidityWindow.day(containing: date, in: zone)
            }
            let first = try day("from"), last = try day("to")
            let days = ValidityWindow(from: first?.from ?? .distantPast, until: last?.until ?? .distantFuture)
            guard days.from <= days.until else { throw APIError.badRequest("to must not be before from") }
            filter.validDuring = days
        }
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
        try audit(.visitorCancel, id: updated.id, .changed(from: record.visitor, to: updated), call, tx)
        return JSONBody.response(updated)
    }

    /// approve-scan / reject-scan (OWNER/ADMIN) and approve / reject (APPROVER, own or unassigned).
    func decide(_ decision: ApprovalDecision, _ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let body = try JSONBody.decodeOptional(NoteBody.self, from: call.request.body)
        let note = try Field.text(body.note, "note", maxLength: 1000)
        let record = try visibleVisitor(call, tx)
        let blocklist = decision == .approve
            ? try tx.blocklist.candidates(for: record.visitor, organizationId: record.organizationId, now: call.now) : []
        let updated = try decision.apply(to: record.visitor, by: call.caller.user.id, note: note, at: call.now,
                                         blocklist: blocklist)
        try tx.visitors.changeState(updated, from: record.visitor)
        try audit(decision == .approve ? .visitorApprove : .visitorReject, id: updated.id,
                  .changed(from: record.visitor, to: updated), call, tx)
        // The decision reaches the checkpoint that asked for it (api.md: the scanner that requested approval).
        try tx.events.appendVisitorEvent(.visitorDecided, visitor: updated, organizationId: record.organizationId,
                                         checkpointId: record.approvalCheckpointId, now: call.now)
        return JSONBody.response(updated)
    }

    enum PassForm { case svg, png }

    /// The pass of a visitor the caller may see, drawn after the read.
    func pass(_ call: Call, as form: PassForm) throws -> HTTPResponse {
        let (visitor, passSite): (Visitor, SiteProfile) = try store.read { tx in
            let record = try self.visibleVisitor(call, tx)
            return (record.visitor, try self.site(record.organizationId, tx))
        }
        // Personal data: the browser may keep it a little, no shared cache may.
        let cache = ("Cache-Control", "private, max-age=300")
        switch form {
        case .svg:
            return HTTPResponse(status: 200, headers: [("Content-Type", "image/svg+xml"), cache,
                                                       ("Content-Security-Policy", "default-src 'none'")],
                                body: Array(try passes.svg(visitor, site: passSite).utf8))
        case .png:
            return HTTPResponse(status: 200, headers: [("Content-Type", "image/png"), cache,
                                                       ("Content-Disposition", "inline; filename=\"pass-\(visitor.shortId.rawValue).png\"")],
                                body: try passes.png(visitor, site: passSite))
        }
    }

    /// `GET /p/:passToken`: the visitor's own page, no login. Unknown tokens, and passes that
    /// are cancelled, refused, used up (checked out) or past their window, all get the same 404 page.
    func passPage(_ request: HTTPRequest) -> HTTPResponse {
        let notFound = HTTPResponse(status: 404, headers: Self.passPageHeaders, body: Array(Self.passPageNotFound.utf8))
        let token = request.pathSegments.last ?? ""
        // A token is 32 bytes in canonical Base64URL (43 characters); anything else is not looked up.
        guard token.utf8.count == 43, Base64URL.decode(token)?.count == 32 else { return notFound }
        let now = clock.now()
        do {
            let found = try store.read { tx -> (Visitor, SiteProfile)? in
                guard let record = try tx.visitors.find(passTokenHash: self.passTokenHash(token)) else { return nil }
                return (record.visitor, try self.site(record.organizationId, tx))
            }
            guard let (visitor, passSite) = found, ![.cancelled, .rejected, .checkedOut].contains(visitor.status),
                  visitor.validity.until >= now
            else { return notFound }
            return HTTPResponse(status: 200, headers: Self.passPageHeaders, body: Array(try passes.page(visitor, site: passSite).utf8))
        } catch {
            return errorResponse(error, routeName: Endpoint.passPage.pathPattern)
        }
    }
}
