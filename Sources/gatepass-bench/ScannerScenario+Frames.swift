import CZBar
import Foundation
import GatePassClient
import GatePassCommands
import GatePassCore
import GatePassScanner
import GatePassScannerCorpus
import GatePassServer
import LoopbackHTTP
import QRCode
import Synchronization

// MARK: - Frames

/// One library frame: its Y plane and the code drawn in it (nil for an empty frame).
struct ScannerFrame {
    var pixels: [UInt8]
    var code: String?
}

enum ScannerFrames {
    static let width = 640
    static let height = 480

    /// A few lit scenes of the same gate: gradient, a door, posts, a sign; the camera does not move.
    static func scenes(_ random: inout SplitMix64) -> [[UInt8]] {
        (0..<4).map { scene in
            var pixels = [UInt8](repeating: 0, count: width * height)
            let brightness = 90 + 25 * scene
            for y in 0..<height {
                for x in 0..<width {
                    let value = brightness + 60 * y / height + Int(18 * sin(Double(x) / 37 + Double(scene)))
                    pixels[y * width + x] = UInt8(clamping: value)
                }
            }
            var shapes = SplitMix64(seed: 7)   // the same furniture in every scene, lit differently
            for _ in 0..<12 {
                let w = 20 + Int(shapes.next() % 180), h = 20 + Int(shapes.next() % 220)
                let x0 = Int(shapes.next() % UInt64(width - w)), y0 = Int(shapes.next() % UInt64(height - h))
                let grey = UInt8(clamping: 40 + Int(shapes.next() % 170) + 10 * scene)
                for y in y0..<(y0 + h) {
                    for x in x0..<(x0 + w) { pixels[y * width + x] = grey }
                }
            }
            // Thin dark lines: a door frame, railings.
            for line in 0..<6 {
                let x = 40 + line * 105
                for y in 0..<height { pixels[y * width + x] = 25; pixels[y * width + x + 1] = 30 }
            }
            _ = random.next()
            return pixels
        }
    }

    /// Draws a frame: the scene, optionally a pass (quiet zone included), then uniform noise.
    static func draw(scene: [UInt8], code: QRCode?, module: Int, origin: (x: Int, y: Int), dark: UInt8, light: UInt8,
                     noise: Int, random: inout SplitMix64) -> [UInt8] {
        var pixels = scene
        pixels.withUnsafeMutableBufferPointer { pixels in
            if let code {
                let quiet = 4
                let side = (code.width + 2 * quiet) * module
                for y in origin.y..<(origin.y + side) {
                    for x in origin.x..<(origin.x + side) { pixels[y * width + x] = light }
                }
                for row in 0..<code.width {
                    for column in 0..<code.width where code.isDark(x: column, y: row) {
                        let top = origin.y + (quiet + row) * module, left = origin.x + (quiet + column) * module
                        for dy in 0..<module {
                            for dx in 0..<module { pixels[(top + dy) * width + left + dx] = dark }
                        }
                    }
                }
            }
            if noise > 0 {
                let span = UInt64(2 * noise + 1)
                var index = 0
                while index < pixels.count {
                    var bits = random.next()
                    // Eight noise values from one draw.
                    for _ in 0..<8 where index < pixels.count {
                        let delta = Int((bits & 0xFF) % span) - noise
                        bits >>= 8
                        pixels[index] = UInt8(clamping: Int(pixels[index]) + delta)
                        index += 1
                    }
                }
            }
        }
        return pixels
    }

    static func randomShortId(_ random: inout SplitMix64) -> String {
        String((0..<8).map { _ in ShortID.alphabet[Int(random.next() % 32)] })
    }

    /// `count` distinct frames in camera order: visits of 6–14 frames with one pass held up
    /// (module 3–6 px, drifting a few pixels, its own contrast) between runs of 2–10 empty
    /// frames; every frame gets its own uniform sensor noise of ±2…±7 grey levels.
    /// - Parameters:
    ///   - passText: the text of the pass of each visit (a random `GP1:` id unless given),
    ///     drawn with error correction `errorCorrection`.
    static func library(count: Int, errorCorrection: QRCode.ErrorCorrection = .medium,
                        passText: (inout SplitMix64) -> String = { "GP1:" + randomShortId(&$0) })
        throws -> (frames: [ScannerFrame], visits: Int) {
        var random = SplitMix64(seed: 0x6A7E_9A55)
        let scenes = scenes(&random)
        var frames: [ScannerFrame] = []
        frames.reserveCapacity(count)
        var visits = 0
        while frames.count < count {
            let scene = scenes[Int(random.next() % UInt64(scenes.count))]
            for _ in 0..<(2 + Int(random.next() % 9)) where frames.count < count {
                frames.append(ScannerFrame(pixels: draw(scene: scene, code: nil, module: 0, origin: (0, 0), dark: 0, light: 0,
                                                        noise: 2 + Int(random.next() % 6), random: &random), code: nil))
            }
            guard frames.count < count else { break }
            visits += 1
            let text = passText(&random)
            let code = try QRCode(text, errorCorrection: errorCorrection)
            let module = 3 + Int(random.next() % 4)
            let side = (code.width + 8) * module
            let drift = 6
            var x = drift + Int(random.next() % UInt64(width - side - 2 * drift))
            var y = drift + Int(random.next() % UInt64(height - side - 2 * drift))
            let dark = UInt8(20 + random.next() % 50), light = UInt8(185 + random.next() % 55)
            let noise = 2 + Int(random.next() % 6)
            for _ in 0..<(6 + Int(random.next() % 9)) where frames.count < count {
                x = min(max(x + Int(random.next() % 5) - 2, 0), width - side)
                y = min(max(y + Int(random.next() % 5) - 2, 0), height - side)
                frames.append(ScannerFrame(pixels: draw(scene: scene, code: code, module: module, origin: (x, y), dark: dark,
                                                        light: light, noise: noise, random: &random), code: text))
            }
        }
        return (frames, visits)
    }

    /// Writes the frames as a mono Y4M recording at 30 fps; returns its size.
    static func writeY4M(_ frames: [ScannerFrame], to path: String) throws -> Int {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw BenchFailure("cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var total = 0
        func put(_ bytes: UnsafeRawBufferPointer) throws {
            var done = 0
            while done < bytes.count {
                let wrote = write(descriptor, bytes.baseAddress! + done, bytes.count - done)
                guard wrote > 0 else { throw BenchFailure("writing \(path): \(String(cString: strerror(errno)))") }
                done += wrote
            }
            total += bytes.count
        }
        try Array("YUV4MPEG2 W\(width) H\(height) F30:1 Ip A1:1 Cmono\n".utf8).withUnsafeBytes(put)
        let marker = Array("FRAME\n".utf8)
        for frame in frames {
            try marker.withUnsafeBytes(put)
            try frame.pixels.withUnsafeBytes(put)
        }
        return total
    }
}

