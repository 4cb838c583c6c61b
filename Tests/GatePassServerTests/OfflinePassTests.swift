import Foundation
import GatePassCore
import GatePassCrypto
import GatePassTestSupport
import Testing
@testable import GatePassServer

extension TestServer {
    var keyring: PassKeyring { server.application.passes.keyring }

    /// The GP2 text the server draws on `visitor`'s pass now.
    func passText(_ visitor: [String: Any], organizationId: String) throws -> SignedPassText {
        let id = visitor["id"] as? String ?? ""
        let stored = try #require(try store.read { tx in try tx.visitors.find(id: id) })
        return try keyring.signedText(for: stored.visitor, organizationId: organizationId, now: clock.now())
    }

    /// The `security.alert` events of the log, decoded.
    func securityAlerts() throws -> [VisitorEventData] {
        try store.read { tx in try tx.events.events(after: 0, through: nil, limit: 10_000) }.compactMap { entry in
            guard case .event(let event) = entry, event.kind == .securityAlert else { return nil }
            return try JSONDecoder().decode(VisitorEventData.self, from: Data(event.data.utf8))
        }
    }

    func passKeys(_ token: String) throws -> [[String: Any]] {
        let answer = try get("/api/visitor-scanner/pass-keys", token: token)
        guard answer.status == 200 else { throw TestFailure("pass-keys answered \(answer.status): \(answer.text)") }
        return answer.json?["keys"] as? [[String: Any]] ?? []
    }
}

/// api.md "Offline passes", the server's side: keys, GP2 on the passes, GP2 judged online,
/// `/expected`'s revocations, and offline decisions reconciled on replay.
@Suite struct OfflinePassTests {
    static let keyShape: Set<String> = ["id", "algorithm", "purpose", "publicKey", "createdAt", "retiredAt", "revokedAt"]

    // MARK: - Keys

    @Test func eachSiteHasAnAdmitAndAnApprovalKeyInAPrivateFile() throws {
        try withSite { server, site in
            let other = try server.makeSite("Globex", domain: "globex.test")
            let keys = try server.passKeys(site.scanner)
            #expect(keys.count == 2)
            #expect(Set(keys.compactMap { $0["purpose"] as? String }) == ["admit", "approval"])
            for key in keys {
                #expect(Set(key.keys) == Self.keyShape)
                #expect(key["algorithm"] as? String == "Ed25519")
                #expect(Base64URL.decode(key["publicKey"] as? String ?? "")?.count == 32)
                #expect(key["retiredAt"] is NSNull && key["revokedAt"] is NSNull)
            }
            // Any user of the site reads the same keys; another site has keys of its own.
            #expect(ids(try server.passKeys(site.deskToken)) == ids(keys))
            #expect(Set(ids(try server.passKeys(other.scanner))).isDisjoint(with: ids(keys)))
            var status = stat()
            #expect(stat(server.directory + "/gatepass.db.pass-keys", &status) == 0)
            #expect(status.st_mode & 0o777 == 0o600)
            // No private key leaves the file: the answer holds public halves only.
            let text = try server.get("/api/visitor-scanner/pass-keys", token: site.scanner).text
            #expect(!text.contains("privateKey"))
        }
    }

    @Test func aKeysFileThatOthersMayReadOrThatIsNotUnderstoodStopsTheStart() throws {
        try withTemporaryDirectory { folder in
            var configuration = ServerConfiguration()
            configuration.database = folder + "/gatepass.db"
            configuration.port = 0
            let path = folder + "/gatepass.db.pass-keys"
            for (contents, mode, expected) in [("{\"version\":1,\"keys\":[]}", mode_t(0o644), "chmod 600"),
                                               ("{\"version\":2,\"keys\":[]}", mode_t(0o600), "version 2"),
                                               ("not json", mode_t(0o600), "does not hold"),
                                               (#"{"version":1,"keys":[{"organizationId":"o","id":"lower","purpose":"admit","privateKey":"AA","createdAt":"2026-11-29T12:00:00Z"}]}"#,
                                                mode_t(0o600), "malformed")] {
                unlink(path)
                #expect(FileManager.default.createFile(atPath: path, contents: Data(contents.utf8)))
                chmod(path, mode)
                do {
                    let server = try GatePassServer(configuration: configuration, clock: TestClock(testStart), logSink: RecordingLog())
                    server.stop(grace: .seconds(1))
                    Issue.record("a server started on \(contents)")
                } catch {
                    #expect("\(error)".contains(expected), "\(error)")
                }
            }
        }
    }

    // MARK: - GP2 on the passes

