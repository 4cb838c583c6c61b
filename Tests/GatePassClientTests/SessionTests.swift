import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassClient
@testable import GatePassServer

@Suite(.serialized) struct SessionTests {
    @Test func stateFilesArePrivate() throws {
        let world = try ClientWorld()
        try world.addUser("guard@acme.test", role: .admin)
        let core = try world.core()
        try world.login(core, "guard@acme.test")
        let folder = try FileManager.default.attributesOfItem(atPath: world.stateDirectory.path)
        #expect((folder[.posixPermissions] as? Int) == 0o700)
        for file in try FileManager.default.contentsOfDirectory(atPath: world.stateDirectory.path) {
            let attributes = try FileManager.default.attributesOfItem(atPath: world.stateDirectory.path + "/" + file)
            #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(file) must be 0600")
        }
    }

    @Test func differentUserPurgesSameUserKeeps() throws {
        let world = try ClientWorld()
        try world.addUser("a@acme.test", role: .admin)
        try world.addUser("b@acme.test", role: .admin)
        let core = try world.core()
        try world.login(core, "a@acme.test")
        _ = try core.stats()
        world.stop()
        _ = try core.checkIn(code: "AAAAAAAA", confirmApprovalRequest: false)
        #expect(try core.store.outboxCount() == 1)
        try world.start()

        // The same user again: everything stays.
        try world.login(core, "a@acme.test")
        #expect(try core.store.outboxCount() == 1)
        #expect(try core.store.cached("stats") != nil)

        // Another user: refused while entries would be lost, unless allowed.
        let check = try core.identityCheck(server: world.baseURL, email: "b@acme.test")
        #expect(check.changesIdentity)
        #expect(check.entriesAtRisk == 1)
        #expect(throws: ClientError.self) { try world.login(core, "b@acme.test") }
        #expect(try core.store.outboxCount() == 1)
        let outcome = try world.login(core, "b@acme.test", allowPurge: true)
        #expect(outcome.purgedEntries == 1)
        #expect(try core.store.outboxCount() == 0)
        #expect(try core.store.cached("stats") == nil)
    }

    @Test func deviceTokenIsMadeOnceRegisteredAtLoginAndUnregisteredAtLogout() throws {
        let world = try ClientWorld()
        let admin = try world.addUser("a@acme.test", role: .admin)
        let core = try world.core()
        let token = try core.store.deviceToken()
        #expect(token == (try core.store.deviceToken()))
        #expect(token.count > 40)
        #expect(token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        let outcome = try world.login(core, "a@acme.test")
        #expect(outcome.device?.token == token)
        #expect(outcome.device?.platform == "console")
        #expect(outcome.device?.userId == admin.id)
        let registered = try world.server!.store.readConnection { db in
            try db.scalarInt("SELECT COUNT(*) FROM devices WHERE token = ? AND user_id = ?", [token, admin.id])
        }
        #expect(registered == 1)
        let problems = try core.logout()
        #expect(problems.isEmpty)
        let after = try world.server!.store.readConnection { db in try db.scalarInt("SELECT COUNT(*) FROM devices WHERE token = ?", [token]) }
        #expect(after == 0)
        #expect(try core.session() == nil)
        // The token survives logout: the same device keeps its identity.
        #expect(try core.store.deviceToken() == token)
    }

    @Test func readsFallBackToTheCacheWhenOffline() throws {
        let world = try ClientWorld()
        try world.addUser("a@acme.test", role: .admin)
        let core = try world.core()
        try world.login(core, "a@acme.test")
        let online = try core.stats()
        #expect(online.fromCache == false)
        world.stop()
        let offline = try core.stats()
        #expect(offline.fromCache)
        #expect(offline.value == online.value)
        #expect(throws: ClientError.self) { try core.approvals() } // never cached: the error surfaces
    }

    @Test func decodingErrorsNameTheField() throws {
        let body = Array(#"{"items":[{"id":"x"}],"nextCursor":null}"#.utf8)
        #expect(throws: ClientError.decoding("items[0].shortId is missing")) {
            try APIClient.decode(Page<Visitor>.self, from: body)
        }
        let wrongType = Array(#"{"checkedInToday":"three","checkedOutToday":0,"awaitingApproval":0,"expectedToday":0,"onSite":0}"#.utf8)
        #expect(throws: ClientError.decoding("checkedInToday is not of type Int")) {
            try APIClient.decode(ScanStats.self, from: wrongType)
        }
        #expect(throws: ClientError.decoding("the answer is not JSON")) { try APIClient.decode(ScanStats.self, from: Array("<html>".utf8)) }
    }

    @Test func errorTaxonomy() throws {
        func check(_ status: Int, _ body: String) -> ClientError? {
            do throws(ClientError) { try APIClient.check(HTTPResponse(status: status, headers: [:], body: Array(body.utf8))); return nil } catch { return error }
        }
        #expect(check(200, "{}") == nil)
        #expect(check(401, #"{"error":{"code":"UNAUTHORIZED","message":"gone"}}"#) == .unauthorized("gone"))
        #expect(check(404, #"{"error":{"code":"NOT_FOUND","message":"no"}}"#) == .permanent(status: 404, code: "NOT_FOUND", message: "no"))
        #expect(check(503, "oops") == .transient(status: 503, message: "the server answered 503"))
        #expect(ClientError.from(.cannotConnect(url: "u", detail: "refused")) == .offline("refused"))
        #expect(ClientError.from(.timedOut(url: "u")).isRetryable)
        #expect(ClientError.from(.tls(url: "u", detail: "bad cert")).isRetryable == false)
    }

