import CurlHTTP
import Foundation
import GatePassAPI
import GatePassCore
import LoopbackHTTP
import Synchronization
import Testing
@testable import GatePassClient
@testable import GatePassServer

/// The pipelined replay: check-ins of different passes in flight at once, each pass's entries
/// in order, everything else alone; one stop for all lanes; scans refused offline delivered.
@Suite(.serialized) struct OutboxReplayTests {
    /// A clock an hour in the past that moves one second per reading, so every queued scan
    /// has its own `scannedAt` (the server keeps whole seconds) and its order shows on the server.
    final class SteppingClock: WallClock {
        private let current = Locked(Date().addingTimeInterval(-3600).wholeSeconds)
        func now() -> Date {
            current.withLock { date in
                date = date.addingTimeInterval(1)
                return date
            }
        }
    }

    /// Holds check-ins 2 … width+1 (the first is sent alone) until `width` of them are in
    /// flight at once. A drain that sends one at a time never gets there: the wait runs out
    /// and `timedOut` says so.
    final class ConcurrencyProbe: Sendable {
        let width: Int
        private let arrivals = Atomic<Int>(0)
        private let allIn = DispatchSemaphore(value: 0)
        private let expired = Atomic<Bool>(false)
        var timedOut: Bool { expired.load(ordering: .acquiring) }
        init(width: Int) { self.width = width }

        func arrive(_ request: HTTPRequest) {
            guard request.url.hasSuffix(Endpoint.scannerCheckIn.path()) else { return }
            let number = arrivals.add(1, ordering: .acquiringAndReleasing).newValue
            guard (2...width + 1).contains(number) else { return }
            if number == width + 1 {
                for _ in 1..<width { allIn.signal() }
            } else if allIn.wait(timeout: .now() + 30) == .timedOut {
                expired.store(true, ordering: .releasing)
            }
        }
    }

    /// Passes everything to `base`, except that check-ins after the first `allowed` are
    /// answered 401 or fail to connect, as `refusal` says, until `refusal` is nil.
    final class Interruption: Sendable {
        enum Refusal: Sendable { case unauthorized, unreachable }
        let allowed: Int
        let refusal: Locked<Refusal?>
        private let forwarded = Atomic<Int>(0)
        /// The idempotency keys of the check-ins refused.
        let refusedKeys = Locked<Set<String>>([])
        init(allowed: Int, refusal: Refusal) {
            self.allowed = allowed
            self.refusal = Locked(refusal)
        }

