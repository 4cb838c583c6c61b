import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

extension TestServer {
    /// `POST /api/events/ticket` as `token`: the ticket, after checking the answer's shape.
    func eventTicket(_ token: String) throws -> (ticket: String, expiresAt: Date) {
        let answer = try post("/api/events/ticket", token: token)
        guard answer.status == 201, answer.keys == ["ticket", "expiresAt"], let ticket = answer.string("ticket"),
              let expiresAt = date(answer.json?["expiresAt"])
        else { throw TestFailure("ticket answered \(answer.status): \(answer.text)") }
        return (ticket, expiresAt)
    }

    /// `GET /api/events?ticket=…` with nothing else (as an `EventSource` sends it).
    func ticketStream(_ ticket: String, headers: [String: String] = [:]) throws -> SSETestClient {
        try SSETestClient(port: port, path: "/api/events?ticket=" + ticketQueryValue(ticket), headers: headers)
    }
}

/// A ticket as a browser puts it in a query (base64url and dots need no escaping; anything
/// else a test sends is escaped so it arrives as written).
func ticketQueryValue(_ ticket: String) -> String {
    ticket.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_."))) ?? ""
}

/// api.md "Browser clients": the event-stream ticket.
@Suite struct EventTicketTests {
    @Test func aTicketLastsAsLongAsItsSessionAndOpensTheCallersStream() throws {
        try withSite { server, site in
            // A fresh login, to hold its answer's expiresAt against the ticket's.
            let email = "browser@acme.test"
            try server.addUser(email, role: .admin)
            _ = try server.post("/api/auth/send-otp", ["email": email])
            let code = try #require(try server.get("/api/auth/dev-peek-otp?email=\(email)").string("otp"))
            let login = try server.post("/api/auth/verify-otp", ["email": email, "otp": code])
            let token = try #require(login.string("token"))

            let answer = try server.post("/api/events/ticket", token: token)
            #expect(answer.status == 201 && answer.keys == ["ticket", "expiresAt"])
            #expect(answer.headers["cache-control"] == "no-store")
            #expect(answer.json?["expiresAt"] as? String == login.string("expiresAt"), "the session's end")
            let ticket = try #require(answer.string("ticket"))
            #expect(ticket.hasPrefix("gpe1.") && ticket != token)
            #expect(try server.eventTicket(token).ticket != ticket, "every ticket is a new string")

            let stream = try server.ticketStream(ticket)
            #expect(stream.answer.status == 200)
            #expect(stream.answer.headers["content-type"]?.hasPrefix("text/event-stream") == true)
            try server.awaitingVisitor(site, ["name": "Seen Through A Ticket"])
            let events = stream.events(2)
            #expect(kinds(events) == ["visitor.awaiting", "notification.new"], "the admin's own audience")
            #expect((events.first?.json?["visitor"] as? [String: Any])?["name"] as? String == "Seen Through A Ticket")
        }
    }

    /// EventSource reconnects with the same URL and `Last-Event-ID`: the ticket resumes the stream.
    @Test func aTicketStreamResumesFromLastEventID() throws {
        try withSite { server, site in
            let ticket = try server.eventTicket(site.ownerToken).ticket
            let first = try server.ticketStream(ticket)
            try server.awaitingVisitor(site, ["name": "First"])
            let seen = first.events(2)
            first.close()
            try server.awaitingVisitor(site, ["name": "While Away"])
            let lastId = try #require(seen.last?.id)
            let again = try server.ticketStream(ticket, headers: ["Last-Event-ID": String(lastId)])
            let missed = again.events(2)
            #expect(kinds(missed) == ["visitor.awaiting", "notification.new"])
            #expect((missed.first?.json?["visitor"] as? [String: Any])?["name"] as? String == "While Away")
        }
    }

