import Foundation
import GatePassCore
import GatePassCrypto
import Testing

/// Issue 13's signature tests with real Ed25519 keys (OpenSSL through GatePassCrypto), through
/// the kiosk's offline decision: a valid pass, one bit flipped in each field, a truncated
/// text, another key, a retired key (still valid), a revoked key and an expired pass.
@Suite struct OfflineSignatureTests {
    /// Two organizations' worth of keys: the kiosk knows `admit` (current), `retired` and
    /// `revoked`; `stranger` signs with a key the kiosk has never seen.
    struct Keys {
        let admit: Ed25519.KeyPair
        let retired: Ed25519.KeyPair
        let revoked: Ed25519.KeyPair
        let approval: Ed25519.KeyPair
        let stranger: Ed25519.KeyPair
        let list: [PassKey]

        init() throws {
            admit = try Ed25519.generate()
            retired = try Ed25519.generate()
            revoked = try Ed25519.generate()
            approval = try Ed25519.generate()
            stranger = try Ed25519.generate()
            let created = Timestamp(Date(timeIntervalSince1970: 1_795_000_000))
            list = [
                PassKey(id: "K2", purpose: .admit, publicKey: admit.publicKey, createdAt: created),
                PassKey(id: "K1", purpose: .admit, publicKey: retired.publicKey, createdAt: created, retiredAt: created),
                PassKey(id: "KR", purpose: .admit, publicKey: revoked.publicKey, createdAt: created, revokedAt: created),
                PassKey(id: "AP", purpose: .approval, publicKey: approval.publicKey, createdAt: created),
            ]
        }
    }

    /// 2026-11-29T08:00:00Z – 18:00:00Z.
    static let window = ValidityWindow(from: Date(timeIntervalSince1970: 1_795_939_200),
                                       until: Date(timeIntervalSince1970: 1_795_975_200))
    static let noon = Date(timeIntervalSince1970: 1_795_939_200 + 4 * 3600)

    static func visitor(requiresApproval: Bool = false) -> Visitor {
        Visitor(id: "0b8a2c4e-7d1f-4a6b-9c3e-5f2d1a0b9c8d", shortId: ShortID("K7Q2M9XD")!, name: "Ana Pop",
                requiresApproval: requiresApproval, validity: window, createdAt: Date(timeIntervalSince1970: 1_795_900_000))
    }

    static func sign(_ visitor: Visitor, keyId: String, with pair: Ed25519.KeyPair) throws -> String {
        try SignedPassText.issue(for: visitor, keyId: keyId) { bytes in try Ed25519.sign(bytes, privateKey: pair.privateKey) }.text
    }

    /// The decision of a kiosk that has the keys but no cached visitor (policy `signed`).
    static func decide(_ text: String, keys: Keys, at time: Date = noon) -> ScanResult {
        OfflineDecision.decide(text: text, scannedAt: time, cache: OfflineCacheSnapshot(keys: keys.list), policy: .signed,
                               checkpointId: "gate", verify: { Ed25519.verify($0, of: $1, publicKey: $2) }).result
    }

    @Test func aValidPassIsAdmitted() throws {
        let keys = try Keys()
        let text = try Self.sign(Self.visitor(), keyId: "K2", with: keys.admit)
        #expect(Self.decide(text, keys: keys) == .checkedIn)
    }

    @Test func oneBitFlippedInAnyFieldIsInvalid() throws {
        let keys = try Keys()
        let text = try Self.sign(Self.visitor(), keyId: "K2", with: keys.admit)
        let fields = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        #expect(fields.count == 5)
        // The short id, each time, the key id and the signature, one changed character each: a
        // Crockford symbol one bit away (or a digit one bit away), so the text stays well-formed.
        func flipped(_ field: String, at index: Int) -> String {
            var characters = Array(field)
            let alphabet = ShortID.alphabet
            if let value = alphabet.firstIndex(of: characters[index]) {
                characters[index] = alphabet[value ^ 1]
            } else if let digit = characters[index].wholeNumberValue {
                characters[index] = Character(String(digit ^ 1))
            }
            return String(characters)
        }
        var variants: [(String, String)] = []
        variants.append(("shortId", "GP2:" + flipped(String(fields[0].dropFirst(4)), at: 7)))
        variants.append(("validFrom", flipped(fields[1], at: fields[1].count - 1)))
        variants.append(("validUntil", flipped(fields[2], at: fields[2].count - 1)))
        variants.append(("keyId", "K3"))
        for index in [0, 50, 101] { variants.append(("signature \(index)", flipped(fields[4], at: index))) }
        for (name, replacement) in variants {
            var changed = fields
            switch name {
            case "shortId": changed[0] = replacement
            case "validFrom": changed[1] = replacement
            case "validUntil": changed[2] = replacement
            case "keyId": changed[3] = replacement
            default: changed[4] = replacement
            }
            let forged = changed.joined(separator: ".")
            #expect(forged != text)
            #expect(SignedPassText(parsing: forged) != nil, "\(name): still well-formed, so the signature is what refuses it")
            #expect(Self.decide(forged, keys: keys) == .invalid, "\(name)")
        }
    }

    @Test func aTruncatedTextIsInvalid() throws {
        let keys = try Keys()
        let text = try Self.sign(Self.visitor(), keyId: "K2", with: keys.admit)
        for length in [4, 12, 40, text.count - 20, text.count - 1] {
            #expect(Self.decide(String(text.prefix(length)), keys: keys) == .invalid, "\(length)")
        }
    }

    @Test func anotherKeysSignatureIsInvalid() throws {
        let keys = try Keys()
        // Re-signed with a key the organization does not have, under a known key id and under its own.
        #expect(Self.decide(try Self.sign(Self.visitor(), keyId: "K2", with: keys.stranger), keys: keys) == .invalid)
        #expect(Self.decide(try Self.sign(Self.visitor(), keyId: "ZZ", with: keys.stranger), keys: keys) == .invalid)
        // Signed by the approval key but claiming the admit key's id.
        #expect(Self.decide(try Self.sign(Self.visitor(), keyId: "K2", with: keys.approval), keys: keys) == .invalid)
    }

    @Test func aRetiredKeysPassStaysValid() throws {
        let keys = try Keys()
        #expect(Self.decide(try Self.sign(Self.visitor(), keyId: "K1", with: keys.retired), keys: keys) == .checkedIn)
    }

    @Test func aRevokedKeysPassIsInvalid() throws {
        let keys = try Keys()
        #expect(Self.decide(try Self.sign(Self.visitor(), keyId: "KR", with: keys.revoked), keys: keys) == .invalid)
    }

    @Test func anExpiredOrEarlyPassIsRefused() throws {
        let keys = try Keys()
        let text = try Self.sign(Self.visitor(), keyId: "K2", with: keys.admit)
        #expect(Self.decide(text, keys: keys, at: Self.window.until.addingTimeInterval(1)) == .expired)
        #expect(Self.decide(text, keys: keys, at: Self.window.from.addingTimeInterval(-1)) == .notYetValid)
        #expect(Self.decide(text, keys: keys, at: Self.window.until) == .checkedIn, "the last second is inside")
    }

    @Test func anApprovalKeysPassIsNeverAdmittedBySignatureAlone() throws {
        let keys = try Keys()
        #expect(Self.decide(try Self.sign(Self.visitor(requiresApproval: true), keyId: "AP", with: keys.approval), keys: keys)
                == .approvalRequired)
    }
}