    @Test func thePrintedPassCarriesAGP2TextSignedByTheKeyOfItsPurpose() throws {
        try withSite { server, site in
            let keys = try server.passKeys(site.scanner)
            func publicKey(_ purpose: String) throws -> (id: String, bytes: [UInt8]) {
                let key = try #require(keys.first { $0["purpose"] as? String == purpose })
                return (key["id"] as? String ?? "", Base64URL.decode(key["publicKey"] as? String ?? "") ?? [])
            }
            for (fields, purpose) in [(["name": "Ada"] as [String: Any], "admit"), (["name": "Bea", "requiresApproval": true], "approval")] {
                let visitor = try server.createVisitor(site.ownerToken, fields)
                let png = try server.get("/api/visitors/\(visitor["id"] as? String ?? "")/pass.png", token: site.ownerToken)
                let texts = try decodedTexts(greyImage(ofPNG: png.body))
                let text = try #require(texts.count == 1 ? SignedPassText(parsing: texts[0]) : nil, "\(texts)")
                let key = try publicKey(purpose)
                #expect(text.keyId == key.id)
                #expect(Ed25519.verify(text.signature, of: text.signedBytes, publicKey: key.bytes))
                #expect(text.shortId.rawValue == visitor["shortId"] as? String)
                #expect(text.validFrom == SignedPassText.unixSeconds(date(visitor["validFrom"])!))
                #expect(text.validUntil == SignedPassText.unixSeconds(date(visitor["validUntil"])!))
                #expect(texts[0] == texts[0].uppercased(), "QR alphanumeric mode needs upper case")
            }
        }
    }

    // MARK: - GP2 judged online