    @Test func aScannerTokensTicketOpensTheGatesStream() throws {
        try withSite { server, site in
            let (ticket, expiresAt) = try server.eventTicket(site.scanner)
            #expect(expiresAt.timeIntervalSince(server.clock.now()) > 29 * 86_400, "the scanner session's 30 days")
            let stream = try server.ticketStream(ticket)
            #expect(stream.answer.status == 200)
            #expect(try server.post("/api/auth/logout", token: site.ownerToken).status == 204)
            #expect(stream.nextFrame(timeout: 3) == nil && stream.ended, "the owner's logout ends the scanner's session")
            #expect(try server.ticketStream(ticket).answer.isError(401, "UNAUTHORIZED"))
        }
    }

    @Test func logoutEndsTheTicketAndItsOpenStream() throws {
        try withSite { server, site in
            let ticket = try server.eventTicket(site.adminToken).ticket
            let open = try server.ticketStream(ticket)
            #expect(open.answer.status == 200)
            #expect(try server.post("/api/auth/logout", token: site.adminToken).status == 204)
            #expect(open.nextFrame(timeout: 3) == nil && open.ended)
            let after = try server.ticketStream(ticket).answer
            #expect(after.isError(401, "UNAUTHORIZED"), "\(after.text)")
            // Another session's ticket is untouched.
            #expect(try server.ticketStream(try server.eventTicket(site.ownerToken).ticket).answer.status == 200)
        }
    }

    @Test func aTicketDiesWithItsSessionsEnd() throws {
        try withSite { server, site in
            let (ticket, expiresAt) = try server.eventTicket(site.deskToken)
            server.clock.set(expiresAt.addingTimeInterval(-1))
            #expect(try server.ticketStream(ticket).answer.status == 200)
            server.clock.set(expiresAt)
            #expect(try server.ticketStream(ticket).answer.isError(401, "UNAUTHORIZED"))
            server.clock.set(expiresAt.addingTimeInterval(86_400))
            #expect(try server.ticketStream(ticket).answer.isError(401, "UNAUTHORIZED"))
        }
    }

    /// A ticket opens the event stream and nothing else: not as a bearer token, not in the
    /// query of another route, not to make another ticket.
    @Test func aTicketIsNoBearerTokenAndOpensNoOtherRoute() throws {
        try withSite { server, site in
            let ticket = try server.eventTicket(site.ownerToken).ticket
            let query = "?ticket=" + ticketQueryValue(ticket)
            let asBearer: [HTTPAnswer] = [
                try server.get("/api/auth/me", token: ticket),
                try server.get("/api/visitors", token: ticket),
                try server.post("/api/events/ticket", token: ticket),
                try SSETestClient(port: server.port, token: ticket).answer,
            ]
            let inQuery: [HTTPAnswer] = [
                try server.get("/api/auth/me" + query),
                try server.get("/api/visitors" + query),
                try server.get("/api/visitors" + query, token: site.ownerToken),
                try server.post("/api/events/ticket" + query),
                try server.post("/api/visitors" + query, ["name": "Made With A Ticket"]),
                try server.post("/api/auth/logout" + query),
            ]
            for (index, answer) in (asBearer + inQuery).enumerated() {
                #expect(answer.isError(401, "UNAUTHORIZED"), "case \(index): \(answer.status) \(answer.text)")
            }
            #expect(try server.get("/api/visitors?q=Made", token: site.ownerToken).items.isEmpty)
            #expect(try server.get("/api/auth/me", token: site.ownerToken).status == 200, "the logout did not happen")
            // A login token in the ticket's place is no ticket either.
            #expect(try server.ticketStream(site.ownerToken).answer.isError(401, "UNAUTHORIZED"))
            // Both at once: the stream refuses to guess which one counts.
            let both = try server.ticketStream(ticket, headers: ["Authorization": "Bearer \(site.ownerToken)"]).answer
            #expect(both.isError(400, "BAD_REQUEST"), "\(both.text)")
        }
    }

