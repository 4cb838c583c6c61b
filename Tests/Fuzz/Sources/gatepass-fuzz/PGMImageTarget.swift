@testable import GatePassScanner

extension FuzzTarget {
    /// The bytes of an image file (`gatepass scan --image`): our format sniffing, then
    /// ImageMagick's PNM (PGM) decoder — not instrumented, so coverage stops at its door,
    /// but AddressSanitizer still sees what it does to our memory — and our checks after it.
    static let pgm = FuzzTarget(name: "pgm", summary: "GreyImage from an image file's bytes (PGM and the rest of PNM)") { input in
        guard let image = try? GreyImage(fileBytes: Array(input), path: "fuzz.pgm") else { return }
        FuzzCheck.require(image.width > 0 && image.height > 0 && image.width <= GreyImage.maximumDimension
                              && image.height <= GreyImage.maximumDimension,
                          "a \(image.width)×\(image.height) image passed the size check")
        FuzzCheck.require(image.pixels.count == image.width * image.height, "the pixels do not match the size")
    }
}
