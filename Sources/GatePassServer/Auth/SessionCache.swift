import Foundation
import GatePassCore

/// Credentials already verified and their session rows (with their users) already read, so a
/// request whose token was seen a moment ago is checked without a signature check or a query
/// (issue 15: the two were most of a cached stats answer's time).
///
/// Correctness — a logout or a disable ends the session at once, on every thread:
/// - Every transaction that changes a session or a user row says so (`Transaction
///   .changedPrincipals`), and `ServerDatabase` bumps its principal generation after that
///   commit and before the change's own answer goes out. On PostgreSQL the bump is announced
///   to the other servers (`StoreAnnouncement.principalsChanged`), and while they cannot hear
///   announcements they use no cache at all.
/// - An entry is stored under the generation read *before* the transaction that read the
///   row began, and used only while the generation is unchanged. A row read before a commit
///   and stored after its bump is therefore stored under the old generation and never used.
/// - Only the row is cached, never the verdict: expiry, revocation and a disabled user are
///   judged against the request's own clock each time (`Sessions.principal`).
/// - An entry lives at most `maximumAge` on the server's clock, a backstop for a change
///   made to the database by something other than a Gate Pass server (an operator's SQL).
///
/// Entries are keyed by the credential's whole text, as sent: only a text whose signature was
/// verified is ever stored, and a signature cannot stop being valid (its expiry is checked by
/// the caller on every use). Unknown sessions are not cached: a token for one is rare, and
/// each is checked afresh.
final class SessionCache: Sendable {
    private struct Entry: Sendable {
        var readAt: Date
        var claims: TokenClaims
        var session: StoredSession
    }

    static let maximumAge: TimeInterval = 5
    /// More entries than this, and the stale ones go; still more, and all go (a flood of
    /// distinct tokens must not grow the server's memory).
    static let capacity = 10_000

    private let entries = GenerationCache<PresentedCredential, Entry>(capacity: SessionCache.capacity)

    /// The claims and the row stored for `credential` while the generation was `generation`,
    /// if it still is and the row was read no more than `maximumAge` before `now`.
    func lookup(_ credential: PresentedCredential, generation: UInt64,
                now: Date) -> (claims: TokenClaims, session: StoredSession)? {
        entries.lookup(credential, generation: generation) { entry in
            entry.readAt <= now && now.timeIntervalSince(entry.readAt) < Self.maximumAge
        }.map { ($0.claims, $0.session) }
    }

    /// Keeps `session`, read in a transaction that began while the generation was
    /// `generation`, for `credential`, whose signature gave `claims`.
    func store(_ session: StoredSession, claims: TokenClaims, for credential: PresentedCredential,
               generation: UInt64, readAt: Date) {
        entries.store(Entry(readAt: readAt, claims: claims, session: session), for: credential, generation: generation)
    }

    var count: Int { entries.count }
}

/// A credential as a request presents it, not yet verified: a bearer token or an event ticket
/// (signed with different keys, so the two never share an entry).
struct PresentedCredential: Hashable, Sendable {
    enum Kind: Hashable, Sendable { case bearer, ticket }
    var kind: Kind
    var text: String
}
