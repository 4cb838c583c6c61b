import Foundation
import GatePassCore
import Testing
@testable import GatePassClient

/// Finding a user by email walks `GET /api/users` page by page (for `--approver EMAIL` and
/// `gatepass user update EMAIL`): it must end on a broken server as on a good one.
@Suite struct UserSearchTests {
    static func profile(_ email: String, role: Role) -> Profile {
        Profile(id: "id-" + email, email: email, name: "User", role: role, organizationId: "org-1", canScanCheckpoint: false)
    }

    /// Answers each `/api/users` request with `page(requestNumber)`; counts the requests.
    final class UsersServer: HTTPTransport, @unchecked Sendable {
        let requests = Locked(0)
        let page: @Sendable (Int) -> Page<UserSummary>
        init(_ page: @escaping @Sendable (Int) -> Page<UserSummary>) { self.page = page }
        func perform(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
            let number = requests.withLock { $0 += 1; return $0 }
            let body = request.url.contains("/api/users") ? CanonicalJSON.encode(page(number)) : Array(#"{}"#.utf8)
            return HTTPResponse(status: 200, headers: ["content-type": "application/json"], body: body)
        }
        func separateHandle() -> any HTTPTransport { self }
    }

    func withCore(_ server: UsersServer, _ body: (ClientCore) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-users-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let core = try ClientCore(directory: StateDirectory(path: folder), transport: server)
        try core.store.saveSession(Session(server: "http://gate.test", token: "login-token",
                                           expiresAt: Timestamp(Date().addingTimeInterval(3600)),
                                           user: Self.profile("owner@example.com", role: .owner), scanner: nil))
        try body(core)
    }

    static let stranger = UserSummary(profile: profile("someone@example.com", role: .host), disabled: false, lastLoginAt: nil)

    @Test func findsTheUserOnALaterPageInAnyCase() throws {
        let wanted = UserSummary(profile: Self.profile("ana@example.com", role: .approver), disabled: false, lastLoginAt: nil)
        let server = UsersServer { number in
            number < 3 ? Page(items: [Self.stranger], nextCursor: "page-\(number)") : Page(items: [wanted], nextCursor: nil)
        }
        try withCore(server) { core throws in
            #expect(try core.user(email: "  ANA@example.com ") == wanted)
            #expect(try core.approver(email: "ana@example.com") == wanted)
            #expect(try core.user(email: "nobody@example.com") == nil)
        }
    }

    @Test func aServerThatHandsOutCursorsForeverIsAnErrorAfterTheBoundNotAHang() throws {
        let server = UsersServer { number in Page(items: [Self.stranger], nextCursor: "again-\(number)") }
        try withCore(server) { core throws in
            #expect(throws: ClientError.self) { try core.user(email: "ana@example.com") }
            #expect(server.requests.withLock { $0 } == ClientCore.maximumUserPages)
            #expect(throws: ClientError.self) { try core.approver(email: "ana@example.com") }
        }
    }

    @Test func anEmptyPageWithACursorEndsTheSearch() throws {
        let server = UsersServer { _ in Page(items: [], nextCursor: "same") }
        try withCore(server) { core throws in
            #expect(try core.user(email: "ana@example.com") == nil)
            #expect(server.requests.withLock { $0 } == 1)
        }
    }
}
