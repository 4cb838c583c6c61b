import CMagickWand
import Foundation
import QRCode
import Testing
@testable import GatePassCommands
@testable import GatePassScanner

/// Pictures and recordings for `gatepass scan`.
enum ScanFixtures {
    static let width = 320
    static let height = 240

    /// A grey picture with the given codes side by side (axis-aligned, 4-pixel modules).
    static func picture(_ texts: [String]) -> [UInt8] {
        var pixels = [UInt8](repeating: 240, count: width * height)
        for (slot, text) in texts.enumerated() {
            let code = try! QRCode(text)
            let module = 4
            let side = code.width * module
            let origin = (x: 20 + slot * (side + 40), y: (height - side) / 2)
            for y in 0..<code.width {
                for x in 0..<code.width where code.isDark(x: x, y: y) {
                    for dy in 0..<module {
                        let row = (origin.y + y * module + dy) * width
                        for dx in 0..<module { pixels[row + origin.x + x * module + dx] = 15 }
                    }
                }
            }
        }
        return pixels
    }

    static func pgm(_ texts: [String]) -> [UInt8] {
        Array("P5\n\(width) \(height)\n255\n".utf8) + picture(texts)
    }

    /// The picture encoded by ImageMagick ("PNG", "JPEG").
    static func encoded(_ texts: [String], as format: String) -> [UInt8] {
        _ = magickWandReady
        let wand = NewMagickWand()!
        defer { DestroyMagickWand(wand) }
        let background = NewPixelWand()!
        defer { DestroyPixelWand(background) }
        _ = PixelSetColor(background, "white")
        precondition(MagickNewImage(wand, width, height, background) == MagickTrue)
        let pixels = picture(texts)
        let imported = pixels.withUnsafeBytes { MagickImportImagePixels(wand, 0, 0, width, height, "I", CharPixel, $0.baseAddress) }
        precondition(imported == MagickTrue)
        _ = MagickSetImageFormat(wand, format)
        var length = 0
        let blob = MagickGetImageBlob(wand, &length)!
        defer { MagickRelinquishMemory(blob) }
        return Array(UnsafeRawBufferPointer(start: blob, count: length))
    }

    /// A 4:2:0 recording, one frame per entry (the codes in view in it).
    static func recording(_ frames: [[String]]) -> [UInt8] {
        var bytes = Array("YUV4MPEG2 W\(width) H\(height) F30:1 Ip A1:1 C420jpeg\n".utf8)
        for texts in frames {
            bytes += Array("FRAME\n".utf8) + picture(texts) + [UInt8](repeating: 128, count: width * height / 2)
        }
        return bytes
    }

    static func withFolder(_ body: (String) throws -> Void) throws {
        let folder = temporaryPath("scan")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try body(folder)
    }

    static func write(_ bytes: [UInt8], _ path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}

@Suite struct ScanCommandTests {
    private func scan(_ arguments: [String]) -> (status: Int32, out: [String], err: [String]) {
        let terminal = RecordingTerminal()
        let status = GatePassCLI.main(["gatepass", "scan"] + arguments, terminal: terminal)
        func lines(_ text: String) -> [String] { text.isEmpty ? [] : text.components(separatedBy: "\n") }
        return (status, lines(terminal.stdout), lines(terminal.stderr))
    }

    /// Each `--json` line as an object, checking its shape on the way.
    private func jsonLines(_ lines: [String]) throws -> [(text: String, frame: Int, ms: Double)] {
        try lines.map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(Set(object.keys) == ["text", "format", "frame", "ms"])
            #expect(object["format"] as? String == "QR-Code")
            let ms = try #require(object["ms"] as? Double)
            #expect(ms > 0 && ms < 10_000)
            return (try #require(object["text"] as? String), try #require(object["frame"] as? Int), ms)
        }
    }

    // MARK: - --image

    @Test func pngJpegAndPgmEachPrintTheirCode() throws {
        try ScanFixtures.withFolder { folder in
            try ScanFixtures.write(ScanFixtures.encoded(["png-pass"], as: "PNG"), "\(folder)/a.png")
            try ScanFixtures.write(ScanFixtures.encoded(["jpeg-pass"], as: "JPEG"), "\(folder)/b.jpg")
            try ScanFixtures.write(ScanFixtures.pgm(["pgm-pass"]), "\(folder)/c.pgm")
            let result = scan(["--image", "\(folder)/a.png", "\(folder)/b.jpg", "\(folder)/c.pgm"])
            #expect(result.status == 0)
            #expect(result.out == ["png-pass", "jpeg-pass", "pgm-pass"])
            #expect(result.err.isEmpty)
        }
    }