    @Test func aValidGP2TextChecksInAndEveryAlteredOneIsInvalid() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ada"])
            let good = try server.passText(visitor, organizationId: site.organizationId)
            let otherKey = try Ed25519.generate()
            var forgeries: [(String, String)] = []
            // One bit flipped in each signed field, re-using the original signature.
            var shortIdFlipped = good
            shortIdFlipped.shortId = try #require(ShortID(String(good.shortId.rawValue.dropLast()) + (good.shortId.rawValue.last == "0" ? "1" : "0")))
            forgeries.append(("short id", shortIdFlipped.text))
            var from = good; from.validFrom ^= 1; forgeries.append(("validFrom", from.text))
            var until = good; until.validUntil ^= 1; forgeries.append(("validUntil", until.text))
            var signature = good; signature.signature[17] ^= 0x04; forgeries.append(("signature", signature.text))
            var keyId = good; keyId.keyId = "ZZZZ"; forgeries.append(("unknown key", keyId.text))
            // Re-signed with a key the site does not have, under the site's key id.
            let resigned = SignedPassText.issue(for: try server.store.read { tx in try tx.visitors.find(id: visitor["id"] as! String)! }.visitor,
                                                keyId: good.keyId) { try! Ed25519.sign($0, privateKey: otherKey.privateKey) }
            forgeries.append(("another key", resigned.text))
            forgeries.append(("truncated", String(good.text.dropLast(5))))
            forgeries.append(("lower case", good.text.lowercased()))
            for (what, text) in forgeries {
                let answer = try server.checkIn(site.scanner, text)
                #expect(answer.isError(400, "INVALID") || answer.isError(400, "BAD_REQUEST"), "\(what): \(answer.status) \(answer.text)")
            }
            #expect(try server.visitor(visitor["id"], site.ownerToken)["status"] as? String == "EXPECTED")
            let history = try server.history(site.ownerToken)
            #expect(history.count == forgeries.count && history.allSatisfy { $0["result"] as? String == "INVALID" })
            let admitted = try server.checkIn(site.scanner, good.text)
            #expect(admitted.status == 200 && admitted.string("result") == "CHECKED_IN", "\(admitted.text)")
        }
    }

    @Test func aRotatedKeysPassesStayValidAndARevokedKeysAreRefusedAndReissued() throws {
        try withServer { server in
            let site = try server.makeMailSite()
            let (invited, _) = try server.invitedVisitor(site, ["name": "Ada Lovelace"])
            let oldText = try server.passText(invited, organizationId: site.owner.organizationId)
            let rotated = try server.keyring.rotate(organizationId: site.owner.organizationId, purposes: [.admit], now: server.clock.now())
            #expect(rotated.count == 1 && rotated[0].retired == oldText.keyId)
            let keys = try server.passKeys(site.scanner)
            let old = try #require(keys.first { $0["id"] as? String == oldText.keyId })
            #expect(old["retiredAt"] as? String == iso(server.clock.now()) && old["revokedAt"] is NSNull)
            let newText = try server.passText(invited, organizationId: site.owner.organizationId)
            #expect(newText.keyId == rotated[0].created && newText.text != oldText.text)
            // The retired key's pass still checks in (here: is judged, not refused as INVALID).
            let second = try server.createVisitor(site.ownerToken, ["name": "Bea"])
            let secondOld = try SignedPassText.issue(for: try server.store.read { tx in try tx.visitors.find(id: second["id"] as! String)! }.visitor,
                                                     keyId: oldText.keyId) { bytes in
                // Signed as the old key would have (the keyring keeps it to verify).
                try Self.sign(bytes, keyId: oldText.keyId, in: server)
            }
            #expect(try server.checkIn(site.scanner, secondOld.text).string("result") == "CHECKED_IN")

            // Revoke the key the invited visitor's current pass is signed with.
            let invitationsBefore = try server.mailLog().filter { $0.kind == .invitation }.count
            let revoked = try server.keyring.revoke(keyId: newText.keyId, now: server.clock.now())
            #expect(revoked.created != nil)
            let refused = try server.checkIn(site.scanner, newText.text)
            #expect(refused.isError(400, "BAD_REQUEST") && refused.errorMessage.contains("revoked"), "\(refused.text)")
            server.server.application.reissueRevokedPasses()
            #expect(try server.keyring.keysAwaitingReissue().isEmpty)
            #expect(try server.mailLog().filter { $0.kind == .invitation }.count == invitationsBefore + 1)
            let reissued = try server.passText(invited, organizationId: site.owner.organizationId)
            #expect(reissued.keyId == revoked.created)
            #expect(try server.checkIn(site.scanner, reissued.text).string("result") == "CHECKED_IN")
            // Done once: a second look re-sends nothing.
            server.server.application.reissueRevokedPasses()
            #expect(try server.mailLog().filter { $0.kind == .invitation }.count == invitationsBefore + 1)
        }
    }

    static func sign(_ bytes: [UInt8], keyId: String, in server: TestServer) throws -> [UInt8] {
        let contents = try PassKeyring.decode(Data(contentsOf: URL(fileURLWithPath: server.keyring.path)), path: server.keyring.path)
        let key = try #require(contents.keys.first { $0.id == keyId })
        return try Ed25519.sign(bytes, privateKey: Base64URL.decode(key.privateKey) ?? [])
    }

    @Test func aPassWhoseWindowChangedIsReissuedAndTheOldTextNoLongerWorks() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ada", "validFrom": "2026-11-29T08:00:00Z",
                                                                      "validUntil": "2026-11-29T18:00:00Z"])
            let before = try server.passText(visitor, organizationId: site.organizationId)
            let edited = try server.client().send("PATCH", "/api/visitors/\(visitor["id"] as! String)", token: site.ownerToken,
                                                  json: ["validUntil": "2026-11-29T20:00:00Z"])
            #expect(edited.status == 200, "\(edited.text)")
            // The edit gave the pass a new short id (api.md "Site operations"): the old text names no pass.
            let refused = try server.checkIn(site.scanner, before.text)
            #expect(refused.isError(404, "NOT_FOUND"), "\(refused.text)")
            let after = try server.passText(visitor, organizationId: site.organizationId)
            #expect(after.shortId != before.shortId && after.validUntil == before.validUntil + 7200)
            // A text of the new short id with the old window is signed by nobody: INVALID.
            var stale = after
            stale.validUntil = before.validUntil
            #expect(try server.checkIn(site.scanner, stale.text).status == 400)
            #expect(try server.checkIn(site.scanner, after.text).string("result") == "CHECKED_IN")
        }
    }

    // MARK: - /expected

    @Test func theFeedNamesRevocationsAndTheirEnd() throws {
        try withSite { server, site in
            let cancelled = try server.createVisitor(site.ownerToken, ["name": "Cleo Cancelled"])
            let blocked = try server.createVisitor(site.ownerToken, ["name": "Ion Ionescu", "email": "ion@example.com"])
            let kept = try server.createVisitor(site.ownerToken, ["name": "Kim Kept"])
            let first = try server.get("/api/visitor-scanner/expected", token: site.scanner)
            #expect(first.keys == ["items", "cursor", "revoked"] && first.json?["revoked"] as? [String] == [])
            let cursor = try #require(first.string("cursor"))

            #expect(try server.post("/api/visitors/\(cancelled["id"] as! String)/cancel", token: site.ownerToken).status == 200)
            let entry = try server.block(site.ownerToken, ["email": "ION@example.com"])
            let delta = try server.get("/api/visitor-scanner/expected?since=\(cursor)", token: site.scanner)
            #expect(Set(delta.json?["revoked"] as? [String] ?? []) == [cancelled["shortId"] as! String, blocked["shortId"] as! String])
            // A cancellation is an item too (the gate's table answers CANCELLED); a blocked
            // visitor's details are not sent.
            #expect(ids(delta.items) == [cancelled["id"] as! String])
            #expect(delta.items.first?["status"] as? String == "CANCELLED")
            #expect(!delta.text.contains("ion@example.com"))
            let after = try #require(delta.string("cursor"))

            #expect(try server.client().send("DELETE", "/api/blocklist/\(entry["id"] as! String)",
                                            headers: ["Authorization": "Bearer \(site.ownerToken)"]).status == 204)
            let restored = try server.get("/api/visitor-scanner/expected?since=\(after)", token: site.scanner)
            #expect(ids(restored.items) == [blocked["id"] as! String])
            #expect(restored.json?["revoked"] as? [String] == [])
            _ = kept
        }
    }

    // MARK: - Reconciliation

    @Test func anOfflineAdmissionOfACancelledPassIsRecordedAsItHappenedWithAConflict() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Cleo"])
            // The gate loaded its cache before the cancellation: it could not know.
            #expect(try server.get("/api/visitor-scanner/expected", token: site.scanner).status == 200)
            #expect(try server.post("/api/visitors/\(visitor["id"] as! String)/cancel", token: site.ownerToken).status == 200)
            let scannedAt = server.clock.now().addingTimeInterval(-300)
            let answer = try server.checkIn(site.scanner, visitor["shortId"] as! String,
                                            ["offline": true, "scannedAt": iso(scannedAt), "offlineDecision": "CHECKED_IN"])
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.string("result") == "CANCELLED" && answer.json?["conflict"] as? Bool == true)
            let stored = try server.visitor(visitor["id"], site.ownerToken)
            #expect(stored["status"] as? String == "CHECKED_IN" && date(stored["checkedInAt"]) == scannedAt)
            let onSite = try server.get("/api/visitor-scanner/on-site", token: site.scanner)
            #expect(ids(onSite.items) == [visitor["id"] as! String])
            let alerts = try server.securityAlerts()
            #expect(alerts.count == 1)
            #expect(alerts.first?.offlineDecision == .checkedIn && alerts.first?.decision == .cancelled)
            let scan = try #require(try server.history(site.ownerToken).first)
            #expect(scan["offlineDecision"] as? String == "CHECKED_IN" && scan["result"] as? String == "CANCELLED")
            #expect(scan["offline"] as? Bool == true && date(scan["scannedAt"]) == scannedAt)
        }
    }

    @Test func aPassAdmittedOfflineAtTwoGatesIsRecordedTwiceTheSecondAnAlert() throws {
        try withSite { server, site in
            let north = try server.post("/api/checkpoints", token: site.ownerToken, ["name": "North gate"])
            let northScanner = try server.scannerToken(site.ownerToken, checkpointId: north.string("id"))
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ada"])
            let shortId = visitor["shortId"] as! String
            for scanner in [site.scanner, northScanner] {
                #expect(try server.get("/api/visitor-scanner/expected", token: scanner).status == 200)
            }
            let at = server.clock.now().addingTimeInterval(-60)
            let main = try server.checkIn(site.scanner, shortId, ["offline": true, "scannedAt": iso(at), "offlineDecision": "CHECKED_IN"])
            #expect(main.string("result") == "CHECKED_IN" && main.json?["conflict"] == nil, "\(main.text)")
            let second = try server.checkIn(northScanner, shortId, ["offline": true, "scannedAt": iso(at.addingTimeInterval(5)),
                                                                    "offlineDecision": "CHECKED_IN"])
            #expect(second.string("result") == "ALREADY_CHECKED_IN" && second.json?["conflict"] as? Bool == true, "\(second.text)")
            // The first gate's admission stands.
            let stored = try server.visitor(visitor["id"], site.ownerToken)
            #expect(stored["checkpointId"] as? String == site.mainGate && date(stored["checkedInAt"]) == at)
            #expect(try server.securityAlerts().map(\.decision) == [.alreadyCheckedIn])
            #expect(try server.history(site.ownerToken).map { $0["result"] as? String } == ["ALREADY_CHECKED_IN", "CHECKED_IN"])
        }
    }

    @Test func anOfflineRefusalTheServerWouldHaveAdmittedAdmitsNobody() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ada"])
            let answer = try server.checkIn(site.scanner, visitor["shortId"] as! String,
                                            ["offline": true, "scannedAt": iso(server.clock.now()), "offlineDecision": "NOT_FOUND"])
            #expect(answer.status == 200 && answer.string("result") == "NOT_FOUND" && answer.json?["conflict"] as? Bool == true)
            #expect(try server.visitor(visitor["id"], site.ownerToken)["status"] as? String == "EXPECTED")
            #expect(try server.securityAlerts().isEmpty)
        }
    }

    @Test func anOfflineRefusalOfAPassThatNeedsApprovalStillRequestsIt() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Bea", "requiresApproval": true])
            let answer = try server.checkIn(site.scanner, visitor["shortId"] as! String,
                                            ["offline": true, "confirmApprovalRequest": true, "offlineDecision": "APPROVAL_REQUIRED"])
            #expect(answer.string("result") == "AWAITING_APPROVAL" && answer.json?["conflict"] == nil, "\(answer.text)")
        }
    }

    @Test func theReplayOfAnAttemptThatReachedTheServerIsRecognisedAndItsOfflineAdmissionReconciledOnce() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Cleo"])
            let shortId = visitor["shortId"] as! String
            #expect(try server.get("/api/visitor-scanner/expected", token: site.scanner).status == 200)
            #expect(try server.post("/api/visitors/\(visitor["id"] as! String)/cancel", token: site.ownerToken).status == 200)
            let key = ["Idempotency-Key": "kiosk-attempt-1"]
            // The first attempt reached the server; its answer never reached the kiosk.
            let first = try server.checkIn(site.scanner, shortId, ["confirmApprovalRequest": false], headers: key)
            #expect(first.string("result") == "CANCELLED")
            // The kiosk admitted offline and replays with what a replay adds.
            let replay = ["confirmApprovalRequest": false, "offline": true, "scannedAt": iso(server.clock.now()),
                          "offlineDecision": "CHECKED_IN"] as [String: Any]
            for _ in 0..<2 {
                let answer = try server.checkIn(site.scanner, shortId, replay, headers: key)
                #expect(answer.status == 200 && answer.headers["idempotent-replayed"] == "true", "\(answer.text)")
                #expect(answer.string("result") == "CANCELLED" && answer.json?["conflict"] as? Bool == true)
            }
            #expect(try server.visitor(visitor["id"], site.ownerToken)["status"] as? String == "CHECKED_IN")
            let history = try server.history(site.ownerToken)
            #expect(history.count == 1 && history.first?["offlineDecision"] as? String == "CHECKED_IN")
            #expect(try server.securityAlerts().count == 1)
            // The key still names that attempt only: another pass, or another flag, is 422.
            #expect(try server.checkIn(site.scanner, shortId, ["confirmApprovalRequest": true], headers: key).status == 422)
            #expect(try server.checkIn(site.scanner, "AAAAAAAA", headers: key).status == 422)
        }
    }

    @Test func anOfflineDecisionThatIsNoResultIsRefused() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ada"])
            for value in ["ADMITTED", "", "checked_in", String(repeating: "X", count: 5000)] as [Any] + [true, 7, NSNull()] {
                let answer = try server.checkIn(site.scanner, visitor["shortId"] as! String, ["offlineDecision": value])
                if value is NSNull {
                    #expect(answer.string("result") == "CHECKED_IN", "null is no decision: \(answer.text)")
                } else {
                    #expect(answer.status == 400, "\(value): \(answer.text)")
                }
            }
        }
    }
}

