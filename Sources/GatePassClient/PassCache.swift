import Foundation
import GatePassCore
import SQLite

/// The kiosk's pass cache in the state file (issue 13): today's passes from `/expected`, the
/// revocations, the organization's pass keys, the on-site list (the evacuation roll offline)
/// and what this kiosk admitted offline. It is what an offline decision is judged against.
///
/// Stored strictly: a value read back that this code does not understand is an error, never a
/// default (a guessed status or key could admit someone).
public struct PassCacheStatus: Sendable, Equatable {
    /// The server the cache was loaded from.
    public var server: String
    /// The site-local day (`YYYY-MM-DD`) of the last full load.
    public var day: String
    /// What the next `/expected?since=` takes.
    public var cursor: String
    /// When `/expected` last answered (the cache's age is measured from it).
    public var lastSyncAt: Date
    /// How far the kiosk's clock is ahead of the server's (negative: behind), from the `Date`
    /// header of the last answer; nil when the server sent none.
    public var clockOffset: TimeInterval?
    public var passes: Int
    public var revoked: Int
    public var keys: Int
    public var onSite: Int
    /// Passes admitted offline that the server does not show inside yet.
    public var admittedOffline: Int

    /// How old the cache is at `now`.
    public func age(at now: Date) -> TimeInterval { max(0, now.timeIntervalSince(lastSyncAt)) }
}

extension ClientDatabase {
    static let passCacheMigration = Migration("0002-pass-cache", """
        CREATE TABLE pass_cache_state (
            only INTEGER PRIMARY KEY CHECK (only = 1),
            server TEXT NOT NULL,
            day TEXT NOT NULL,
            cursor TEXT NOT NULL,
            last_sync_at INTEGER NOT NULL,
            clock_offset_ms INTEGER,
            keys TEXT
        );
        CREATE TABLE pass_cache_passes (
            short_id TEXT PRIMARY KEY,
            visitor TEXT,
            revoked INTEGER NOT NULL DEFAULT 0 CHECK (revoked IN (0, 1)),
            admitted_at INTEGER
        );
        CREATE TABLE pass_cache_on_site (position INTEGER PRIMARY KEY, visitor TEXT NOT NULL);
        """)

    /// The pass keys leave the pass cache's state row for a row of their own: a person's
    /// device that never synced a pass cache (`gatepass checkin`) keeps them too.
    static let passKeysMigration = Migration("0003-pass-keys", """
        INSERT INTO meta (key, value) SELECT 'pass_keys', keys FROM pass_cache_state WHERE keys IS NOT NULL;
        ALTER TABLE pass_cache_state DROP COLUMN keys;
        """)
    static let passKeysKey = "pass_keys"

    // MARK: - Reading

    public func passCacheStatus() throws(ClientError) -> PassCacheStatus? {
        try withConnection { connection in
            guard var status = try connection.queryFirst("""
                SELECT server, day, cursor, last_sync_at, clock_offset_ms FROM pass_cache_state
                """, [], { row in
                PassCacheStatus(server: try row.string(0), day: try row.string(1), cursor: try row.string(2),
                                lastSyncAt: try row.date(3),
                                clockOffset: try row.optionalInt64(4).map { Double($0) / 1000 },
                                passes: 0, revoked: 0, keys: 0,
                                onSite: 0, admittedOffline: 0)
            }) else { return nil }
            status.keys = try Self.decodedKeys(try Self.passKeysText(connection)).count
            status.passes = Int(try connection.scalarInt("SELECT COUNT(*) FROM pass_cache_passes WHERE visitor IS NOT NULL") ?? 0)
            status.revoked = Int(try connection.scalarInt("SELECT COUNT(*) FROM pass_cache_passes WHERE revoked = 1") ?? 0)
            status.admittedOffline = Int(try connection.scalarInt(
                "SELECT COUNT(*) FROM pass_cache_passes WHERE admitted_at IS NOT NULL") ?? 0)
            status.onSite = Int(try connection.scalarInt("SELECT COUNT(*) FROM pass_cache_on_site") ?? 0)
            return status
        }
    }

    /// When `/expected` last answered; nil before the first load. One row read: it is on the
    /// path of every offline decision (the line shows the cache's age).
    public func passCacheSyncedAt() throws(ClientError) -> Date? {
        try withConnection { connection in
            try connection.queryFirst("SELECT last_sync_at FROM pass_cache_state", []) { try $0.date(0) }
        }
    }

