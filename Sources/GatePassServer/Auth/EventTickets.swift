import Foundation
import GatePassCore
import GatePassCrypto

/// Event-stream tickets (api.md "Browser clients"): what a browser's `EventSource`, which
/// cannot send an `Authorization` header, puts in `GET /api/events?ticket=…` instead of a
/// login token.
///
/// A ticket is `gpe1.<base64url "kind:sessionId:expiresAt:nonce">.<base64url HMAC-SHA256>`,
/// signed with a key of its own: it is bound to the session that asked for it and is checked
/// against that session on every use, so it opens the stream only while the session lives
/// (a logout or the session's end makes it 401). It is not stored: being unguessable is the
/// HMAC's work (256 bits under the server secret); the 128-bit nonce only makes every ticket
/// a different string. Its own key and prefix mean it never verifies as a bearer token, and a
/// bearer token never verifies as a ticket.
struct EventTicketSigner: Sendable {
    private let signed: SignedFields

    init(secret: ServerSecret) { signed = SignedFields(prefix: "gpe1.", key: secret.key(for: "event-ticket")) }

    /// A new ticket for the session behind `principal`, and when it stops working: the session's end.
    /// - Throws: when the system's random source fails.
    func issue(for principal: Principal) throws -> (ticket: String, expiresAt: Date) {
        let nonce = Base64URL.encode(try SecureRandom.bytes(16))
        // Whole seconds, as the login answer's `expiresAt` says them.
        let expiresAt = Int64(principal.sessionExpiresAt.timeIntervalSince1970.rounded(.down))
        return (signed.sign([principal.tokenKind.rawValue, principal.sessionId, String(expiresAt), nonce]),
                Date(timeIntervalSince1970: TimeInterval(expiresAt)))
    }

    /// The session a well-signed ticket names, as the claims its session is checked with; nil
    /// for anything else. Expiry is checked by the caller against its clock.
    func verify(_ ticket: String) -> TokenClaims? {
        guard let fields = signed.verify(ticket, count: 4), let kind = TokenClaims.Kind(rawValue: fields[0]),
              let expiresAt = Int64(fields[2]), Base64URL.decode(fields[3])?.count == 16
        else { return nil }
        return TokenClaims(kind: kind, sessionId: fields[1], expiresAt: expiresAt)
    }
}
