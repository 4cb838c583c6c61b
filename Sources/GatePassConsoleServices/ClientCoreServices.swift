import Foundation
import GatePassClient
import GatePassConsole
import GatePassCore

/// The console's services backed by the client core: the session and cache of one state
/// folder, mutations through its outbox.
///
/// The server URL typed on the login screen is kept in the state file's meta table under
/// `console_server`, so each state folder remembers its own server.
///
/// Used from the console's one UI thread; the core and the store do their own locking.
public final class ClientCoreServices: ConsoleServices {
    /// The meta key the login screen's server URL is saved under.
    public static let serverKey = "console_server"

    public let core: ClientCore
    /// Internal so the per-screen service extensions (scan, history, more) can make calls of their own.
    let transport: RetryAfterRecorder
    private let defaultServer: String?
    let clock: any WallClock
    /// Where the Visitors tab saves passes and the On site tab its exports.
    public let workingDirectory: String
    /// True while the shell's outbox service finds the server unreachable: check-ins are then
    /// queued without a connect attempt. Set by the shell; false by default.
    public var knownOffline: () -> Bool = { false }

    /// - Parameters:
    ///   - core: the client core of the state folder.
    ///   - transport: the HTTP transport the core was made with; the services make a few
    ///     calls of their own with it (sending a code, a visitor's approval context).
    ///   - defaultServer: offered when neither the state folder nor a session names a server
    ///     (the `GATEPASS_SERVER` environment variable).
    ///   - clock: stamps the cached visitor details.
    ///   - workingDirectory: where saved passes and exported rolls are written (the folder
    ///     the console was started in).
    public init(core: ClientCore, transport: any HTTPTransport, defaultServer: String?, clock: any WallClock = SystemWallClock(),
                workingDirectory: String = FileManager.default.currentDirectoryPath) {
        self.core = core
        self.workingDirectory = workingDirectory
        self.transport = RetryAfterRecorder(base: transport)
        self.defaultServer = defaultServer.flatMap { $0.isEmpty ? nil : $0 }
        self.clock = clock
    }

    // MARK: - Session and server

    public func currentUser() -> ConsoleUser? {
        guard let session = try? core.session() else { return nil }
        return ConsoleUser(id: session.user.id, name: session.user.name, email: session.user.email, role: session.user.role, server: session.server,
                           mayScan: session.user.principalKind.mayScan)
    }

    public func serverURL() -> String {
        if let saved = try? core.store.meta(Self.serverKey), !saved.isEmpty { return saved }
        if let session = try? core.session() { return session.server }
        return defaultServer ?? ""
    }

    public func setServerURL(_ url: String) throws(ConsoleError) {
        var server = url.trimmingCharacters(in: .whitespaces)
        guard server.hasPrefix("http://") || server.hasPrefix("https://") else {
            throw .refused("the server must be an http:// or https:// URL")
        }
        while server.hasSuffix("/") { server.removeLast() }
        do {
            try core.store.setMeta(Self.serverKey, server)
        } catch {
            throw Self.consoleError(error, retryAfter: nil)
        }
    }

    // MARK: - Login

    public func sendCode(server: String, email: String) throws(ConsoleError) {
        // The core's sendCode drops the response headers; Retry-After is the wait a person
        // needs to see, so the same request is made here through a transport that keeps it.
        transport.reset()
        do {
            try APIClient(baseURL: server, transport: transport).sendOTP(email: email)
        } catch {
            throw Self.consoleError(error, retryAfter: transport.lastRetryAfter)
        }
    }

    public func logIn(server: String, email: String, code: String, allowPurge: Bool) throws(ConsoleError) -> ConsoleUser {
        do {
            let check = try core.identityCheck(server: server, email: email)
            if check.changesIdentity, check.entriesAtRisk > 0, !allowPurge {
                throw ConsoleError.identityChange(entriesAtRisk: check.entriesAtRisk,
                                                  previousEmail: check.previous?.email ?? "the previous user",
                                                  previousServer: check.previous?.server ?? "the previous server")
            }
            let outcome = try core.login(server: server, email: email, otp: code, allowPurge: allowPurge)
            let user = outcome.session.user
            return ConsoleUser(id: user.id, name: user.name, email: user.email, role: user.role, server: outcome.session.server,
                               mayScan: user.principalKind.mayScan)
        } catch let error as ConsoleError {
            throw error
        } catch let error as ClientError {
            throw Self.consoleError(error, retryAfter: nil)
        } catch {
            throw .failed(String(describing: error))
        }
    }

