import CurlHTTP
import Foundation
import GatePassAPI
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassClient
@testable import GatePassServer

/// Decision parity across the wire (issue 13): generated passes — windows, statuses and flags —
/// made on a real server through its routes, a kiosk's cache built from real `/expected`
/// deltas, and for each pass the kiosk's offline decision compared with the server's answer to
/// the same scan at the same time. A fresh visitor per case, so no scan changes another's.
@Suite(.serialized) struct OfflineParityTests {
    /// What the generator picks for one case.
    struct Case: CustomStringConvertible {
        enum Status: String, CaseIterable { case expected, awaiting, approved, rejected, cancelled, checkedIn, checkedOut }
        enum Window: String, CaseIterable { case inside, beforeStart, afterEnd, startsAtScan, endsAtScan }
        var number: Int
        var status: Status
        var requiresApproval: Bool
        var blocked: Bool
        var window: Window
        /// Seconds before now the scan is made (0: sent live, else replayed with `scannedAt`).
        var scanAgo: Int
        var signed: Bool
        var validFrom: Date
        var validUntil: Date
        var scannedAt: Date

        var description: String {
            "case \(number): \(status.rawValue)\(requiresApproval ? " needing approval" : "")\(blocked ? " blocked" : ""), window "
                + "\(window.rawValue) (\(Timestamp(validFrom))–\(Timestamp(validUntil))), scanned \(Timestamp(scannedAt))"
                + "\(scanAgo == 0 ? " live" : " replayed"), \(signed ? "GP2" : "GP1") text"
        }
    }

    /// Cases whose windows and scan times all fall in today (site-local), so `/expected` carries
    /// them, with at least `margin` seconds between a live scan and any window edge (the live
    /// scans come a few seconds after `now`).
    static func generate(count: Int, seed: UInt64, now: Date, day: ValidityWindow) -> [Case] {
        var random = SplitMix64(seed: seed)
        let margin = 300
        let today = Int(now.timeIntervalSince(day.from))
        var cases: [Case] = []
        while cases.count < count {
            let status = Case.Status.allCases.randomElement(using: &random)!
            // A check-in at `now` makes these statuses: their window must hold `now`.
            let madeByCheckIn = [.awaiting, .checkedIn, .checkedOut].contains(status)
            let requiresApproval = status == .awaiting || status == .approved || status == .rejected
                || Bool.random(using: &random) && status != .checkedIn && status != .checkedOut
            var scanAgo = Bool.random(using: &random) ? 0 : Int.random(in: margin...(3 * 3600), using: &random)
            scanAgo = min(scanAgo, max(0, today - 2 * margin))
            let scan = now.addingTimeInterval(-Double(scanAgo))
            let ahead = Int.random(in: margin...3600, using: &random)
            let behind = Int.random(in: margin...3600, using: &random)
            var window = Case.Window.allCases.randomElement(using: &random)!
            // Edges meet the scan only where the scan's time is exact (a replay), and every
            // window must hold `now` when a check-in makes the status, and overlap today.
            if scanAgo == 0 && (window == .startsAtScan || window == .endsAtScan) { window = .inside }
            if madeByCheckIn && window != .inside && !(window == .beforeStart && scanAgo > ahead + margin) { window = .inside }
            if window == .beforeStart && Int(day.until.timeIntervalSince(scan)) < ahead + margin { window = .inside }
            if window == .afterEnd && Int(scan.timeIntervalSince(day.from)) < behind + margin { window = .inside }
            let (from, until): (Date, Date)
            switch window {
            case .inside: (from, until) = (scan.addingTimeInterval(-Double(behind)), now.addingTimeInterval(Double(ahead)))
            case .beforeStart: (from, until) = (scan.addingTimeInterval(Double(ahead)), now.addingTimeInterval(Double(ahead + 3600)))
            case .afterEnd: (from, until) = (scan.addingTimeInterval(-Double(behind + 3600)), scan.addingTimeInterval(-Double(behind)))
            case .startsAtScan: (from, until) = (scan, now.addingTimeInterval(Double(ahead)))
            case .endsAtScan: (from, until) = (scan.addingTimeInterval(-Double(behind)), scan)
            }
            cases.append(Case(number: cases.count, status: status, requiresApproval: requiresApproval,
                              blocked: Int.random(in: 0..<5, using: &random) == 0, window: window, scanAgo: scanAgo,
                              signed: Bool.random(using: &random), validFrom: from, validUntil: until, scannedAt: scan))
        }
        return cases
    }

