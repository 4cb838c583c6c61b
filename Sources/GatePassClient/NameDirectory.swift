import Foundation
import GatePassCore

/// The names behind the ids the API's lists carry (a Scan names no one, by contract): visitors
/// by id, checkpoints from their list, users from theirs — each asked once per run and only when
/// a line needs it. A name the caller may not read (a scanner's history: no user list), one that
/// is gone, and every name once the server has stopped answering (a list read from the cache
/// offline) is nil, and the line shows what it can; a session that ended is thrown.
///
///     let names = NameDirectory(core)
///     try names.checkpoint(scan.checkpointId)   // "Main gate"
public final class NameDirectory {
    private let core: ClientCore
    private var visitors: [String: String?] = [:]
    private var checkpoints: [String: String]?
    private var users: [String: String]?
    /// Set at the first request the server did not answer: no more are sent this run.
    private var unreachable = false

    public init(_ core: ClientCore) { self.core = core }

    /// The most pages of a list read for names: far beyond a site's users, so reaching it means
    /// a server that hands out cursors forever (the names left unknown then).
    static let maximumPages = 100

    /// The visitor's name (`GET /api/visitors/:id`), nil when it is not readable or gone.
    public func visitor(_ id: String) throws(ClientError) -> String? {
        if let known = visitors[id] { return known }
        let name = try unlessRefused { () throws(ClientError) in
            try core.online { api, token throws(ClientError) in try api.visitor(token: token, id: id) }.name
        }
        visitors[id] = name
        return name
    }

    /// The checkpoint's name (`GET /api/checkpoints`).
    public func checkpoint(_ id: String) throws(ClientError) -> String? {
        if checkpoints == nil {
            let page = try unlessRefused { () throws(ClientError) in
                try core.online { api, token throws(ClientError) in try api.checkpoints(token: token) }
            }
            checkpoints = Dictionary(page?.items.map { ($0.id, $0.name) } ?? [], uniquingKeysWith: { first, _ in first })
        }
        return checkpoints?[id]
    }

    /// The user's name (`GET /api/users`, OWNER/ADMIN), nil for others' callers.
    public func user(_ id: String) throws(ClientError) -> String? {
        if users == nil {
            var names: [String: String] = [:]
            var cursor: String?
            pages: for _ in 0..<Self.maximumPages {
                let page = try unlessRefused { () throws(ClientError) in
                    try core.online { api, token throws(ClientError) in
                        try api.users(token: token, limit: ListBounds.maximumLimit, cursor: cursor)
                    }
                }
                guard let page else { break pages }
                for user in page.items { names[user.profile.id] = user.profile.name }
                guard let next = page.nextCursor, !page.items.isEmpty else { break pages }
                cursor = next
            }
            users = names
        }
        return users?[id]
    }

    /// `call`'s answer, or nil when the server refuses this caller the read (403), has no such
    /// thing (404) or does not answer: a name is a nicety, never the reason a list fails.
    private func unlessRefused<T>(_ call: () throws(ClientError) -> T) throws(ClientError) -> T? {
        guard !unreachable else { return nil }
        do {
            return try call()
        } catch {
            if case .permanent(let status, _, _) = error, status == 403 || status == 404 { return nil }
            if error.isRetryable {
                unreachable = true
                return nil
            }
            throw error
        }
    }
}
