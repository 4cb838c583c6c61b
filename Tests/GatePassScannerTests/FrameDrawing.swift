import CMagickWand
import Foundation
import GatePassCore
import GatePassScannerCorpus
import QRCode
@testable import GatePassScanner

/// A grey test frame: QR codes drawn with libqrencode at a module size, position and angle,
/// then spoilt on purpose (noise, blur, low contrast), and written out as image files or a
/// Y4M recording.
struct GreyCanvas {
    let width: Int
    let height: Int
    var pixels: [UInt8]

    init(width: Int = 640, height: Int = 480, background: UInt8 = 255) {
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: background, count: width * height)
    }

    // MARK: Drawing

    /// Draws `text` as a QR code.
    ///
    /// - Parameters:
    ///   - moduleSize: pixels per module (need not be whole).
    ///   - quietZone: light modules around the code.
    ///   - center: where the code's centre lands; the frame's centre by default.
    ///   - degrees: rotation, any angle, counter-clockwise; drawn by resampling each pixel
    ///     (2×2 samples per pixel when rotated or fractional, so edges are grey as a camera's are).
    ///   - dark, light: the two grey levels.
    mutating func drawQR(_ text: String, moduleSize: Double = 4, quietZone: Int = 4, center: (x: Double, y: Double)? = nil,
                         degrees: Double = 0, dark: UInt8 = 0, light: UInt8 = 255) {
        let code = try! QRCode(text)
        let side = code.width + 2 * quietZone
        let half = Double(side) * moduleSize / 2
        let centre = center ?? (Double(width) / 2, Double(height) / 2)
        let angle = degrees * .pi / 180
        let (cosine, sine) = (cos(angle), sin(angle))
        // The rotated square's bounding box.
        let reach = half * (abs(cosine) + abs(sine))
        let x0 = max(0, Int((centre.x - reach).rounded(.down)))
        let x1 = min(width - 1, Int((centre.x + reach).rounded(.up)))
        let y0 = max(0, Int((centre.y - reach).rounded(.down)))
        let y1 = min(height - 1, Int((centre.y + reach).rounded(.up)))
        guard x0 <= x1, y0 <= y1 else { return }
        let sharp = degrees.truncatingRemainder(dividingBy: 90) == 0 && moduleSize == moduleSize.rounded()
        let offsets: [Double] = sharp ? [0.5] : [0.25, 0.75]
        let sampleCount = Double(offsets.count * offsets.count)
        let modules = code.modules
        let codeWidth = code.width
        let width = self.width
        pixels.withUnsafeMutableBufferPointer { pixels in
            for y in y0...y1 {
                for x in x0...x1 {
                    var darkSamples = 0
                    var inside = 0
                    for dy in offsets {
                        for dx in offsets {
                            // Back from the frame into the code's own (unrotated) coordinates.
                            let px = Double(x) + dx - centre.x
                            let py = Double(y) + dy - centre.y
                            let u = (cosine * px + sine * py + half) / moduleSize
                            let v = (-sine * px + cosine * py + half) / moduleSize
                            guard u >= 0, v >= 0, u < Double(side), v < Double(side) else { continue }
                            inside += 1
                            let column = Int(u) - quietZone
                            let row = Int(v) - quietZone
                            if column >= 0, row >= 0, column < codeWidth, row < codeWidth, modules[row * codeWidth + column] {
                                darkSamples += 1
                            }
                        }
                    }
                    guard inside > 0 else { continue }
                    let outside = Double(Int(sampleCount) - inside)
                    let value = (Double(darkSamples) * Double(dark) + Double(inside - darkSamples) * Double(light)
                                 + outside * Double(pixels[y * width + x])) / sampleCount
                    pixels[y * width + x] = UInt8(value.rounded())
                }
            }
        }
    }

    /// Stripes and a checkerboard: edges everywhere, no finder patterns.
    mutating func drawNonQRPattern() {
        for y in 0..<height {
            for x in 0..<width {
                let value: UInt8 = x < width / 2 ? ((x / 7) % 2 == 0 ? 0 : 255) : (((x / 12) + (y / 12)) % 2 == 0 ? 0 : 255)
                pixels[y * width + x] = value
            }
        }
    }

    // MARK: Spoiling

    /// Adds uniform noise in ±`amplitude`, from a fixed seed so a test always sees the same frame.
    mutating func addNoise(amplitude: Int, seed: UInt64 = 42) {
        var random = SplitMix64(seed: seed)
        pixels.withUnsafeMutableBufferPointer { pixels in
            for index in pixels.indices {
                let delta = Int(random.next() % UInt64(2 * amplitude + 1)) - amplitude
                pixels[index] = UInt8(clamping: Int(pixels[index]) + delta)
            }
        }
    }

    /// A box blur of the given radius (a (2r+1)² box), horizontal then vertical.
    mutating func boxBlur(radius: Int) {
        guard radius > 0 else { return }
        let (width, height) = (self.width, self.height)
        var scratch = pixels
        func pass(from source: UnsafeMutableBufferPointer<UInt8>, to target: UnsafeMutableBufferPointer<UInt8>,
                  count: Int, lines: Int, step: Int, lineStep: Int) {
            for line in 0..<lines {
                let base = line * lineStep
                var sum = 0
                for offset in -radius...radius { sum += Int(source[base + min(max(offset, 0), count - 1) * step]) }
                for position in 0..<count {
                    target[base + position * step] = UInt8(sum / (2 * radius + 1))
                    let leaving = min(max(position - radius, 0), count - 1)
                    let entering = min(max(position + radius + 1, 0), count - 1)
                    sum += Int(source[base + entering * step]) - Int(source[base + leaving * step])
                }
            }
        }
        pixels.withUnsafeMutableBufferPointer { pixels in
            scratch.withUnsafeMutableBufferPointer { scratch in
                pass(from: pixels, to: scratch, count: width, lines: height, step: 1, lineStep: width)
                pass(from: scratch, to: pixels, count: height, lines: width, step: width, lineStep: 1)
            }
        }
    }

    /// Squeezes the grey range into `low…high`, like a dim, washed-out camera picture.
    mutating func reduceContrast(low: UInt8, high: UInt8) {
        let (low, span) = (Int(low), Int(high) - Int(low))
        pixels.withUnsafeMutableBufferPointer { pixels in
            for index in pixels.indices { pixels[index] = UInt8(low + Int(pixels[index]) * span / 255) }
        }
    }

    // MARK: Frames and files

    func withFrame<Result>(index: Int = 0, _ body: (FrameView) throws -> Result) rethrows -> Result {
        try pixels.withUnsafeBytes { try body(FrameView(width: width, height: height, luma: $0, index: index)) }
    }

    /// A binary PGM (P5), written by hand so that reading it does not depend on our own writer.
    func pgm() -> [UInt8] {
        Array("P5\n\(width) \(height)\n255\n".utf8) + pixels
    }

    /// The frame encoded by ImageMagick as `format` ("PNG", "JPEG").
    func encoded(as format: String, quality: Int = 92) -> [UInt8] {
        Self.encode(pixels, map: "I", width: width, height: height, format: format, quality: quality)
    }

    /// The frame as a PNG with an alpha channel: `I = 0` everywhere, opaque where the frame is
    /// dark and transparent where it is light — a black code on a transparent background.
    func transparentPNG() -> [UInt8] {
        var pairs = [UInt8](repeating: 0, count: 2 * pixels.count)
        for (index, value) in pixels.enumerated() { pairs[2 * index + 1] = 255 - value }
        return Self.encode(pairs, map: "IA", width: width, height: height, format: "PNG", quality: 92)
    }

    private static func encode(_ samples: [UInt8], map: String, width: Int, height: Int, format: String,
                               quality: Int) -> [UInt8] {
        _ = magickWandReady   // the library's once-only MagickWandGenesis
        let wand = NewMagickWand()!
        defer { DestroyMagickWand(wand) }
        let background = NewPixelWand()!
        defer { DestroyPixelWand(background) }
        _ = PixelSetColor(background, "white")
        if MagickNewImage(wand, width, height, background) != MagickTrue {
            var severity = UndefinedException
            let message = MagickGetException(wand, &severity).map { String(cString: $0) } ?? "?"
            preconditionFailure("ImageMagick could not make an image: \(message)")
        }
        if map.contains("A") { _ = MagickSetImageAlphaChannel(wand, ActivateAlphaChannel) }
        let imported = samples.withUnsafeBytes {
            MagickImportImagePixels(wand, 0, 0, width, height, map, CharPixel, $0.baseAddress)
        }
        if imported != MagickTrue {
            var severity = UndefinedException
            let message = MagickGetException(wand, &severity).map { String(cString: $0) } ?? "?"
            preconditionFailure("ImageMagick could not take the test pixels: \(message)")
        }
        _ = MagickSetImageFormat(wand, format)
        _ = MagickSetImageCompressionQuality(wand, quality)
        var length = 0
        let blob = MagickGetImageBlob(wand, &length)!
        defer { MagickRelinquishMemory(blob) }
        return Array(UnsafeRawBufferPointer(start: blob, count: length))
    }
}

/// Y4M recordings for tests.
enum Y4MWriter {
    /// A recording of `frames`, written with neutral chroma planes laid out for `colourSpace`.
    static func recording(_ frames: [GreyCanvas], colourSpace: String? = "420jpeg", extraTags: String = "") -> [UInt8] {
        let first = frames[0]
        let (width, height) = (first.width, first.height)
        var bytes = Array("YUV4MPEG2 W\(width) H\(height) F30:1 Ip A1:1\(colourSpace.map { " C" + $0 } ?? "")\(extraTags)\n".utf8)
        let chroma: Int = switch colourSpace ?? "420jpeg" {
        case "mono": 0
        case "422": 2 * ((width + 1) / 2) * height
        case "444": 2 * width * height
        default: 2 * ((width + 1) / 2) * ((height + 1) / 2)
        }
        for frame in frames {
            bytes += Array("FRAME\n".utf8)
            bytes += frame.pixels
            bytes += [UInt8](repeating: 128, count: chroma)
        }
        return bytes
    }
}


/// A fresh temporary folder, removed after `body`.
@discardableResult
func withTemporaryDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-scanner-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

func writeFile(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}