        func intercept(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse? {
            guard request.url.hasSuffix(Endpoint.scannerCheckIn.path()), let refusal = refusal.withLock({ $0 }) else { return nil }
            guard forwarded.add(1, ordering: .relaxed).newValue > allowed else { return nil }
            let key = request.headers.first { $0.name == "Idempotency-Key" }?.value ?? ""
            refusedKeys.withLock { _ = $0.insert(key) }
            switch refusal {
            case .unreachable: throw .cannotConnect(url: request.url, detail: "cut by the test")
            case .unauthorized:
                return HTTPResponse(status: 401, headers: ["content-type": "application/json"],
                                    body: Array(#"{"error":{"code":"UNAUTHORIZED","message":"session ended"}}"#.utf8))
            }
        }
    }

    struct WrappedTransport: HTTPTransport {
        let base: any HTTPTransport
        var probe: ConcurrencyProbe?
        var interruption: Interruption?
        func perform(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
            probe?.arrive(request)
            if let answer = try interruption?.intercept(request) { return answer }
            return try base.perform(request)
        }
        func separateHandle() -> any HTTPTransport {
            WrappedTransport(base: base.separateHandle(), probe: probe, interruption: interruption)
        }
    }

    /// A server with `count` passes valid from yesterday to tomorrow, and a client core over
    /// `transport` logged in as a guard.
    func withReplayWorld(passes count: Int, transport: (any HTTPTransport) -> any HTTPTransport = { $0 },
                         _ body: (ClientWorld, ClientCore, String, [String]) throws -> Void) throws {
        let world = try ClientWorld()
        try world.addUser("guard@acme.test", role: .admin)
        let admin = try world.token("guard@acme.test")
        let http = LoopbackHTTPClient(port: world.port)
        let now = Date()
        var shortIds: [String] = []
        for index in 0..<count {
            let answer = try http.send("POST", Endpoint.visitorsCreate.path(), token: admin,
                                       json: ["name": "Visitor \(index)", "validFrom": Timestamp.format(now.addingTimeInterval(-86_400)),
                                              "validUntil": Timestamp.format(now.addingTimeInterval(86_400))])
            shortIds.append(try #require(answer.json?["shortId"] as? String, "\(answer.text)"))
        }
        let core = try ClientCore(directory: world.stateDirectory,
                                  transport: transport(CurlSession(options: .init(connectTimeout: .seconds(2), requestTimeout: .seconds(10)))),
                                  clock: SteppingClock())
        try world.login(core, "guard@acme.test")
        try body(world, core, admin, shortIds)
    }

    /// The server's scans in the order it recorded them.
    func recordedScans(_ world: ClientWorld) throws -> [(shortId: String?, raw: String, result: String, scannedAt: Int64)] {
        try world.server!.store.readConnection { db in
            try db.query("SELECT short_id, raw, result, scanned_at FROM scans ORDER BY seq") {
                (shortId: try $0.optionalString(0), raw: try $0.string(1), result: try $0.string(2), scannedAt: try $0.int64(3))
            }
        }
    }

    func enqueue(_ core: ClientCore, world: ClientWorld, kind: String, _ endpoint: Endpoint, body: some Encodable,
                 scannedAt: Date?) throws -> OutboxEntry {
        try core.store.enqueue(kind: kind, method: endpoint.method.rawValue, url: world.baseURL + endpoint.path(),
                               body: CanonicalJSON.string(body), credential: .scanner, scannedAt: scannedAt, now: Date())
    }

    @Test func passesAreReplayedSideBySideEachInItsOwnOrderAndOnce() throws {
        let probe = ConcurrencyProbe(width: 4)
        try withReplayWorld(passes: 24, transport: { WrappedTransport(base: $0, probe: probe) }) { world, core, _, shortIds in
            // Two scans of every pass, shuffled (seeded) so that lanes see them interleaved;
            // then a check-out of the first pass, then one more scan of it and of another.
            var generator = SplitMix64(seed: 13)
            let scans = (shortIds + shortIds).shuffled(using: &generator)
            var queued: [OutboxEntry] = []
            for shortId in scans { queued.append(try core.queueCheckIn(code: "GP1:\(shortId)", confirmApprovalRequest: false)) }
            queued.append(try enqueue(core, world: world, kind: "checkout", .scannerCheckOut, body: ["shortId": shortIds[0]],
                                      scannedAt: nil))
            queued.append(try core.queueCheckIn(code: shortIds[0].lowercased(), confirmApprovalRequest: false))
            queued.append(try core.queueCheckIn(code: "GP1:\(shortIds[1])", confirmApprovalRequest: false))

            let report = core.drainer.drain(ignoringBackoff: true)
            #expect(!probe.timedOut, "four check-ins were never in flight at once")
            #expect(report.applied.map(\.id) == queued.map(\.id), "every entry applied, reported oldest first")
            #expect(report.remaining == 0)
            #expect(report.deadLettered.isEmpty)

            let recorded = try recordedScans(world)
            let checkIns = queued.filter { $0.kind == "checkin" }
            #expect(recorded.count == checkIns.count, "one scan per queued check-in, no duplicate")
            #expect(Set(recorded.map { "\($0.shortId ?? "") \($0.scannedAt)" }).count == checkIns.count)
            // Per pass, the server saw the scans in the order they were made.
            let byPass = Dictionary(grouping: recorded, by: { $0.shortId ?? "" })
            for (shortId, scansOfPass) in byPass {
                #expect(scansOfPass.map(\.scannedAt) == scansOfPass.map(\.scannedAt).sorted(), "pass \(shortId) out of order")
            }
            #expect(byPass[shortIds[0]]?.map(\.result) == ["CHECKED_IN", "ALREADY_CHECKED_IN", "CHECKED_OUT"],
                    "the scan after the check-out followed it")
            #expect(byPass[shortIds[1]]?.map(\.result) == ["CHECKED_IN", "ALREADY_CHECKED_IN", "ALREADY_CHECKED_IN"])
        }
    }

    @Test func aRefusedLoginStopsEveryLane() throws {
        let interruption = Interruption(allowed: 20, refusal: .unauthorized)
        try withReplayWorld(passes: 120, transport: { WrappedTransport(base: $0, interruption: interruption) }) {
            world, core, _, shortIds in
            for shortId in shortIds { _ = try core.queueCheckIn(code: shortId, confirmApprovalRequest: false) }
            let report = core.drainer.drain(ignoringBackoff: true)
            #expect(report.pausedForLogin != nil)
            #expect(try core.store.isDrainPaused())
            // Each lane stops after the refusal it met; none sends another.
            let refused = interruption.refusedKeys.withLock { $0 }
            #expect((1...OutboxDrainer.defaultLanes).contains(refused.count))
            #expect(report.applied.count <= 20)
            #expect(report.remaining == shortIds.count - report.applied.count)
            #expect(try recordedScans(world).count == report.applied.count)
            #expect(try core.store.deadLetters().isEmpty)
        }
    }

    @Test func anUnreachableServerStopsEveryLaneAndTheNextDrainFinishes() throws {
        let interruption = Interruption(allowed: 20, refusal: .unreachable)
        try withReplayWorld(passes: 120, transport: { WrappedTransport(base: $0, interruption: interruption) }) {
            world, core, _, shortIds in
            for shortId in shortIds { _ = try core.queueCheckIn(code: shortId, confirmApprovalRequest: false) }
            let cut = core.drainer.drain(ignoringBackoff: true)
            #expect(cut.offline)
            #expect(cut.pausedForLogin == nil)
            #expect((1...OutboxDrainer.defaultLanes).contains(cut.deferred.count))
            #expect(cut.deferred.allSatisfy { $0.attempts == 1 && $0.lastError?.contains("cut by the test") == true })
            #expect(interruption.refusedKeys.withLock { $0.count } == cut.deferred.count)
            #expect(cut.remaining == shortIds.count - cut.applied.count)

            interruption.refusal.withLock { $0 = nil }
            let rest = core.drainer.drain(ignoringBackoff: true)
            #expect(rest.remaining == 0)
            #expect(cut.applied.count + rest.applied.count == shortIds.count)
            let recorded = try recordedScans(world)
            #expect(recorded.count == shortIds.count)
            #expect(Set(recorded.compactMap(\.shortId)) == Set(shortIds))
        }
    }

    @Test func scansRefusedOfflineAreDeliveredWhateverTheServerAnswers() throws {
        try withReplayWorld(passes: 1) { world, core, _, shortIds in
            // The kiosk had the pass in its cache (api.md "Which offline claims count").
            try core.syncPassCache(timeZone: .current)
            let scannedAt = Date().addingTimeInterval(-60)
            func offlineScan(_ text: String, _ decision: ScanResult?) throws -> OutboxEntry {
                try enqueue(core, world: world, kind: "checkin", .scannerCheckIn,
                            body: CheckInBody(shortId: text, confirmApprovalRequest: false, offlineDecision: decision),
                            scannedAt: scannedAt)
            }
            let unknown = try offlineScan("ZZZZZZZZ", .notFound)
            let forged = try offlineScan("GP2:not a signed pass", .invalid)
            let hostile = try offlineScan(String(repeating: "\u{202E}<script>", count: 20), .invalid)
            let admitted = try offlineScan("GP1:\(shortIds[0])", .checkedIn)
            // Not an offline decision: a refusal is still a dead letter, as before.
            let online = try offlineScan("ZZZZZZZY", nil)

            let report = core.drainer.drain(ignoringBackoff: true)
            #expect(report.applied.map(\.id) == [unknown.id, forged.id, hostile.id, admitted.id])
            #expect(report.deadLettered.map(\.id) == [online.id])
            #expect(report.remaining == 0)
            #expect(try core.store.deadLetters().map(\.entry.id) == [online.id])
            let unknownAnswer = try JSONDecoder().decode(APIErrorBody.self, from: Data(try #require(report.answers[unknown.id])))
            #expect(unknownAnswer.error.code == "NOT_FOUND")
            for entry in [forged, hostile] {
                let answer = try JSONDecoder().decode(APIErrorBody.self, from: Data(try #require(report.answers[entry.id])))
                #expect(!answer.error.code.isEmpty)
            }
            let checkIn = try JSONDecoder().decode(CheckInAnswer.self, from: Data(try #require(report.answers[admitted.id])))
            #expect(checkIn.result == .checkedIn && checkIn.conflict != true)

            let recorded = try recordedScans(world)
            // The first alone, the rest side by side: the server's order among them is not fixed.
            #expect(recorded.map(\.result).sorted() == ["CHECKED_IN", "INVALID", "INVALID", "NOT_FOUND", "NOT_FOUND"])
            // A second drain has nothing left to send.
            #expect(core.drainer.drain(ignoringBackoff: true).applied.isEmpty)
            #expect(try recordedScans(world).count == 5)
        }
    }

    // MARK: - The plan, without a server

    static func entry(_ id: Int64, kind: String = "checkin", code: String = "", due: Bool = true) -> OutboxEntry {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let body = kind == "checkin" ? CanonicalJSON.string(CheckInBody(shortId: code, confirmApprovalRequest: false)) : "{}"
        return OutboxEntry(id: id, kind: kind, method: "POST", url: "http://gate.test/api/x", body: body, createdAt: now,
                           attempts: due ? 0 : 1, lastError: nil, idempotencyKey: "key-\(id)",
                           nextAttemptAt: due ? now : now.addingTimeInterval(60), scannedAt: now, credential: .scanner)
    }

    @Test func aWaitingEntryHoldsBackItsPassAndWhatFollowsAnythingElse() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let a = "AB12CD34", b = "K7Q2M9XD", c = "MN34PQ56"
        let entries = [
            Self.entry(1, code: "GP1:\(a)", due: false),
            Self.entry(2, code: b),
            Self.entry(3, code: a.lowercased()),              // the same pass in another form: held
            Self.entry(4, code: "https://gate.test/p/\(c)"),
            Self.entry(5, kind: "checkout"),                  // something before it waits: held
            Self.entry(6, code: c),                           // after a held check-out: held
        ]
        let plan = ReplayPlan(entries, now: now, ignoringBackoff: false)
        #expect(plan.due.map(\.entry.id) == [2, 4])
        #expect(plan.waiting.map(\.id) == [1])
        #expect(plan.heldBack.map(\.id) == [3, 5, 6])
        #expect(plan.due.map(\.order) == [.pass(b), .pass(c)])

        let everything = ReplayPlan(entries, now: now, ignoringBackoff: true)
        #expect(everything.due.map(\.entry.id) == [1, 2, 3, 4, 5, 6])
        #expect(everything.due[4].order == .everything)
        #expect(everything.waiting.isEmpty && everything.heldBack.isEmpty)
    }

    @Test func aTextThatNamesNoPassIsOrderedWithItself() {
        #expect(ReplayOrder(Self.entry(1, code: "not a pass")) == .pass("text:not a pass"))
        #expect(ReplayOrder(Self.entry(1, kind: "walk-in")) == .everything)
        var broken = Self.entry(1)
        broken.body = "{not json"
        #expect(ReplayOrder(broken) == .everything, "a body that cannot be read keeps its place against everything")
    }
}

extension Date {
    /// This instant without its fraction of a second.
    var wholeSeconds: Date { Date(timeIntervalSince1970: timeIntervalSince1970.rounded(.down)) }
}
