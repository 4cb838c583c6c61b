import Foundation
import Testing
@testable import GatePassCore

/// api.md "Offline passes": the GP2 text's form and its strict base32, before any signature is
/// checked. Expected texts are worked out by hand from the bit layout, not by the code.
@Suite struct SignedPassTextTests {
    @Test func base32KnownAnswers() {
        #expect(CrockfordBits.encode([]) == "")
        #expect(CrockfordBits.encode([0xFF]) == "ZW")
        #expect(CrockfordBits.encode([0x00, 0x01]) == "000G")
        #expect(CrockfordBits.encode([0x08]) == "10")
        #expect(CrockfordBits.encode([UInt8](repeating: 0, count: 64)) == String(repeating: "0", count: 103))
        #expect(CrockfordBits.decode("ZW", byteCount: 1) == [0xFF])
        #expect(CrockfordBits.decode("000G", byteCount: 2) == [0x00, 0x01])
    }

    @Test func base32RoundTripsEveryLengthAndIsStrict() {
        var generator = SystemRandomNumberGenerator()
        for count in 0...70 {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let text = CrockfordBits.encode(bytes)
            #expect(text.count == (count * 8 + 4) / 5)
            #expect(CrockfordBits.decode(text, byteCount: count) == bytes)
        }
        #expect(CrockfordBits.decode("zw", byteCount: 1) == nil, "lower case")
        #expect(CrockfordBits.decode("ZX", byteCount: 1) == nil, "fill bits not zero")
        for alias in ["O", "I", "L", "U", "-", " ", "é"] {
            #expect(CrockfordBits.decode("Z" + alias, byteCount: 1) == nil, "\(alias)")
        }
        #expect(CrockfordBits.decode("ZW0", byteCount: 1) == nil, "too long")
        #expect(CrockfordBits.decode("Z", byteCount: 1) == nil, "too short")
    }

    static let signature = (0..<64).map { UInt8($0 * 3 & 0xFF) }
    static let pass = SignedPassText(shortId: ShortID("K7Q2M9XD")!, validFrom: 1_795_939_200, validUntil: 1_795_975_200,
                                     keyId: "A1", signature: signature)

    @Test func aPassTextIsItsSignedBytesThenTheSignature() {
        let text = Self.pass.text
        #expect(String(decoding: Self.pass.signedBytes, as: UTF8.self) == "GP2:K7Q2M9XD.1795939200.1795975200.A1")
        #expect(text.hasPrefix("GP2:K7Q2M9XD.1795939200.1795975200.A1."))
        #expect(text.count == 37 + 1 + 103)
        #expect(text == text.uppercased())
        // Upper case, digits and the five punctuation marks QR alphanumeric mode has.
        #expect(text.unicodeScalars.allSatisfy { "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:".unicodeScalars.contains($0) })
        #expect(SignedPassText(parsing: text) == Self.pass)
    }

    @Test func malformedTextsAreNotPasses() {
        let good = Self.pass.text
        let signaturePart = String(good.split(separator: ".").last!)
        let hostile = [
            "", "GP2:", "GP1:K7Q2M9XD", "gp2:" + good.dropFirst(4), good + ".", good + "0", String(good.dropLast()),
            "GP2:k7q2m9xd.1795939200.1795975200.A1." + signaturePart,
            "GP2:K7Q2M9XD.01795939200.1795975200.A1." + signaturePart,
            "GP2:K7Q2M9XD.+1795939200.1795975200.A1." + signaturePart,
            "GP2:K7Q2M9XD.-1.1795975200.A1." + signaturePart,
            "GP2:K7Q2M9XD.1795939200.99999999999999999999.A1." + signaturePart,
            "GP2:K7Q2M9XD.1795939200.1795975200.a1." + signaturePart,
            "GP2:K7Q2M9XD.1795939200.1795975200.ABCDE." + signaturePart,
            "GP2:K7Q2M9XD.1795939200.1795975200.." + signaturePart,
            "GP2:K7Q2M9XD.1795939200.1795975200.A1.B2." + signaturePart,
            "GP2:K7Q2M9XD.1795939200.1795975200.A1." + signaturePart.lowercased(),
            "GP2:K7Q2M9XD.1795939200.1795975200.A1." + String(repeating: "O", count: 103),
            String(repeating: "GP2:", count: 100),
            good.replacingOccurrences(of: ".", with: "\u{0}"),
        ]
        for text in hostile { #expect(SignedPassText(parsing: text) == nil, "\(text.prefix(60))") }
        #expect(SignedPassText(parsing: "GP2:K7Q2M9XD.0.0.Z." + signaturePart) != nil, "zero is canonical")
    }
}