    // MARK: - Reads

    public func pendingApprovals() throws(ConsoleError) -> ConsoleRead<[Visitor]> {
        let live = liveOverlay(Self.liveApprovalsKey)
        do {
            let read = try core.approvals()
            guard read.fromCache else {
                clearLiveOverlay(Self.liveApprovalsKey)
                return ConsoleRead(value: read.value.items, updatedAt: read.updatedAt, fromCache: false,
                                   hasMore: read.value.nextCursor != nil)
            }
            return ConsoleRead(value: live.applied(to: read.value.items), updatedAt: live.oldest(read.updatedAt),
                               fromCache: true, hasMore: read.value.nextCursor != nil)
        } catch {
            // Never read from the server, but the stream brought some: those are what was shown.
            guard error.isRetryable, !live.arrived.isEmpty else { throw Self.consoleError(error, retryAfter: nil) }
            return ConsoleRead(value: live.applied(to: []), updatedAt: live.oldest(nil), fromCache: true)
        }
    }

    /// The cache key of the stream's changes to the approvals list since its last read.
    static let liveApprovalsKey = "console_approvals_live"

    public func noteLiveApproval(_ change: LiveListChange) { noteLive(change, in: Self.liveApprovalsKey) }

    /// What the cache keeps of a visitor detail (VisitorDetail itself is not Codable).
    private struct CachedDetail: Codable {
        var visitor: Visitor
        var context: ApprovalContext?
    }

    public func visitorDetail(id: String) throws(ConsoleError) -> ConsoleRead<VisitorDetail> {
        let cacheKey = "console_visitor:\(id)"
        do throws(ClientError) {
            let session = try core.session(on: nil)
            let api = APIClient(baseURL: session.server, transport: transport)
            do throws(ClientError) {
                let detail: CachedDetail
                if session.user.role == .approver {
                    let answer = try api.approverVisitor(token: session.token, id: id)
                    detail = CachedDetail(visitor: answer.visitor, context: answer.context)
                } else {
                    detail = CachedDetail(visitor: try api.visitor(token: session.token, id: id), context: nil)
                }
                let now = clock.now()
                try? core.store.cache(cacheKey, value: CanonicalJSON.encode(detail), at: now)
                return ConsoleRead(value: VisitorDetail(visitor: detail.visitor, context: detail.context), updatedAt: now,
                                   fromCache: false)
            } catch {
                guard error.isRetryable, let cached = try core.store.cached(cacheKey),
                      let detail = try? JSONDecoder().decode(CachedDetail.self, from: Data(cached.value))
                else { throw error }
                return ConsoleRead(value: VisitorDetail(visitor: detail.visitor, context: detail.context),
                                   updatedAt: cached.updatedAt, fromCache: true)
            }
        } catch {
            throw Self.consoleError(error, retryAfter: nil)
        }
    }

    // MARK: - Decisions

    public func decide(_ decision: ApprovalDecision, visitorId: String, note: String?) -> DecisionOutcome {
        switch mutation({ () throws(ClientError) in try core.decide(decision, visitorId: visitorId, note: note) },
                        unreadable: "the decision was sent, but the server's answer could not be read (%@); open the visitor again to see where it stands",
                        decode: { try APIClient.decode(Visitor.self, from: $0.body) }) {
        case .applied(let visitor): .applied(visitor)
        case .queued: .queued
        case .refused(let message): .refused(message)
        case .needsLogin(let message): .needsLogin(message)
        }
    }

    /// What became of a mutation sent through the outbox, with the server's answer decoded.
    enum MutationResult<Value> {
        case applied(Value), queued, refused(String), needsLogin(String)
    }

    /// Sends a mutation through the client core and sorts the outcome for a screen: every
    /// failure becomes an outcome (a screen never handles `ClientError`). `unreadable` is the
    /// refusal said when the server applied it but its answer cannot be decoded (`%@` is the
    /// decoding error): the change happened, so it must not read as a plain refusal.
    func mutation<Value>(_ send: () throws(ClientError) -> ClientCore.MutationOutcome, unreadable: String,
                         decode: (HTTPResponse) throws -> Value) -> MutationResult<Value> {
        do {
            switch try send() {
            case .applied(let response):
                do {
                    return .applied(try decode(response))
                } catch {
                    return .refused(unreadable.replacingOccurrences(of: "%@", with: "\(error)"))
                }
            case .queued:
                return .queued
            case .refused(_, _, let message):
                return .refused(message)
            case .needsLogin(_, let message):
                return .needsLogin(message)
            }
        } catch {
            if case .unauthorized(let message) = error { return .needsLogin(message) }
            return .refused(Self.consoleError(error, retryAfter: nil).sentence)
        }
    }

