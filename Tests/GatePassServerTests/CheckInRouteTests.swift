import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

/// POST /api/visitor-scanner/checkin: every row of the decision table reached over HTTP,
/// the scan history it writes, QR text forms and offline replays.
@Suite struct CheckInRouteTests {
    /// How a case brings its visitor to the state it scans.
    struct Case: CustomStringConvertible, Sendable {
        var name: String
        var fields: [String: String] = [:]
        var requiresApproval = false
        var prepare: [Step] = []
        var confirm = false
        var result: String
        var statusAfter: String
        var description: String { name }
    }

    enum Step: Sendable { case checkIn, confirmRequest, approve, reject, cancel, checkOut, advanceDays(Int) }

    // Windows relative to the test clock (2026-11-29T12:00Z, plus the logins' few minutes).
    static let past = ["validFrom": "2026-11-28T08:00:00Z", "validUntil": "2026-11-28T18:00:00Z"]
    static let future = ["validFrom": "2026-11-30T08:00:00Z", "validUntil": "2026-11-30T18:00:00Z"]

    static let cases: [Case] = [
        Case(name: "expected, no approval", result: "CHECKED_IN", statusAfter: "CHECKED_IN"),
        Case(name: "approved", requiresApproval: true, prepare: [.approve], result: "CHECKED_IN", statusAfter: "CHECKED_IN"),
        Case(name: "inside already", prepare: [.checkIn], result: "ALREADY_CHECKED_IN", statusAfter: "CHECKED_IN"),
        Case(name: "needs approval", requiresApproval: true, result: "APPROVAL_REQUIRED", statusAfter: "EXPECTED"),
        Case(name: "asks for approval", requiresApproval: true, confirm: true, result: "AWAITING_APPROVAL",
             statusAfter: "AWAITING_APPROVAL"),
        Case(name: "already waiting", requiresApproval: true, prepare: [.confirmRequest], result: "AWAITING_APPROVAL",
             statusAfter: "AWAITING_APPROVAL"),
        Case(name: "already waiting, asked again", requiresApproval: true, prepare: [.confirmRequest], confirm: true,
             result: "AWAITING_APPROVAL", statusAfter: "AWAITING_APPROVAL"),
        Case(name: "rejected", requiresApproval: true, prepare: [.reject], result: "REJECTED", statusAfter: "REJECTED"),
        Case(name: "cancelled", prepare: [.cancel], result: "CANCELLED", statusAfter: "CANCELLED"),
        Case(name: "single entry", prepare: [.checkIn, .checkOut], result: "CHECKED_OUT", statusAfter: "CHECKED_OUT"),
        Case(name: "expired", fields: past, result: "EXPIRED", statusAfter: "EXPECTED"),
        Case(name: "not yet valid", fields: future, result: "NOT_YET_VALID", statusAfter: "EXPECTED"),
        Case(name: "approved but expired", fields: past, requiresApproval: true, prepare: [.approve], result: "EXPIRED",
             statusAfter: "APPROVED"),
        // Precedence: the window before approval, statuses before the window.
        Case(name: "expired and needing approval", fields: past, requiresApproval: true, confirm: true, result: "EXPIRED",
             statusAfter: "EXPECTED"),
        Case(name: "early and needing approval", fields: future, requiresApproval: true, result: "NOT_YET_VALID",
             statusAfter: "EXPECTED"),
        Case(name: "inside after the window closed", prepare: [.checkIn, .advanceDays(2)], result: "ALREADY_CHECKED_IN",
             statusAfter: "CHECKED_IN"),
        Case(name: "cancelled and expired", fields: past, prepare: [.cancel], result: "CANCELLED", statusAfter: "CANCELLED"),
        Case(name: "rejected and early", fields: future, requiresApproval: true, prepare: [.reject], result: "REJECTED",
             statusAfter: "REJECTED"),
        Case(name: "waiting and expired", requiresApproval: true, prepare: [.confirmRequest, .advanceDays(1)],
             result: "EXPIRED", statusAfter: "AWAITING_APPROVAL"),
    ]

