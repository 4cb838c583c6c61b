import Foundation
import GatePassCore
import SQLite

/// The evacuation roll kept in the state file beside the pass cache: the server's last roll
/// (`pass_cache_on_site`, with when it was fetched) and what this device admitted and checked
/// out since (`on_site_changes`), so `kiosk roll` and the console's On site tab are right when
/// they are first opened with the server away.
extension ClientDatabase {
    static let onSiteRollMigration = Migration("0004-on-site-roll", """
        CREATE TABLE on_site_roll_state (only INTEGER PRIMARY KEY CHECK (only = 1), fetched_at INTEGER NOT NULL);
        INSERT INTO on_site_roll_state (only, fetched_at) SELECT 1, last_sync_at FROM pass_cache_state;
        CREATE TABLE on_site_changes (
            short_id TEXT PRIMARY KEY,
            visitor TEXT,
            inside INTEGER NOT NULL CHECK (inside IN (0, 1)),
            at INTEGER NOT NULL
        );
        """)

    /// Replaces the server's roll with one fetched at `fetchedAt` (when the request was sent),
    /// and forgets the changes it shows: those made before it whose outbox entry is no longer
    /// waiting (a scan still queued is not in any roll of the server's yet).
    func replaceOnSite(_ visitors: [Visitor], fetchedAt: Date) throws(ClientError) {
        try transaction { connection in
            try connection.execute("DELETE FROM pass_cache_on_site")
            for (position, visitor) in visitors.enumerated() {
                try connection.execute("INSERT INTO pass_cache_on_site (position, visitor) VALUES (?, ?)",
                                       [Int64(position), CanonicalJSON.string(visitor)])
            }
            try connection.execute("""
                INSERT INTO on_site_roll_state (only, fetched_at) VALUES (1, ?)
                ON CONFLICT (only) DO UPDATE SET fetched_at = excluded.fetched_at
                """, [fetchedAt.millisecondsSince1970])
            let waiting = try Self.shortIdsWaitingInOutbox(connection)
            let shown = try connection.query("SELECT short_id FROM on_site_changes WHERE at <= ?", [fetchedAt.millisecondsSince1970]) {
                try $0.string(0)
            }
            for shortId in shown where !waiting.contains(shortId) {
                try connection.execute("DELETE FROM on_site_changes WHERE short_id = ?", [shortId])
            }
        }
    }

    /// Records that this device admitted (`inside`) or checked out the pass `shortId` at `at`;
    /// a later change of the same pass replaces an earlier one, never the reverse.
    func recordRollChange(_ change: OnSiteRoll.LocalChange) throws(ClientError) {
        try withConnection { connection in
            try connection.execute("""
                INSERT INTO on_site_changes (short_id, visitor, inside, at) VALUES (?, ?, ?, ?)
                ON CONFLICT (short_id) DO UPDATE SET visitor = COALESCE(excluded.visitor, on_site_changes.visitor),
                    inside = excluded.inside, at = excluded.at
                WHERE excluded.at >= on_site_changes.at
                """, [change.shortId.rawValue, change.visitor.map { CanonicalJSON.string($0) }, change.inside,
                      change.at.millisecondsSince1970])
        }
    }

    /// The server's last roll, when it was fetched, and this device's changes since.
    public func onSiteRoll() throws(ClientError) -> OnSiteRoll {
        try withConnection { connection in
            let server = try connection.query("SELECT visitor FROM pass_cache_on_site ORDER BY position", []) {
                try Self.decodedVisitor(try $0.string(0))
            }
            let fetchedAt = try connection.queryFirst("SELECT fetched_at FROM on_site_roll_state", []) { try $0.date(0) }
            let changes = try connection.query("SELECT short_id, visitor, inside, at FROM on_site_changes", []) { row in
                let shortId = try row.parsed(0, as: "short id", ShortID.init)
                let visitor = try row.optionalString(1).map(Self.decodedVisitor)
                if let visitor, visitor.shortId != shortId { throw row.unreadable(1, "holds the visitor of another short id") }
                return OnSiteRoll.LocalChange(shortId: shortId, visitor: visitor, inside: try row.bool(2), at: try row.date(3))
            }
            return OnSiteRoll.combine(server: server, serverRollAt: fetchedAt, changes: changes)
        }
    }

    /// The short ids of the check-ins and check-outs still waiting in the outbox.
    private static func shortIdsWaitingInOutbox(_ connection: Connection) throws -> Set<String> {
        struct Body: Decodable { var shortId: String }
        let bodies = try connection.query("SELECT body FROM outbox WHERE kind IN ('checkin', 'checkout')", []) {
            try $0.optionalBlob(0)
        }
        return Set(bodies.compactMap { body in
            body.flatMap { try? JSONDecoder().decode(Body.self, from: Data($0)) }
                .flatMap { try? QRPayload.reference(from: $0.shortId).shortId.rawValue }
        })
    }
}

extension ClientCore {
    /// The evacuation roll as this device knows it: the server's last roll (fetched by the pass
    /// cache's sync or by an online read of the roll) with what this device admitted and checked
    /// out since. Reads the state file only.
    public func onSiteRoll() throws(ClientError) -> OnSiteRoll { try store.onSiteRoll() }

    /// Keeps a roll just read from the server (by the console, with the login token).
    /// - Parameter fetchedAt: when the request was sent: a change made after it may be missing.
    public func saveOnSiteRoll(_ visitors: [Visitor], fetchedAt: Date) throws(ClientError) {
        try store.replaceOnSite(visitors, fetchedAt: fetchedAt)
    }

    /// Notes a visitor this device saw go in or out (an answer of the server, or a decision of
    /// its own while the server is away), for the roll.
    public func noteOnSite(_ visitor: Visitor, inside: Bool, at time: Date) throws(ClientError) {
        try store.recordRollChange(OnSiteRoll.LocalChange(shortId: visitor.shortId, visitor: visitor, inside: inside, at: time))
    }

    /// Notes the answer of a check-in or check-out made from this device for the roll: best
    /// effort, the answer stands whatever the state file does.
    func noteOnSite(answer outcome: MutationOutcome, checkOutCode: String? = nil) {
        switch outcome {
        case .applied(let response):
            // A check-in's answer has a `scanId`, a check-out's has none: the two never mix up.
            if let answer = try? JSONDecoder().decode(CheckInAnswer.self, from: Data(response.body)) {
                guard answer.result == .checkedIn || answer.result == .alreadyCheckedIn else { return }
                try? noteOnSite(answer.visitor, inside: true, at: clock.now())
            } else if let answer = try? JSONDecoder().decode(CheckOutAnswer.self, from: Data(response.body)) {
                try? noteOnSite(answer.visitor, inside: false, at: clock.now())
            }
        case .queued, .needsLogin:
            // A check-out waiting in the outbox: the guard saw them leave.
            guard let checkOutCode, let shortId = try? QRPayload.reference(from: checkOutCode).shortId else { return }
            try? store.recordRollChange(OnSiteRoll.LocalChange(shortId: shortId, visitor: nil, inside: false, at: clock.now()))
        case .refused:
            return
        }
    }
}
