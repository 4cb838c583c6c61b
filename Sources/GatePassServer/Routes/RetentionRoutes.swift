import Foundation
import GatePassAPI
import GatePassCore
import HTTPServer

extension GatePassApplication {
    /// The retention controller (api.md "Retention"): a run on demand (with its dry run), and a
    /// data-subject request's erase and export of one visitor.
    static let retentionRoutes: [Route] = [
        .write(.adminRetentionRun) { app, call, tx in try app.runRetention(call, tx) },
        .write(.adminVisitorErase) { app, call, tx in try app.eraseVisitor(call, tx) },
        .deferred(.adminVisitorExport) { app, call, reply in try app.exportVisitor(call, reply: reply) },
    ]

    /// `dryRun` is required: a body that forgot it must not erase anything.
    struct RetentionRunBody: Decodable { var dryRun: Bool }

    /// `POST /api/admin/retention/run` (OWNER/ADMIN): the caller's organization, now, in this
    /// one transaction. A dry run changes nothing and is not audited (nothing changed).
    func runRetention(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let body = try JSONBody.decode(RetentionRunBody.self, from: call.request.body)
        let organizationId = call.caller.organizationId
        let erasure = try Anonymisation.run(organizationId: organizationId, now: call.now, dryRun: body.dryRun, limit: nil, tx)
        if !body.dryRun {
            try audit(.retentionRun, id: organizationId, .erasure(erasure), call, tx)
            if erasure.counts != .zero { call.effects.noteErasedPersonalData() }
        }
        return JSONBody.response(erasure.counts)
    }

    /// A visitor of the caller's organization named by `:id` (id or short id), or 404.
    private func organizationVisitor(_ call: Call, _ tx: any Transaction) throws -> VisitorRecord {
        let reference = call.parameter("id")
        guard reference.utf8.count <= 64, let record = try tx.visitors.find(idOrShortId: reference),
              record.organizationId == call.caller.organizationId
        else { throw APIError.notFound("visitor") }
        return record
    }

    /// `POST /api/admin/visitors/:id/erase` (OWNER): the visitor anonymised now, whatever its
    /// pass, with the reach of retention; the answer is the visitor as it is now. A visitor on
    /// site is 409 until checked out: the evacuation roll must name who is inside. Erasing an
    /// anonymised visitor again changes nothing (200, no entry). The request takes no body.
    func eraseVisitor(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let record = try organizationVisitor(call, tx)
        if record.visitor.status == .checkedIn {
            throw APIError.conflict("the visitor is on site: check them out first (the evacuation roll must name who is inside)")
        }
        let erasure = try Anonymisation.anonymise([record], now: call.now, tx)
        if erasure.counts.visitors == 1 {
            // The erase request's own entry (entity `erase-request`) lists the entries it erased.
            try audit(.visitorErase, id: record.visitor.id, .erasure(erasure), call, tx)
            call.effects.noteErasedPersonalData()
        }
        guard let now = try tx.visitors.find(id: record.visitor.id) else { throw APIError.notFound("visitor") }
        return JSONBody.response(now.visitor)
    }

    /// `GET /api/admin/visitors/:id/export` (OWNER/ADMIN): everything stored about one visitor.
    /// The read is audited (`visitor.export`) in a write of its own before the answer goes out;
    /// if the entry cannot be written, nothing is sent.
    func exportVisitor(_ call: Call, reply: @escaping @Sendable (HTTPResponse) -> Void) throws {
        let export = try store.read { tx in try visitorExport(call, tx) }
        try auditBulkRead(.visitorExport, id: export.visitor.id, .facts(export.counts), call)
        reply(JSONBody.response(export))
    }

