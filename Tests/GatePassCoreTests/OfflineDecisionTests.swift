import Foundation
import Testing
@testable import GatePassCore

/// The kiosk's offline decision (api.md "Offline passes", issue 13): the same table as the
/// server for cached passes, signatures for the rest. The domain holds no crypto, so these
/// tests sign with a stand-in (a keyed checksum); GatePassClientTests repeat the signature
/// cases with real Ed25519 keys.
@Suite struct OfflineDecisionTests {
    /// A stand-in signature: 64 bytes that depend on every byte of the message and the key.
    static func fakeSign(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        var state: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in key + message { state = (state ^ UInt64(byte)) &* 0x0100_0000_01B3 }
        return (0..<64).map { index in
            state = (state ^ UInt64(index)) &* 0x0100_0000_01B3
            return UInt8(truncatingIfNeeded: state >> 29)
        }
    }
    static func fakeVerify(_ signature: [UInt8], _ message: [UInt8], _ key: [UInt8]) -> Bool {
        signature == fakeSign(message, key: key)
    }

    static let admitKeyBytes = [UInt8](repeating: 1, count: 32)
    static let approvalKeyBytes = [UInt8](repeating: 2, count: 32)
    static let revokedKeyBytes = [UInt8](repeating: 3, count: 32)
    static let keys = [
        PassKey(id: "A1", purpose: .admit, publicKey: admitKeyBytes, createdAt: Timestamp(Fixture.createdAt)),
        PassKey(id: "P1", purpose: .approval, publicKey: approvalKeyBytes, createdAt: Timestamp(Fixture.createdAt)),
        PassKey(id: "R1", purpose: .admit, publicKey: revokedKeyBytes, createdAt: Timestamp(Fixture.createdAt),
                revokedAt: Timestamp(Fixture.createdAt)),
    ]

    static func signedText(for visitor: Visitor, keyId: String = "A1", key: [UInt8] = admitKeyBytes) -> String {
        SignedPassText.issue(for: visitor, keyId: keyId) { fakeSign($0, key: key) }.text
    }

    static let inside = Fixture.validFrom.addingTimeInterval(3600)
    static let before = Fixture.validFrom.addingTimeInterval(-1)
    static let after = Fixture.validUntil.addingTimeInterval(1)

    static func decide(_ text: String, at time: Date = inside, cache: OfflineCacheSnapshot = OfflineCacheSnapshot(keys: keys),
                       policy: OfflinePolicy = .signed) -> OfflineDecision {
        OfflineDecision.decide(text: text, scannedAt: time, cache: cache, policy: policy, checkpointId: Fixture.gate,
                               verify: fakeVerify)
    }

    static func cache(_ visitors: [Visitor], revoked: Set<ShortID> = [], admitted: Set<ShortID> = []) -> OfflineCacheSnapshot {
        OfflineCacheSnapshot(visitors: Dictionary(uniqueKeysWithValues: visitors.map { ($0.shortId, $0) }), revoked: revoked,
                             keys: keys, admittedSinceSync: admitted)
    }

    // MARK: - Texts that are no pass

    @Test(arguments: OfflinePolicy.allCases)
    func textThatIsNoPassIsInvalidUnderEveryPolicy(policy: OfflinePolicy) {
        let visitor = Fixture.visitor(status: .expected, requiresApproval: false)
        let good = Self.signedText(for: visitor)
        let hostile = ["", "   ", "hello", "GP1:", "GP1:K7Q2M9X", String(repeating: "A", count: 300),
                       "GP2:" + String(repeating: "0", count: 160), "gp2:k7q2m9xd", String(good.dropLast()), good + "0",
                       good.replacingOccurrences(of: "GP2:", with: "GP3:"), "\u{0}K7Q2M9XD", "https://example.com/"]
        for text in hostile {
            let decision = Self.decide(text, cache: Self.cache([visitor]), policy: policy)
            #expect(decision.result == .invalid, "\(text.debugDescription)")
            #expect(decision.basis == .none)
        }
    }