    @Test func jsonLinesHaveExactlyTextFormatFrameAndMs() throws {
        try ScanFixtures.withFolder { folder in
            try ScanFixtures.write(ScanFixtures.pgm([]), "\(folder)/0.pgm")
            try ScanFixtures.write(ScanFixtures.pgm(["b-pass", "a-pass"]), "\(folder)/1.pgm")
            let result = scan(["--json", "--image", "\(folder)/0.pgm", "\(folder)/1.pgm"])
            #expect(result.status == 0)
            let lines = try jsonLines(result.out)
            #expect(lines.map(\.text) == ["a-pass", "b-pass"])
            #expect(lines.map(\.frame) == [1, 1])
            // Both codes came from one frame, so they carry that frame's one decode time.
            #expect(lines.first?.ms == lines.last?.ms)
        }
    }

    @Test func aCodeInTwoFilesIsPrintedForEach() throws {
        try ScanFixtures.withFolder { folder in
            try ScanFixtures.write(ScanFixtures.pgm(["same"]), "\(folder)/1.pgm")
            try ScanFixtures.write(ScanFixtures.pgm(["same"]), "\(folder)/2.pgm")
            let result = scan(["--image=\(folder)/1.pgm", "--json", "--image", "\(folder)/2.pgm"])
            #expect(result.status == 0)
            #expect(try jsonLines(result.out).map { "\($0.frame):\($0.text)" } == ["0:same", "1:same"])
        }
    }

    @Test func anImageWithoutACodePrintsNothing() throws {
        try ScanFixtures.withFolder { folder in
            try ScanFixtures.write(ScanFixtures.encoded([], as: "PNG"), "\(folder)/blank.png")
            let result = scan(["--image", "\(folder)/blank.png"])
            #expect(result.status == 0)
            #expect(result.out.isEmpty && result.err.isEmpty)
        }
    }

    @Test(arguments: ["missing", "truncated", "text", "empty", "directory"])
    func badImageFails(kind: String) throws {
        try ScanFixtures.withFolder { folder in
            var path = "\(folder)/pass.png"
            switch kind {
            case "missing": break
            case "truncated":
                let whole = ScanFixtures.encoded(["cut"], as: "PNG")
                try ScanFixtures.write(Array(whole.prefix(whole.count * 2 / 3)), path)
            case "text": try ScanFixtures.write(Array("just words\n".utf8), path)
            case "empty": try ScanFixtures.write([], path)
            default: path = folder
            }
            let result = scan(["--image", path])
            #expect(result.status == 1)
            #expect(result.out.isEmpty)
            #expect(result.err.count == 1)
            #expect(result.err.first?.hasPrefix("error: ") == true)
            #expect(result.err.first?.contains(path) == true)
        }
    }

    @Test func goodFilesAroundABadOneAreStillScanned() throws {
        try ScanFixtures.withFolder { folder in
            try ScanFixtures.write(ScanFixtures.pgm(["one"]), "\(folder)/1.pgm")
            try ScanFixtures.write(ScanFixtures.pgm(["three"]), "\(folder)/3.pgm")
            let result = scan(["--image", "\(folder)/1.pgm", "\(folder)/2.pgm", "\(folder)/3.pgm"])
            #expect(result.status == 1)
            #expect(result.out == ["one", "three"])
            #expect(result.err == ["error: cannot read \(folder)/2.pgm: No such file or directory"])
        }
    }

    // MARK: - --dir

    @Test func folderPrintsACodeWhenItAppearsNotWhileItStays() throws {
        try ScanFixtures.withFolder { folder in
            let frames: [[String]] = [["A"], ["A"], [], ["A"], ["A", "B"], ["B"]]
            for (index, texts) in frames.enumerated() {
                try ScanFixtures.write(ScanFixtures.pgm(texts), "\(folder)/frame\(index).pgm")
            }
            let result = scan(["--dir", folder, "--json"])
            #expect(result.status == 0)
            #expect(try jsonLines(result.out).map { "\($0.frame):\($0.text)" } == ["0:A", "3:A", "4:B"])
        }
    }

