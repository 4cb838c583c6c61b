import Foundation
import GatePassAPI
import GatePassCore
import HTTPServer

extension GatePassApplication {
    /// The site controller: the organization and its settings, its users, and the mail log.
    static let siteRoutes: [Route] = [
        .read(.organizationGet) { app, call, tx in JSONBody.response(try app.organization(call.caller.organizationId, tx)) },
        .write(.organizationUpdate) { app, call, tx in try app.updateOrganization(call, tx) },
        .read(.usersList) { app, call, tx in try app.listUsers(call, tx) },
        .write(.usersCreate) { app, call, tx in try app.createUser(call, tx) },
        .write(.usersUpdate) { app, call, tx in try app.updateUser(call, tx) },
        .read(.adminMailList) { app, call, tx in try app.mailLog(call, tx) },
        .write(.adminMailTest) { app, call, tx in try app.sendTestMail(call, tx) },
    ]

    // MARK: - The organization

    /// The organization as stored, its zone and its retention resolved (the server's until
    /// one is set): an answer always carries the numbers in force, in api.md's shape.
    func organization(_ organizationId: String, _ tx: any Transaction) throws -> Organization {
        let site = try site(organizationId, tx)
        guard let stored = try tx.directory.organization(id: organizationId) else { throw APIError.notFound("organization") }
        return Organization(id: stored.id, name: stored.name, timeZone: site.timeZoneName,
                            retentionDays: try stored.retentionDays ?? tx.directory.serverRetentionDays(),
                            autoCheckoutAt: stored.autoCheckoutAt)
    }

    /// `PATCH /api/organization` (OWNER): every field is judged before anything is stored.
    func updateOrganization(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let changes = try JSONBody.decode(OrganizationChanges.self, from: call.request.body)
        let organizationId = call.caller.organizationId
        guard var stored = try tx.directory.organization(id: organizationId) else { throw APIError.notFound("organization") }
        if let name = changes.name {
            stored.name = try Field.requiredText(name, "name", maxLength: 100)
            if let holder = try tx.directory.organizationId(named: stored.name), holder != organizationId {
                throw APIError.conflict("another organization is named \(stored.name)")
            }
        }
        if let zone = changes.timeZone {
            guard OrganizationRules.isZoneName(zone) else { throw APIError.badRequest("timeZone must be an IANA zone such as Europe/Bucharest") }
            stored.timeZone = zone
        }
        if let days = changes.retentionDays {
            // null: back to the server's default.
            if let days, !OrganizationRules.retentionDaysRange.contains(days) {
                throw APIError.badRequest("retentionDays must be a whole number of days from 1 to 3650, or null for the server's default")
            }
            stored.retentionDays = days
        }
        if let time = changes.autoCheckoutAt {
            if let time, !OrganizationRules.isClockTime(time) {
                throw APIError.badRequest("autoCheckoutAt must be a site-local time HH:MM (00:00 to 23:59) or null")
            }
            stored.autoCheckoutAt = time
        }
        let before = try organization(organizationId, tx)
        try tx.directory.update(stored)
        let after = try organization(organizationId, tx)
        let values = AuditValues.changed(from: before, to: after)
        if values != .none { try audit(.organizationUpdate, id: organizationId, values, call, tx) }
        return JSONBody.response(after)
    }

    // MARK: - Users

    /// A user of the caller's organization, or 404 (another organization's users do not exist for it).
    func managedUser(_ call: Call, _ tx: any Transaction) throws -> UserSummary {
        guard let user = try tx.directory.userSummary(id: call.parameter("id")),
              user.profile.organizationId == call.caller.organizationId
        else { throw APIError.notFound("user") }
        return user
    }

