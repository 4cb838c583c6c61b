import GatePassCore
import GatePassScanner
import QRCode

/// A grey frame being drawn: a scene, a code laid on it through a perspective mapping, then
/// blur and noise.
struct CorpusCanvas {
    let width: Int
    let height: Int
    var pixels: [UInt8]

    init(width: Int, height: Int, fill: UInt8) {
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: fill, count: width * height)
    }

    var image: GreyImage { GreyImage(width: width, height: height, pixels: pixels) }

    /// A gate seen by a fixed camera: a lit gradient, a few boxes and posts.
    static func scene(width: Int, height: Int, random: inout SplitMix64) -> CorpusCanvas {
        var canvas = CorpusCanvas(width: width, height: height, fill: 0)
        canvas.fill { x, y in UInt8(clamping: 110 + 70 * y / height + (x * 30) / width) }
        var furniture = SplitMix64(seed: 7)   // the same furniture in every frame
        for _ in 0..<8 {
            let w = 20 + Int(furniture.next() % 140), h = 20 + Int(furniture.next() % 180)
            let left = Int(furniture.next() % UInt64(width - w)), top = Int(furniture.next() % UInt64(height - h))
            let grey = UInt8(40 + furniture.next() % 170)
            for y in top..<(top + h) {
                for x in left..<(left + w) { canvas.pixels[y * width + x] = grey }
            }
        }
        _ = random.next()
        return canvas
    }

    mutating func fill(_ value: (Int, Int) -> UInt8) {
        for y in 0..<height {
            for x in 0..<width { pixels[y * width + x] = value(x, y) }
        }
    }

    /// A QR corner's target (7 × 7 modules: dark ring, light ring, dark 3 × 3 centre) on a light square.
    mutating func drawFinderPattern(left: Int, top: Int, module: Int) {
        for row in 0..<7 {
            for column in 0..<7 {
                let ring = min(row, column, 6 - row, 6 - column)
                let value: UInt8 = ring == 1 ? 230 : 20
                for y in (top + row * module)..<(top + (row + 1) * module) {
                    for x in (left + column * module)..<(left + (column + 1) * module) { pixels[y * width + x] = value }
                }
            }
        }
    }

    /// Draws `code` (quiet zone included) so that its square lands on `corners` (top-left,
    /// top-right, bottom-right, bottom-left), each pixel averaged over 2 × 2 samples taken back
    /// through the inverse of the square-to-quadrilateral mapping (Heckbert, 1989).
    mutating func drawCode(_ code: QRCode, quietZone: Int, corners: [(x: Double, y: Double)], dark: UInt8, light: UInt8) {
        let toSquare = Homography.squareToQuad(corners).inverse
        let side = Double(code.width + 2 * quietZone)
        let xs = corners.map(\.x), ys = corners.map(\.y)
        let x0 = max(0, Int(xs.min()!.rounded(.down))), x1 = min(width - 1, Int(xs.max()!.rounded(.up)))
        let y0 = max(0, Int(ys.min()!.rounded(.down))), y1 = min(height - 1, Int(ys.max()!.rounded(.up)))
        guard x0 <= x1, y0 <= y1 else { return }
        let offsets = [0.25, 0.75]
        for y in y0...y1 {
            for x in x0...x1 {
                var sum = 0, inside = 0
                for dy in offsets {
                    for dx in offsets {
                        let (u, v) = toSquare.apply(Double(x) + dx, Double(y) + dy)
                        guard u >= 0, v >= 0, u < 1, v < 1 else { continue }
                        inside += 1
                        let column = Int(u * side) - quietZone, row = Int(v * side) - quietZone
                        let isDark = column >= 0 && row >= 0 && column < code.width && row < code.width
                            && code.isDark(x: column, y: row)
                        sum += Int(isDark ? dark : light)
                    }
                }
                guard inside > 0 else { continue }
                sum += (4 - inside) * Int(pixels[y * width + x])
                pixels[y * width + x] = UInt8(sum / 4)
            }
        }
    }

    /// A (2r+1)² box blur, horizontal then vertical, edges clamped.
    mutating func boxBlur(radius: Int) {
        guard radius > 0 else { return }
        let window = 2 * radius + 1
        var scratch = pixels
        for y in 0..<height {
            var sum = 0
            for offset in -radius...radius { sum += Int(pixels[y * width + min(max(offset, 0), width - 1)]) }
            for x in 0..<width {
                scratch[y * width + x] = UInt8(sum / window)
                sum += Int(pixels[y * width + min(x + radius + 1, width - 1)]) - Int(pixels[y * width + max(x - radius, 0)])
            }
        }
        for x in 0..<width {
            var sum = 0
            for offset in -radius...radius { sum += Int(scratch[min(max(offset, 0), height - 1) * width + x]) }
            for y in 0..<height {
                pixels[y * width + x] = UInt8(sum / window)
                sum += Int(scratch[min(y + radius + 1, height - 1) * width + x]) - Int(scratch[max(y - radius, 0) * width + x])
            }
        }
    }

    /// Uniform noise in ±`amplitude`.
    mutating func addNoise(amplitude: Int, random: inout SplitMix64) {
        guard amplitude > 0 else { return }
        let span = UInt64(2 * amplitude + 1)
        for index in pixels.indices {
            pixels[index] = UInt8(clamping: Int(pixels[index]) + Int(random.next() % span) - amplitude)
        }
    }
}

/// A plane projective mapping, as a 3 × 3 matrix (row-major, last entry 1 up to scale).
struct Homography {
    var m: [Double]

    /// The mapping of the unit square's (0,0), (1,0), (1,1), (0,1) onto `quad` (Heckbert,
    /// "Fundamentals of Texture Mapping and Image Warping", 1989, §2.2.3).
    static func squareToQuad(_ quad: [(x: Double, y: Double)]) -> Homography {
        let (x0, y0) = quad[0], (x1, y1) = quad[1], (x2, y2) = quad[2], (x3, y3) = quad[3]
        let dx1 = x1 - x2, dx2 = x3 - x2, dx3 = x0 - x1 + x2 - x3
        let dy1 = y1 - y2, dy2 = y3 - y2, dy3 = y0 - y1 + y2 - y3
        let det = dx1 * dy2 - dx2 * dy1
        let g = (dx3 * dy2 - dx2 * dy3) / det
        let h = (dx1 * dy3 - dx3 * dy1) / det
        return Homography(m: [x1 - x0 + g * x1, x3 - x0 + h * x3, x0,
                              y1 - y0 + g * y1, y3 - y0 + h * y3, y0,
                              g, h, 1])
    }

    var inverse: Homography {
        let a = m[0], b = m[1], c = m[2], d = m[3], e = m[4], f = m[5], g = m[6], h = m[7], i = m[8]
        let adjugate = [e * i - f * h, c * h - b * i, b * f - c * e,
                        f * g - d * i, a * i - c * g, c * d - a * f,
                        d * h - e * g, b * g - a * h, a * e - b * d]
        let det = a * adjugate[0] + b * adjugate[3] + c * adjugate[6]
        return Homography(m: adjugate.map { $0 / det })
    }

    func apply(_ x: Double, _ y: Double) -> (Double, Double) {
        let w = m[6] * x + m[7] * y + m[8]
        return ((m[0] * x + m[1] * y + m[2]) / w, (m[3] * x + m[4] * y + m[5]) / w)
    }
}
