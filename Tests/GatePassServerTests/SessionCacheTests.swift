import Foundation
import GatePassCore
import HTTPServer
import LoopbackHTTP
import Testing
@testable import GatePassServer

/// The session cache (issue 15) must never let a credential outlive its session: a logout,
/// a revoked scanner token, a disabled user, a new role and an expiry all hold at once on
/// every thread, while the cache is in use.
@Suite struct SessionCacheTests {
    static let threads = 8

    /// The statuses of `path` requested from `threads` threads at once, each on its own
    /// connection, all released together.
    static func statuses(_ server: TestServer, _ path: String, token: String) -> [Int] {
        let results = Locked<[Int]>([])
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for _ in 0..<threads {
            done.enter()
            let port = server.port
            Thread {
                defer { done.leave() }
                let client = LoopbackHTTPClient(port: port)
                start.wait()
                let status = (try? client.get(path, token: token).status) ?? -1
                results.withLock { $0.append(status) }
            }.start()
        }
        for _ in 0..<threads { start.signal() }
        done.wait()
        return results.withLock { $0 }
    }

    @Test func aLogoutEndsTheCachedSessionAndItsScannerTokensOnEveryThreadAtOnce() throws {
        try withTestServer { server in
            let site = try server.makeSite()
            // Warm: the first request of each credential reads its session, the rest use the cache.
            #expect(Self.statuses(server, "/api/auth/me", token: site.ownerToken).allSatisfy { $0 == 200 })
            #expect(Self.statuses(server, "/api/visitor-scanner/stats", token: site.scanner).allSatisfy { $0 == 200 })
            #expect(server.server.application.sessionCache.count >= 2, "the cache was used")

            #expect(try server.post("/api/auth/logout", token: site.ownerToken).status == 204)
            #expect(Self.statuses(server, "/api/auth/me", token: site.ownerToken).allSatisfy { $0 == 401 })
            // The scanner token the login made ends with it, on the stats path that needs no
            // transaction when both its caches hit.
            #expect(Self.statuses(server, "/api/visitor-scanner/stats", token: site.scanner).allSatisfy { $0 == 401 })
            // Other sessions were not touched.
            #expect(Self.statuses(server, "/api/auth/me", token: site.adminToken).allSatisfy { $0 == 200 })
        }
    }

