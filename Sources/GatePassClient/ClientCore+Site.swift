import Foundation
import GatePassCore

/// The office's calls (api.md "Site operations"): registering, editing and ending visits,
/// passes, invitations and the mail log. They are made at once with the login token and
/// never queued: unlike a scan at the gate, nobody is waiting at a barrier for them, and a
/// registration replayed hours later would surprise the person who typed it.
extension ClientCore {
    /// Runs `call` with the session's API client and login token.
    ///
    ///     let visitor = try core.online { api, token throws(ClientError) in try api.visitor(token: token, id: id) }
    public func online<T>(_ call: (APIClient, String) throws(ClientError) -> T) throws(ClientError) -> T {
        let session = try requireSession()
        return try call(api(session.server), session.token)
    }

    /// The APPROVER of this organization whose email is `email` (case-insensitively), from
    /// `GET /api/users` page by page.
    /// - Throws: `.local` naming the email when no user has it, or when its user is not an
    ///   APPROVER or is disabled.
    public func approver(email: String) throws(ClientError) -> UserSummary {
        let wanted = email.trimmingCharacters(in: .whitespaces).lowercased()
        guard let user = try user(email: wanted) else {
            throw .local("no user of this organization has the email \(wanted); name an APPROVER's email")
        }
        guard user.profile.role == .approver else {
            throw .local("\(wanted) is \(user.profile.role.rawValue), not an APPROVER; name an APPROVER's email")
        }
        guard !user.disabled else { throw .local("the APPROVER \(wanted) is disabled; name another") }
        return user
    }

    /// The most pages of `GET /api/users` a search reads: far more users than a site has, so
    /// reaching it means a server that hands out cursors forever.
    static let maximumUserPages = 1000

    /// The user of this organization whose email is `email` (case-insensitively), from
    /// `GET /api/users` page by page; nil when no user has it.
    /// - Throws: `.local` when the list has not ended after `maximumUserPages` pages.
    public func user(email: String) throws(ClientError) -> UserSummary? {
        let wanted = email.trimmingCharacters(in: .whitespaces).lowercased()
        return try firstUser(wanted) { $0.profile.email.lowercased() == wanted }
    }

    /// The user of this organization whose id is `id`, from `GET /api/users` page by page
    /// (OWNER/ADMIN); nil when no user has it.
    public func user(id: String) throws(ClientError) -> UserSummary? { try firstUser(id) { $0.profile.id == id } }

    /// The first user `matches` accepts; `wanted` names it in the error.
    private func firstUser(_ wanted: String, _ matches: (UserSummary) -> Bool) throws(ClientError) -> UserSummary? {
        var cursor: String?
        for _ in 0..<Self.maximumUserPages {
            let page = try online { api, token throws(ClientError) in try api.users(token: token, limit: ListBounds.maximumLimit, cursor: cursor) }
            if let user = page.items.first(where: matches) { return user }
            // An empty page with a cursor would only send the same question again.
            guard let next = page.nextCursor, !page.items.isEmpty else { return nil }
            cursor = next
        }
        throw .local("the server's user list did not end after \(Self.maximumUserPages) pages; looking for \(wanted) stopped there")
    }
}
