import Foundation
import GatePassCore
import LoopbackHTTP
import SQLite
import Testing
@testable import GatePassClient
@testable import GatePassServer

/// The kiosk's pass cache (issue 13): loaded from a real server's `/expected`, kept current by
/// deltas, kept across restarts, read strictly.
@Suite(.serialized) struct PassCacheTests {
    static let zone = TimeZone.current

    /// A world with an admin who may scan, logged in on a kiosk core.
    static func kiosk() throws -> (world: ClientWorld, admin: String, core: ClientCore) {
        let world = try ClientWorld()
        try world.addUser("guard@acme.test", role: .admin)
        let admin = try world.token("guard@acme.test")
        let core = try world.core()
        try world.login(core, "guard@acme.test")
        return (world, admin, core)
    }

    @Test func aFullLoadThenDeltasCarryCancellationsAndCheckIns() throws {
        let (world, admin, core) = try Self.kiosk()
        let first = try world.createVisitor(admin, name: "Ana Pop")
        let second = try world.createVisitor(admin, name: "Ion Ionescu")
        let load = try core.syncPassCache(timeZone: Self.zone)
        #expect(load.fullLoad)
        #expect(load.items == 2)
        var snapshot = try core.store.passCacheSnapshot()
        #expect(Set(snapshot.visitors.keys.map(\.rawValue)) == [first.shortId, second.shortId])
        #expect(snapshot.visitors.values.allSatisfy { $0.status == .expected })

        // A cancellation and a check-in at another gate arrive as items of the next delta.
        let cancelled = try LoopbackHTTPClient(port: world.port).send("POST", "/api/visitors/\(first.id)/cancel", token: admin, json: [:])
        #expect(cancelled.status == 200)
        _ = try core.checkIn(code: second.shortId, confirmApprovalRequest: false)
        let third = try world.createVisitor(admin, name: "Maria Pop")
        let delta = try core.syncPassCache(timeZone: Self.zone)
        #expect(!delta.fullLoad)
        #expect(delta.items == 3, "the two changed passes and the new one, nothing else")
        snapshot = try core.store.passCacheSnapshot()
        #expect(snapshot.visitors[ShortID(first.shortId)!]?.status == .cancelled)
        #expect(snapshot.visitors[ShortID(second.shortId)!]?.status == .checkedIn)
        #expect(snapshot.visitors[ShortID(third.shortId)!]?.status == .expected)
        // Nothing changed: an empty delta, and the age starts again.
        let quiet = try core.syncPassCache(timeZone: Self.zone)
        #expect(quiet.items == 0 && !quiet.fullLoad)

        // The cached decision of each, offline.
        #expect(try core.decideOffline(code: first.shortId, scannedAt: Date(), policy: .cachedOnly).result == .cancelled)
        #expect(try core.decideOffline(code: second.shortId, scannedAt: Date(), policy: .cachedOnly).result == .alreadyCheckedIn)
        // The on-site list came along (the evacuation roll offline).
        #expect(try core.onSiteRoll().entries.map(\.shortId.rawValue) == [second.shortId])
        let status = try #require(try core.passCacheStatus())
        #expect(status.passes == 3 && status.onSite == 1)
    }

    @Test func anOfflineAdmissionMakesTheSecondScanAlreadyInsideUntilTheServerShowsIt() throws {
        let (world, admin, core) = try Self.kiosk()
        let pass = try world.createVisitor(admin)
        try core.syncPassCache(timeZone: Self.zone)
        #expect(try core.decideOffline(code: pass.shortId, scannedAt: Date(), policy: .cachedOnly).result == .checkedIn)
        #expect(try core.decideOffline(code: pass.shortId, scannedAt: Date(), policy: .cachedOnly).result == .alreadyCheckedIn)
        // A delta before the replay still shows EXPECTED: the admission holds.
        _ = try LoopbackHTTPClient(port: world.port).send("PATCH", "/api/visitors/\(pass.id)", token: admin, json: ["company": "Acme"])
        try core.syncPassCache(timeZone: Self.zone)
        #expect(try core.passCacheStatus()?.admittedOffline == 1)
        #expect(try core.decideOffline(code: pass.shortId, scannedAt: Date(), policy: .cachedOnly).result == .alreadyCheckedIn)
        // The replay reached the server: the next delta shows the visitor inside, the admission is done.
        _ = try core.checkIn(code: pass.shortId, confirmApprovalRequest: false)
        try core.syncPassCache(timeZone: Self.zone)
        #expect(try core.passCacheStatus()?.admittedOffline == 0)
        #expect(try core.decideOffline(code: pass.shortId, scannedAt: Date(), policy: .cachedOnly).result == .alreadyCheckedIn)
    }