    func createUser(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let body = try JSONBody.decode(NewUser.self, from: call.request.body)
        let caller = call.caller
        do { try UserRules.checkCreation(by: caller.user.role, of: body.role) } catch { throw APIError(error) }
        let email = try Field.email(body.email, required: true)!
        let name = try Field.requiredText(body.name, "name")
        // Emails are unique across the server: they are what a login names.
        if try tx.directory.user(email: email) != nil { throw APIError.conflict("a user with email \(email) already exists") }
        let profile = try tx.directory.createUser(organizationId: caller.organizationId, email: email, name: name,
                                                  role: body.role, canScan: body.canScanCheckpoint ?? false, now: call.now)
        guard let created = try tx.directory.userSummary(id: profile.id) else { throw APIError.internal("the new user was not stored") }
        try audit(.userCreate, id: profile.id, .created(created), call, tx)
        return JSONBody.response(status: 201, created, headers: [("Location", Endpoint.usersUpdate.path(profile.id))])
    }

    /// `PATCH /api/users/:id`, judged by `UserRules`. Disabling ends the user's sessions and
    /// scanner tokens in this transaction, and its event streams right after the commit; a
    /// change of role or scanning right ends its streams too (they were filtered for the old rights).
    func updateUser(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let changes = try JSONBody.decode(UserChanges.self, from: call.request.body)
        let target = try managedUser(call, tx)
        let profile = target.profile
        let activeOwners = try tx.directory.activeOwnerCount(organizationId: profile.organizationId)
        do {
            try UserRules.checkUpdate(by: call.caller.user, of: profile, targetDisabled: target.disabled, changes: changes,
                                      activeOwners: activeOwners)
        } catch {
            throw APIError(error)
        }
        let name = try changes.name.map { try Field.requiredText($0, "name") } ?? profile.name
        let role = changes.role ?? profile.role
        let storedCanScan = try tx.directory.storedCanScan(userId: profile.id)
        let canScan = changes.canScanCheckpoint ?? storedCanScan
        let disabled = changes.disabled ?? target.disabled
        try tx.directory.update(userId: profile.id, name: name, role: role, canScan: canScan, disabled: disabled)
        if disabled && !target.disabled {
            try Sessions.revoke(sessionsOfUser: profile.id, now: call.now, tx)
            call.effects.noteEndedSessions()
        }
        if role != profile.role || canScan != storedCanScan { call.effects.noteChangedRights(ofUser: profile.id) }
        guard let updated = try tx.directory.userSummary(id: profile.id) else { throw APIError.notFound("user") }
        let values = AuditValues.changed(from: target, to: updated)
        if values != .none { try audit(.userUpdate, id: profile.id, values, call, tx) }
        return JSONBody.response(updated)
    }

    func listUsers(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let query = call.request.query
        let limit = try Field.limit(query)
        let rows = try tx.directory.users(organizationId: readScope(call), after: try Field.cursor(query), limit: limit + 1)
        return JSONBody.response(page(of: rows, limit: limit, item: { $0.user }, cursor: { $0.cursor }))
    }

    /// One page of `limit` items from `limit + 1` fetched rows that carry their own cursor,
    /// with the cursor of the last item when more rows follow.
    func page<Row, Item: Codable & Sendable>(of rows: [Row], limit: Int, item: (Row) -> Item, cursor: (Row) -> ListCursor) -> Page<Item> {
        let kept = rows.prefix(limit)
        return Page(items: kept.map(item), nextCursor: rows.count > limit ? kept.last.map { cursor($0).token } : nil)
    }

    /// The organization's mails, newest first, login codes included (their codes never: the
    /// log shows no body).
    func mailLog(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let query = call.request.query
        let limit = try Field.limit(query)
        let rows = try tx.mail.list(organizationId: call.caller.organizationId, after: try Field.cursor(query),
                                    limit: limit + 1)
        return JSONBody.response(page(of: rows, limit: limit, item: { $0.mail }, cursor: { $0.cursor }))
    }

    struct TestMailBody: Decodable { var to: String }

    func sendTestMail(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let body = try JSONBody.decode(TestMailBody.self, from: call.request.body)
        let to = try Field.email(body.to, "to", required: true)!
        guard try queueMail(.test, to: to, organizationId: call.caller.organizationId, call, tx) else {
            throw APIError.conflict("this server sends no mail: set smtpURL (README \"Mail\")")
        }
        try audit(.mailTest, id: nil, .facts(["to": to]), call, tx)
        return JSONBody.response(status: 202, QueuedAnswer(queued: true))
    }
}
