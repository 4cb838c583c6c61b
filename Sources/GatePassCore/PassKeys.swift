import Foundation

/// What a pass key signs (api.md "Offline passes"): an offline kiosk admits on a signature
/// alone only what an `admit` key signed; an `approval` key's passes need an approver.
public enum PassKeyPurpose: String, Codable, Sendable, CaseIterable {
    case admit
    case approval

    /// The purpose of the key that signs `visitor`'s pass.
    public static func of(_ visitor: Visitor) -> PassKeyPurpose { visitor.requiresApproval ? .approval : .admit }
}

/// A pass key's public half as `GET /api/visitor-scanner/pass-keys` lists it.
public struct PassKey: Codable, Sendable, Equatable {
    public static let algorithmName = "Ed25519"

    public var id: String
    public var algorithm: String
    public var purpose: PassKeyPurpose
    /// The raw 32-byte public key, base64url without padding.
    public var publicKey: String
    public var createdAt: Timestamp
    /// Set when a newer key of the same purpose took over: its passes stay valid until they end.
    public var retiredAt: Timestamp?
    /// Set when the key leaked: its passes are refused everywhere.
    public var revokedAt: Timestamp?

    public init(id: String, purpose: PassKeyPurpose, publicKey: [UInt8], createdAt: Timestamp,
                retiredAt: Timestamp? = nil, revokedAt: Timestamp? = nil) {
        self.id = id; algorithm = Self.algorithmName; self.purpose = purpose
        self.publicKey = Base64URL.encode(publicKey)
        self.createdAt = createdAt; self.retiredAt = retiredAt; self.revokedAt = revokedAt
    }

    /// The raw public key; nil when `publicKey` is not 32 bytes of base64url.
    public var publicKeyBytes: [UInt8]? {
        guard let bytes = Base64URL.decode(publicKey), bytes.count == 32 else { return nil }
        return bytes
    }

    enum CodingKeys: String, CodingKey { case id, algorithm, purpose, publicKey, createdAt, retiredAt, revokedAt }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        algorithm = try c.decode(String.self, forKey: .algorithm)
        purpose = try c.decode(PassKeyPurpose.self, forKey: .purpose)
        publicKey = try c.decode(String.self, forKey: .publicKey)
        createdAt = try c.decode(Timestamp.self, forKey: .createdAt)
        retiredAt = try c.decodeIfPresent(Timestamp.self, forKey: .retiredAt)
        revokedAt = try c.decodeIfPresent(Timestamp.self, forKey: .revokedAt)
        // A key this code cannot use is an error, not a key that never verifies.
        guard SignedPassText.isKeyId(id) else {
            throw DecodingError.dataCorruptedError(forKey: .id, in: c, debugDescription: "not a pass key id: \(id.prefix(8))")
        }
        guard algorithm == Self.algorithmName else {
            throw DecodingError.dataCorruptedError(forKey: .algorithm, in: c, debugDescription: "unknown algorithm")
        }
        guard publicKeyBytes != nil else {
            throw DecodingError.dataCorruptedError(forKey: .publicKey, in: c, debugDescription: "not 32 bytes of base64url")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(algorithm, forKey: .algorithm)
        try c.encode(purpose, forKey: .purpose)
        try c.encode(publicKey, forKey: .publicKey)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(retiredAt, forKey: .retiredAt)
        try c.encode(revokedAt, forKey: .revokedAt)
    }
}

/// `GET /api/visitor-scanner/pass-keys`.
public struct PassKeyList: Codable, Sendable, Equatable {
    public var keys: [PassKey]
    public init(keys: [PassKey]) { self.keys = keys }
}

/// What a GP2 text's signature says about it, judged against an organization's pass keys.
public enum SignedPassCheck: Sendable, Equatable {
    /// The signature verifies under a key that is not revoked.
    case verified(PassKey)
    /// No key of the organization has this id.
    case unknownKey
    /// The key was revoked: its passes are refused everywhere.
    case revokedKey
    /// The signature does not verify (a changed field, another key's signature, a forgery).
    case badSignature
}

extension SignedPassText {
    /// Checks the signature against `keys`; `verify(signature, message, publicKey)` is the
    /// Ed25519 verification (GatePassCrypto), passed in because the domain holds no crypto.
    public func check(against keys: [PassKey],
                      verify: ([UInt8], [UInt8], [UInt8]) -> Bool) -> SignedPassCheck {
        guard let key = keys.first(where: { $0.id == keyId }), let publicKey = key.publicKeyBytes else { return .unknownKey }
        guard key.revokedAt == nil else { return .revokedKey }
        return verify(signature, signedBytes, publicKey) ? .verified(key) : .badSignature
    }

    /// Whether the signed fields are `visitor`'s pass as stored, signed by a key of the purpose
    /// the visitor's pass needs (`PassKeyPurpose.of`): a GP2 text of an edited window, or of a
    /// `requiresApproval` since changed, was re-issued and is not this visitor's pass any more.
    /// Online and offline alike (api.md "Offline passes").
    public func matches(_ visitor: Visitor, signedBy key: PassKey) -> Bool {
        shortId == visitor.shortId
            && validFrom == Self.unixSeconds(visitor.validity.from)
            && validUntil == Self.unixSeconds(visitor.validity.until)
            && key.purpose == PassKeyPurpose.of(visitor)
    }

    /// A pass time as GP2 carries it: whole unix seconds, rounded down.
    public static func unixSeconds(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970.rounded(.down)) }

    /// The window the text signs, as the decision table judges it: `validUntil` covers its
    /// whole second, as the stored window (which may end at …:59.999) does.
    public var validity: ValidityWindow {
        ValidityWindow(from: Date(timeIntervalSince1970: TimeInterval(validFrom)),
                       until: Date(timeIntervalSince1970: TimeInterval(validUntil) + 0.999))
    }

    /// The text of `visitor`'s pass signed by `sign` with the key `keyId`.
    public static func issue(for visitor: Visitor, keyId: String, sign: ([UInt8]) throws -> [UInt8]) rethrows -> SignedPassText {
        let from = unixSeconds(visitor.validity.from), until = unixSeconds(visitor.validity.until)
        let signature = try sign(signedBytes(shortId: visitor.shortId, validFrom: from, validUntil: until, keyId: keyId))
        return SignedPassText(shortId: visitor.shortId, validFrom: from, validUntil: until, keyId: keyId, signature: signature)
    }
}
