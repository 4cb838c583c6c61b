import Foundation
import GatePassClient
import GatePassConsole
import GatePassCore
import GatePassScanner
import QRCode

// The Visitors and On site tabs' calls (`VisitorsServices`, declared in GatePassConsole) over
// the client core: reads with an offline fallback, mutations sent at once (a registration
// with an idempotency key), the pass's QR drawn here with libqrencode, files written 0600.

/// What the cache keeps of one read: the value and whether the server had more.
struct CachedPage<Value: Codable>: Codable {
    var value: Value
    var hasMore: Bool
}

extension ClientCoreServices: VisitorsServices {
    /// Most full pages a list is followed for (a site with more people on it than this is not ours).
    static let onSitePageLimit = 20

    /// Every page of a list, following its cursor, up to `onSitePageLimit` pages; and whether
    /// the list went on past them. An empty page ends it (a cursor after it would only ask again).
    static func followPages<Item>(_ read: (String?) throws(ClientError) -> Page<Item>) throws(ClientError) -> (items: [Item], hasMore: Bool) {
        var items: [Item] = []
        var cursor: String?
        var pages = 0
        repeat {
            let page = try read(cursor)
            items += page.items
            cursor = page.items.isEmpty ? nil : page.nextCursor
            pages += 1
        } while cursor != nil && pages < onSitePageLimit
        return (items, cursor != nil)
    }
    static let onSiteLiveKey = "console_onsite_live"

    /// Reads with `fetch` and caches the answer under `key`; when the server cannot be
    /// reached, the cached answer (with its age) instead.
    func cachedRead<Value: Codable & Sendable>(_ key: String,
                                               _ fetch: (APIClient, Session) throws(ClientError) -> (Value, hasMore: Bool))
        throws(ConsoleError) -> ConsoleRead<Value> {
        typealias Cached = CachedPage<Value>
        do throws(ClientError) {
            let session = try core.session(on: nil)
            do throws(ClientError) {
                let (value, hasMore) = try fetch(APIClient(baseURL: session.server, transport: transport), session)
                let now = clock.now()
                try? core.store.cache(key, value: CanonicalJSON.encode(Cached(value: value, hasMore: hasMore)), at: now)
                return ConsoleRead(value: value, updatedAt: now, fromCache: false, hasMore: hasMore)
            } catch {
                guard error.isRetryable, let cached = try core.store.cached(key),
                      let decoded = try? JSONDecoder().decode(Cached.self, from: Data(cached.value))
                else { throw error }
                return ConsoleRead(value: decoded.value, updatedAt: cached.updatedAt, fromCache: true, hasMore: decoded.hasMore)
            }
        } catch {
            throw Self.consoleError(error, retryAfter: nil)
        }
    }

    /// Runs one call with the session's API; errors sorted for a screen.
    func call<Value>(_ body: (APIClient, Session) throws(ClientError) -> Value) throws(ConsoleError) -> Value {
        do throws(ClientError) {
            let session = try core.session(on: nil)
            return try body(APIClient(baseURL: session.server, transport: transport), session)
        } catch {
            throw Self.consoleError(error, retryAfter: nil)
        }
    }

    public func site() throws(ConsoleError) -> ConsoleRead<Organization> {
        try cachedRead("console_organization") { api, session throws(ClientError) in
            (try api.organization(token: session.token), false)
        }
    }

    public func visitors(_ query: VisitorListQuery) throws(ConsoleError) -> ConsoleRead<[Visitor]> {
        let key = "console_visitors:" + [query.fromDay, query.status?.rawValue ?? "", query.search ?? ""].joined(separator: "|")
        return try cachedRead(key) { api, session throws(ClientError) in
            let page = try api.visitors(token: session.token, status: query.status, search: query.search, from: query.fromDay,
                                        limit: ListBounds.maximumLimit)
            return (page.items, page.nextCursor != nil)
        }
    }

