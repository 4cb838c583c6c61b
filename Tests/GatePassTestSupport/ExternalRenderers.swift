import Foundation
import GatePassScanner

/// A program the tests ran that exited non-zero.
public struct CommandFailure: Error, CustomStringConvertible {
    public var command: [String]
    public var status: Int32
    public var output: String
    public var description: String { "\(command.joined(separator: " ")) exited \(status): \(output)" }
}

/// One renderer at a time, across every suite of the test binary: a headless Chromium takes
/// both cores for a second or two, and other suites' one-second server deadlines run beside
/// these tests (a burst of nine Chromiums made ConnectionGuardTests miss a response head once).
private let rendererTurn = DispatchSemaphore(value: 1)

/// Runs a program found on PATH and waits for it, at most two minutes (coreutils' `timeout`
/// ends a renderer that hangs); throws when it exits non-zero.
public func runRenderer(_ arguments: [String]) throws {
    rendererTurn.wait()
    defer { rendererTurn.signal() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["timeout", "120"] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw CommandFailure(command: arguments, status: process.terminationStatus,
                             output: String(decoding: output.prefix(2000), as: UTF8.self))
    }
}

/// The programs the pass's SVG must draw correctly in, each at 300 dpi into a PNG.
public enum SVGRenderer: String, CaseIterable, Sendable {
    case librsvg, imageMagick, cairosvg, chromium

    public func command(svg: String, png: String) -> [String] {
        switch self {
        case .librsvg: ["rsvg-convert", "--dpi-x", "300", "--dpi-y", "300", "-b", "white", "-o", png, svg]
        case .imageMagick: ["convert", "-density", "300", svg, "-background", "white", "-flatten", png]
        case .cairosvg: ["cairosvg", "--dpi", "300", "-b", "white", "-o", png, svg]
        // 300 dpi over CSS's 96: a 105 mm wide page is 1240 device pixels.
        case .chromium: ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                         // Its own profile: tests run side by side, and one profile is locked.
                         "--user-data-dir=\(png).profile",
                         "--force-device-scale-factor=3.125", "--window-size=397,560",
                         "--default-background-color=ffffffff", "--screenshot=\(png)", "file://\(svg)"]
        }
    }

    /// Headless Chromium's screenshot of a pass page (`file://…` or `http://…`) at three device
    /// pixels per CSS pixel, with its own profile folder.
    public static func chromiumPage(_ url: String, png: String, profile: String) -> [String] {
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=\(profile)",
         "--force-device-scale-factor=3", "--window-size=420,620", "--screenshot=\(png)", url]
    }
}

/// The PNG bytes read back as a grey image, through a file as the scanner reads them.
public func greyImage(ofPNG png: [UInt8]) throws -> GreyImage {
    let path = NSTemporaryDirectory() + "gatepass-png-" + UUID().uuidString + ".png"
    try Data(png).write(to: URL(fileURLWithPath: path))
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try GreyImage(contentsOf: path)
}

/// Every QR text zbar reads in `image`.
public func decodedTexts(_ image: GreyImage) throws -> [String] {
    let decoder = try QRDecoder()
    return try image.withFrame(index: 0) { frame in try decoder.decode(frame).codes.map(\.text) }
}

/// Every QR text zbar reads in the image file at `path`.
public func decodedTexts(atPath path: String) throws -> [String] {
    try decodedTexts(GreyImage(contentsOf: path))
}

/// The chunks of a PNG file, in order: type and data.
public func pngChunks(_ bytes: [UInt8]) -> [(type: String, data: [UInt8])] {
    guard bytes.count > 8, bytes[0..<8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] else { return [] }
    var chunks: [(String, [UInt8])] = []
    var offset = 8
    while offset + 12 <= bytes.count {
        let length = Int(bigEndian32(bytes, offset))
        let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
        guard offset + 12 + length <= bytes.count else { break }
        chunks.append((type, Array(bytes[(offset + 8)..<(offset + 8 + length)])))
        offset += 12 + length
    }
    return chunks
}

public func bigEndian32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
    bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
}