    // MARK: - Live lists offline

    /// What the stream changed in a live list (the approvals queue, the on-site roll) since
    /// the list was last read from the server: kept beside the cached list (which is written
    /// only by a read), so the list offline is the list as it was shown, and its age the age
    /// of its oldest part.
    struct LiveListOverlay: Codable {
        struct Arrival: Codable {
            var visitor: Visitor
            /// When the stream brought it (seconds since 1970).
            var seenAt: Double
        }
        /// Newest last.
        var arrived: [Arrival] = []
        /// Visitors that left the list since the read.
        var left: Set<String> = []

        mutating func note(_ change: LiveListChange, at now: Date) {
            switch change {
            case .arrived(let visitor):
                arrived.removeAll { $0.visitor.id == visitor.id }
                arrived.append(Arrival(visitor: visitor, seenAt: now.timeIntervalSince1970))
                left.remove(visitor.id)
            case .left(let id):
                arrived.removeAll { $0.visitor.id == id }
                left.insert(id)
            }
        }

        /// `listed` without the visitors that left, with the arrivals (newest first) in their newer version.
        func applied(to listed: [Visitor]) -> [Visitor] {
            let arrivedIds = Set(arrived.map(\.visitor.id))
            return arrived.reversed().map(\.visitor) + listed.filter { !left.contains($0.id) && !arrivedIds.contains($0.id) }
        }

        /// The age of the oldest part: the list read (when there is one) or the first arrival.
        func oldest(_ listRead: Date?) -> Date {
            let first = arrived.map(\.seenAt).min().map { Date(timeIntervalSince1970: $0) }
            return [listRead, first].compactMap { $0 }.min() ?? Date(timeIntervalSince1970: 0)
        }
    }

    func liveOverlay(_ key: String) -> LiveListOverlay {
        guard let cached = try? core.store.cached(key),
              let overlay = try? JSONDecoder().decode(LiveListOverlay.self, from: Data(cached.value)) else { return LiveListOverlay() }
        return overlay
    }

    /// After a read from the server: the list is newer than every change the stream brought before it.
    func clearLiveOverlay(_ key: String) {
        try? core.store.cache(key, value: CanonicalJSON.encode(LiveListOverlay()), at: clock.now())
    }

    func noteLive(_ change: LiveListChange, in key: String) {
        var overlay = liveOverlay(key)
        let now = clock.now()
        overlay.note(change, at: now)
        // Best effort, like every cache write: a full disk must not stop the live list.
        try? core.store.cache(key, value: CanonicalJSON.encode(overlay), at: now)
    }

    // MARK: - Errors

    static func consoleError(_ error: ClientError, retryAfter: Int?) -> ConsoleError {
        switch error {
        case .offline(let detail): .offline(detail)
        case .unauthorized(let message), .revoked(let message): .unauthorized(message)
        case .rateLimited(let seconds, let message): .throttled(retryAfterSeconds: seconds ?? retryAfter, message: message)
        case .permanent(_, "BLOCKLIST_MATCH", let message): .blocklistMatch(message)
        case .permanent(_, _, let message): .refused(message)
        case .transient, .decoding, .local: .failed(error.description)
        }
    }
}

/// Passes requests through and remembers the last `Retry-After` in seconds (the client
/// core's error taxonomy has no room for it). Guarded by a mutex: `HTTPTransport` is Sendable.
final class RetryAfterRecorder: HTTPTransport {
    private let base: any HTTPTransport
    private let retryAfter = Locked<Int?>(nil)

    init(base: any HTTPTransport) { self.base = base }

    func separateHandle() -> any HTTPTransport { RetryAfterRecorder(base: base.separateHandle()) }

    var lastRetryAfter: Int? { retryAfter.withLock { $0 } }
    func reset() { retryAfter.withLock { $0 = nil } }

    func perform(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
        let response = try base.perform(request)
        let seconds = response.headers["retry-after"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        retryAfter.withLock { $0 = seconds }
        return response
    }
}