/// api.md "Which offline claims count": an offline admission counts only where an offline kiosk
/// could have made it, judged against what the claiming device's `/expected` answers told it.
@Suite struct OfflineClaimTests {
    static func claim(_ server: TestServer, _ scanner: String, _ text: String, at scannedAt: Date,
                      headers: [String: String] = [:]) throws -> HTTPAnswer {
        try server.checkIn(scanner, text, ["offline": true, "scannedAt": iso(scannedAt), "offlineDecision": "CHECKED_IN"],
                           headers: headers)
    }

    static func expected(_ server: TestServer, _ scanner: String) throws {
        let answer = try server.get("/api/visitor-scanner/expected", token: scanner)
        guard answer.status == 200 else { throw TestFailure("/expected answered \(answer.status): \(answer.text)") }
    }

    /// The claim was refused: a conflict, the visitor as it was, the scan holding the claim,
    /// and one alert naming `condition`.
    static func expectRefused(_ answer: HTTPAnswer, _ visitor: [String: Any], _ condition: OfflineClaimFailure,
                              status: String, _ server: TestServer, _ site: Site,
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        let name = visitor["name"] as? String ?? ""
        #expect(answer.status == 200 && answer.json?["conflict"] as? Bool == true, "\(name): \(answer.text)",
                sourceLocation: sourceLocation)
        #expect(try server.visitor(visitor["id"], site.ownerToken)["status"] as? String == status, "\(name) admitted",
                sourceLocation: sourceLocation)
        let scanId = answer.string("scanId")
        let alerts = try server.securityAlerts().filter { $0.scanId == scanId }
        #expect(alerts.count == 1 && alerts.first?.failedCondition == condition && alerts.first?.offlineDecision == .checkedIn,
                "\(name): \(alerts)", sourceLocation: sourceLocation)
        let scan = try server.history(site.ownerToken).first { $0["id"] as? String == scanId }
        #expect(scan?["offlineDecision"] as? String == "CHECKED_IN" && scan?["result"] as? String == answer.string("result"),
                sourceLocation: sourceLocation)
    }

    @Test(arguments: Backend.available)
    func aBareTextOfABlockedCancelledOrUnapprovedVisitorAdmitsNobody(_ backend: Backend) throws {
        try withServer(on: backend) { server in
            let site = try server.makeSite()
            let blocked = try server.createVisitor(site.ownerToken, ["name": "Boris Blocked", "email": "boris@example.com"])
            let cancelled = try server.createVisitor(site.ownerToken, ["name": "Cleo Cancelled"])
            let unapproved = try server.createVisitor(site.ownerToken, ["name": "Una Unapproved", "requiresApproval": true])
            _ = try server.block(site.ownerToken, ["email": "boris@example.com"])
            #expect(try server.post("/api/visitors/\(cancelled["id"] as! String)/cancel", token: site.ownerToken).status == 200)
            let cases = [(blocked, "EXPECTED"), (cancelled, "CANCELLED"), (unapproved, "EXPECTED")]
            let at = server.clock.now().addingTimeInterval(-60)
            // A scanner token that never asked /expected: no bare text of it counts.
            for (visitor, status) in cases {
                for text in [visitor["shortId"] as! String, "GP1:\(visitor["shortId"] as! String)"] {
                    try Self.expectRefused(try Self.claim(server, site.scanner, text, at: at), visitor, .notCached, status: status,
                                           server, site)
                }
            }
            // One told of each by /expected, ten minutes before its scans: it knew them refused.
            let told = try server.scannerToken(site.ownerToken)
            try Self.expected(server, told)
            server.clock.advance(by: 600)
            for (visitor, status) in cases {
                try Self.expectRefused(try Self.claim(server, told, "GP1:\(visitor["shortId"] as! String)", at: server.clock.now()),
                                       visitor, .knownRevoked, status: status, server, site)
            }
            // A pass it was told of as admissible counts, and stands as it happened.
            let fine = try server.createVisitor(site.ownerToken, ["name": "Fred Fine"])
            try Self.expected(server, told)
            let admitted = try Self.claim(server, told, fine["shortId"] as! String, at: at)
            #expect(admitted.string("result") == "CHECKED_IN" && admitted.json?["conflict"] == nil, "\(admitted.text)")
            #expect(date(try server.visitor(fine["id"], site.ownerToken)["checkedInAt"]) == at)
        }
    }

    @Test func theScanTimeMustBeInsideTheWindowAndNotInTheFuture() throws {
        try withSite { server, site in
            let now = server.clock.now()
            func visitor(_ name: String) throws -> [String: Any] {
                try server.createVisitor(site.ownerToken, ["name": name, "validFrom": iso(now.addingTimeInterval(-7200)),
                                                           "validUntil": iso(now.addingTimeInterval(7200))])
            }
            let future = try visitor("Fay Future"), early = try visitor("Ed Early"), skewed = try visitor("Sue Skew")
            try Self.expected(server, site.scanner)
            try Self.expectRefused(try Self.claim(server, site.scanner, future["shortId"] as! String, at: now.addingTimeInterval(301)),
                                   future, .future, status: "EXPECTED", server, site)
            try Self.expectRefused(try Self.claim(server, site.scanner, early["shortId"] as! String, at: now.addingTimeInterval(-7300)),
                                   early, .window, status: "EXPECTED", server, site)
            // Within five minutes ahead: a kiosk clock a little fast still counts.
            let answer = try Self.claim(server, site.scanner, skewed["shortId"] as! String, at: now.addingTimeInterval(299))
            #expect(answer.string("result") == "CHECKED_IN" && answer.json?["conflict"] == nil, "\(answer.text)")
        }
    }

    @Test func aSignedPassCountsByItsSignatureAloneOnlyWhenAnAdmitKeySignedIt() throws {
        try withSite { server, site in
            let at = server.clock.now().addingTimeInterval(-60)
            let admit = try server.createVisitor(site.ownerToken, ["name": "Ada Admit"])
            let approval = try server.createVisitor(site.ownerToken, ["name": "Bea Approval", "requiresApproval": true])
            // Never told of either: the admit key's pass counts, the approval key's never does.
            let admitText = try server.passText(admit, organizationId: site.organizationId).text
            let answer = try Self.claim(server, site.scanner, admitText, at: at)
            #expect(answer.string("result") == "CHECKED_IN" && answer.json?["conflict"] == nil, "\(answer.text)")
            let approvalText = try server.passText(approval, organizationId: site.organizationId).text
            try Self.expectRefused(try Self.claim(server, site.scanner, approvalText, at: at), approval, .signature,
                                   status: "EXPECTED", server, site)
            // A text the server finds INVALID admits no one and keeps its 400; the alert names the visitor.
            var forged = try server.passText(admit, organizationId: site.organizationId)
            forged.validUntil += 60
            let refused = try Self.claim(server, site.scanner, forged.text, at: at)
            #expect(refused.isError(400, "INVALID") || refused.isError(400, "BAD_REQUEST"), "\(refused.text)")
            let alert = try server.securityAlerts().last
            #expect(alert?.visitor.id == admit["id"] as? String && alert?.failedCondition == .signature && alert?.decision == .invalid)
            // Approved, and carried by /expected so: the cache could admit it.
            #expect(try server.post("/api/visitors/\(approval["id"] as! String)/approve-scan", token: site.ownerToken).status == 200)
            try Self.expected(server, site.scanner)
            let approved = try Self.claim(server, site.scanner, approvalText, at: server.clock.now())
            #expect(approved.string("result") == "CHECKED_IN" && approved.json?["conflict"] == nil, "\(approved.text)")
        }
    }

    @Test(arguments: Backend.available)
    func aRenewedScannerTokenKeepsWhatItsDeviceWasTold(_ backend: Backend) throws {
        try withServer(on: backend) { server in
            let site = try server.makeSite()
            let at = server.clock.now().addingTimeInterval(-60)
            let visitors = try (0..<3).map { try server.createVisitor(site.ownerToken, ["name": "Guest \($0)"]) }
            try Self.expected(server, site.scanner)
            func renew(_ previous: String?) throws -> HTTPAnswer {
                try server.post("/api/visitor-scanner/token", token: site.ownerToken,
                                previous.map { ["previousScannerToken": $0] } ?? [:])
            }
            let renewed = try #require(try renew(site.scanner).string("scannerToken"))
            let again = try #require(try renew(renewed).string("scannerToken"))
            // One device: the chain's first token; its last /expected answer's time and cursor recorded.
            let signer = server.server.application.signer
            let device = try #require(signer.verify(site.scanner)?.sessionId)
            let cursor = try server.get("/api/visitor-scanner/expected?since=0", token: again).string("cursor")
            let (linked, sync) = try server.store.read { tx in
                (try tx.scannerDevices.deviceId(sessionId: signer.verify(again)?.sessionId ?? ""),
                 try tx.scannerDevices.lastSync(deviceId: device))
            }
            #expect(linked == device && sync == DeviceSync(at: server.clock.now(), cursor: cursor ?? ""))
            for (token, visitor) in [(renewed, visitors[0]), (again, visitors[1])] {
                let answer = try Self.claim(server, token, visitor["shortId"] as! String, at: at)
                #expect(answer.string("result") == "CHECKED_IN" && answer.json?["conflict"] == nil, "\(answer.text)")
            }
            // A new token that renews nothing is a new device, told nothing yet.
            let fresh = try server.scannerToken(site.ownerToken)
            try Self.expectRefused(try Self.claim(server, fresh, visitors[2]["shortId"] as! String, at: at), visitors[2], .notCached,
                                   status: "EXPECTED", server, site)
            // Only a scanner token of the caller's own may be renewed; one the server cannot place
            // (another secret, a restored database) starts a new device, so renewals go on.
            let other = try server.scannerToken(site.adminToken)
            for previous in [site.ownerToken, other] {
                #expect(try renew(previous).isError(400, "BAD_REQUEST"), "\(previous.prefix(12))")
            }
            let unplaced = try #require(try renew("gp1.not-a-token.x").string("scannerToken"))
            try Self.expectRefused(try Self.claim(server, unplaced, visitors[2]["shortId"] as! String, at: at), visitors[2],
                                   .notCached, status: "EXPECTED", server, site)
        }
    }

    /// A kiosk back online syncs and replays at once, in either order: a revocation it was told
    /// of only after the scan does not undo what it could not have known (5 minutes of its clock
    /// running ahead allowed); one it was told of before does.
    @Test func aRevocationCountsFromTheAnswerThatToldTheDevice() throws {
        try withSite { server, site in
            let early = try server.createVisitor(site.ownerToken, ["name": "Ed Early"])
            let late = try server.createVisitor(site.ownerToken, ["name": "Lou Late"])
            try Self.expected(server, site.scanner)
            for visitor in [early, late] {
                #expect(try server.post("/api/visitors/\(visitor["id"] as! String)/cancel", token: site.ownerToken).status == 200)
            }
            let scannedAt = server.clock.now().addingTimeInterval(60)
            server.clock.advance(by: 120)
            try Self.expected(server, site.scanner)
            let toldAt = server.clock.now()
            server.clock.advance(by: 600)
            let counted = try Self.claim(server, site.scanner, early["shortId"] as! String, at: scannedAt)
            #expect(counted.string("result") == "CANCELLED" && counted.json?["conflict"] as? Bool == true, "\(counted.text)")
            #expect(try server.visitor(early["id"], site.ownerToken)["status"] as? String == "CHECKED_IN", "inside, as it happened")
            #expect(try server.securityAlerts().last?.failedCondition == nil)
            // Scanned a little after it was told, on a clock within the skew: it may not have known yet.
            let skewed = try Self.claim(server, site.scanner, late["shortId"] as! String, at: toldAt.addingTimeInterval(299))
            #expect(try server.visitor(late["id"], site.ownerToken)["status"] as? String == "CHECKED_IN", "\(skewed.text)")
            let third = try server.createVisitor(site.ownerToken, ["name": "Kim Known"])
            try Self.expected(server, site.scanner)
            #expect(try server.post("/api/visitors/\(third["id"] as! String)/cancel", token: site.ownerToken).status == 200)
            try Self.expected(server, site.scanner)
            let knownAt = server.clock.now()
            server.clock.advance(by: 600)
            try Self.expectRefused(try Self.claim(server, site.scanner, third["shortId"] as! String, at: knownAt.addingTimeInterval(301)),
                                   third, .knownRevoked, status: "CANCELLED", server, site)
        }
    }

    @Test func anEnrolledKioskIsADeviceOfItsOwn() throws {
        try withSite { server, site in
            let at = server.clock.now().addingTimeInterval(-60)
            let pass = try server.createVisitor(site.ownerToken, ["name": "Kai Kiosk"])
            let north = try server.enrol(try server.enrolmentCode(site.mainGate, token: site.ownerToken))
            let south = try server.enrol(try server.enrolmentCode(site.mainGate, token: site.ownerToken, name: "South kiosk"))
            try Self.expected(server, north)
            // The other kiosk was told nothing, though the same admin enrolled both.
            try Self.expectRefused(try Self.claim(server, south, pass["shortId"] as! String, at: at), pass, .notCached,
                                   status: "EXPECTED", server, site)
            let answer = try Self.claim(server, north, pass["shortId"] as! String, at: at)
            #expect(answer.string("result") == "CHECKED_IN" && answer.json?["conflict"] == nil, "\(answer.text)")
        }
    }

    @Test func theReplayOfAnAttemptThatReachedTheServerCountsItsClaimTheSameWay() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Cleo"])
            let shortId = visitor["shortId"] as! String
            #expect(try server.post("/api/visitors/\(visitor["id"] as! String)/cancel", token: site.ownerToken).status == 200)
            try Self.expected(server, site.scanner)
            server.clock.advance(by: 600)
            let key = ["Idempotency-Key": "kiosk-attempt-1"]
            #expect(try server.checkIn(site.scanner, shortId, ["confirmApprovalRequest": false], headers: key).string("result") == "CANCELLED")
            let answer = try Self.claim(server, site.scanner, shortId, at: server.clock.now(), headers: key)
            #expect(answer.headers["idempotent-replayed"] == "true")
            try Self.expectRefused(answer, visitor, .knownRevoked, status: "CANCELLED", server, site)
        }
    }
}