    @Test func theCacheSurvivesARestartAndShowsItsAge() throws {
        let (world, admin, core) = try Self.kiosk()
        let pass = try world.createVisitor(admin)
        try core.syncPassCache(timeZone: Self.zone)
        let syncedAt = try #require(try core.passCacheStatus()).lastSyncAt
        core.store.close()

        world.stop()
        let reopened = try world.core()
        let status = try #require(try reopened.passCacheStatus())
        #expect(status.passes == 1)
        #expect(status.lastSyncAt == Date(millisecondsSince1970: syncedAt.millisecondsSince1970))
        #expect(try reopened.passCacheSyncedAt() == status.lastSyncAt)
        #expect(status.age(at: syncedAt.addingTimeInterval(180)) >= 179)
        #expect(try reopened.decideOffline(code: pass.shortId, scannedAt: Date(), policy: .cachedOnly).result == .checkedIn)
        // The server is down: a sync fails and leaves the cache as it was.
        #expect(throws: ClientError.self) { try reopened.syncPassCache(timeZone: Self.zone) }
        #expect(try reopened.passCacheStatus()?.lastSyncAt == status.lastSyncAt)
        // The state file stays private.
        let attributes = try FileManager.default.attributesOfItem(atPath: reopened.store.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test func aRefusedCursorOrANewDayLoadsAgain() throws {
        let (world, admin, core) = try Self.kiosk()
        _ = try world.createVisitor(admin)
        try core.syncPassCache(timeZone: Self.zone)
        try core.store.withConnection { _ = try $0.execute("UPDATE pass_cache_state SET cursor = 'not-a-cursor'") }
        let again = try core.syncPassCache(timeZone: Self.zone)
        #expect(again.fullLoad)
        #expect(again.items == 1)
        try core.store.withConnection { _ = try $0.execute("UPDATE pass_cache_state SET day = '2001-01-01'") }
        #expect(try core.syncPassCache(timeZone: Self.zone).fullLoad)
        #expect(try core.passCacheStatus()?.day == ClientCore.siteDay(Date(), in: Self.zone))
        // The server's Date header gave the clock offset: one machine, so within a couple of seconds.
        let offset = try #require(try core.passCacheStatus()?.clockOffset)
        #expect(abs(offset) < 3)
    }

    @Test func theServiceSyncsAtStartAndAtOnceWhenPoked() throws {
        let (world, admin, core) = try Self.kiosk()
        _ = try world.createVisitor(admin)
        let synced = DispatchSemaphore(value: 0)
        let reports = Locked<[PassCacheSyncReport]>([])
        // An interval no test waits out: only the start and the poke may sync.
        let service = PassCacheService(core: core, timeZone: Self.zone, interval: 3600) { result in
            if case .success(let report) = result { reports.withLock { $0.append(report) } }
            synced.signal()
        }
        service.start()
        defer { service.stop() }
        #expect(synced.wait(timeout: .now() + 30) == .success)
        let later = try world.createVisitor(admin, name: "Later Visitor")
        service.poke()
        #expect(synced.wait(timeout: .now() + 30) == .success)
        #expect(reports.withLock { $0.map(\.fullLoad) } == [true, false])
        #expect(try core.store.passCacheSnapshot().visitors[ShortID(later.shortId)!] != nil)
    }

    @Test func aBlockAndItsEndArriveByDeltaFromTheServer() throws {
        let (world, admin, core) = try Self.kiosk()
        let pass = try world.createVisitor(admin, name: "Boris Blocked")
        let other = try world.createVisitor(admin, name: "Olga Other")
        try core.syncPassCache(timeZone: Self.zone)
        let http = LoopbackHTTPClient(port: world.port)
        let entry = try http.send("POST", "/api/blocklist", token: admin, json: ["name": "Boris Blocked", "reason": "test"])
        #expect(entry.status == 201)
        // A cancellation is revoked too.
        #expect(try http.send("POST", "/api/visitors/\(other.id)/cancel", token: admin, json: [:]).status == 200)
        let delta = try core.syncPassCache(timeZone: Self.zone)
        #expect(!delta.fullLoad && delta.revocations >= 2)
        var snapshot = try core.store.passCacheSnapshot()
        #expect(snapshot.revoked.isSuperset(of: [ShortID(pass.shortId)!, ShortID(other.shortId)!]))
        #expect(try core.decideOffline(code: pass.shortId, scannedAt: Date(), policy: .signed).result == .blocked)
        #expect(try core.decideOffline(code: other.shortId, scannedAt: Date(), policy: .signed).result == .cancelled)

        // The entry removed: the pass comes back in items and is no longer revoked.
        let entryId = try #require(entry.json?["id"] as? String)
        #expect(try http.send("DELETE", "/api/blocklist/\(entryId)", headers: ["Authorization": "Bearer \(admin)"]).status == 204)
        try core.syncPassCache(timeZone: Self.zone)
        snapshot = try core.store.passCacheSnapshot()
        #expect(!snapshot.revoked.contains(ShortID(pass.shortId)!))
        #expect(try core.decideOffline(code: pass.shortId, scannedAt: Date(), policy: .signed).result == .checkedIn)
    }

    @Test func aBlockedPassInAFullPageDoesNotEndTheLoadEarly() throws {
        let (world, admin, core) = try Self.kiosk()
        // The first page of the feed holds a blocked pass: the server names it in `revoked`
        // only, so the page has 499 items — and 500 passes, so more follow.
        let blocked = try world.createVisitor(admin, name: "Boris Blocked")
        let http = LoopbackHTTPClient(port: world.port)
        #expect(try http.send("POST", "/api/blocklist", token: admin, json: ["name": "Boris Blocked", "reason": "test"]).status == 201)
        let others = try (0..<(ClientCore.expectedPageSize + 20)).map { try world.createVisitor(admin, name: "Guest \($0)") }
        let load = try core.syncPassCache(timeZone: Self.zone)
        #expect(load.fullLoad && load.pages >= 2, "\(load)")
        let snapshot = try core.store.passCacheSnapshot()
        #expect(snapshot.visitors.count == others.count, "every pass arrived")
        #expect(snapshot.revoked == [ShortID(blocked.shortId)!])
    }

    @Test func theThirtySecondsAreMeasuredOnTheInjectedClock() throws {
        let (world, admin, core) = try Self.kiosk()
        let clock = OutboxServiceTests.ManualClock()
        let synced = DispatchSemaphore(value: 0), waiting = DispatchSemaphore(value: 0)
        let service = PassCacheService(core: core, timeZone: Self.zone, clock: clock,
                                       onSync: { _ in synced.signal() }, onWait: { _ in waiting.signal() })
        service.start()
        defer { service.stop() }
        #expect(synced.wait(timeout: .now() + 30) == .success, "the sync at start")
        #expect(waiting.wait(timeout: .now() + 30) == .success, "then the wait for the interval")
        let later = try world.createVisitor(admin, name: "Later Visitor")
        // 30 s on the injected clock: the delta comes now, not after 30 s of real time.
        clock.advance(by: 30)
        service.clockDidAdvance()
        #expect(synced.wait(timeout: .now() + 30) == .success, "the delta after the interval")
        #expect(try core.store.passCacheSnapshot().visitors[ShortID(later.shortId)!] != nil)
    }

    // MARK: - A hostile server

    /// Answers `/expected` with whatever the test gives it (the keys and the roll empty).
    final class ScriptedServer: HTTPTransport, @unchecked Sendable {
        let expected: Locked<[UInt8]>
        init(_ body: String) { expected = Locked(Array(body.utf8)) }
        func perform(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
            let body: [UInt8] = if request.url.contains("/expected") { expected.withLock { $0 } }
                else if request.url.contains("/pass-keys") { Array(#"{"keys":[]}"#.utf8) }
                else { Array(#"{"items":[],"nextCursor":null}"#.utf8) }
            return HTTPResponse(status: 200, headers: ["date": "Tue, 01 Dec 2026 12:00:00 GMT"], body: body)
        }
        func separateHandle() -> any HTTPTransport { self }
    }

    @Test func answersTheCacheCannotTrustLeaveItAsItWas() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-hostile-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let server = ScriptedServer(#"{"items":[],"cursor":"1","revoked":[]}"#)
        let core = try ClientCore(directory: StateDirectory(path: path), transport: server, platform: "kiosk")
        try core.store.saveKioskEnrolment(KioskEnrolment(
            server: "http://gate.invalid", scanner: ScannerTokenAnswer(scannerToken: "t", checkpoint: CheckpointSummary(id: "g", name: "Gate"),
                                                                        expiresAt: Timestamp(Date().addingTimeInterval(3600))),
            enrolledAt: Timestamp(Date())))
        try core.syncPassCache(timeZone: Self.zone)
        let before = try #require(try core.passCacheStatus())
        let visitor = String(decoding: CanonicalJSON.encode(Self.visitor("AAAAAAAA")), as: UTF8.self)
        let hostile = [
            "", "not json", "[]", #"{"items":[]}"#, #"{"items":[],"cursor":"2"}"#,
            #"{"items":[],"cursor":"","revoked":[]}"#,
            #"{"items":[],"cursor":"\#(String(repeating: "9", count: 300))","revoked":[]}"#,
            #"{"items":[],"cursor":"a b","revoked":[]}"#,
            #"{"items":[],"cursor":"2","revoked":["not-a-short-id"]}"#,
            #"{"items":[],"cursor":"2","revoked":["aaaaaaaa"]}"#,
            #"{"items":[{"shortId":"AAAAAAAA"}],"cursor":"2","revoked":[]}"#,
            #"{"items":[\#(visitor.replacingOccurrences(of: "\"EXPECTED\"", with: "\"INSIDE\""))],"cursor":"2","revoked":[]}"#,
        ]
        for body in hostile {
            server.expected.withLock { $0 = Array(body.utf8) }
            #expect(throws: ClientError.self, "\(body.prefix(60))") { try core.syncPassCache(timeZone: Self.zone) }
            let after = try #require(try core.passCacheStatus())
            #expect(after.cursor == before.cursor && after.passes == 0 && after.revoked == 0, "\(body.prefix(60))")
        }
        // The Date header gave an offset: this test's fixed date is far from now, so the kiosk would warn.
        #expect(ServerClock.warning(offset: before.clockOffset) != nil)
    }

    @Test func theDateHeaderIsReadStrictly() {
        #expect(ServerClock.parse("Tue, 01 Dec 2026 12:00:00 GMT") == Date(timeIntervalSince1970: 1_796_126_400))
        for text in ["", "Tue, 01 Dec 2026 12:00:00 UTC", "Tue, 1 Dec 2026 12:00:00 GMT", "2026-12-01T12:00:00Z",
                     "Tue, 01 Dec 2026 25:00:00 GMT", String(repeating: "x", count: 29)] {
            #expect(ServerClock.parse(text) == nil, "\(text)")
        }
        let sent = Date(timeIntervalSince1970: 1_796_126_400.2)
        #expect(ServerClock.offset(dateHeader: "Tue, 01 Dec 2026 12:00:00 GMT", sent: sent, received: sent.addingTimeInterval(0.6))
                .map { abs($0) < 0.01 } == true, "the midpoint minus the header's half second")
        #expect(ServerClock.offset(dateHeader: nil, sent: sent, received: sent) == nil)
        #expect(ServerClock.warning(offset: 119) == nil)
        #expect(ServerClock.warning(offset: -121)?.contains("2 min behind the server's") == true)
        #expect(ServerClock.warning(offset: 600)?.contains("10 min ahead of the server's") == true)
    }

    // MARK: - Revocations and strict reading (the store, with pages as api.md shapes them)

    static func visitor(_ shortId: String, status: VisitorStatus = .expected) -> Visitor {
        let now = Date()
        return Visitor(id: UUID().uuidString.lowercased(), shortId: ShortID(shortId)!, name: "V \(shortId)", status: status,
                       validity: ValidityWindow(from: now.addingTimeInterval(-3600), until: now.addingTimeInterval(3600)),
                       createdAt: now.addingTimeInterval(-7200))
    }

    static func store() throws -> (ClientDatabase, String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-cache-\(UUID().uuidString)").path
        return (try ClientDatabase(directory: StateDirectory(path: path)), path)
    }

    @Test func revocationsAreAppliedAndEndWhenThePassComesBack() throws {
        let (store, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let now = Date()
        try store.replacePassCache(server: "s", day: "d", pages: [
            ExpectedPasses(items: [Self.visitor("AAAAAAAA"), Self.visitor("BBBBBBBB")], cursor: "1", revoked: []),
        ], at: now, clockOffset: nil)
        // Blocked: revoked without an item; cancelled: the item and the revocation together;
        // one never cached is revoked too (a signed pass of it is refused).
        try store.applyPassCacheDelta(ExpectedPasses(items: [Self.visitor("BBBBBBBB", status: .cancelled)], cursor: "2",
                                                     revoked: ["AAAAAAAA", "BBBBBBBB", "CCCCCCCC"]), at: now, clockOffset: nil)
        var snapshot = try store.passCacheSnapshot()
        #expect(snapshot.revoked == Set(["AAAAAAAA", "BBBBBBBB", "CCCCCCCC"].map { ShortID($0)! }))
        let decide = { (code: String, snapshot: OfflineCacheSnapshot) in
            OfflineDecision.decide(text: code, scannedAt: now, cache: snapshot, policy: .signed, checkpointId: "g",
                                   verify: { _, _, _ in true }).result
        }
        #expect(decide("AAAAAAAA", snapshot) == .blocked)
        #expect(decide("BBBBBBBB", snapshot) == .cancelled)
        // The block ends: the pass comes back in items and leaves the revoked set.
        try store.applyPassCacheDelta(ExpectedPasses(items: [Self.visitor("AAAAAAAA")], cursor: "3", revoked: []),
                                      at: now, clockOffset: nil)
        snapshot = try store.passCacheSnapshot()
        #expect(!snapshot.revoked.contains(ShortID("AAAAAAAA")!))
        #expect(decide("AAAAAAAA", snapshot) == .checkedIn)
        #expect(try store.passCacheStatus()?.cursor == "3")
        // A revocation that is not a short id is the server's error, not something to guess at.
        #expect(throws: ClientError.self) {
            try store.applyPassCacheDelta(ExpectedPasses(items: [], cursor: "4", revoked: ["aaaaaaaa\u{1B}[2J"]), at: now, clockOffset: nil)
        }
        #expect(try store.passCacheStatus()?.cursor == "3", "a refused page is not applied")
    }

    @Test func aStoredValueThisCodeDoesNotUnderstandIsAnError() throws {
        let (store, path) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try store.replacePassCache(server: "s", day: "d", pages: [
            ExpectedPasses(items: [Self.visitor("AAAAAAAA")], cursor: "1", revoked: []),
        ], at: Date(), clockOffset: nil)
        let damages = [
            "UPDATE pass_cache_passes SET visitor = replace(visitor, '\"EXPECTED\"', '\"SOMETHING\"')",
            "UPDATE pass_cache_passes SET visitor = '{}'",
            "UPDATE pass_cache_passes SET short_id = 'nonsense'",
            "UPDATE pass_cache_passes SET short_id = 'BBBBBBBB'",
            "INSERT INTO meta (key, value) VALUES ('pass_keys', '{\"keys\":[{\"id\":\"K1\",\"algorithm\":\"RSA\",\"purpose\":\"admit\",\"publicKey\":\"AA\",\"createdAt\":\"2026-01-01T00:00:00Z\"}]}')",
        ]
        for damage in damages {
            let (damaged, damagedPath) = try Self.store()
            defer { try? FileManager.default.removeItem(atPath: damagedPath) }
            try damaged.replacePassCache(server: "s", day: "d", pages: [
                ExpectedPasses(items: [Self.visitor("AAAAAAAA")], cursor: "1", revoked: []),
            ], at: Date(), clockOffset: nil)
            try damaged.withConnection { _ = try $0.execute(damage) }
            #expect(throws: ClientError.self, "\(damage)") { try damaged.passCacheSnapshot() }
        }
        #expect(try store.passCacheSnapshot().visitors.count == 1)
    }
}

// MARK: - Revocations the kiosk was told of stick

extension PassCacheTests {
    /// The GP2 text the server draws on the visitor's pass now.
    static func passText(_ world: ClientWorld, visitorId: String) throws -> String {
        let server = try #require(world.server)
        let record = try #require(try server.store.read { tx in try tx.visitors.find(id: visitorId) })
        return try server.application.passes.keyring.signedText(for: record.visitor, organizationId: record.organizationId,
                                                                now: Date()).text
    }

    @Test func aCancellationToldByADeltaRefusesThePassOfflineInEveryFormAndAfterARestart() throws {
        let (world, admin, core) = try Self.kiosk()
        let pass = try world.createVisitor(admin, name: "Cora Cancel")
        try core.syncPassCache(timeZone: Self.zone)
        let text = try Self.passText(world, visitorId: pass.id)
        // Admitted offline once before the cancellation was known (the server was away).
        #expect(try core.decideOffline(code: text, scannedAt: Date(), policy: .signed).result == .checkedIn)
        #expect(try LoopbackHTTPClient(port: world.port).send("POST", "/api/visitors/\(pass.id)/cancel", token: admin,
                                                            json: [:]).status == 200)
        let delta = try core.syncPassCache(timeZone: Self.zone)
        #expect(!delta.fullLoad && delta.revocations == 1)
        for code in [text, pass.shortId, "GP1:\(pass.shortId)"] {
            for policy in [OfflinePolicy.signed, .cachedOnly] {
                let decision = try core.decideOffline(code: code, scannedAt: Date(), policy: policy)
                #expect(!decision.admits, "\(code.prefix(12)) under \(policy): \(decision.result)")
            }
        }
        core.store.close()
        let reopened = try world.core()
        #expect(try !reopened.decideOffline(code: text, scannedAt: Date(), policy: .signed).admits, "after a restart")
    }

    /// A state file written before the pass keys had their own row keeps its keys: the
    /// migration moves them, and a device that never synced a pass cache can hold keys too.
    @Test func theKeysOfAnOlderStateFileMoveToTheirOwnRow() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-cache-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let directory = StateDirectory(path: path)
        try directory.prepare()
        let keys = #"{"keys":[{"algorithm":"Ed25519","createdAt":"2026-01-01T00:00:00Z","id":"A1","publicKey":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","purpose":"admit"}]}"#
        do {
            let old = try Connection(path: directory.databasePath)
            _ = try Migrator.migrate(old, Array(ClientDatabase.migrations.prefix(2)))
            _ = try old.execute("""
                INSERT INTO pass_cache_state (only, server, day, cursor, last_sync_at, keys) VALUES (1, 's', 'd', 'c', 0, ?)
                """, [keys])
            old.close()
        }
        let store = try ClientDatabase(directory: directory)
        #expect(try store.passKeys().map(\.id) == ["A1"])
        #expect(try store.passCacheStatus()?.keys == 1)
        #expect(try store.passCacheSnapshot().keys.map(\.id) == ["A1"])
        // Without a pass cache at all, keys are kept and read.
        try store.purgeIdentityData()
        #expect(try store.passKeys().isEmpty)
        try store.savePassKeys(try JSONDecoder().decode(PassKeyList.self, from: Data(keys.utf8)))
        #expect(try store.passCacheStatus() == nil && store.passKeys().count == 1)
    }
}
