import Foundation
import GatePassClient
import GatePassCore
import GatePassScanner
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// The offline gate end to end (issue 13), from picture folders against a real server: the
/// kiosk online, its cache loaded, the server stopped; passes decided at the gate; the server
/// back, every scan replayed once and reconciled.
extension KioskTests {
    /// The GP2 text the server draws on the visitor's pass now.
    func passText(_ gate: Gate, visitorId: String) throws -> String {
        let server = try #require(gate.server)
        let record = try #require(try server.store.read { tx in try tx.visitors.find(id: visitorId) })
        return try server.application.passes.keyring.signedText(for: record.visitor, organizationId: record.organizationId,
                                                                 now: Date()).text
    }

    /// A well-formed text whose signature is one character off: a forgery of `text`'s pass.
    func forged(_ text: String) -> String {
        var characters = Array(text)
        let index = characters.count - 40
        let alphabet = ShortID.alphabet
        characters[index] = alphabet[(alphabet.firstIndex(of: characters[index])! + 1) % alphabet.count]
        return String(characters)
    }

    @Test func theOfflineGateAdmitsByCacheAndSignatureRefusesForgeriesAndReconcilesOnReplay() throws {
        let gate = try Gate()
        try gate.loginKiosk("owner@demo.gatepass")
        let owner = try gate.token("owner@demo.gatepass")
        let valid = try gate.visitor(owner, ["name": "Vera Valid"])
        let cancelled = try gate.visitor(owner, ["name": "Cora Cancel"])
        // No sync but the first while the test runs: what changes after it is news to the kiosk.
        let kiosk = try runner(gate, options: .init(cooldown: 3, cacheInterval: 3600))
        try kiosk.start()
        defer { kiosk.stop() }
        let reader = try gate.core()
        #expect(kiosk.cacheSyncs.wait {
            let status = (try? reader.passCacheStatus()) ?? nil
            return (status?.passes ?? 0) >= 2 && (status?.keys ?? 0) >= 1
        })
        // After the kiosk's last sync: a new pass (known only by its signature) and a cancellation.
        let signedOnly = try gate.visitor(owner, ["name": "Sid Signed"])
        #expect(try gate.http.send("POST", "/api/visitors/\(cancelled.id)/cancel", token: owner, json: [String: Any]()).status == 200)
        let texts = (valid: try passText(gate, visitorId: valid.id), cancelled: try passText(gate, visitorId: cancelled.id),
                     signed: try passText(gate, visitorId: signedOnly.id))
        let forgery = forged(texts.valid)
        #expect(forgery != texts.valid && SignedPassText(parsing: forgery) != nil)

        gate.stopServer()
        let started = Date()
        try kiosk.scan(ImageFileSource(directory: try gate.folder("offline", [texts.valid, nil, forgery, nil, texts.cancelled, nil,
                                                                              texts.signed])))
        #expect(gate.waitForLine("ADMITTED offline (cache "))
        #expect(gate.waitForLine("Vera Valid (\(valid.shortId)) — welcome"))
        // A generous bound only: the server was away, so no scan waited for it.
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(gate.waitForLine("DENIED offline (cache "))
        // Named by the short id it claims, never by its raw text.
        #expect(gate.waitForLine("DENIED offline (cache ") && gate.waitForLine("\(valid.shortId) — the pass's signature or fields do not check out"))
        #expect(gate.waitForLine("Cora Cancel (\(cancelled.shortId)) — welcome"), "the kiosk's cache did not know of the cancellation")
        #expect(gate.waitForLine("  \(signedOnly.shortId) — welcome"), "admitted by its signature, named by its short id")
        #expect(!gate.terminal.stdout.contains(texts.signed), "the GP2 text is never shown")
        let queued = try reader.store.outboxEntries()
        #expect(queued.count == 4)
        var scannedAt: [String: Date] = [:]
        for entry in queued {
            let body = try JSONDecoder().decode(CheckInBody.self, from: Data(try #require(entry.body).utf8))
            scannedAt[body.shortId] = entry.scannedAt
        }

        try gate.startServer()
        #expect(gate.waitForLine("CONFLICT  Cora Cancel (\(cancelled.shortId)) — decided CHECKED_IN offline, the server says "))
        for code in [valid.shortId, signedOnly.shortId] {
            #expect(gate.terminal.wait { gate.terminal.stderr.contains("offline scan of \(code) delivered: decided CHECKED_IN offline") })
        }
        #expect(gate.terminal.wait { gate.terminal.stderr.contains("offline scan of \(forgery) delivered: decided INVALID offline") })
        #expect(try reader.store.outboxCount() == 0)
        #expect(try reader.store.deadLetters().isEmpty)

        // Every scan in the server's history once, with its original time and offline decision.
        let history = try gate.http.get("/api/visitor-scanner/scan-history?limit=500", token: owner).json
        let scans = (history?["items"] as? [[String: Any]]) ?? []
        let expected: [(text: String, decision: String)] = [(texts.valid, "CHECKED_IN"), (forgery, "INVALID"),
                                                            (texts.cancelled, "CHECKED_IN"), (texts.signed, "CHECKED_IN")]
        for (text, decision) in expected {
            let matching = scans.filter { $0["raw"] as? String == text }
            #expect(matching.count == 1, "\(text.prefix(16))")
            #expect(matching.first?["offline"] as? Bool == true)
            #expect(matching.first?["offlineDecision"] as? String == decision)
            #expect(matching.first?["scannedAt"] as? String == scannedAt[text].map { Timestamp($0).description })
        }
        // The visitor the kiosk let in is inside on the server too (the evacuation roll shows them).
        let cora = try gate.http.get("/api/visitors/\(cancelled.id)", token: owner).json
        #expect(cora?["status"] as? String == "CHECKED_IN")
    }

    /// A kiosk on `gate`, started and through its first sync (passes in its cache); the sync
    /// service syncs no more while the test runs.
    func startedKiosk(_ gate: Gate, cooldown: TimeInterval = 3) throws -> KioskRunner {
        let kiosk = try runner(gate, options: .init(cooldown: cooldown, cacheInterval: 3600))
        try kiosk.start()
        let reader = try gate.core()
        #expect(kiosk.cacheSyncs.wait { ((try? reader.passCacheStatus()) ?? nil)?.passes ?? 0 > 0 })
        return kiosk
    }

    @Test func aPassNeedingApprovalScannedOfflineIsAskedForWhenTheServerIsBack() throws {
        let gate = try Gate()
        try gate.loginKiosk("owner@demo.gatepass")
        let owner = try gate.token("owner@demo.gatepass")
        let needsApproval = try gate.visitor(owner, ["name": "Abby Approval", "requiresApproval": true])
        let kiosk = try startedKiosk(gate)
        defer { kiosk.stop() }
        gate.stopServer()
        try kiosk.scan(ImageFileSource(directory: try gate.folder("approval", ["GP1:\(needsApproval.shortId)"])))
        #expect(gate.waitForLine("APPROVAL NEEDED offline (cache "))
        try gate.startServer()
        // The replay answers APPROVAL_REQUIRED: the kiosk, online again, asks for the approval.
        #expect(gate.waitForLine("APPROVAL REQUESTED  Abby Approval (\(needsApproval.shortId)) — waiting for an approver"))
        let visitor = try gate.http.get("/api/visitors/\(needsApproval.id)", token: owner).json
        #expect(visitor?["status"] as? String == "AWAITING_APPROVAL")
        // Decided at once, whether or not the event stream is live again: a stream that had
        // seen no event resumes at "now", so the kiosk looks the awaited pass up when it connects.
        let approver = try gate.token("approver@demo.gatepass")
        _ = try gate.http.send("POST", "/api/approver/visitors/\(needsApproval.id)/approve", token: approver, json: [String: Any]())
        #expect(gate.waitForLine("ADMITTED  Abby Approval (\(needsApproval.shortId)) — welcome"))
    }

    /// api.md "Which offline claims count": a kiosk honours every revocation it was told of. Here
    /// the gate admitted a pass by its signature alone, the pass was cancelled and a delta told
    /// the gate; after a restart, with the server away, the pass is refused — its own earlier
    /// admission does not make it "already inside".
    @Test func aCancellationToldByADeltaHoldsOfflineAcrossARestartOverTheGatesOwnAdmission() throws {
        let gate = try Gate()
        try gate.loginKiosk("owner@demo.gatepass")
        let owner = try gate.token("owner@demo.gatepass")
        let first = try runner(gate, options: .init(cooldown: 3, cacheInterval: 3600))
        try first.start()
        let reader = try gate.core()
        #expect(first.cacheSyncs.wait { ((try? reader.passCacheStatus()) ?? nil)?.keys ?? 0 > 0 })
        let pass = try gate.visitor(owner, ["name": "Cora Cancel"])
        let text = try passText(gate, visitorId: pass.id)
        gate.stopServer()
        try first.scan(ImageFileSource(directory: try gate.folder("before", [text])))
        #expect(gate.waitForLine("  \(pass.shortId) — welcome"), "admitted by its signature")
        first.stop()

        // The server back while the gate is down (its scan still queued): cancelled, and told by a delta.
        try gate.startServer()
        #expect(try gate.http.send("POST", "/api/visitors/\(pass.id)/cancel", token: owner, json: [String: Any]()).status == 200)
        let delta = try reader.syncPassCache(timeZone: .current)
        #expect(!delta.fullLoad && delta.revocations == 1)
        gate.stopServer()

        let second = try runner(gate, options: .init(cooldown: 3, cacheInterval: 3600))
        try second.start()
        defer { second.stop() }
        try second.scan(ImageFileSource(directory: try gate.folder("after", [text])))
        #expect(gate.waitForLine("Cora Cancel (\(pass.shortId)) — the pass was cancelled"), "\(gate.terminal.stdout)")
    }

    /// A rejection the event stream brings is honoured offline before any delta.
    @Test func aRejectionOnTheEventStreamIsHonouredOffline() throws {
        let gate = try Gate()
        try gate.loginKiosk("owner@demo.gatepass")
        let owner = try gate.token("owner@demo.gatepass")
        let needsApproval = try gate.visitor(owner, ["name": "Rex Rejected", "requiresApproval": true])
        let kiosk = try startedKiosk(gate, cooldown: 0)
        defer { kiosk.stop() }
        try kiosk.scan(ImageFileSource(directory: try gate.folder("ask", ["GP1:\(needsApproval.shortId)"])))
        #expect(gate.waitForLine("Rex Rejected (\(needsApproval.shortId)) — waiting for an approver"))
        let approver = try gate.token("approver@demo.gatepass")
        _ = try gate.http.send("POST", "/api/approver/visitors/\(needsApproval.id)/reject", token: approver, json: [String: Any]())
        #expect(gate.waitForLine("Rex Rejected (\(needsApproval.shortId)) — an approver rejected the visit"))
        gate.stopServer()
        // Out of view, then back: a new scan of the pass.
        try kiosk.scan(ImageFileSource(directory: try gate.folder("again", [nil, "GP1:\(needsApproval.shortId)"])))
        #expect(gate.waitForLine("Rex Rejected (\(needsApproval.shortId)) — the visit was rejected"), "\(gate.terminal.stdout)")
    }

    /// A check-in transport that never reaches the server, counting its tries.
    final class UnreachableTransport: HTTPTransport, @unchecked Sendable {
        let tries = Locked(0)
        func perform(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
            tries.withLock { $0 += 1 }
            throw .cannotConnect(url: request.url, detail: "connection refused")
        }
        func separateHandle() -> any HTTPTransport { self }
    }

    @Test func scansWhoseTriesFailAreDecidedOfflineEachInTurn() throws {
        // (GateReachabilityTests hold when the tries stop; this is the gate around the rule.)
        let gate = try Gate()
        try gate.loginKiosk("owner@demo.gatepass")
        let owner = try gate.token("owner@demo.gatepass")
        let guests = try (0..<3).map { try gate.visitor(owner, ["name": "Guest \($0)"]) }
        let unreachable = UnreachableTransport()
        let kiosk = try runner(gate, options: .init(cooldown: 3, cacheInterval: 3600), checkInTransport: unreachable)
        try kiosk.start()
        defer { kiosk.stop() }
        let reader = try gate.core()
        #expect(kiosk.cacheSyncs.wait { ((try? reader.passCacheStatus()) ?? nil)?.passes ?? 0 >= 3 })
        gate.stopServer()
        try kiosk.scan(ImageFileSource(directory: try gate.folder("three", [guests[0].shortId, nil, guests[1].shortId, nil,
                                                                             guests[2].shortId])))
        kiosk.settle(timeout: 30)
        for guest in guests { #expect(gate.waitForLine("Guest \(guest.name.suffix(1)) (\(guest.shortId)) — welcome")) }
        // The first scan tried; how many of the others did depends on when the outbox's probe
        // runs (a probe that still reached the server before it stopped counts as an answer),
        // so the count of tries in a row is held by GateReachabilityTests, not here.
        #expect(unreachable.tries.withLock { $0 } >= 1, "\(gate.terminal.stderr)")
    }

    @Test func theEvacuationRollIsReadFromTheCacheWithTheServerDown() throws {
        let gate = try Gate()
        try gate.loginKiosk("owner@demo.gatepass")
        let none = RecordingTerminal()
        #expect(GatePassCLI.main(["gatepass", "kiosk", "roll"], terminal: none, environment: gate.environment) == 1)
        #expect(none.stderr.contains("no pass cache yet"))
        let owner = try gate.token("owner@demo.gatepass")
        let inside = try gate.visitor(owner, ["name": "Rita Roll", "company": "Acme"])
        let leaving = try gate.visitor(owner, ["name": "Lea Leaving"])
        let later = try gate.visitor(owner, ["name": "Lars Later"])
        let reader = try gate.core()
        _ = try reader.ensureScannerToken(now: Date())
        for visitor in [inside, leaving] {
            guard case .applied = try reader.checkIn(code: visitor.shortId, confirmApprovalRequest: false) else {
                Issue.record("the check-in was not applied"); return
            }
        }
        try reader.syncPassCache(timeZone: .current)
        // After the roll was taken, before the cut: this device checks one of them out.
        guard case .applied = try reader.checkOut(code: leaving.shortId) else { Issue.record("not checked out"); return }
        let signedOnly = try gate.visitor(owner, ["name": "Sid Signed"])
        let signedText = try passText(gate, visitorId: signedOnly.id)
        gate.stopServer()
        // The same device admits two people offline: one its cache knows, one by signature alone.
        for code in [later.shortId, signedText] {
            let decision = try reader.decideOffline(code: code, scannedAt: Date(), policy: .signed)
            #expect(decision.result == .checkedIn)
            try reader.queueOfflineCheckIn(code: code, decision: decision.result, scannedAt: Date())
        }

        let terminal = RecordingTerminal()
        #expect(GatePassCLI.main(["gatepass", "kiosk", "roll"], terminal: terminal, environment: gate.environment) == 0)
        let lines = terminal.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("\(lines.count - 1) on site (server's roll ") == true, "\(terminal.stdout)")
        #expect(lines.first?.contains(" old, taken ") == true && lines.first?.contains("(\(TimeZone.current.identifier))") == true)
        #expect(lines.first?.hasSuffix("; 2 admitted and 1 checked out here since") == true, "\(terminal.stdout)")
        let rita = try #require(lines.first { $0.hasPrefix(inside.shortId) })
        #expect(rita.contains("Rita Roll") && rita.contains("(Acme) — in since "))
        #expect(rita.hasSuffix("(\(TimeZone.current.identifier))"), "the site's time, named, never RFC 3339: \(rita)")
        #expect(!lines.contains { $0.hasPrefix(leaving.shortId) }, "checked out by this device before the cut")
        #expect(lines.contains { $0.hasPrefix(later.shortId) && $0.contains("Lars Later") && $0.hasSuffix("admitted here") })
        #expect(lines.contains { $0.hasPrefix(signedOnly.shortId) && $0.hasSuffix("admitted here by signature") })
        #expect(!terminal.stdout.contains(signedText))

        let json = RecordingTerminal()
        #expect(GatePassCLI.main(["gatepass", "kiosk", "roll", "--json"], terminal: json, environment: gate.environment) == 0)
        let roll = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let visitors = try #require(roll["visitors"] as? [[String: Any]])
        #expect(visitors.contains { $0["shortId"] as? String == inside.shortId
                && ($0["visitor"] as? [String: Any])?["status"] as? String == "CHECKED_IN" })
        #expect(visitors.contains { $0["shortId"] as? String == signedOnly.shortId && $0["visitor"] == nil })
        #expect(roll["syncedAt"] is String && roll["admittedHere"] as? Int == 2 && roll["checkedOutHere"] as? Int == 1)

        // The server back and the scans delivered: the next roll from the server shows them itself.
        try gate.startServer()
        #expect(reader.drainer.drain(ignoringBackoff: true).applied.count == 2)
        try reader.syncPassCache(timeZone: .current)
        let caughtUp = try reader.onSiteRoll()
        #expect(caughtUp.admittedHere == 0 && caughtUp.checkedOutHere == 0)
        let caughtUpPasses = Set(caughtUp.entries.map(\.shortId.rawValue))
        #expect(caughtUpPasses.isSuperset(of: [inside.shortId, later.shortId, signedOnly.shortId]) && !caughtUpPasses.contains(leaving.shortId))
        #expect(caughtUpPasses.count == lines.count - 1, "the same people, now all from the server's roll")
    }

    /// The policies that judge less: `cached-only` admits a cached pass but not one known only by
    /// its signature; `deny` admits nothing.
    @Test(arguments: [OfflinePolicy.cachedOnly, .deny])
    func aStricterPolicyJudgesLess(policy: OfflinePolicy) throws {
        let gate = try Gate()
        try gate.loginKiosk("owner@demo.gatepass")
        let owner = try gate.token("owner@demo.gatepass")
        let cached = try gate.visitor(owner, ["name": "Carl Cached"])
        let kiosk = try runner(gate, options: .init(cooldown: 3, offlinePolicy: policy, cacheInterval: 3600))
        try kiosk.start()
        defer { kiosk.stop() }
        let reader = try gate.core()
        #expect(kiosk.cacheSyncs.wait { ((try? reader.passCacheStatus()) ?? nil)?.keys ?? 0 > 0 })
        let signedOnly = try gate.visitor(owner, ["name": "Sam Signed"])
        let texts = (cached: try passText(gate, visitorId: cached.id), signed: try passText(gate, visitorId: signedOnly.id))
        gate.stopServer()
        try kiosk.scan(ImageFileSource(directory: try gate.folder("strict", [texts.cached, nil, texts.signed])))
        let refusal = "the server does not answer and this pass cannot be checked here"
        if policy == .cachedOnly {
            #expect(gate.waitForLine("ADMITTED offline (cache "))
            #expect(gate.waitForLine("Carl Cached (\(cached.shortId)) — welcome"))
        } else {
            #expect(gate.waitForLine("  \(cached.shortId) — \(refusal)"))
        }
        #expect(gate.waitForLine("DENIED offline (cache "))
        #expect(gate.waitForLine("  \(signedOnly.shortId) — \(refusal)"))
        #expect(!gate.terminal.stdout.contains("ADMITTED offline") || policy == .cachedOnly)
    }

    /// A clock `offset` seconds away from the real one.
    struct SkewedClock: WallClock {
        var offset: TimeInterval
        func now() -> Date { Date().addingTimeInterval(offset) }
    }

    @Test func aKioskWhoseClockIsOffSaysSo() throws {
        let gate = try Gate()
        try gate.loginKiosk("owner@demo.gatepass")
        let kiosk = try runner(gate, options: .init(cooldown: 3, cacheInterval: 3600), clock: SkewedClock(offset: 300))
        try kiosk.start()
        defer { kiosk.stop() }
        #expect(kiosk.cacheSyncs.wait { kiosk.clockProblem != nil })
        #expect(kiosk.clockProblem?.hasPrefix("this kiosk's clock is 5 min ahead of the server's") == true)
        #expect(gate.terminal.wait { gate.terminal.stderr.contains("this kiosk's clock is 5 min ahead of the server's") })
    }

    @Test func aKioskWhoseClockAgreesSaysNothing() throws {
        let gate = try Gate()
        try gate.loginKiosk("owner@demo.gatepass")
        let kiosk = try runner(gate, options: .init(cooldown: 3, cacheInterval: 3600))
        try kiosk.start()
        defer { kiosk.stop() }
        let reader = try gate.core()
        #expect(kiosk.cacheSyncs.wait { ((try? reader.passCacheStatus()) ?? nil)?.clockOffset != nil })
        #expect(kiosk.clockProblem == nil)
        #expect(!gate.terminal.stderr.contains("clock is"))
    }
}

@Suite struct GateReachabilityTests {
    @Test func twoFailedTriesInARowOrAProbeThatFoundNothingStopTheTries() {
        var gate = GateReachability()
        #expect(gate.triesFirst)
        gate.failed()
        #expect(gate.triesFirst, "one failure: the next scan still tries")
        gate.answered()
        gate.failed()
        #expect(gate.triesFirst, "not in a row")
        gate.failed()
        #expect(!gate.triesFirst, "twice in a row: decided at once")
        var cameBack = gate.probed(online: false)
        #expect(!cameBack && !gate.triesFirst)
        cameBack = gate.probed(online: true)
        #expect(cameBack, "the probe found the server: it came back")
        #expect(gate.triesFirst && gate.consecutiveFailures == 0)
        cameBack = gate.probed(online: false)
        #expect(!cameBack && !gate.triesFirst, "a probe that found nothing stops the tries at once")
        gate.answered()
        #expect(gate.triesFirst, "an answer is the server back too")
        cameBack = gate.probed(online: true)
        #expect(!cameBack, "already trying: not a return")
    }
}
