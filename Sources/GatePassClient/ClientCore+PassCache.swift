import Foundation
import GatePassAPI
import GatePassCore
import GatePassCrypto

/// What one sync of the pass cache did.
public struct PassCacheSyncReport: Sendable, Equatable {
    /// True when the passes were loaded from no cursor (first load, a new day, a refused cursor).
    public var fullLoad = false
    /// Pages of `/expected` applied.
    public var pages = 0
    /// Passes received (items) and revocations received.
    public var items = 0
    public var revocations = 0
    /// What failed without failing the sync (the keys, the on-site list), in sentences.
    public var problems: [String] = []
    public var clockOffset: TimeInterval?
}

extension ClientCore {
    /// `/expected` pages hold at most this many items: a full page means more follow.
    static let expectedPageSize = ListBounds.maximumLimit
    /// A bound on pages per sync: it only stops a server that hands out full pages forever.
    static let maximumSyncPages = 1000

    /// Brings the pass cache up to date: today's passes (a full load the first time, on a new
    /// site-local day or when the server refuses the cursor; deltas otherwise), then the pass
    /// keys and the on-site list. Runs over its own HTTP handle when given one.
    /// - Parameters:
    ///   - timeZone: the site's zone, for "today".
    ///   - transport: the handle to use (the sync service's own); nil means the person's handle.
    /// - Throws: when `/expected` fails (the cache is unchanged and keeps its age); a 401
    ///   `REVOKED` is recorded first, so the gate stops.
    @discardableResult
    public func syncPassCache(timeZone: TimeZone, transport: (any HTTPTransport)? = nil) throws(ClientError) -> PassCacheSyncReport {
        let (server, scanner) = try scannerCredential()
        guard let scanner else { throw .local("this device has no scanner token: enrol it as a kiosk or log in as a user who may scan") }
        if let revoked = try store.scannerRevocation() { throw .revoked(revoked) }
        let api = APIClient(baseURL: server, transport: transport ?? self.transport)
        let token = scanner.scannerToken
        do throws(ClientError) {
            return try syncPassCache(api: api, token: token, server: server, timeZone: timeZone)
        } catch {
            if case .revoked(let message) = error { try noteRevoked(message) }
            throw error
        }
    }

    private func syncPassCache(api: APIClient, token: String, server: String, timeZone: TimeZone) throws(ClientError) -> PassCacheSyncReport {
        var report = PassCacheSyncReport()
        let status = try store.passCacheStatus()
        let today = Self.siteDay(clock.now(), in: timeZone)
        var delta = status.flatMap { $0.server == server && $0.day == today ? $0.cursor : nil }
        if let cursor = delta {
            do throws(ClientError) {
                var since = cursor
                for _ in 0..<Self.maximumSyncPages {
                    let (page, offset) = try expectedPage(api, token: token, since: since)
                    try store.applyPassCacheDelta(page, at: clock.now(), clockOffset: offset)
                    report.pages += 1; report.items += page.items.count; report.revocations += page.revoked.count
                    report.clockOffset = offset
                    guard page.passCount >= Self.expectedPageSize, page.cursor != since else { break }
                    since = page.cursor
                }
            } catch {
                // A cursor the server does not know (a restored or replaced server): load again.
                guard case .permanent(400, _, _) = error else { throw error }
                delta = nil
            }
        }
        if delta == nil {
            report = PassCacheSyncReport(fullLoad: true)
            var pages: [ExpectedPasses] = []
            var since: String?
            for _ in 0..<Self.maximumSyncPages {
                let (page, offset) = try expectedPage(api, token: token, since: since)
                pages.append(page)
                report.items += page.items.count; report.revocations += page.revoked.count
                report.clockOffset = offset
                guard page.passCount >= Self.expectedPageSize, page.cursor != since else { break }
                since = page.cursor
            }
            report.pages = pages.count
            try store.replacePassCache(server: server, day: today, pages: pages, at: clock.now(), clockOffset: report.clockOffset)
        }
        // The keys and the roll are worth having even when one of them fails: say so, go on.
        do throws(ClientError) {
            try store.savePassKeys(try api.passKeys(token: token))
        } catch {
            if case .revoked = error { throw error }
            report.problems.append("pass keys not refreshed: \(error)")
        }
        do throws(ClientError) {
            let asked = clock.now()
            try store.replaceOnSite(try onSite(api, token: token), fetchedAt: asked)
        } catch {
            if case .revoked = error { throw error }
            report.problems.append("on-site list not refreshed: \(error)")
        }
        return report
    }

