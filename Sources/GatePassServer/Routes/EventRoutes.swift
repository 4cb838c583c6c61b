import Foundation
import GatePassAPI
import GatePassCore
import HTTPServer

extension GatePassApplication {
    /// The events controller: the server-sent event stream and its tickets.
    static let eventRoutes: [Route] = [
        .read(.eventsStream) { app, call, tx in try app.openEventStream(call, tx) },
        // Nothing is stored (the ticket is signed), so no write transaction is needed.
        .deferred(.eventsTicket) { app, call, reply in reply(try app.issueEventTicket(call)) },
    ]

    /// `POST /api/events/ticket`: a ticket for `GET /api/events?ticket=…` as the caller, for
    /// as long as the caller's session lasts (see `EventTicketSigner`). The body is not read.
    func issueEventTicket(_ call: Call) throws -> HTTPResponse {
        let (ticket, expiresAt) = try ticketSigner.issue(for: call.caller)
        // A credential: no cache may keep it.
        return JSONBody.response(status: 201, EventTicket(ticket: ticket, expiresAt: expiresAt),
                                 headers: [("Cache-Control", "no-store")])
    }

    /// `GET /api/events`: a server-sent event stream for the caller's audience.
    func openEventStream(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let lastEventId: Int64?
        if let raw = call.request.header("last-event-id")?.trimmingCharacters(in: .whitespaces), !raw.isEmpty {
            guard raw.count <= 19, raw.allSatisfy(\.isASCII), let value = Int64(raw), value >= 0 else {
                throw APIError.badRequest("Last-Event-ID must be an event id (a non-negative integer)")
            }
            lastEventId = value
        } else {
            lastEventId = nil
        }
        let filter = EventStreamFilter(principal: call.caller, deviceToken: try presentedDevice(call, tx))
        let stream = try eventHub.subscribe(filter: filter, lastEventId: lastEventId, tx)
        return HTTPResponse(status: 200,
                            headers: [("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"),
                                      ("X-Accel-Buffering", "no")],
                            stream: stream)
    }

    /// The `X-Device-Token` header, when it names a device registered to the caller's user.
    /// Any other token is ignored (the stream still works, and marks no deliveries): a
    /// stream must never confirm deliveries to someone else's device.
    private func presentedDevice(_ call: Call, _ tx: any Transaction) throws -> String? {
        guard let token = call.request.header("x-device-token"), (1...512).contains(token.utf8.count) else { return nil }
        let owner = try tx.push.deviceOwner(token: token)
        return owner == call.caller.user.id ? token : nil
    }

    struct PushTestBody: Decodable {
        var token: String?
        var waitSeconds: Double?
    }

    /// `POST /api/admin/push-test {token?, waitSeconds?}`: a `push.test` to each device of the
    /// organization (or one), answered after they were delivered or the wait (default 3 s) ran out.
    func pushTest(_ call: Call, reply: @escaping @Sendable (HTTPResponse) -> Void) throws {
        let body = try JSONBody.decodeOptional(PushTestBody.self, from: call.request.body)
        let wait = body.waitSeconds ?? 3
        guard wait.isFinite, (0...30).contains(wait) else { throw APIError.badRequest("waitSeconds must be between 0 and 30") }
        let organizationId = call.caller.organizationId
        let token = body.token
        guard pushTestWaits.reserve() else {
            throw APIError.unavailable("\(pushTestWaits.capacity) push tests are already waiting; try again shortly",
                                       retryAfter: 1)
        }
        store.writeAsync({ tx -> ([PushTarget], [Int64]) in
            let targets = try tx.push.targets(organizationId: organizationId, token: token)
            return (targets, try PushRegistry.sendTests(to: targets, now: call.now, tx))
        }) { [self] result in
            eventHub.committed()
            switch result {
            case .failure(let error):
                pushTestWaits.release()
                reply(errorResponse(error, routeName: call.endpoint.pathPattern))
            case .success(let (targets, ids)):
                if let token, targets.isEmpty {
                    pushTestWaits.release()
                    reply(JSONBody.response(Page(items: [PushTestOutcome(token: token, status: .error,
                                                                         detail: "this token is not registered")],
                                                 nextCursor: nil)))
                    return
                }
                // No thread waits: the connection stays suspended until the answer.
                pushTestWaits.wait(targets: targets, eventIds: ids, for: .milliseconds(Int(wait * 1000)), reply: reply)
            }
        }
    }

    /// `GET /api/admin/push-deliveries?token=&limit=&cursor=`: the delivery log of one device.
    func pushDeliveries(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let query = call.request.query
        guard let token = query["token"], (1...512).contains(token.utf8.count) else {
            throw APIError.badRequest("token is required: the device token whose deliveries to list")
        }
        let limit = try Field.limit(query)
        let cursor = try Field.cursor(query)
        let rows = try tx.push.deliveries(organizationId: call.caller.organizationId, token: token, after: cursor,
                                          limit: limit + 1)
        let items = Array(rows.prefix(limit))
        let next = rows.count > limit ? items.last.map { ListCursor(time: $0.createdAt.date.milliseconds, seq: $0.eventId).token } : nil
        return JSONBody.response(Page(items: items, nextCursor: next))
    }
}
