import Foundation
import GatePassAPI
import GatePassCore
import HTTPServer
import Testing
@testable import GatePassServer

/// The `limits` block: token buckets on an injected clock (never a sleep, never a timing), and
/// the 429 `RATE_LIMITED` with `Retry-After` they answer (api.md "Conventions").
@Suite struct RateLimitTests {
    static let start = Date(timeIntervalSince1970: 1_796_000_000)

    @Test func aBucketTakesItsBurstThenRefillsAtItsRate() {
        let clock = TestClock(Self.start)
        let limiter = RateLimiter(clock: clock)
        let charge = RateLimiter.Charge(key: "checkin a", rate: .init(perSecond: 20, burst: 200))
        for _ in 0..<200 { #expect(limiter.take([charge]) == nil) }
        #expect(limiter.take([charge]) == 1, "empty: wait at least a second")
        clock.advance(by: 0.05)
        #expect(limiter.take([charge]) == nil, "a twentieth of a second brings one token")
        #expect(limiter.take([charge]) == 1)
        clock.advance(by: 3600)
        for _ in 0..<200 { #expect(limiter.take([charge]) == nil) }
        #expect(limiter.take([charge]) != nil, "a long pause refills to the burst, never beyond")
        // Another key has its own bucket.
        #expect(limiter.take([.init(key: "checkin b", rate: charge.rate)]) == nil)
    }

    /// The defaults are far above what a gate does: a replay of 10,000 offline scans sent at
    /// once, and a busy gate scanning every 0.2 s for a whole day, are never refused.
    @Test func theDefaultsLetAGatesRealRateAndA10000ScanReplayThrough() {
        let clock = TestClock(Self.start)
        let limiter = RateLimiter(clock: clock)
        let limits = WriteLimits(ServerConfiguration())
        let profile = Profile(id: "k", email: "kiosk@acme.test", name: "Kiosk", role: .admin, organizationId: "o",
                              canScanCheckpoint: true)
        let kiosk = Principal(user: profile, sessionId: "s", sessionExpiresAt: Self.start, credential: .kiosk(kioskId: "k", checkpointId: "c"))
        let replay = HTTPRequest(method: "POST", path: "/api/visitor-scanner/checkin",
                                 body: Array(#"{"shortId":"K7Q2M9XD","offline":true}"#.utf8))
        let replays = limits.charges(endpoint: .scannerCheckIn, principal: kiosk, request: replay)
        var refused = 0
        for _ in 0..<10_000 where limiter.take(replays) != nil { refused += 1 }
        #expect(refused == 0)
        let scan = HTTPRequest(method: "POST", path: "/api/visitor-scanner/checkin", body: Array(#"{"shortId":"K7Q2M9XD"}"#.utf8))
        let scans = limits.charges(endpoint: .scannerCheckIn, principal: kiosk, request: scan)
        for _ in 0..<(5 * 86_400) {
            if limiter.take(scans) != nil { refused += 1 }
            clock.advance(by: 0.2)
        }
        #expect(refused == 0)
    }

    @Test func aRequestIsChargedToAllItsBucketsOrToNone() {
        let clock = TestClock(Self.start)
        let limiter = RateLimiter(clock: clock)
        let hour = RateLimiter.Charge(key: "hour", rate: .init(perSecond: 200.0 / 3600, burst: 200))
        let day = RateLimiter.Charge(key: "day", rate: .init(perSecond: 1000.0 / 86_400, burst: 1000))
        #expect(limiter.take([hour, day], count: 150) == nil)
        // 60 more would pass the day's bucket but not the hour's: neither is charged.
        let wait = limiter.take([hour, day], count: 60)
        #expect(wait == 180, "10 tokens short at 200 an hour: 180 s")
        #expect(limiter.take([day], count: 850) == nil, "the day's bucket was not charged for the refusal")
    }

    @Test func fullBucketsArePrunedWhenTheTableGrows() {
        let clock = TestClock(Self.start)
        let limiter = RateLimiter(clock: clock, pruneAbove: 10)
        let rate = RateLimiter.Rate(perSecond: 1, burst: 5)
        for index in 0..<10 { #expect(limiter.take([.init(key: "address \(index)", rate: rate)]) == nil) }
        clock.advance(by: 2 * 86_400)
        #expect(limiter.take([.init(key: "address new", rate: rate)]) == nil)
        #expect(limiter.bucketCount == 1)
    }

    /// Which buckets a write is charged to: a scanner's check-ins and its offline replays apart,
    /// a user's writes per route, unauthenticated ones per address (kept with enabled false).
    @Test func writesAreChargedByPrincipalRouteAndAddress() {
        var configuration = ServerConfiguration()
        configuration.trustedProxies = ["10.0.0.5"]
        let limits = WriteLimits(configuration)
        let profile = Profile(id: "u1", email: "guard@acme.test", name: "Guard", role: .admin, organizationId: "o",
                              canScanCheckpoint: true)
        let scanner = Principal(user: profile, sessionId: "s1", sessionExpiresAt: Self.start, credential: .scanner(checkpointId: "c"))
        let login = Principal(user: profile, sessionId: "s2", sessionExpiresAt: Self.start, credential: .login)
        func request(_ body: String, from peer: String? = "192.0.2.7", forwarded: String? = nil) -> HTTPRequest {
            var request = HTTPRequest(method: "POST", path: "/", headers: forwarded.map { ["x-forwarded-for": $0] } ?? [:],
                                      body: Array(body.utf8))
            request.peerAddress = peer.flatMap(WriteLimits.ipv4)
            return request
        }
        let online = limits.charges(endpoint: .scannerCheckIn, principal: scanner, request: request(#"{"shortId":"K7Q2M9XD"}"#))
        let offline = limits.charges(endpoint: .scannerCheckIn, principal: scanner,
                                     request: request(#"{"shortId":"K7Q2M9XD","offline":true}"#))
        #expect(online.map(\.key) == ["checkin s1"] && online.first?.rate == .init(perSecond: 20, burst: 200))
        #expect(offline.map(\.key) == ["offline s1"] && offline.first?.rate == .init(perSecond: 500, burst: 10_000))
        let write = limits.charges(endpoint: .visitorsCreate, principal: login, request: request("{}"))
        #expect(write.map(\.key) == ["write u1 /api/visitors"] && write.first?.rate == .init(perSecond: 10, burst: 600))
        #expect(limits.charges(endpoint: .authSendOTP, principal: nil, request: request("{}")).map(\.key)
                == ["address 192.0.2.7 /api/auth/send-otp"])
        // Only a trusted proxy's X-Forwarded-For is believed, and only the address it appended.
        #expect(limits.clientAddress(request("{}", from: "10.0.0.5", forwarded: "203.0.113.9, 198.51.100.4")) == "198.51.100.4")
        #expect(limits.clientAddress(request("{}", forwarded: "198.51.100.4")) == "192.0.2.7")
        #expect(limits.clientAddress(request("{}", from: nil)) == "unknown")

        configuration.limits.enabled = false
        let off = WriteLimits(configuration)
        #expect(off.charges(endpoint: .scannerCheckIn, principal: scanner, request: request("{}")).isEmpty)
        #expect(off.charges(endpoint: .visitorsCreate, principal: login, request: request("{}")).isEmpty)
        #expect(off.charges(endpoint: .authSendOTP, principal: nil, request: request("{}")).count == 1,
                "the per-address limit of unauthenticated routes is security and stays")
    }

    /// Over HTTP: beyond the burst a scanner token's check-in is 429 `RATE_LIMITED` with
    /// `Retry-After`, stores nothing, and its offline replays still pass; the clock refills it.
    @Test func aScannerBeyondItsBurstIsAnswered429AndItsReplaysStillPass() throws {
        try withSite(configure: {
            $0.limits.scannerCheckInBurst = 3
            $0.limits.scannerCheckInsPerSecond = 1
        }) { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Rata Limitova"])
            let shortId = try #require(visitor["shortId"] as? String)
            for _ in 0..<3 {
                #expect(try server.post("/api/visitor-scanner/checkin", token: site.scanner, ["shortId": "ZZZZZZZZ"]).status == 404)
            }
            let refused = try server.post("/api/visitor-scanner/checkin", token: site.scanner, ["shortId": shortId])
            #expect(refused.isError(429, "RATE_LIMITED"), "\(refused.text)")
            #expect(refused.headers["retry-after"] == "1")
            #expect(try server.visitor(visitor["id"], site.ownerToken)["status"] as? String == "EXPECTED", "nothing stored")
            let replay = try server.post("/api/visitor-scanner/checkin", token: site.scanner,
                                         ["shortId": "ZZZZZZZZ", "offline": true, "scannedAt": "2026-11-29T11:59:00Z"])
            #expect(replay.status != 429, "\(replay.text)")
            server.clock.advance(by: 1)
            #expect(try server.post("/api/visitor-scanner/checkin", token: site.scanner, ["shortId": shortId]).status == 200)
        }
    }

    /// `"limits": {"enabled": false}`: a benchmark's scanner is never limited.
    @Test func disabledLimitsLetEveryCheckInThrough() throws {
        try withSite(configure: {
            $0.limits.enabled = false
            $0.limits.scannerCheckInBurst = 1
        }) { server, site throws in
            for _ in 0..<5 {
                #expect(try server.post("/api/visitor-scanner/checkin", token: site.scanner, ["shortId": "ZZZZZZZZ"]).status == 404)
            }
        }
    }

    /// Unauthenticated writes are limited per client address, also with enabled false.
    @Test func sendOTPIsLimitedPerAddress() throws {
        try withServer(configure: {
            $0.limits.enabled = false
            $0.limits.addressWriteBurst = 3
        }) { server throws in
            for index in 0..<3 {
                #expect(try server.post("/api/auth/send-otp", ["email": "someone\(index)@acme.test"]).status == 202)
            }
            let refused = try server.post("/api/auth/send-otp", ["email": "someone9@acme.test"])
            #expect(refused.isError(429, "RATE_LIMITED") && refused.headers["retry-after"] != nil, "\(refused.text)")
        }
    }

    /// A HOST's invitations are capped per hour and per day; one beyond is 429 and its
    /// creation is not stored; OWNER and ADMIN are not capped.
    @Test func aHostsInvitationsAreCappedAndTheRefusedCreationStoresNothing() throws {
        try withSite(configure: { $0.limits.hostInvitationsPerHour = 2 }) { server, site in
            try server.addUser("host@acme.test", role: .host, name: "Hana Host")
            let host = try server.login("host@acme.test")
            for index in 0..<2 {
                let created = try server.post("/api/visitors", token: host,
                                              ["name": "Guest \(index)", "email": "guest\(index)@visitors.test", "invite": true])
                #expect(created.status == 201, "\(created.text)")
            }
            let refused = try server.post("/api/visitors", token: host, ["name": "Guest 2", "email": "guest2@visitors.test", "invite": true])
            #expect(refused.isError(429, "RATE_LIMITED") && refused.headers["retry-after"] == "1800", "\(refused.text)")
            #expect(try server.get("/api/visitors", token: host).items.count == 2, "the refused creation stored nothing")
            for index in 0..<3 {
                #expect(try server.post("/api/visitors", token: site.ownerToken,
                                        ["name": "Owner's \(index)", "email": "o\(index)@visitors.test", "invite": true]).status == 201)
            }
            server.clock.advance(by: 1800)
            #expect(try server.post("/api/visitors", token: host, ["name": "Guest 2", "email": "guest2@visitors.test", "invite": true])
                .status == 201)
        }
    }

    /// Beyond the gate's daily cap, scans of unknown text are counted in the gate's row of the
    /// day instead of stored; a known pass's scan is still stored; the next day starts afresh.
    @Test func unknownScansBeyondTheDailyCapAreOnlyCounted() throws {
        try withSite(configure: { $0.limits.unknownScansPerGatePerDay = 2; $0.limits.enabled = false }) { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Known Pass"])
            for _ in 0..<5 {
                #expect(try server.post("/api/visitor-scanner/checkin", token: site.scanner, ["shortId": "ZZZZZZZZ"]).status == 404)
            }
            #expect(try server.post("/api/visitor-scanner/checkin", token: site.scanner, ["shortId": "not a pass"]).status == 400)
            #expect(try server.post("/api/visitor-scanner/checkin", token: site.scanner,
                                    ["shortId": try #require(visitor["shortId"] as? String)]).status == 200)
            let organizationId = site.owner.organizationId
            let (scans, day) = try server.store.read { tx in
                let scans = try tx.scans.page(ScanHistoryFilter(organizationId: organizationId), after: nil, limit: 100).map(\.scan)
                let checkpointId = try #require(scans.first?.checkpointId)
                return (scans, try tx.scans.unknownScanDay(checkpointId: checkpointId,
                                                            day: LocalDay(containing: server.clock.now(), in: TimeZone(identifier: "UTC")!)))
            }
            #expect(scans.map(\.result.rawValue).sorted() == ["CHECKED_IN", "NOT_FOUND", "NOT_FOUND"])
            #expect(day?.stored == 2 && day?.counted == 4)
            server.clock.advance(by: 86_400)
            #expect(try server.post("/api/visitor-scanner/checkin", token: site.scanner, ["shortId": "ZZZZZZZZ"]).status == 404)
            #expect(try server.store.read { tx in
                try tx.scans.page(ScanHistoryFilter(organizationId: organizationId), after: nil, limit: 100).count } == 4)
        }
    }
}
