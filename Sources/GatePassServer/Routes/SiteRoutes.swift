import Foundation
import GatePassAPI
import GatePassCore
import HTTPServer

extension GatePassApplication {
    /// The site controller: the organization, its users (read only here; management comes
    /// with governance), and the mail log.
    static let siteRoutes: [Route] = [
        .read(.organizationGet) { app, call, tx in
            JSONBody.response(try app.site(call.caller.organizationId, tx).organization)
        },
        .read(.usersList) { app, call, tx in try app.listUsers(call, tx) },
        .read(.adminMailList) { app, call, tx in try app.mailLog(call, tx) },
        .write(.adminMailTest) { app, call, tx in try app.sendTestMail(call, tx) },
    ]

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
        return JSONBody.response(status: 202, QueuedAnswer(queued: true))
    }
}