    @Test func theParseIsTheServers() throws {
        // Every form QRPayload accepts names the same short id; GP2 is judged as GP2 only.
        for text in ["K7Q2M9XD", "k7q2-m9xd", "GP1:K7Q2M9XD", "gp1:k7q2m9xd", " K7Q2M9XD\n", "https://x.example/p/K7Q2M9XD?x=1"] {
            #expect(try QRPayload.reference(from: text) == .plain(Fixture.shortId), "\(text)")
            #expect(try QRPayload.reference(from: text).shortId == (try QRPayload.shortID(from: text)))
        }
        let signed = Self.signedText(for: Fixture.visitor(status: .expected, requiresApproval: false))
        guard case .signed(let parsed) = try QRPayload.reference(from: " " + signed + "\r\n") else {
            Issue.record("a GP2 text parsed as something else")
            return
        }
        #expect(parsed.text == signed)
        #expect(throws: QRPayloadError.tooLong(bytes: 257)) { try QRPayload.reference(from: String(repeating: "K", count: 257)) }
        #expect(throws: QRPayloadError.unrecognized) { try QRPayload.reference(from: "GP2:K7Q2M9XD") }
    }

    // MARK: - Cached visitors: the server's table

    /// Every status × approval flag × scan time, in every accepted form, under both policies
    /// that judge: the server's own table, with no approval requested.
    @Test(arguments: [OfflinePolicy.cachedOnly, .signed])
    func aCachedVisitorIsJudgedByTheServersTable(policy: OfflinePolicy) {
        for status in VisitorStatus.allCases {
            for requiresApproval in [false, true] {
                let visitor = Fixture.visitor(status: status, requiresApproval: requiresApproval)
                let key = requiresApproval ? ("P1", Self.approvalKeyBytes) : ("A1", Self.admitKeyBytes)
                let texts = ["K7Q2M9XD", "GP1:K7Q2M9XD", Self.signedText(for: visitor, keyId: key.0, key: key.1)]
                for time in [Self.before, Fixture.validFrom, Self.inside, Fixture.validUntil, Self.after] {
                    let server = CheckIn.decide(visitor: visitor, receivedAt: time, request: CheckInRequest(), checkpointId: Fixture.gate)
                    for text in texts {
                        let decision = Self.decide(text, at: time, cache: Self.cache([visitor]), policy: policy)
                        #expect(decision.result == server.result, "\(status) \(requiresApproval) \(time) \(text.prefix(12))")
                        #expect(decision.basis == .cachedVisitor)
                        #expect(decision.visitor == server.visitor)
                        #expect(decision.shortId == Fixture.shortId)
                    }
                }
            }
        }
    }

    @Test func anAdmissionMarksTheVisitorInside() {
        let visitor = Fixture.visitor(status: .expected, requiresApproval: false)
        let decision = Self.decide("K7Q2M9XD", cache: Self.cache([visitor]))
        #expect(decision.result == .checkedIn && decision.admits)
        #expect(decision.visitor?.status == .checkedIn)
        #expect(decision.visitor?.checkedInAt == Self.inside)
        #expect(decision.visitor?.checkpointId == Fixture.gate)
    }

    @Test func aPassNeedingApprovalIsRefusedOfflineAndAskedForLater() {
        let visitor = Fixture.visitor(status: .expected, requiresApproval: true)
        let decision = Self.decide("K7Q2M9XD", cache: Self.cache([visitor]))
        #expect(decision.result == .approvalRequired)
        #expect(!decision.admits)
        #expect(decision.visitor == visitor, "nothing is requested offline")
    }

    @Test func aRevokedCachedPassIsBlockedUnlessCancelled() {
        for status in VisitorStatus.allCases {
            let visitor = Fixture.visitor(status: status, requiresApproval: false)
            let decision = Self.decide("K7Q2M9XD", cache: Self.cache([visitor], revoked: [Fixture.shortId]))
            #expect(decision.result == (status == .cancelled ? .cancelled : .blocked), "\(status)")
        }
    }

