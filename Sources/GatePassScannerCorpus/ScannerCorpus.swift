import Foundation
import GatePassCore
import GatePassScanner
import QRCode

/// The hard cases a gate's camera meets, one class each.
public enum HardCaseClass: String, CaseIterable, Sendable {
    /// Held at 0–45°, a little blurred and noisy.
    case rotation
    /// Tilted away from the camera: one edge up to 45 % shorter than the other, and turned.
    case keystone
    /// Rotated 0–45°, box-blurred, noisy, then JPEG at quality 30.
    case blurNoiseJPEG = "blur-noise-jpeg"
    /// Light modules on a dark screen (a phone in dark mode), turned up to 30°.
    case lightOnDark = "light-on-dark"
    /// A long pass text at 1.6–2.2 pixels per module.
    case smallModules = "small-modules"
}

/// One pass held in front of the camera: the same code in a few consecutive frames, each with
/// its own noise and a hand's tremble.
public struct HardCase: Sendable {
    public let kind: HardCaseClass
    /// The text drawn; any other text read from these frames is a false read.
    public let text: String
    public let frames: [GreyImage]
}

/// A picture with no QR code in it, for false-read checks.
public struct Decoy: Sendable {
    public let name: String
    public let image: GreyImage

    public init(name: String, image: GreyImage) {
        self.name = name
        self.image = image
    }
}

/// Generated frames for the scanner: hard cases drawn with libqrencode and spoilt on purpose,
/// and decoys. Everything comes from a seed, so the tests and `gatepass-bench scanner` see the
/// same pixels on every run and every machine.
///
/// ```swift
/// let cases = try ScannerCorpus.hardCases(seed: 15, casesPerClass: 8, framesPerCase: 6)
/// ```
public enum ScannerCorpus {
    public static let width = 640
    public static let height = 480

    /// `casesPerClass` cases of every ``HardCaseClass``, class after class.
    /// - Throws: ``ScannerError/decoder(_:)`` if ImageMagick cannot round-trip a JPEG.
    public static func hardCases(seed: UInt64 = 15, casesPerClass: Int, framesPerCase: Int,
                                 classes: [HardCaseClass] = HardCaseClass.allCases) throws(ScannerError) -> [HardCase] {
        precondition(casesPerClass > 0 && framesPerCase > 0, "a corpus needs cases and frames")
        var random = SplitMix64(seed: seed)
        var cases: [HardCase] = []
        for kind in classes {
            for number in 0..<casesPerClass {
                let text = passText(kind: kind, number: number, random: &random)
                let pose = Pose.random(for: kind, random: &random)
                var frames: [GreyImage] = []
                for _ in 0..<framesPerCase {
                    frames.append(try draw(text: text, pose: pose.trembled(&random), kind: kind, random: &random))
                }
                cases.append(HardCase(kind: kind, text: text, frames: frames))
            }
        }
        return cases
    }

    /// The gate with nobody in front of it: the background every case is drawn on.
    public static func emptyScene(seed: UInt64 = 15) -> GreyImage {
        var random = SplitMix64(seed: seed)
        var canvas = CorpusCanvas.scene(width: width, height: height, random: &random)
        canvas.addNoise(amplitude: 6, random: &random)
        return canvas.image
    }

    /// Pictures full of edges and squares but no QR code: uniform noise, a checkerboard,
    /// barcode-like stripes, scattered finder-like squares (the 1:1:3:1:1 target of a QR
    /// corner, without a code around them), and the empty scene.
    public static func decoys(seed: UInt64 = 15) -> [Decoy] {
        var random = SplitMix64(seed: seed)
        var noise = CorpusCanvas(width: width, height: height, fill: 128)
        noise.addNoise(amplitude: 127, random: &random)
        var checkerboard = CorpusCanvas(width: width, height: height, fill: 255)
        checkerboard.fill { x, y in ((x / 9) + (y / 9)) % 2 == 0 ? 20 : 235 }
        var stripes = CorpusCanvas(width: width, height: height, fill: 255)
        var bars: [UInt8] = (0..<width).map { _ in 0 }
        var x = 0
        while x < width {
            let bar = 1 + Int(random.next() % 4), gap = 1 + Int(random.next() % 4)
            for column in x..<min(width, x + bar) { bars[column] = 1 }
            x += bar + gap
        }
        stripes.fill { x, _ in bars[x] == 1 ? 15 : 240 }
        var finders = CorpusCanvas.scene(width: width, height: height, random: &random)
        for _ in 0..<14 {
            let module = 2 + Int(random.next() % 5)
            let left = Int(random.next() % UInt64(width - 7 * module)), top = Int(random.next() % UInt64(height - 7 * module))
            finders.drawFinderPattern(left: left, top: top, module: module)
        }
        finders.addNoise(amplitude: 8, random: &random)
        return [
            Decoy(name: "uniform noise", image: noise.image),
            Decoy(name: "checkerboard", image: checkerboard.image),
            Decoy(name: "barcode-like stripes", image: stripes.image),
            Decoy(name: "finder-like squares", image: finders.image),
            Decoy(name: "empty scene", image: emptyScene(seed: seed)),
        ]
    }