    /// Every user of the organization (the API's pages followed), cached for names offline.
    private func users() throws(ConsoleError) -> [UserSummary] {
        try cachedRead("console_users") { api, session throws(ClientError) in
            try Self.followPages { cursor throws(ClientError) in
                try api.users(token: session.token, limit: ListBounds.maximumLimit, cursor: cursor)
            }
        }.value
    }

    public func approvers() throws(ConsoleError) -> [ApproverChoice] {
        try users().filter { $0.profile.role == .approver && !$0.disabled }
            .map { ApproverChoice(id: $0.profile.id, name: $0.profile.name, email: $0.profile.email) }
            .sorted { ($0.name.lowercased(), $0.email) < ($1.name.lowercased(), $1.email) }
    }

    public func userNames() -> [String: String] {
        guard let users = try? users() else { return [:] }
        return Dictionary(users.map { ($0.profile.id, $0.profile.name) }, uniquingKeysWith: { first, _ in first })
    }

    public func register(_ registration: VisitorRegistration, idempotencyKey: String) throws(ConsoleError) -> Visitor {
        let body = APIClient.NewVisitor(
            name: registration.name, email: registration.email, phone: registration.phone, company: registration.company,
            purpose: registration.purpose, hostName: registration.hostName, hostEmail: registration.hostEmail,
            approverId: registration.approverId, requiresApproval: registration.requiresApproval,
            validFrom: registration.validFrom.map(Timestamp.init), validUntil: registration.validUntil.map(Timestamp.init),
            invite: registration.invite ? true : nil, confirmBlocked: registration.confirmBlocked ? true : nil)
        return try call { api, session throws(ClientError) in
            try api.createVisitor(token: session.token, body, idempotencyKey: idempotencyKey)
        }
    }

    public func cancelVisitor(id: String) throws(ConsoleError) -> Visitor {
        try call { api, session throws(ClientError) in try api.cancelVisitor(token: session.token, id: id) }
    }

    public func checkOutVisitor(id: String) throws(ConsoleError) -> Visitor {
        let key = UUID().uuidString
        let visitor = try call { api, session throws(ClientError) in
            try api.checkOutVisitor(token: session.token, id: id, idempotencyKey: key)
        }
        // The roll kept for offline reads must not list them until the next roll from the server.
        try? core.noteOnSite(visitor, inside: visitor.status == .checkedIn, at: clock.now())
        return visitor
    }

    public func inviteVisitor(id: String) throws(ConsoleError) -> String {
        let key = UUID().uuidString
        return try call { api, session throws(ClientError) in
            try api.inviteVisitor(token: session.token, id: id, idempotencyKey: key).passURL
        }
    }

    /// The pass's QR code as the server draws it: its signed GP2 text is read back from the
    /// printable pass (the console holds no pass key, and api.md has no route for the text),
    /// so the code on screen is the code on paper. A pass whose code is not this visitor's
    /// GP2 text is an error, not a code drawn anyway.
    public func passCode(for visitor: Visitor) throws(ConsoleError) -> PassCode {
        let png = try call { api, session throws(ClientError) in try api.passPNG(token: session.token, id: visitor.id) }
        let texts: Set<String>
        do {
            let image = try GreyImage(fileBytes: png, path: "pass.png")
            let decoder = try QRDecoder()
            texts = try image.withFrame(index: 0) { frame throws(ScannerError) in try decoder.decode(frame).texts }
        } catch {
            throw .failed("the server's pass could not be read: \(error)")
        }
        guard texts.count == 1, let text = texts.first, let signed = SignedPassText(parsing: text),
              signed.shortId == visitor.shortId
        else { throw .failed("the server's pass does not carry this visitor's signed code") }
        do {
            let code = try QRCode(text, errorCorrection: .quartile)
            let unsignedText = QRPayload.passText(for: visitor.shortId)
            let unsigned = try QRCode(unsignedText, errorCorrection: .quartile)
            return PassCode(text: text, size: code.width, modules: code.modules,
                            smaller: [PassCode(text: unsignedText, size: unsigned.width, modules: unsigned.modules)])
        } catch {
            throw .failed(error.description)
        }
    }