    @Test func aDisabledUserIsRefusedAtOnceAndARoleChangeHoldsAtOnce() throws {
        try withTestServer { server in
            let site = try server.makeSite()
            #expect(Self.statuses(server, "/api/users", token: site.adminToken).allSatisfy { $0 == 200 })
            // A new role: the admin's cached session carried ADMIN; HOST may not list users.
            #expect(try server.client().send("PATCH", "/api/users/\(site.admin.id)", token: site.ownerToken,
                                             json: ["role": "HOST"]).status == 200)
            #expect(Self.statuses(server, "/api/users", token: site.adminToken).allSatisfy { $0 == 403 })
            #expect(Self.statuses(server, "/api/auth/me", token: site.deskToken).allSatisfy { $0 == 200 })
            #expect(try server.client().send("PATCH", "/api/users/\(site.desk.id)", token: site.ownerToken,
                                             json: ["disabled": true]).status == 200)
            #expect(Self.statuses(server, "/api/auth/me", token: site.deskToken).allSatisfy { $0 == 401 })
        }
    }

    @Test func aRevokedScannerTokenIsRefusedAtOnce() throws {
        try withTestServer { server in
            let site = try server.makeSite()
            let answer = try server.scannerTokenAnswer(site.ownerToken)
            let token = try #require(answer["scannerToken"] as? String)
            #expect(Self.statuses(server, "/api/visitor-scanner/stats", token: token).allSatisfy { $0 == 200 })
            #expect(Self.statuses(server, "/api/visitor-scanner/stats", token: site.scanner).allSatisfy { $0 == 200 })
            // Revoke every live scanner token of the site; each is refused on its next request.
            let listed = try #require(try server.get("/api/admin/scanner-tokens", token: site.ownerToken)
                                        .json?["items"] as? [[String: Any]])
            for item in listed {
                let itemId = try #require(item["id"] as? String)
                #expect(try server.post("/api/admin/scanner-tokens/\(itemId)/revoke", token: site.ownerToken).status == 204)
            }
            #expect(Self.statuses(server, "/api/visitor-scanner/stats", token: token).allSatisfy { $0 == 401 })
            #expect(Self.statuses(server, "/api/visitor-scanner/stats", token: site.scanner).allSatisfy { $0 == 401 })
        }
    }

    @Test func anExpiredSessionIsRefusedWhileItsRowIsCached() throws {
        try withTestServer(configure: { $0.tokenLifetimeSeconds = 3_600 }) { server in
            let owner = try server.addUser("owner@acme.test", role: .owner)
            let token = try server.login(owner.email)
            #expect(Self.statuses(server, "/api/auth/me", token: token).allSatisfy { $0 == 200 })
            // The row is cached; its expiry is judged against the request's clock every time.
            server.clock.advance(by: 3_600)
            #expect(Self.statuses(server, "/api/auth/me", token: token).allSatisfy { $0 == 401 })
        }
    }

    /// The rules the cache itself keeps, on its own.
    @Test func entriesServeOnlyTheirGenerationAndAgeAndNoCredentialButTheirOwn() throws {
        let cache = SessionCache()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let user = Profile(id: "u1", email: "a@b.test", name: "A", role: .admin, organizationId: "o1", canScanCheckpoint: false)
        let session = StoredSession(kind: .login, credential: .login, expiresAt: now.addingTimeInterval(3_600), revokedAt: nil,
                                    user: user)
        let claims = TokenClaims(kind: .login, sessionId: "s1", expiresAt: Int64(now.timeIntervalSince1970) + 3_600)
        let token = PresentedCredential(kind: .bearer, text: "gp1.token")
        cache.store(session, claims: claims, for: token, generation: 7, readAt: now)
        #expect(cache.lookup(token, generation: 7, now: now)?.claims == claims)
        #expect(cache.lookup(token, generation: 8, now: now) == nil, "a later generation: a principal changed since")
        #expect(cache.lookup(PresentedCredential(kind: .ticket, text: "gp1.token"), generation: 7, now: now) == nil,
                "the same text as a ticket is another credential")
        #expect(cache.lookup(PresentedCredential(kind: .bearer, text: "gp1.tokem"), generation: 7, now: now) == nil)
        #expect(cache.lookup(token, generation: 7, now: now.addingTimeInterval(SessionCache.maximumAge)) == nil, "too old")
        #expect(cache.lookup(token, generation: 7, now: now.addingTimeInterval(-1)) == nil, "the clock went back")
        // A flood of distinct credentials never grows the cache past its capacity.
        for index in 0..<(SessionCache.capacity + 10) {
            cache.store(session, claims: claims, for: PresentedCredential(kind: .bearer, text: "t\(index)"),
                        generation: 7, readAt: now)
        }
        #expect(cache.count <= SessionCache.capacity)
    }
}

/// The stats cache's own rules. Its key holds `checkpointId` as the query sent it, so any
/// scanner token can make every request a new key: they must not grow the server's memory.
@Suite struct StatsCacheTests {
    @Test func entriesServeOnlyTheirGenerationDayAndKeyAndAFloodOfKeysIsBounded() throws {
        let cache = StatsCache()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let today = ValidityWindow.day(containing: now, in: TimeZone(identifier: "UTC")!)
        let answer = HTTPResponse(status: 200, body: Array("{\"checkedIn\":3}".utf8))
        let gate = StatsCache.Key(organization: "o1", checkpoint: "g1")
        cache.store(answer, for: gate, generation: 4, day: today)
        #expect(cache.lookup(gate, generation: 4, now: now)?.body == answer.body)
        #expect(cache.lookup(gate, generation: 5, now: now) == nil, "a write committed since")
        #expect(cache.lookup(gate, generation: 4, now: today.until.addingTimeInterval(1)) == nil, "another day")
        #expect(cache.lookup(StatsCache.Key(organization: "o1", checkpoint: nil), generation: 4, now: now) == nil)
        #expect(cache.lookup(StatsCache.Key(organization: "o2", checkpoint: "g1"), generation: 4, now: now) == nil)
        for index in 0..<(StatsCache.capacity + 10) {
            cache.store(answer, for: StatsCache.Key(organization: "o1", checkpoint: "hostile-\(index)"), generation: 4, day: today)
        }
        #expect(cache.count <= StatsCache.capacity)
    }
}