    @Test func malformedAndForgedTicketsAre401() throws {
        try withSite { server, site in
            let ticket = try server.eventTicket(site.ownerToken).ticket
            let parts = ticket.split(separator: ".").map(String.init)
            // The same session and expiry signed with another secret.
            let foreign = EventTicketSigner(secret: ServerSecret(bytes: [UInt8](repeating: 7, count: 32)))
            let foreignPrincipal = Principal(user: site.owner, sessionId: "any", sessionExpiresAt: testStart.addingTimeInterval(3600),
                                             credential: .login)
            let forged = try foreign.issue(for: foreignPrincipal).ticket
            var flipped = Array(ticket)
            flipped[8] = flipped[8] == "A" ? "B" : "A"
            let hostile = [
                "", "gpe1.", "gpe1..", ticket + "x", String(flipped), parts[0] + "." + parts[1],
                "gp1." + parts[1] + "." + parts[2], parts[0] + "." + parts[1] + "." + parts[2] + "." + parts[2],
                forged, String(repeating: "A", count: 20_000), ticket + "\r\nX-Injected: 1", "\u{0000}" + ticket,
                "gpe1.\u{202E}evil.sig", String(repeating: ticket, count: 50),
            ]
            for value in hostile {
                let answer = try server.ticketStream(value).answer
                #expect(answer.status == 401 || answer.status == 400 || answer.status == 431 || answer.status == 414,
                        "\(value.prefix(40).debugDescription): \(answer.status)")
                #expect(answer.status != 200)
                #expect(answer.headers["x-injected"] == nil)
            }
            // Two ticket arguments: the first counts (as for every query key), and a bad first is 401.
            let twice = try SSETestClient(port: server.port, path: "/api/events?ticket=bad&ticket=" + ticketQueryValue(ticket),
                                          headers: [:]).answer
            #expect(twice.isError(401, "UNAUTHORIZED"))
            #expect(try server.ticketStream(ticket).answer.status == 200, "the real ticket still works")
        }
    }

    /// The ticket is a credential: no log line ever holds it, whether it opened a stream or was refused.
    @Test func theAccessLogNeverHoldsATicket() throws {
        try withSite { server, site in
            let ticket = try server.eventTicket(site.ownerToken).ticket
            let stream = try server.ticketStream(ticket)
            #expect(stream.answer.status == 200)
            stream.close()
            _ = try server.ticketStream(ticket + "x")
            _ = try server.get("/api/visitors?ticket=" + ticketQueryValue(ticket))
            _ = try server.get("/api/auth/me", token: ticket)
            let signature = String(ticket.split(separator: ".").last ?? "")
            let lines = server.log.all
            #expect(lines.contains { $0.hasPrefix("GET /api/events 200 ") }, "the stream is logged, by its route")
            #expect(lines.contains { $0.hasPrefix("POST /api/events/ticket 201 ") })
            for line in lines {
                #expect(!line.contains(signature) && !line.contains("ticket=") && !line.contains("gpe1."), "\(line)")
            }
        }
    }

    /// The signers: a ticket never verifies as a token, a token never as a ticket, under one secret.
    @Test func ticketsAndTokensNeverVerifyAsEachOther() throws {
        let secret = ServerSecret(bytes: Array(0..<32))
        let tokens = TokenSigner(secret: secret)
        let tickets = EventTicketSigner(secret: secret)
        let owner = Profile(id: "u-1", email: "o@acme.test", name: "O", role: .owner, organizationId: "org-1",
                            canScanCheckpoint: true)
        let principal = Principal(user: owner, sessionId: "s-1", sessionExpiresAt: testStart.addingTimeInterval(600),
                                  credential: .scanner(checkpointId: "c-1"))
        let ticket = try tickets.issue(for: principal)
        #expect(ticket.expiresAt == testStart.addingTimeInterval(600))
        #expect(tickets.verify(ticket.ticket) == TokenClaims(kind: .scanner, sessionId: "s-1",
                                                             expiresAt: Int64(testStart.timeIntervalSince1970) + 600))
        #expect(tokens.verify(ticket.ticket) == nil)
        let token = tokens.sign(TokenClaims(kind: .login, sessionId: "s-1", expiresAt: 1_900_000_000))
        #expect(tokens.verify(token)?.sessionId == "s-1")
        #expect(tickets.verify(token) == nil)
        // The same payload under the other prefix and key: still nothing.
        #expect(tickets.verify("gpe1." + token.dropFirst(4)) == nil)
        #expect(tokens.verify("gp1." + ticket.ticket.dropFirst(5)) == nil)
    }
}