    /// One `/expected` page and the clock offset its `Date` header shows.
    private func expectedPage(_ api: APIClient, token: String, since: String?) throws(ClientError) -> (ExpectedPasses, TimeInterval?) {
        let sent = clock.now()
        let response = try api.send(.scannerExpected, query: [("since", since)], token: token)
        let received = clock.now()
        let page = try APIClient.decode(ExpectedPasses.self, from: response.body)
        // The cursor is stored and sent back: an opaque token of printable ASCII, not whatever came.
        guard (1...255).contains(page.cursor.utf8.count), page.cursor.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .decoding("cursor: not a cursor (1 to 255 printable ASCII characters)")
        }
        return (page, ServerClock.offset(dateHeader: response.headers["date"], sent: sent, received: received))
    }

    private func onSite(_ api: APIClient, token: String) throws(ClientError) -> [Visitor] {
        var visitors: [Visitor] = []
        var cursor: String?
        for _ in 0..<Self.maximumSyncPages {
            let page = try api.onSite(scannerToken: token, limit: Self.expectedPageSize, cursor: cursor)
            visitors += page.items
            guard let next = page.nextCursor, next != cursor else { break }
            cursor = next
        }
        return visitors
    }

    /// `YYYY-MM-DD` of `instant` in `timeZone`.
    static func siteDay(_ instant: Date, in timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: instant)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }

    /// A visitor as an event on the stream showed it: a cancellation or rejection is honoured
    /// offline at once, before the next delta (api.md: a kiosk honours every revocation it was
    /// told of). Other changes wait for the delta, which carries them in order.
    /// - Returns: whether the event revoked a pass.
    @discardableResult
    public func notePassCacheEvent(_ visitor: Visitor) throws(ClientError) -> Bool {
        try store.recordPassCacheEvent(visitor)
    }

    public func passCacheStatus() throws(ClientError) -> PassCacheStatus? { try store.passCacheStatus() }

    /// When the pass cache was last brought up to date (its age is measured from it).
    public func passCacheSyncedAt() throws(ClientError) -> Date? { try store.passCacheSyncedAt() }

    // MARK: - Offline decisions

    /// Decides a scan from the pass cache (the server did not answer), and records an admission
    /// so a second scan of the pass is `ALREADY_CHECKED_IN`.
    /// - Parameters:
    ///   - checkpointId: the gate the kiosk's scanner token is bound to.
    public func decideOffline(code: String, scannedAt: Date, policy: OfflinePolicy) throws(ClientError) -> OfflineDecision {
        let (_, scanner) = try scannerCredential()
        let shortId = try? QRPayload.reference(from: code).shortId
        let snapshot = try store.passCacheSnapshot(for: shortId)
        let decision = OfflineDecision.decide(text: code, scannedAt: scannedAt, cache: snapshot, policy: policy,
                                              checkpointId: scanner?.checkpoint.id ?? "",
                                              verify: { Ed25519.verify($0, of: $1, publicKey: $2) })
        if decision.result == .checkedIn, let shortId = decision.shortId {
            try store.recordOfflineAdmission(decision, at: scannedAt)
            try store.recordRollChange(OnSiteRoll.LocalChange(shortId: shortId, visitor: decision.visitor, inside: true, at: scannedAt))
        }
        return decision
    }
}

/// The server's clock as its answers show it (the HTTP `Date` header, RFC 9110 IMF-fixdate,
/// which libmicrohttpd sends on every answer).
public enum ServerClock {
    /// A kiosk whose clock is further off than this says so (issue 13): offline decisions
    /// judge windows on the kiosk's clock.
    public static let tolerance: TimeInterval = 120

    /// How far the local clock is ahead of the server's: local midpoint of the exchange minus
    /// the header's time. The header has whole seconds, so the offset is good to about a second.
    public static func offset(dateHeader: String?, sent: Date, received: Date) -> TimeInterval? {
        guard let dateHeader, let serverTime = parse(dateHeader) else { return nil }
        let midpoint = sent.addingTimeInterval(received.timeIntervalSince(sent) / 2)
        return midpoint.timeIntervalSince(serverTime) - 0.5
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`; nil for anything else.
    public static func parse(_ text: String) -> Date? {
        guard text.utf8.count == 29, text.hasSuffix(" GMT") else { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text)
    }

    /// The sentence a kiosk shows when its clock is off, or nil when it is within tolerance.
    public static func warning(offset: TimeInterval?) -> String? {
        guard let offset, abs(offset) > tolerance else { return nil }
        let minutes = Int((abs(offset) / 60).rounded())
        return "this kiosk's clock is \(minutes) min \(offset > 0 ? "ahead of" : "behind") the server's; offline decisions depend on it — set the clock (NTP)"
    }
}