    @Test func unreadableFilesInAFolderAreReportedAndScanningGoesOn() throws {
        try ScanFixtures.withFolder { folder in
            try ScanFixtures.write(ScanFixtures.pgm(["first"]), "\(folder)/1.pgm")
            try ScanFixtures.write(Array("not an image".utf8), "\(folder)/2.png")
            try ScanFixtures.write(ScanFixtures.pgm(["third"]), "\(folder)/3.pgm")
            let result = scan(["--dir", folder])
            #expect(result.status == 1)
            #expect(result.out == ["first", "third"])
            #expect(result.err == ["error: \(folder)/2.png is not a readable image: not a PNG, JPEG or PGM image"])
        }
    }

    @Test func emptyFolderPrintsNothing() throws {
        try ScanFixtures.withFolder { folder in
            let result = scan(["--dir", folder])
            #expect(result.status == 0)
            #expect(result.out.isEmpty && result.err.isEmpty)
        }
    }

    @Test func missingFolderFails() {
        let result = scan(["--dir", "/nonexistent/gatepass-frames"])
        #expect(result.status == 1)
        #expect(result.err == ["error: cannot read /nonexistent/gatepass-frames: No such file or directory"])
    }

    // MARK: - --video

    @Test func recordingPrintsACodeAgainAfterItLeftTheFrame() throws {
        try ScanFixtures.withFolder { folder in
            try ScanFixtures.write(ScanFixtures.recording([["pass"], ["pass"], [], ["pass"]]), "\(folder)/gate.y4m")
            let plain = scan(["--video", "\(folder)/gate.y4m"])
            #expect(plain.status == 0)
            #expect(plain.out == ["pass", "pass"])
            let json = scan(["--video", "\(folder)/gate.y4m", "--json"])
            #expect(try jsonLines(json.out).map(\.frame) == [0, 3])
        }
    }

    @Test(arguments: [
        ("YUV4MPEG2 H240\n", "the header does not give the frame size (W and H)"),
        ("YUV4MPEG2 W99999999 H99999999\n", "the width 99999999 is not a whole number from 1 to 8192"),
        ("RIFF....AVI \n", "not a YUV4MPEG2 recording (no YUV4MPEG2 header)"),
    ])
    func malformedRecordingFails(header: String, reason: String) throws {
        try ScanFixtures.withFolder { folder in
            try ScanFixtures.write(Array(header.utf8), "\(folder)/bad.y4m")
            let result = scan(["--video", "\(folder)/bad.y4m"])
            #expect(result.status == 1)
            #expect(result.out.isEmpty)
            #expect(result.err == ["error: \(folder)/bad.y4m is not a readable image: \(reason)"])
        }
    }

    @Test func truncatedRecordingPrintsWhatCameBeforeAndFails() throws {
        try ScanFixtures.withFolder { folder in
            let whole = ScanFixtures.recording([["early"], [], ["late"]])
            try ScanFixtures.write(Array(whole.dropLast(1000)), "\(folder)/cut.y4m")
            let result = scan(["--video", "\(folder)/cut.y4m"])
            #expect(result.status == 1)
            #expect(result.out == ["early"])
            #expect(result.err == ["error: \(folder)/cut.y4m is not a readable image: frame 2 is truncated"])
        }
    }

    // MARK: - Usage

    @Test func helpNamesEverySource() {
        let result = scan(["--help"])
        #expect(result.status == 0)
        let help = result.out.joined(separator: "\n")
        #expect(help.hasPrefix("OVERVIEW: Read QR codes from image files, a folder of images or a Y4M recording"))
        for option in ["--image FILE…", "--dir DIR", "--video FILE.y4m", "--json"] { #expect(help.contains(option)) }
    }

    @Test(arguments: [
        [String](),
        ["--json"],
        ["--image", "a.png", "--dir", "frames"],
        ["--image"],
        ["--image", "--json"],
        ["--dir"],
        ["--video", "a.y4m", "--bogus"],
    ])
    func usageErrorsExitTwo(arguments: [String]) {
        let result = scan(arguments)
        #expect(result.status == 2)
        #expect(result.out.isEmpty)
        #expect(result.err.first?.hasPrefix("error: ") == true)
    }
}