/// A GP2 text signed by a key of the wrong purpose for its visitor (api.md: `admit` signs passes
/// that need no approval, `approval` those that do) is INVALID online as offline.
@Suite struct PassKeyPurposeTests {
    static func resigned(_ visitor: [String: Any], purpose: String, _ server: TestServer, _ site: Site) throws -> String {
        let key = try #require(try server.passKeys(site.scanner).first { $0["purpose"] as? String == purpose })
        let keyId = try #require(key["id"] as? String)
        let stored = try #require(try server.store.read { tx in try tx.visitors.find(id: visitor["id"] as! String) }).visitor
        return try SignedPassText.issue(for: stored, keyId: keyId) { try OfflinePassTests.sign($0, keyId: keyId, in: server) }.text
    }

    @Test func aPassSignedWithTheKeyOfTheOtherPurposeIsInvalidOnline() throws {
        try withSite { server, site in
            let admit = try server.createVisitor(site.ownerToken, ["name": "Ada"])
            let approval = try server.createVisitor(site.ownerToken, ["name": "Bea", "requiresApproval": true])
            for (visitor, purpose) in [(admit, "approval"), (approval, "admit")] {
                let text = try Self.resigned(visitor, purpose: purpose, server, site)
                let answer = try server.checkIn(site.scanner, text)
                #expect(answer.isError(400, "INVALID") || answer.isError(400, "BAD_REQUEST"), "\(purpose): \(answer.text)")
                #expect(try server.visitor(visitor["id"], site.ownerToken)["status"] as? String == "EXPECTED")
            }
            #expect(try server.history(site.ownerToken).allSatisfy { $0["result"] as? String == "INVALID" })
        }
    }