    // MARK: - Drawing one frame

    private static func draw(text: String, pose: Pose, kind: HardCaseClass,
                             random: inout SplitMix64) throws(ScannerError) -> GreyImage {
        // Texts are short and ASCII here: libqrencode cannot fail on them.
        let code = try! QRCode(text)
        var canvas = CorpusCanvas.scene(width: width, height: height, random: &random)
        let quietZone = 4
        let side = Double(code.width + 2 * quietZone) * pose.module
        canvas.drawCode(code, quietZone: quietZone, corners: pose.corners(side: side), dark: pose.dark, light: pose.light)
        canvas.boxBlur(radius: pose.blurRadius)
        canvas.addNoise(amplitude: pose.noise, random: &random)
        guard kind == .blurNoiseJPEG else { return canvas.image }
        let jpeg = try canvas.image.jpegData(quality: 30)
        return try GreyImage(fileBytes: jpeg, path: "corpus frame (JPEG q30)")
    }

    /// A pass text of the kind each class carries: short ids mostly, a long signed-looking
    /// text for the small-module class. Distinct across the corpus.
    private static func passText(kind: HardCaseClass, number: Int, random: inout SplitMix64) -> String {
        let alphabet = Array("23456789ABCDEFGHJKMNPQRSTVWXYZ")
        func characters(_ count: Int) -> String {
            String((0..<count).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
        }
        switch kind {
        case .smallModules:
            return "GP2:\(characters(8)).\(kind.rawValue)-\(number).\(characters(86))"
        default:
            return "\(characters(8))-\(kind.rawValue)-\(number)"
        }
    }
}

/// Where and how a code is held.
struct Pose {
    var centre: (x: Double, y: Double)
    var degrees: Double
    /// The far edge's length over the near edge's (1: facing the camera).
    var keystone: Double
    var module: Double
    var dark: UInt8
    var light: UInt8
    var blurRadius: Int
    var noise: Int

    static func random(for kind: HardCaseClass, random: inout SplitMix64) -> Pose {
        let centre = (x: 320 + random.uniform(-60, 60), y: 240 + random.uniform(-40, 40))
        switch kind {
        case .rotation:
            return Pose(centre: centre, degrees: random.uniform(0, 45), keystone: 1, module: random.uniform(2.6, 3.6),
                        dark: 30, light: 215, blurRadius: 1, noise: 10)
        case .keystone:
            return Pose(centre: centre, degrees: random.uniform(0, 30), keystone: random.uniform(0.55, 0.75),
                        module: random.uniform(3.2, 4.2), dark: 35, light: 210, blurRadius: 0, noise: 8)
        case .blurNoiseJPEG:
            return Pose(centre: centre, degrees: random.uniform(0, 45), keystone: 1, module: random.uniform(3.2, 4.2),
                        dark: 40, light: 205, blurRadius: 1 + Int(random.next() % 2), noise: 16 + Int(random.next() % 9))
        case .lightOnDark:
            return Pose(centre: centre, degrees: random.uniform(0, 30), keystone: 1, module: random.uniform(3, 4),
                        dark: 225, light: 25, blurRadius: 1, noise: 8)
        case .smallModules:
            return Pose(centre: centre, degrees: random.uniform(0, 20), keystone: 1, module: random.uniform(1.6, 2.2),
                        dark: 25, light: 225, blurRadius: 0, noise: 6)
        }
    }

    /// The same pose, moved as a hand holding it trembles between two frames.
    func trembled(_ random: inout SplitMix64) -> Pose {
        var moved = self
        moved.centre = (centre.x + random.uniform(-1.5, 1.5), centre.y + random.uniform(-1.5, 1.5))
        moved.degrees += random.uniform(-0.7, 0.7)
        return moved
    }

    /// The symbol's corners (quiet zone included) in frame pixels: top-left, top-right,
    /// bottom-right, bottom-left. The top edge is the far one under keystone.
    func corners(side: Double) -> [(x: Double, y: Double)] {
        let half = side / 2
        let top = half * keystone
        // A tilted-away square looks shorter too: its height shrinks about as its far edge does.
        let height = half * (1 + keystone) / 2
        let unrotated: [(Double, Double)] = [(-top, -height), (top, -height), (half, height), (-half, height)]
        let angle = degrees * .pi / 180
        return unrotated.map { (x, y) in
            (centre.x + x * cos(angle) - y * sin(angle), centre.y + x * sin(angle) + y * cos(angle))
        }
    }
}