    public func savePassPNG(for visitor: Visitor) throws(ConsoleError) -> String {
        let png = try call { api, session throws(ClientError) in try api.passPNG(token: session.token, id: visitor.id) }
        return try writeNewFile(png, stem: "gatepass-pass-\(visitor.shortId.rawValue)", suffix: ".png")
    }

    /// The roll from the server, kept in the state file with the pass cache's; offline, the last
    /// one kept (by this tab or by the pass cache's sync) with what this device admitted and checked
    /// out since and what the event stream showed, its age that of the server's part.
    public func onSite() throws(ConsoleError) -> ConsoleRead<OnSiteRoll> {
        let live = liveOverlay(Self.onSiteLiveKey)
        do throws(ClientError) {
            let session = try core.session(on: nil)
            let asked = clock.now()
            do throws(ClientError) {
                let api = APIClient(baseURL: session.server, transport: transport)
                let (visitors, hasMore) = try Self.followPages { cursor throws(ClientError) in
                    try api.visitors(token: session.token, status: .checkedIn, limit: ListBounds.maximumLimit, cursor: cursor)
                }
                try core.saveOnSiteRoll(visitors, fetchedAt: asked)
                clearLiveOverlay(Self.onSiteLiveKey)
                return ConsoleRead(value: try core.onSiteRoll(), updatedAt: asked, fromCache: false, hasMore: hasMore)
            } catch {
                guard error.isRetryable else { throw error }
                let kept = try core.onSiteRoll()
                guard kept.serverRollAt != nil || !kept.entries.isEmpty || !live.arrived.isEmpty else { throw error }
                return ConsoleRead(value: Self.overlaid(kept, live), updatedAt: live.oldest(kept.serverRollAt), fromCache: true)
            }
        } catch {
            throw Self.consoleError(error, retryAfter: nil)
        }
    }

    /// The roll with the stream's arrivals and departures since it was read laid over it.
    static func overlaid(_ roll: OnSiteRoll, _ live: LiveListOverlay) -> OnSiteRoll {
        var roll = roll
        let arrived = live.arrived.map(\.visitor)
        let arrivedPasses = Set(arrived.map(\.shortId))
        roll.entries = roll.entries.filter { entry in
            !arrivedPasses.contains(entry.shortId) && !(entry.visitor.map { live.left.contains($0.id) } ?? false)
        } + arrived.map { OnSiteRoll.Entry(shortId: $0.shortId, visitor: $0, inSince: $0.checkedInAt, admittedHere: false) }
        return roll
    }

    public func noteLiveOnSite(_ change: LiveListChange) { noteLive(change, in: Self.onSiteLiveKey) }

    public func gateNames() -> [String: String] { historyCheckpointNames() }

    public func saveOnSiteRoll(_ text: String) throws(ConsoleError) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return try writeNewFile(Array(text.utf8), stem: "gatepass-on-site-\(formatter.string(from: clock.now()))Z", suffix: ".txt")
    }

    /// Writes `bytes` to a new file `stem` + `suffix` in the working folder with mode 0600;
    /// when that name is taken, `stem-2` + `suffix` and so on (an existing file is never replaced).
    func writeNewFile(_ bytes: [UInt8], stem: String, suffix: String) throws(ConsoleError) -> String {
        var folder = workingDirectory
        while folder.count > 1, folder.hasSuffix("/") { folder.removeLast() }
        for attempt in 1...100 {
            let path = (folder == "/" ? "" : folder) + "/" + stem + (attempt == 1 ? "" : "-\(attempt)") + suffix
            if try PrivateFile.write(bytes, to: path, overwrite: false) { return path }
        }
        throw .refused("\(folder) already holds 100 files named \(stem)…\(suffix); move some away")
    }
}