    /// What an offline decision needs, narrowed to one short id (nil: the whole cache): the
    /// decision only ever looks at the scanned pass, and a gate must not decode 10,000 passes
    /// per scan.
    public func passCacheSnapshot(for shortId: ShortID? = nil) throws(ClientError) -> OfflineCacheSnapshot {
        try withConnection { connection in
            var snapshot = OfflineCacheSnapshot()
            snapshot.keys = try Self.decodedKeys(try Self.passKeysText(connection))
            let rows = "SELECT short_id, visitor, revoked, admitted_at FROM pass_cache_passes"
            let read = { (row: Row) throws in
                let id = try row.parsed(0, as: "short id", ShortID.init)
                if let text = try row.optionalString(1) {
                    let visitor = try Self.decodedVisitor(text)
                    guard visitor.shortId == id else { throw row.unreadable(1, "holds the visitor of another short id") }
                    snapshot.visitors[id] = visitor
                }
                if try row.bool(2) { snapshot.revoked.insert(id) }
                if try row.optionalInt64(3) != nil { snapshot.admittedSinceSync.insert(id) }
            }
            if let shortId {
                _ = try connection.queryFirst(rows + " WHERE short_id = ?", [shortId.rawValue], read)
            } else {
                _ = try connection.query(rows, [], read)
            }
            return snapshot
        }
    }

    // MARK: - Writing

    /// Replaces the passes with a full load (every page from no cursor), in one transaction, so
    /// a load that fails half-way leaves the old cache whole. Admissions made offline and
    /// revocations survive a reload of the same day (the server may not have the admissions
    /// yet; a revocation ends only when its pass comes back in `items`), not a new day.
    func replacePassCache(server: String, day: String, pages: [ExpectedPasses], at now: Date,
                          clockOffset: TimeInterval?) throws(ClientError) {
        try transaction { connection in
            let sameDay = try connection.queryFirst("SELECT day, server FROM pass_cache_state", []) {
                (try $0.string(0), try $0.string(1))
            }.map { $0.0 == day && $0.1 == server } ?? false
            if sameDay {
                try connection.execute("DELETE FROM pass_cache_passes WHERE admitted_at IS NULL AND revoked = 0")
                try connection.execute("UPDATE pass_cache_passes SET visitor = NULL WHERE revoked = 0")
            } else {
                try connection.execute("DELETE FROM pass_cache_passes")
            }
            for page in pages { try Self.apply(page, connection) }
            try Self.saveState(server: server, day: day, cursor: pages.last?.cursor ?? "", at: now, clockOffset: clockOffset,
                               replacingDay: true, connection)
        }
    }

    /// Applies one delta page and its cursor together (a crash between pages resumes from the
    /// last applied one).
    func applyPassCacheDelta(_ page: ExpectedPasses, at now: Date, clockOffset: TimeInterval?) throws(ClientError) {
        try transaction { connection in
            try Self.apply(page, connection)
            try Self.saveState(server: nil, day: nil, cursor: page.cursor, at: now, clockOffset: clockOffset, replacingDay: false,
                               connection)
        }
    }

    func savePassKeys(_ keys: PassKeyList) throws(ClientError) {
        try setMeta(Self.passKeysKey, CanonicalJSON.string(keys))
    }

    /// The pass keys this device was last given; empty before the first fetch.
    public func passKeys() throws(ClientError) -> [PassKey] {
        try withConnection { try Self.decodedKeys(try Self.passKeysText($0)) }
    }

    private static func passKeysText(_ connection: Connection) throws -> String? {
        try connection.queryFirst("SELECT value FROM meta WHERE key = ?", [passKeysKey]) { try $0.string(0) }
    }

    /// Records an offline admission: the short id is admitted since the last sync (a second
    /// scan is `ALREADY_CHECKED_IN`) and a cached visitor is stored as the decision left it.
    func recordOfflineAdmission(_ decision: OfflineDecision, at now: Date) throws(ClientError) {
        guard let shortId = decision.shortId else { return }
        try withConnection { connection in
            try connection.execute("""
                INSERT INTO pass_cache_passes (short_id, visitor, revoked, admitted_at) VALUES (?, ?, 0, ?)
                ON CONFLICT (short_id) DO UPDATE SET admitted_at = excluded.admitted_at,
                    visitor = COALESCE(excluded.visitor, pass_cache_passes.visitor)
                """, [shortId.rawValue, decision.visitor.map { CanonicalJSON.string($0) }, now.millisecondsSince1970])
        }
    }

