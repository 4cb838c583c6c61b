import Foundation
import GatePassCore
import GatePassCrypto
import Testing

/// Ed25519 through OpenSSL's EVP API, held to RFC 8032's test vectors (section 7.1, tests 1
/// and 2) and to what a verifier must refuse: another message, key or signature, and keys or
/// signatures of the wrong length (they come from scanned codes and downloaded keys).
@Suite struct Ed25519Tests {
    static func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map {
            let start = hex.index(hex.startIndex, offsetBy: $0)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
    }

    static let vectors: [(secret: String, public: String, message: String, signature: String)] = [
        ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
         "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
         "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
        ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
         "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
         "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
    ]

    @Test func rfc8032VectorsSignAndVerify() throws {
        for vector in Self.vectors {
            let secret = Self.bytes(vector.secret), message = Self.bytes(vector.message)
            #expect(try Ed25519.publicKey(of: secret) == Self.bytes(vector.public))
            #expect(try Ed25519.sign(message, privateKey: secret) == Self.bytes(vector.signature))
            #expect(Ed25519.verify(Self.bytes(vector.signature), of: message, publicKey: Self.bytes(vector.public)))
        }
    }

    @Test func aVerifierRefusesEverythingElse() throws {
        let pair = try Ed25519.generate()
        #expect(pair.privateKey.count == 32 && pair.publicKey.count == 32)
        #expect(try Ed25519.publicKey(of: pair.privateKey) == pair.publicKey)
        let message = Array("GP2:K7Q2M9XD.1795939200.1795975200.A1".utf8)
        let signature = try Ed25519.sign(message, privateKey: pair.privateKey)
        #expect(Ed25519.verify(signature, of: message, publicKey: pair.publicKey))
        var otherMessage = message
        otherMessage[otherMessage.count - 1] ^= 1
        #expect(!Ed25519.verify(signature, of: otherMessage, publicKey: pair.publicKey))
        for index in [0, 31, 63] {
            var flipped = signature
            flipped[index] ^= 0x80
            #expect(!Ed25519.verify(flipped, of: message, publicKey: pair.publicKey), "bit flipped in byte \(index)")
        }
        let other = try Ed25519.generate()
        #expect(other != pair)
        #expect(!Ed25519.verify(signature, of: message, publicKey: other.publicKey))
        #expect(!Ed25519.verify(Array(signature.dropLast()), of: message, publicKey: pair.publicKey))
        #expect(!Ed25519.verify(signature + [0], of: message, publicKey: pair.publicKey))
        #expect(!Ed25519.verify(signature, of: message, publicKey: Array(pair.publicKey.dropLast())))
        #expect(!Ed25519.verify([UInt8](repeating: 0, count: 64), of: message, publicKey: [UInt8](repeating: 0, count: 32)))
        #expect(throws: CryptoError.self) { try Ed25519.sign(message, privateKey: [1, 2, 3]) }
    }

    /// A GP2 text signed with a fresh key verifies from its own text; re-signed with another
    /// key, or with one field changed, it does not.
    @Test func aSignedPassTextVerifiesFromItsTextAlone() throws {
        let key = try Ed25519.generate(), other = try Ed25519.generate()
        let id = ShortID("K7Q2M9XD")!
        let signed = SignedPassText.signedBytes(shortId: id, validFrom: 1_795_939_200, validUntil: 1_795_975_200, keyId: "A1")
        let pass = SignedPassText(shortId: id, validFrom: 1_795_939_200, validUntil: 1_795_975_200, keyId: "A1",
                                  signature: try Ed25519.sign(signed, privateKey: key.privateKey))
        let scanned = try #require(SignedPassText(parsing: pass.text))
        #expect(Ed25519.verify(scanned.signature, of: scanned.signedBytes, publicKey: key.publicKey))
        #expect(!Ed25519.verify(scanned.signature, of: scanned.signedBytes, publicKey: other.publicKey))
        var stretched = scanned
        stretched.validUntil += 86_400
        #expect(!Ed25519.verify(stretched.signature, of: stretched.signedBytes, publicKey: key.publicKey))
        let forged = try #require(SignedPassText(parsing: stretched.text))
        #expect(!Ed25519.verify(forged.signature, of: forged.signedBytes, publicKey: key.publicKey))
    }
}