    private func visitorExport(_ call: Call, _ tx: any Transaction) throws -> VisitorExport {
        let record = try organizationVisitor(call, tx)
        let id = record.visitor.id
        let limit = Anonymisation.rowLimit
        let answers = try tx.idempotency.answers(createdSince: record.visitor.createdAt)
            .filter { StoredAnswerErasure.anonymised($0.body, visitorIds: [id]) != nil }
        return VisitorExport(
            exportedAt: Timestamp(call.now), visitor: record.visitor,
            anonymisedAt: try tx.visitors.anonymisedAt(visitorId: id).map(Timestamp.init),
            scans: try tx.scans.scans(visitorId: id, limit: limit),
            events: try tx.events.rows(visitorId: id, limit: limit).map {
                VisitorExport.Event(id: $0.id, kind: $0.kindName, title: $0.title, data: $0.data, createdAt: Timestamp($0.createdAt))
            },
            notificationMarks: try tx.notifications.marks(visitorId: id).map {
                VisitorExport.Mark(eventId: $0.eventId, userId: $0.userId, readAt: $0.readAt.map(Timestamp.init),
                                   deletedAt: $0.deletedAt.map(Timestamp.init))
            },
            mail: try tx.mail.mails(visitorId: id, limit: limit),
            audit: try tx.audit.entries(entityId: id).map {
                let entry = $0.entry
                return VisitorExport.Audit(id: entry.id, at: Timestamp(entry.at), actorKind: entry.actorKind.rawValue,
                                           actorId: entry.actorId, action: entry.action, before: entry.before,
                                           after: entry.after, erased: $0.erased)
            },
            storedAnswers: answers.count)
    }
}

/// What `GET /api/admin/visitors/:id/export` answers (README "Retention and data-subject
/// requests"). Mail rows carry no body and no code; events carry their data as the stream
/// sends it (one line of JSON, as a string).
struct VisitorExport: Encodable, Sendable {
    // Absent values are written as null, as in api.md's answers: each part encodes every key.
    struct Event: Encodable, Sendable {
        var id: Int64
        var kind: String
        var title: String?
        var data: String
        var createdAt: Timestamp

        enum CodingKeys: String, CodingKey { case id, kind, title, data, createdAt }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id); try c.encode(kind, forKey: .kind); try c.encode(title, forKey: .title)
            try c.encode(data, forKey: .data); try c.encode(createdAt, forKey: .createdAt)
        }
    }

    struct Mark: Encodable, Sendable {
        var eventId: String
        var userId: String
        var readAt: Timestamp?
        var deletedAt: Timestamp?

        enum CodingKeys: String, CodingKey { case eventId, userId, readAt, deletedAt }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(eventId, forKey: .eventId); try c.encode(userId, forKey: .userId)
            try c.encode(readAt, forKey: .readAt); try c.encode(deletedAt, forKey: .deletedAt)
        }
    }

    struct Audit: Encodable, Sendable {
        var id: String
        var at: Timestamp
        var actorKind: String
        var actorId: String?
        var action: String
        var before: String?
        var after: String?
        var erased: Bool

        enum CodingKeys: String, CodingKey { case id, at, actorKind, actorId, action, before, after, erased }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id); try c.encode(at, forKey: .at); try c.encode(actorKind, forKey: .actorKind)
            try c.encode(actorId, forKey: .actorId); try c.encode(action, forKey: .action)
            try c.encode(before, forKey: .before); try c.encode(after, forKey: .after); try c.encode(erased, forKey: .erased)
        }
    }

    var exportedAt: Timestamp
    var visitor: Visitor
    var anonymisedAt: Timestamp?
    var scans: [Scan]
    var events: [Event]
    var notificationMarks: [Mark]
    var mail: [MailSummary]
    var audit: [Audit]
    /// Stored answers of idempotent requests that show the visitor (kept `idempotencyRetentionHours`).
    var storedAnswers: Int

    /// What the `visitor.export` entry records: how much went out, none of it.
    var counts: [String: Int] {
        ["scans": scans.count, "events": events.count, "mail": mail.count, "audit": audit.count]
    }

    enum CodingKeys: String, CodingKey {
        case exportedAt, visitor, anonymisedAt, scans, events, notificationMarks, mail, audit, storedAnswers
    }

    // Every key is written, absent values as null (as api.md's other answers).
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(exportedAt, forKey: .exportedAt)
        try c.encode(visitor, forKey: .visitor)
        try c.encode(anonymisedAt, forKey: .anonymisedAt)
        try c.encode(scans, forKey: .scans)
        try c.encode(events, forKey: .events)
        try c.encode(notificationMarks, forKey: .notificationMarks)
        try c.encode(mail, forKey: .mail)
        try c.encode(audit, forKey: .audit)
        try c.encode(storedAnswers, forKey: .storedAnswers)
    }
}