    @Test func aPassAdmittedSinceTheLastSyncIsAlreadyInside() {
        let visitor = Fixture.visitor(status: .expected, requiresApproval: false)
        let decision = Self.decide("K7Q2M9XD", at: Self.after, cache: Self.cache([visitor], admitted: [Fixture.shortId]))
        #expect(decision.result == .alreadyCheckedIn, "inside beats the window, as on the server")
        // A cancellation or rejection the kiosk was told of after its admission beats it: the
        // pass is refused, not "already inside" (api.md "Which offline claims count"; the
        // server still records the first admission as it happened).
        for status in [VisitorStatus.cancelled, .rejected] {
            var revoked = visitor
            revoked.status = status
            let decision = Self.decide("K7Q2M9XD", cache: Self.cache([revoked], revoked: status == .cancelled ? [Fixture.shortId] : [],
                                                                     admitted: [Fixture.shortId]))
            #expect(decision.result == (status == .cancelled ? .cancelled : .rejected) && !decision.admits, "\(status)")
        }
        #expect(Self.decide("K7Q2M9XD", cache: Self.cache([visitor], revoked: [Fixture.shortId], admitted: [Fixture.shortId])).result
                == .blocked)
    }

    @Test func aReissuedPassIsInvalid() {
        let old = Fixture.visitor(status: .expected, requiresApproval: false)
        let text = Self.signedText(for: old)
        var reissued = old
        reissued.validity = ValidityWindow(from: Fixture.validFrom, until: Fixture.validUntil.addingTimeInterval(3600))
        for policy in OfflinePolicy.allCases {
            #expect(Self.decide(text, cache: Self.cache([reissued]), policy: policy).result == .invalid, "\(policy)")
        }
        #expect(Self.decide(Self.signedText(for: reissued), cache: Self.cache([reissued])).result == .checkedIn)
    }

    // MARK: - Passes not in the cache

    @Test func anUncachedSignedPassIsJudgedByItsSignatureAndWindow() {
        let admit = Self.signedText(for: Fixture.visitor(status: .expected, requiresApproval: false))
        let approval = Self.signedText(for: Fixture.visitor(status: .expected, requiresApproval: true), keyId: "P1",
                                       key: Self.approvalKeyBytes)
        #expect(Self.decide(admit).result == .checkedIn)
        #expect(Self.decide(admit).basis == .signature)
        #expect(Self.decide(admit).visitor == nil)
        #expect(Self.decide(admit, at: Fixture.validFrom).result == .checkedIn)
        #expect(Self.decide(admit, at: Fixture.validUntil).result == .checkedIn)
        #expect(Self.decide(admit, at: Self.before).result == .notYetValid)
        #expect(Self.decide(admit, at: Self.after).result == .expired)
        #expect(Self.decide(approval).result == .approvalRequired, "an approval key never admits by signature alone")
        #expect(Self.decide(approval, at: Self.after).result == .expired, "the window first, as on the server")
        let revoked = OfflineCacheSnapshot(revoked: [Fixture.shortId], keys: Self.keys)
        #expect(Self.decide(admit, cache: revoked).result == .blocked)
        let admitted = OfflineCacheSnapshot(keys: Self.keys, admittedSinceSync: [Fixture.shortId])
        #expect(Self.decide(admit, cache: admitted).result == .alreadyCheckedIn)
    }

    @Test func anUncachedPassIsUnknownUnlessThePolicyTrustsSignatures() {
        let admit = Self.signedText(for: Fixture.visitor(status: .expected, requiresApproval: false))
        #expect(Self.decide(admit, policy: .cachedOnly).result == .notFound)
        #expect(Self.decide(admit, policy: .deny).result == .notFound)
        for text in ["K7Q2M9XD", "GP1:K7Q2M9XD"] {
            for policy in OfflinePolicy.allCases {
                let decision = Self.decide(text, policy: policy)
                #expect(decision.result == .notFound, "\(text) \(policy)")
                #expect(decision.basis == .none)
            }
        }
    }

    @Test func policyDenyJudgesNothing() {
        for status in VisitorStatus.allCases {
            let visitor = Fixture.visitor(status: status, requiresApproval: false)
            for text in ["K7Q2M9XD", Self.signedText(for: visitor)] {
                #expect(Self.decide(text, cache: Self.cache([visitor], revoked: [Fixture.shortId]), policy: .deny).result == .notFound)
            }
        }
    }

    // MARK: - Signatures

    @Test(arguments: OfflinePolicy.allCases)
    func aSignatureThatFailsIsInvalidUnderEveryPolicy(policy: OfflinePolicy) {
        let visitor = Fixture.visitor(status: .expected, requiresApproval: false)
        let good = Self.signedText(for: visitor)
        let forged = [
            Self.signedText(for: visitor, keyId: "A1", key: Self.approvalKeyBytes),   // another key under this id
            Self.signedText(for: visitor, keyId: "Z9", key: Self.admitKeyBytes),      // a key the kiosk does not know
            Self.signedText(for: visitor, keyId: "R1", key: Self.revokedKeyBytes),    // a revoked key
            good.replacingOccurrences(of: ".1795975200.", with: ".1795978800."),      // validUntil moved an hour
        ]
        for text in forged {
            for cache in [Self.cache([visitor]), OfflineCacheSnapshot(keys: Self.keys)] {
                #expect(Self.decide(text, cache: cache, policy: policy).result == .invalid, "\(text.prefix(40))")
            }
        }
        #expect(Self.decide(good, cache: OfflineCacheSnapshot(), policy: policy).result == .invalid, "no keys cached")
    }
}