    @Test(arguments: cases)
    func decisionOverHTTP(_ testCase: Case) throws {
        try withSite { server, site in
            var fields: [String: Any] = testCase.fields
            fields["requiresApproval"] = testCase.requiresApproval
            let visitor = try server.createVisitor(site.ownerToken, fields)
            let id = visitor["id"] as! String
            let shortId = visitor["shortId"] as! String
            var ownerToken = site.ownerToken
            for step in testCase.prepare {
                let answer: HTTPAnswer
                switch step {
                case .checkIn: answer = try server.checkIn(site.scanner, shortId)
                case .confirmRequest: answer = try server.checkIn(site.scanner, shortId, ["confirmApprovalRequest": true])
                case .approve: answer = try server.post("/api/visitors/\(id)/approve-scan", token: site.ownerToken)
                case .reject: answer = try server.post("/api/visitors/\(id)/reject-scan", token: site.ownerToken)
                case .cancel: answer = try server.post("/api/visitors/\(id)/cancel", token: site.ownerToken)
                case .checkOut: answer = try server.checkOut(site.scanner, shortId)
                case .advanceDays(let days):
                    server.clock.advance(by: TimeInterval(days) * 86_400)
                    ownerToken = try server.login(site.owner.email) // the login token lives 12 hours; the scanner's 30 days
                    continue
                }
                #expect(answer.status == 200, "\(step): \(answer.text)")
            }
            let before = try server.visitor(id, ownerToken)
            let scansBefore = try server.history(ownerToken).count
            server.clock.advance(by: 1)
            let answer = try server.checkIn(site.scanner, shortId, ["confirmApprovalRequest": testCase.confirm])
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.keys == ["result", "visitor", "scanId"])
            #expect(answer.string("result") == testCase.result)
            #expect(Set(answer.visitor.keys) == Shape.visitor)
            #expect(answer.visitor["status"] as? String == testCase.statusAfter)
            let stored = try server.visitor(id, ownerToken)
            #expect(NSDictionary(dictionary: stored) == NSDictionary(dictionary: answer.visitor))
            let now = iso(server.clock.now())
            switch testCase.result {
            case "CHECKED_IN":
                #expect(stored["checkedInAt"] as? String == now && stored["checkpointId"] as? String == site.mainGate)
            case "AWAITING_APPROVAL" where before["status"] as? String == "EXPECTED":
                #expect(stored["approvalRequestedAt"] as? String == now)
            default:
                // Nothing changed.
                #expect(NSDictionary(dictionary: stored) == NSDictionary(dictionary: before))
            }
            // Every scan is written, with its result.
            let scans = try server.history(ownerToken)
            #expect(scans.count == scansBefore + 1)
            let scan = try #require(scans.first)
            #expect(scan["id"] as? String == answer.string("scanId"))
            #expect(scan["result"] as? String == testCase.result && scan["visitorId"] as? String == id)
            #expect(scan["shortId"] as? String == shortId && scan["checkpointId"] as? String == site.mainGate)
        }
    }

    @Test func unknownShortIdIsNotFoundAndRecorded() throws {
        try withSite { server, site in
            let answer = try server.checkIn(site.scanner, "gp1:zzzz-zzzz")
            #expect(answer.isError(404, "NOT_FOUND"))
            let scan = try #require(try server.history(site.ownerToken).first)
            #expect(scan["result"] as? String == "NOT_FOUND" && scan["visitorId"] is NSNull)
            #expect(scan["shortId"] as? String == "ZZZZZZZZ" && scan["raw"] as? String == "gp1:zzzz-zzzz")
            #expect(try server.history(site.ownerToken, "result=NOT_FOUND").count == 1)
        }
    }

    @Test(arguments: ["hello", "GP1:", "GP1:SHORT", "https://example.com/", "https://example.com/p/NOT-AN-ID-AT-ALL",
                      "K7Q2M9X", "K7Q2M9XDZ", "UUUUUUUU", "ftp:K7Q2M9XD", " ", "K7Q2 M9XD"])
    func garbageIsABadRequestRecordedAsInvalid(_ raw: String) throws {
        try withSite { server, site in
            let answer = try server.checkIn(site.scanner, raw)
            #expect(answer.isError(400, "BAD_REQUEST"), "\(answer.text)")
            #expect(answer.errorMessage.contains("shortId"))
            let scans = try server.history(site.ownerToken)
            #expect(scans.count == 1)
            #expect(scans.first?["result"] as? String == "INVALID" && scans.first?["visitorId"] is NSNull)
            #expect(scans.first?["shortId"] is NSNull && scans.first?["raw"] as? String == raw)
        }
    }

    @Test func overlongTextIsInvalidAndKeptToTwoHundredFiftySixBytes() throws {
        try withSite { server, site in
            let raw = String(repeating: "é", count: 200) // 400 bytes
            let answer = try server.checkIn(site.scanner, raw)
            #expect(answer.isError(400, "BAD_REQUEST") && answer.errorMessage.contains("shortId"))
            let scan = try #require(try server.history(site.ownerToken).first)
            #expect(scan["result"] as? String == "INVALID")
            #expect((scan["raw"] as? String)?.utf8.count == 256)
            #expect((scan["raw"] as? String).map { raw.hasPrefix($0) } == true)
        }
    }

    @Test func everyQRFormFindsThePass() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken)
            let shortId = visitor["shortId"] as! String
            let crockfordish = String(shortId.lowercased().map { $0 == "0" ? "o" : $0 == "1" ? "l" : $0 })
            let forms = [
                shortId, shortId.lowercased(), "GP1:\(shortId)", "gp1:\(shortId.lowercased())",
                "https://pass.example.com/p/\(shortId)", "https://pass.example.com/v/\(shortId)?src=mail#top",
                "http://x.test/a/b/\(shortId.lowercased())/", crockfordish,
                String(shortId.prefix(4)) + "-" + String(shortId.suffix(4)), "  \(shortId)\n",
            ]
            var results: [String?] = []
            for form in forms {
                let answer = try server.checkIn(site.scanner, form)
                #expect(answer.status == 200, "\(form): \(answer.text)")
                #expect(answer.visitor["id"] as? String == visitor["id"] as? String, "\(form)")
                results.append(answer.string("result"))
            }
            #expect(results == ["CHECKED_IN"] + Array(repeating: "ALREADY_CHECKED_IN", count: forms.count - 1))
            let scans = try server.history(site.ownerToken)
            #expect(Set(scans.compactMap { $0["shortId"] as? String }) == [shortId])
            #expect(Set(scans.compactMap { $0["raw"] as? String }) == Set(forms))
        }
    }

    // MARK: - Offline replays

    @Test func anOfflineReplayIsJudgedWhenItWasScanned() throws {
        try withSite { server, site in
            let now = server.clock.now()
            let scannedAt = now.addingTimeInterval(-3 * 3600)
            // Valid only in a window that had closed by the time the replay arrives.
            let visitor = try server.createVisitor(site.ownerToken, [
                "validFrom": iso(scannedAt.addingTimeInterval(-1800)), "validUntil": iso(scannedAt.addingTimeInterval(1800)),
            ])
            let shortId = visitor["shortId"] as! String
            #expect(try server.checkIn(site.scanner, shortId).string("result") == "EXPIRED")
            let replay = try server.checkIn(site.scanner, shortId, ["offline": true, "scannedAt": iso(scannedAt)])
            #expect(replay.string("result") == "CHECKED_IN")
            #expect(replay.visitor["checkedInAt"] as? String == iso(scannedAt))
            let scan = try #require(try server.history(site.ownerToken, "result=CHECKED_IN").first)
            #expect(scan["offline"] as? Bool == true)
            #expect(scan["scannedAt"] as? String == iso(scannedAt) && scan["receivedAt"] as? String == iso(now))
            // The online scan that preceded it: scannedAt = receivedAt, offline false.
            let online = try #require(try server.history(site.ownerToken, "result=EXPIRED").first)
            #expect(online["offline"] as? Bool == false && online["scannedAt"] as? String == online["receivedAt"] as? String)
        }
    }

    @Test func aReplayExactlyTwentyFourHoursOldIsStillJudgedThen() throws {
        try withSite { server, site in
            let scannedAt = server.clock.now().addingTimeInterval(-24 * 3600)
            let visitor = try server.createVisitor(site.ownerToken, [
                "validFrom": iso(scannedAt.addingTimeInterval(-60)), "validUntil": iso(scannedAt.addingTimeInterval(60)),
            ])
            let replay = try server.checkIn(site.scanner, visitor["shortId"] as! String, ["offline": true, "scannedAt": iso(scannedAt)])
            #expect(replay.string("result") == "CHECKED_IN")
            #expect(replay.visitor["checkedInAt"] as? String == iso(scannedAt))
        }
    }

    @Test func aReplayOlderThanTwentyFourHoursIsJudgedAtReceiveTime() throws {
        try withSite { server, site in
            let now = server.clock.now()
            let scannedAt = now.addingTimeInterval(-24 * 3600 - 1)
            let visitor = try server.createVisitor(site.ownerToken, [
                "validFrom": iso(scannedAt.addingTimeInterval(-3600)), "validUntil": iso(scannedAt.addingTimeInterval(3600)),
            ])
            let replay = try server.checkIn(site.scanner, visitor["shortId"] as! String, ["offline": true, "scannedAt": iso(scannedAt)])
            #expect(replay.string("result") == "EXPIRED")
            let scan = try #require(try server.history(site.ownerToken).first)
            #expect(scan["offline"] as? Bool == true && scan["receivedAt"] as? String == iso(now))
            // Inside today's window, the old replay admits at receive time.
            let today = try server.createVisitor(site.ownerToken)
            let admitted = try server.checkIn(site.scanner, today["shortId"] as! String, ["offline": true, "scannedAt": iso(scannedAt)])
            #expect(admitted.string("result") == "CHECKED_IN")
            #expect(admitted.visitor["checkedInAt"] as? String == iso(now))
        }
    }

    @Test func aReplayFromTheFutureIsJudgedAtReceiveTime() throws {
        try withSite { server, site in
            let now = server.clock.now()
            let early = try server.createVisitor(site.ownerToken, [
                "validFrom": iso(now.addingTimeInterval(3600)), "validUntil": iso(now.addingTimeInterval(7200)),
            ])
            let future = iso(now.addingTimeInterval(5400)) // inside the window, but not yet happened
            let answer = try server.checkIn(site.scanner, early["shortId"] as! String, ["offline": true, "scannedAt": future])
            #expect(answer.string("result") == "NOT_YET_VALID")
            let today = try server.createVisitor(site.ownerToken)
            let admitted = try server.checkIn(site.scanner, today["shortId"] as! String,
                                              ["offline": true, "scannedAt": iso(now.addingTimeInterval(60))])
            #expect(admitted.string("result") == "CHECKED_IN")
            #expect(admitted.visitor["checkedInAt"] as? String == iso(now))
        }
    }

    @Test func confirmingApprovalOfflineAsksAtReceiveTime() throws {
        try withSite { server, site in
            let now = server.clock.now()
            let scannedAt = now.addingTimeInterval(-600)
            let visitor = try server.createVisitor(site.ownerToken, ["requiresApproval": true])
            let answer = try server.checkIn(site.scanner, visitor["shortId"] as! String,
                                            ["confirmApprovalRequest": true, "offline": true, "scannedAt": iso(scannedAt)])
            #expect(answer.string("result") == "AWAITING_APPROVAL")
            #expect(answer.visitor["approvalRequestedAt"] as? String != nil)
            #expect(answer.visitor["checkedInAt"] is NSNull)
        }
    }
}
