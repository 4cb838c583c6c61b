import Foundation
import GatePassAPI
import GatePassCore
import HTTPServer

/// Token buckets, one per key, in this server process, on an injected clock: a bucket holds
/// at most `burst` tokens and gains `perSecond` of them each second; a request takes one
/// from each of its buckets, or from none of them when one is short.
///
/// Per process: several servers on one PostgreSQL database each allow their own share,
/// which is what a limit on load wants (each process is protected), and costs no query.
final class RateLimiter: Sendable {
    struct Rate: Sendable, Equatable {
        var perSecond: Double
        var burst: Double
    }

    struct Charge: Sendable, Equatable {
        var key: String
        var rate: Rate
    }

    private struct Bucket {
        var tokens: Double
        var updated: Date
    }

    private let clock: any WallClock
    private let buckets = Locked<[String: Bucket]>([:])
    /// Beyond this many buckets, the full ones (which hold nothing a new bucket would not)
    /// are dropped, so that many keys (addresses, tokens) cannot grow the table without end.
    private let pruneAbove: Int

    init(clock: any WallClock, pruneAbove: Int = 100_000) {
        self.clock = clock
        self.pruneAbove = pruneAbove
    }

    /// Takes `count` tokens from every bucket of `charges`: nil when taken; otherwise the
    /// whole seconds until every bucket would hold `count` (at least 1), and nothing is taken.
    func take(_ charges: [Charge], count: Double = 1) -> Int? {
        guard !charges.isEmpty else { return nil }
        let now = clock.now()
        return buckets.withLock { table -> Int? in
            var refilled: [Bucket] = []
            var wait = 0.0
            for charge in charges {
                var bucket = table[charge.key] ?? Bucket(tokens: charge.rate.burst, updated: now)
                let elapsed = max(0, now.timeIntervalSince(bucket.updated))
                bucket.tokens = min(charge.rate.burst, bucket.tokens + elapsed * charge.rate.perSecond)
                bucket.updated = now
                // A thousandth of a token forgives the rounding of clock arithmetic (a Date
                // holds about a tenth of a microsecond).
                if bucket.tokens + 0.001 < count {
                    wait = max(wait, (count - bucket.tokens) / charge.rate.perSecond)
                }
                refilled.append(bucket)
            }
            if wait > 0 { return max(1, Int(wait.rounded(.up))) }
            for (charge, bucket) in zip(charges, refilled) {
                table[charge.key] = Bucket(tokens: max(0, bucket.tokens - count), updated: now)
            }
            if table.count > pruneAbove {
                table = table.filter { _, bucket in
                    // Kept unless it is certainly full again (no bucket refills slower than 1/day).
                    now.timeIntervalSince(bucket.updated) < 86_400
                }
            }
            return nil
        }
    }

    /// Buckets held now (for tests of the pruning).
    var bucketCount: Int { buckets.withLock { $0.count } }
}

/// Which buckets a write is charged to (api.md "Conventions": 429 `RATE_LIMITED` with
/// `Retry-After`), decided from the route, the principal and the request alone.
struct WriteLimits: Sendable {
    let limits: LimitsConfiguration
    /// The reverse proxies whose `X-Forwarded-For` names the client (`trustedProxies`).
    let trustedProxies: Set<UInt32>

    init(_ configuration: ServerConfiguration) {
        limits = configuration.limits
        trustedProxies = Set(configuration.trustedProxies.compactMap(Self.ipv4))
    }

    /// The buckets of one write. A scanner token's check-ins have their own bucket, its
    /// offline replays (`offline: true`) another; other writes are charged per user (or
    /// scanner token) and route; unauthenticated ones per client address and route, which
    /// stays on with `enabled: false` (it guards the OTP and enrolment routes).
    func charges(endpoint: Endpoint, principal: Principal?, request: HTTPRequest) -> [RateLimiter.Charge] {
        guard let principal else {
            let rate = RateLimiter.Rate(perSecond: Double(limits.addressWritesPerSecond), burst: Double(limits.addressWriteBurst))
            return [.init(key: "address \(clientAddress(request)) \(endpoint.pathPattern)", rate: rate)]
        }
        guard limits.enabled else { return [] }
        switch principal.credential {
        case .scanner, .kiosk:
            guard endpoint == .scannerCheckIn else {
                return [.init(key: "write \(principal.sessionId) \(endpoint.pathPattern)", rate: userRate)]
            }
            if Self.isOfflineReplay(request.body) {
                return [.init(key: "offline \(principal.sessionId)",
                              rate: .init(perSecond: Double(limits.offlineReplaysPerSecond), burst: Double(limits.offlineReplayBurst)))]
            }
            return [.init(key: "checkin \(principal.sessionId)",
                          rate: .init(perSecond: Double(limits.scannerCheckInsPerSecond), burst: Double(limits.scannerCheckInBurst)))]
        case .login:
            return [.init(key: "write \(principal.user.id) \(endpoint.pathPattern)", rate: userRate)]
        }
    }

    /// The buckets of the invitations a caller sends: a HOST's hour and day (an invitation
    /// is a mail to an address the HOST chose, with text of its own); none for anyone else.
    func invitationCharges(principal: Principal) -> [RateLimiter.Charge] {
        guard limits.enabled, case .login = principal.credential, principal.user.role == .host else { return [] }
        let perHour = Double(limits.hostInvitationsPerHour), perDay = Double(limits.hostInvitationsPerDay)
        return [.init(key: "invitations hour \(principal.user.id)", rate: .init(perSecond: perHour / 3_600, burst: perHour)),
                .init(key: "invitations day \(principal.user.id)", rate: .init(perSecond: perDay / 86_400, burst: perDay))]
    }

    private var userRate: RateLimiter.Rate {
        .init(perSecond: Double(limits.userWritesPerSecond), burst: Double(limits.userWriteBurst))
    }

    /// The client a request comes from: the peer, or, when the peer is a trusted proxy, the
    /// address it appended last to `X-Forwarded-For` (what a client writes there itself comes
    /// before it and is never believed). "unknown" when neither is known.
    func clientAddress(_ request: HTTPRequest) -> String {
        guard let peer = request.peerAddress else { return "unknown" }
        if trustedProxies.contains(peer), let forwarded = request.header("x-forwarded-for"),
           let last = forwarded.split(separator: ",").last.map({ $0.trimmingCharacters(in: .whitespaces) }),
           let client = Self.ipv4(last) {
            return Self.dotted(client)
        }
        return Self.dotted(peer)
    }

    /// Whether a check-in body says `"offline": true` (a body that is not JSON is not: the
    /// route refuses it anyway, charged to the online bucket).
    static func isOfflineReplay(_ body: [UInt8]) -> Bool {
        struct Flag: Decodable { var offline: Bool? }
        return (try? JSONDecoder().decode(Flag.self, from: Data(body)))?.offline == true
    }

    static func ipv4(_ text: String) -> UInt32? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        return address.s_addr
    }

    static func dotted(_ address: UInt32) -> String {
        withUnsafeBytes(of: address) { $0.map(String.init).joined(separator: ".") }
    }
}
