import GatePassCore

extension FuzzTarget {
    /// Text a camera read from a QR code, as the check-in route parses it.
    static let qrPayload = FuzzTarget(name: "qr-payload",
                                      summary: "QRPayload.reference(from:), SignedPassText(parsing:) and ShortID(_:) (GatePassCore)") { input in
        let text = String(decoding: input, as: UTF8.self)
        // A GP2 text has one spelling: what parses formats back to the very text, within the
        // length bound, and its signature is 64 bytes.
        if let signed = SignedPassText(parsing: text) {
            FuzzCheck.require(signed.text == text, "GP2 text \(text.prefix(40)) does not format back to itself")
            FuzzCheck.require(text.utf8.count <= SignedPassText.maximumLength && signed.signature.count == 64, "GP2 bounds")
            FuzzCheck.require((try? QRPayload.reference(from: text)) == .signed(signed), "QRPayload reads GP2 otherwise")
        }
        let alphabet = Set(ShortID.alphabet)
        for candidate in [QRPayload.shortIDOrNil(text), ShortID(text)] {
            guard let id = candidate else { continue }
            // A parsed id is always canonical: 8 symbols of the alphabet, and it parses to itself.
            FuzzCheck.require(id.rawValue.count == ShortID.length && id.rawValue.allSatisfy(alphabet.contains),
                              "\(id.rawValue) is not canonical")
            FuzzCheck.require(ShortID(id.rawValue) == id, "\(id.rawValue) does not parse to itself")
            FuzzCheck.require((try? QRPayload.shortID(from: "GP1:\(id.rawValue)")) == id, "GP1:\(id.rawValue) is not \(id)")
        }
    }
}

extension QRPayload {
    static func shortIDOrNil(_ text: String) -> ShortID? {
        do { return try shortID(from: text) } catch {
            // Every failure comes with its explanation for the API's message.
            FuzzCheck.require(!error.description.isEmpty, "an error without a description")
            return nil
        }
    }
}