    @Test func aChangeOfRequiresApprovalReissuesThePassWithTheOtherKeyAndResendsTheInvitation() throws {
        try withServer { server in
            let site = try server.makeMailSite()
            let (invited, _) = try server.invitedVisitor(site, ["name": "Ada Lovelace"])
            let before = try server.passText(invited, organizationId: site.owner.organizationId)
            let invitations = try server.mailLog().filter { $0.kind == .invitation }.count
            let edited = try server.client().send("PATCH", "/api/visitors/\(invited["id"] as! String)", token: site.ownerToken,
                                                  json: ["requiresApproval": true])
            #expect(edited.status == 200, "\(edited.text)")
            #expect(try server.mailLog().filter { $0.kind == .invitation }.count == invitations + 1, "the invitation re-sent")
            let after = try server.passText(invited, organizationId: site.owner.organizationId)
            let approvalKey = try server.passKeys(site.scanner).first { $0["purpose"] as? String == "approval" }
            #expect(after.keyId == approvalKey?["id"] as? String && after.shortId != before.shortId)
            #expect(try server.checkIn(site.scanner, before.text).isError(404, "NOT_FOUND"), "the old pass names no pass")
            #expect(try server.checkIn(site.scanner, after.text).string("result") == "APPROVAL_REQUIRED")
        }
    }
}