    @Test func theKiosksOfflineDecisionIsTheServersAnswer() throws {
        let seed = ProcessInfo.processInfo.environment["GATEPASS_PARITY_SEED"].flatMap { UInt64($0) }
            ?? UInt64(Date().timeIntervalSince1970)
        let world = try ClientWorld()
        let guardProfile = try world.addUser("guard@acme.test", role: .admin, canScan: true)
        let approver = try world.addUser("approver@acme.test", role: .approver)
        // The new organization gets its pass keys at start, as on any server.
        world.stop()
        try world.start()
        let admin = try world.token("guard@acme.test")
        let http = LoopbackHTTPClient(port: world.port)
        let keyring = try PassKeyring(path: PassKeyring.path(forDatabase: world.database))
        let kiosk = try ClientCore(directory: world.stateDirectory,
                                   transport: CurlSession(options: .init(connectTimeout: .seconds(2), requestTimeout: .seconds(10))),
                                   platform: "kiosk")
        try world.login(kiosk, "guard@acme.test")
        let zone = TimeZone.current
        try kiosk.syncPassCache(timeZone: zone)

        let now = Date().wholeSeconds
        let cases = Self.generate(count: 160, seed: seed, now: now, day: ValidityWindow.day(containing: now, in: zone))
        func require(_ answer: LoopbackHTTPClient.Response, _ status: Int, _ what: String, _ item: Case) throws {
            guard answer.status == status else {
                throw ClientTestFailure("seed \(seed), \(item): \(what) answered \(answer.status): \(answer.text)")
            }
        }
        // Made as the server's routes make them.
        var visitors: [String] = []
        for item in cases {
            var body: [String: Any] = ["name": "Parity Visitor \(item.number)", "email": "parity\(item.number)@acme.test",
                                       "validFrom": Timestamp.format(item.validFrom), "validUntil": Timestamp.format(item.validUntil),
                                       "requiresApproval": item.requiresApproval]
            if item.requiresApproval { body["approverId"] = approver.id }
            let created = try http.send("POST", Endpoint.visitorsCreate.path(), token: admin, json: body)
            try require(created, 201, "creating the visitor", item)
            visitors.append(try #require(created.json?["id"] as? String))
        }
        // The cache holds them all before their statuses change, so the changes come by delta.
        try kiosk.syncPassCache(timeZone: zone)
        let scanner = try #require(try kiosk.session()?.scanner?.scannerToken)
        for (item, id) in zip(cases, visitors) {
            let shortIdOf = { (answer: LoopbackHTTPClient.Response) in answer.json?["shortId"] as? String ?? "" }
            let shortId = shortIdOf(try http.get(Endpoint.visitorsGet.path(values: [id]), token: admin))
            switch item.status {
            case .expected: break
            case .awaiting:
                try require(try http.send("POST", Endpoint.scannerCheckIn.path(), token: scanner,
                                          json: ["shortId": shortId, "confirmApprovalRequest": true]), 200, "asking approval", item)
            case .approved:
                try require(try http.send("POST", Endpoint.visitorsApprove.path(values: [id]), token: admin, json: [String: String]()),
                            200, "approving", item)
            case .rejected:
                try require(try http.send("POST", Endpoint.visitorsReject.path(values: [id]), token: admin, json: [String: String]()),
                            200, "rejecting", item)
            case .cancelled:
                try require(try http.send("POST", Endpoint.visitorsCancel.path(values: [id]), token: admin, json: [String: String]()),
                            200, "cancelling", item)
            case .checkedIn, .checkedOut:
                try require(try http.send("POST", Endpoint.scannerCheckIn.path(), token: scanner, json: ["shortId": shortId]),
                            200, "checking in", item)
                if item.status == .checkedOut {
                    try require(try http.send("POST", Endpoint.visitorsCheckOut.path(values: [id]), token: admin,
                                              json: [String: String]()), 200, "checking out", item)
                }
            }
            if item.blocked {
                try require(try http.send("POST", Endpoint.blocklistAdd.path(), token: admin,
                                          json: ["email": "parity\(item.number)@acme.test", "reason": "parity"]), 201, "blocking", item)
            }
        }
        let delta = try kiosk.syncPassCache(timeZone: zone)
        #expect(!delta.fullLoad, "the changes came by delta")
        // Every blocked pass of today is revoked, also one whose window already ended.
        #expect(delta.revocations >= cases.filter { $0.blocked || $0.status == .cancelled }.count)

        var compared = 0
        var seen: [String: Int] = [:]
        for (item, id) in zip(cases, visitors) {
            let visitor = try APIClient.decode(Visitor.self, from: try http.get(Endpoint.visitorsGet.path(values: [id]), token: admin).body)
            let text = item.signed
                ? try keyring.signedText(for: visitor, organizationId: guardProfile.organizationId, now: now).text
                : "GP1:\(visitor.shortId.rawValue)"
            // The documented exception (api.md "Offline passes"): cancelled and blocked answers
            // CANCELLED offline (the kiosk keeps the cancelled pass), BLOCKED online.
            if item.blocked && item.status == .cancelled { continue }
            // A live scan is judged now on both sides; a replay at its `scannedAt` on both.
            let offline = try kiosk.decideOffline(code: text, scannedAt: item.scanAgo == 0 ? Date() : item.scannedAt, policy: .signed)
            var body: [String: Any] = ["shortId": text]
            if item.scanAgo > 0 {
                body["offline"] = true
                body["scannedAt"] = Timestamp.format(item.scannedAt)
            }
            let answer = try http.send("POST", Endpoint.scannerCheckIn.path(), token: scanner, json: body)
            let online = answer.json?["result"] as? String ?? (answer.json?["error"] as? [String: Any])?["code"] as? String
            let comparison = "seed \(seed), \(item): offline \(offline.result.rawValue) (\(offline.basis.rawValue)), online \(answer.status) \(online ?? answer.text)"
            #expect(offline.result.rawValue == online, "\(comparison)")
            compared += 1
            seen[online ?? "", default: 0] += 1
        }
        #expect(compared >= cases.count / 2, "seed \(seed): too few cases compared (\(compared))")
        // The generator reaches most of the table, not one corner of it.
        #expect(seen.count >= 8, "seed \(seed): only \(seen) were compared")
    }
}
