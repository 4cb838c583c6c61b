@testable import GatePassScanner

extension FuzzTarget {
    /// A grey plane from the outside (a camera frame, a decoded image file) through every
    /// reader of the pipeline: zbar, the negative, and zxing-cpp across the C shim in both
    /// polarities. zbar and zxing are not instrumented, so coverage stops at their doors, but
    /// AddressSanitizer sees whatever they do to the plane and to the shim's buffers.
    /// Input: the first byte gives the width (1–256), the rest is the plane, row by row.
    static let qrPlane = FuzzTarget(name: "qr-plane", summary: "ReadingPipeline and ZXingReader over an arbitrary grey plane") { input in
        guard input.count >= 2 else { return }
        let width = Int(input[0]) + 1
        let pixels = Array(input.dropFirst())
        let height = pixels.count / width
        guard height > 0 else { return }
        pixels.withUnsafeBytes { plane in
            let frame = FrameView(width: width, height: height, luma: plane, index: 0)
            guard let pipeline = try? ReadingPipeline(clock: DecoderCostClock { 0 }) else { return }
            let decoded = try? pipeline.decodeWithEveryTry(frame)
            FuzzCheck.require(decoded != nil, "the pipeline failed on a valid \(width)×\(height) plane")
            for inverted in [false, true] {
                let outcome = try? ZXingReader().read(plane: plane, width: width, height: height, stride: width, inverted: inverted)
                FuzzCheck.require(outcome != nil, "zxing failed on a valid \(width)×\(height) plane")
            }
        }
    }
}
