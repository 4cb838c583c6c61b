import Foundation
import GatePassPass
import GatePassScanner
import GatePassTestSupport

/// DejaVu from fonts-dejavu-core, loaded once for every test (the fonts are read-only and
/// behind their own lock).
let fonts: PassFonts = {
    do { return try PassFonts.dejaVu() } catch { fatalError("\(error)") }
}()

/// Today's pass: a GP1 code (version 1 or 2).
let gp1Content = PassContent(siteName: "Acme Works — North Gate", visitorName: "Ada Lovelace",
                             hostName: "Grace Hopper", validity: "Tue 1 Dec 2026 09:00 – 17:00 (Europe/Berlin)",
                             shortId: "7K3QX9MZ", qrPayload: "GP1:7K3QX9MZ")

/// The largest text the pass's version 9 box holds at error correction Q in 8-bit mode: 132 bytes,
/// shaped like a signed GP2 text (prefix, fields, base64url signature).
let gp2Payload: String = {
    let head = "GP2:7K3QX9MZ.20261201T0800Z.20261201T1600Z.k1."
    let signature = String(repeating: "Zm9vYmFyYmF6cXV4LV8", count: 6)
    return String((head + signature).prefix(132))
}()

var gp2Content: PassContent {
    var content = gp1Content
    content.qrPayload = gp2Payload
    return content
}

/// Everything an outsider might type into a name.
let hostileContent = PassContent(
    siteName: "<script>alert('site')</script>&amp;",
    visitorName: String(repeating: "W", count: 4000) + "\u{202E}evil\u{200F}\u{0007}\u{001B}[2J",
    hostName: "\"><img src=x onerror=alert(1)>\u{0000}\n\tHost",
    validity: "\u{202E}" + String(repeating: "ﷺ", count: 300),
    shortId: "<b>7K3Q</b>X9MZ" + String(repeating: "9", count: 100),
    qrPayload: "GP1:7K3QX9MZ")

/// A scratch folder, removed afterwards.
func withTemporaryDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    let path = NSTemporaryDirectory() + "gatepass-pass-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// The share of `b`'s pixels that `a` does not show: a pixel counts when no pixel of `a` within
/// one place of it is within half the grey range of its value. Anti-aliased edges and a
/// renderer's one-pixel rounding pass; a different font, size, line or code does not.
func differingFraction(_ a: GreyImage, _ b: GreyImage) -> Double {
    var differing = 0
    let width = min(a.width, b.width), height = min(a.height, b.height)
    for y in 1..<(height - 1) {
        for x in 1..<(width - 1) {
            let value = Int(b.pixels[y * b.width + x])
            var matched = false
            for dy in -1...1 where !matched {
                for dx in -1...1 where abs(Int(a.pixels[(y + dy) * a.width + x + dx]) - value) <= 128 {
                    matched = true
                    break
                }
            }
            if !matched { differing += 1 }
        }
    }
    return Double(differing) / Double(b.width * b.height)
}