    /// A visitor an event showed cancelled or rejected: stored at once as the event shows it
    /// (these statuses are final, so no later delta can be older news); a cancellation is also
    /// revoked, as `/expected` names it. The table then refuses the pass.
    /// - Returns: whether it was a revocation.
    @discardableResult
    func recordPassCacheEvent(_ visitor: Visitor) throws(ClientError) -> Bool {
        guard visitor.status == .cancelled || visitor.status == .rejected else { return false }
        try withConnection { connection in
            try connection.execute("""
                INSERT INTO pass_cache_passes (short_id, visitor, revoked, admitted_at) VALUES (?, ?, ?, NULL)
                ON CONFLICT (short_id) DO UPDATE SET visitor = excluded.visitor, revoked = MAX(pass_cache_passes.revoked, excluded.revoked)
                """, [visitor.shortId.rawValue, CanonicalJSON.string(visitor), visitor.status == .cancelled])
        }
        return true
    }

    /// Items replace cached visitors and end their revocation; `revoked` short ids are revoked.
    /// An admission made offline is forgotten once the server shows the visitor inside (or out).
    private static func apply(_ page: ExpectedPasses, _ connection: Connection) throws {
        for visitor in page.items {
            let inside = visitor.status == .checkedIn || visitor.status == .checkedOut
            try connection.execute("""
                INSERT INTO pass_cache_passes (short_id, visitor, revoked, admitted_at) VALUES (?, ?, 0, NULL)
                ON CONFLICT (short_id) DO UPDATE SET visitor = excluded.visitor, revoked = 0,
                    admitted_at = CASE WHEN ? THEN NULL ELSE pass_cache_passes.admitted_at END
                """, [visitor.shortId.rawValue, CanonicalJSON.string(visitor), inside])
        }
        for text in page.revoked {
            guard let shortId = ShortID(text), shortId.rawValue == text else {
                throw ClientError.decoding("revoked: \(TerminalText.visible(String(text.prefix(16)))) is not a short id")
            }
            try connection.execute("""
                INSERT INTO pass_cache_passes (short_id, visitor, revoked, admitted_at) VALUES (?, NULL, 1, NULL)
                ON CONFLICT (short_id) DO UPDATE SET revoked = 1
                """, [shortId.rawValue])
        }
    }

    private static func saveState(server: String?, day: String?, cursor: String, at now: Date, clockOffset: TimeInterval?,
                                  replacingDay: Bool, _ connection: Connection) throws {
        let offset = clockOffset.map { Int64(($0 * 1000).rounded()) }
        if replacingDay, let server, let day {
            try connection.execute("""
                INSERT INTO pass_cache_state (only, server, day, cursor, last_sync_at, clock_offset_ms) VALUES (1, ?, ?, ?, ?, ?)
                ON CONFLICT (only) DO UPDATE SET server = excluded.server, day = excluded.day, cursor = excluded.cursor,
                    last_sync_at = excluded.last_sync_at, clock_offset_ms = excluded.clock_offset_ms
                """, [server, day, cursor, now.millisecondsSince1970, offset])
        } else {
            try connection.execute("UPDATE pass_cache_state SET cursor = ?, last_sync_at = ?, clock_offset_ms = ?",
                                   [cursor, now.millisecondsSince1970, offset])
        }
    }

    static func decodedVisitor(_ text: String) throws -> Visitor {
        do {
            return try JSONDecoder().decode(Visitor.self, from: Data(text.utf8))
        } catch {
            throw ClientError.local("the state file's pass cache holds a visitor this version cannot read (\(error)); "
                                    + "delete the state folder's pass cache or the state folder")
        }
    }

    static func decodedKeys(_ text: String?) throws -> [PassKey] {
        guard let text else { return [] }
        do {
            return try JSONDecoder().decode(PassKeyList.self, from: Data(text.utf8)).keys
        } catch {
            throw ClientError.local("the state file's pass keys are unreadable (\(error)); delete the state folder")
        }
    }
}