    /// A conflict that says when to come back (`Retry-After`) is not final: an idempotent request
    /// still in progress, a lost race. An outbox must retry those, never dead-letter them; a 409
    /// without it (a status conflict) is final. A 429 (a limit) asks to wait its `Retry-After`
    /// and send again.
    @Test func aRefusalWithRetryAfterIsTransient() {
        func check(_ status: Int, _ headers: [String: String]) -> ClientError? {
            let body = Array(#"{"error":{"code":"CONFLICT","message":"in progress"}}"#.utf8)
            do throws(ClientError) { try APIClient.check(HTTPResponse(status: status, headers: headers, body: body)); return nil }
            catch { return error }
        }
        #expect(check(409, ["retry-after": "1"]) == .transient(status: 409, message: "in progress"))
        #expect(check(429, ["retry-after": "30"]) == .rateLimited(retryAfterSeconds: 30, message: "in progress"))
        #expect(check(429, [:]) == .rateLimited(retryAfterSeconds: nil, message: "in progress"))
        #expect(check(429, ["retry-after": "30"])?.isRetryable == true)
        #expect(check(409, [:]) == .permanent(status: 409, code: "CONFLICT", message: "in progress"))
    }

    @Test func backoffIsExponentialWithFullJitterAndCapped() {
        let backoff = Backoff()
        #expect(backoff.ceiling(afterAttempts: 1) == 1)
        #expect(backoff.ceiling(afterAttempts: 2) == 2)
        #expect(backoff.ceiling(afterAttempts: 5) == 16)
        #expect(backoff.ceiling(afterAttempts: 9) == 256)
        #expect(backoff.ceiling(afterAttempts: 10) == 300)
        #expect(backoff.ceiling(afterAttempts: 1000) == 300)
        let delays = (0..<500).map { _ in backoff.delay(afterAttempts: 4) }
        #expect(delays.allSatisfy { $0 >= 0 && $0 <= 8 })
        #expect(Set(delays.map { Int($0) }).count > 4) // spread over the range, not a fixed wait
    }

    /// The jitter is a value a test injects: its fraction of the ceiling is the wait, and a
    /// source that answers outside [0, 1] (or NaN) cannot make a negative or longer wait.
    @Test func backoffJitterIsAnInjectedFractionOfTheCeiling() {
        let backoff = Backoff(base: 1, cap: 300)
        #expect(backoff.delay(afterAttempts: 4, jitter: JitterSource { 0 }) == 0)
        #expect(backoff.delay(afterAttempts: 4, jitter: JitterSource { 0.5 }) == 4)
        #expect(backoff.delay(afterAttempts: 4, jitter: JitterSource { 1 }) == 8)
        #expect(backoff.delay(afterAttempts: 20, jitter: JitterSource { 1 }) == 300)
        #expect(backoff.delay(afterAttempts: 4, jitter: JitterSource { -3 }) == 0)
        #expect(backoff.delay(afterAttempts: 4, jitter: JitterSource { 7 }) == 8)
        #expect(backoff.delay(afterAttempts: 4, jitter: JitterSource { .nan }) == 0)
        let fractions = (0..<200).map { _ in JitterSource.system.fraction() }
        #expect(fractions.allSatisfy { (0...1).contains($0) })
        #expect(Set(fractions).count > 190, "the system source is not a constant")
    }

    @Test func backgroundServiceDrainsWhenTheServerComesBack() throws {
        let world = try ClientWorld()
        try world.addUser("a@acme.test", role: .admin)
        let admin = try world.token("a@acme.test")
        let pass = try world.createVisitor(admin)
        let core = try world.core(timeout: .seconds(2))
        try world.login(core, "a@acme.test")
        world.stop()
        _ = try core.checkIn(code: pass.shortId, confirmApprovalRequest: false)
        // A 30-second interval: only the reachability probe can make this drain happen soon.
        let foundOffline = DispatchSemaphore(value: 0)
        let appliedOne = DispatchSemaphore(value: 0)
        let service = OutboxService(core: core, interval: 30, probeCap: 1) { report, online in
            if report.offline { foundOffline.signal() }
            if !report.applied.isEmpty { appliedOne.signal() }
        }
        service.start()
        defer { service.stop() }
        // The service has seen the server away (and probes now) before it comes back.
        try #require(foundOffline.wait(timeout: .now() + 30) == .success, "the first drain found the server away")
        try world.start()
        try #require(appliedOne.wait(timeout: .now() + 30) == .success, "a drain applied the check-in once the server was back")
        #expect(try core.store.outboxCount() == 0)
        #expect(try world.scans(admin).count == 1)
    }
}
