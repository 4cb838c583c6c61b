import Foundation
import Testing
@testable import GatePassScanner

/// Image files read through MagickWand into grey frames, and the sources built on them.
@Suite struct ImageSourceTests {
    static let pass = "GP1:K7Q2M9XD"

    static func codeCanvas(_ text: String = pass, degrees: Double = 0) -> GreyCanvas {
        var canvas = GreyCanvas(width: 320, height: 240)
        canvas.drawQR(text, moduleSize: 4, degrees: degrees)
        return canvas
    }

    private func texts(in path: String) throws -> [String] {
        let decoder = try QRDecoder()
        return try GreyImage(contentsOf: path).withFrame(index: 0) { try decoder.decode($0) }.codes.map(\.text)
    }

    private func error(reading path: String) -> ScannerError? {
        do {
            _ = try GreyImage(contentsOf: path)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Formats that decode

    @Test(arguments: ["png", "jpeg", "pgm"])
    func eachFormatDecodesToTheRightText(format: String) throws {
        try withTemporaryDirectory { folder in
            let canvas = Self.codeCanvas()
            let bytes = switch format {
            case "png": canvas.encoded(as: "PNG")
            case "jpeg": canvas.encoded(as: "JPEG", quality: 85)
            default: canvas.pgm()
            }
            let path = "\(folder)/pass.\(format)"
            try writeFile(bytes, to: path)
            let image = try GreyImage(contentsOf: path)
            #expect(image.width == 320 && image.height == 240)
            #expect(try texts(in: path) == [Self.pass])
        }
    }

    @Test func pgmPixelsComeThroughExactly() throws {
        try withTemporaryDirectory { folder in
            var canvas = GreyCanvas(width: 7, height: 3)
            for index in canvas.pixels.indices { canvas.pixels[index] = UInt8(index * 12) }
            try writeFile(canvas.pgm(), to: "\(folder)/ramp.pgm")
            try writeFile(canvas.encoded(as: "PNG"), to: "\(folder)/ramp.png")
            #expect(try GreyImage(contentsOf: "\(folder)/ramp.pgm").pixels == canvas.pixels)
            #expect(try GreyImage(contentsOf: "\(folder)/ramp.png").pixels == canvas.pixels)
        }
    }

    /// The in-memory entry point (the fuzzing package's) decodes and refuses exactly as a file's bytes are.
    @Test func bytesInMemoryDecodeAsTheirFileDoes() throws {
        var canvas = GreyCanvas(width: 7, height: 3)
        for index in canvas.pixels.indices { canvas.pixels[index] = UInt8(index * 12) }
        #expect(try GreyImage(fileBytes: canvas.pgm(), path: "ramp.pgm").pixels == canvas.pixels)
        #expect(throws: ScannerError.undecodable(path: "empty.pgm", reason: "the file is empty")) {
            try GreyImage(fileBytes: [], path: "empty.pgm")
        }
        #expect(throws: ScannerError.undecodable(path: "notes.pgm", reason: "not a PNG, JPEG or PGM image")) {
            try GreyImage(fileBytes: Array("P7 is not PNM\n".utf8), path: "notes.pgm")
        }
    }

    @Test func codeOnATransparentBackgroundIsLaidOnWhite() throws {
        try withTemporaryDirectory { folder in
            try writeFile(Self.codeCanvas().transparentPNG(), to: "\(folder)/transparent.png")
            let image = try GreyImage(contentsOf: "\(folder)/transparent.png")
            #expect(image.pixels.first == 255)
            #expect(try texts(in: "\(folder)/transparent.png") == [Self.pass])
        }
    }

    @Test func theFormatComesFromTheBytesNotTheName() throws {
        try withTemporaryDirectory { folder in
            try writeFile(Self.codeCanvas().encoded(as: "PNG"), to: "\(folder)/actually-a-png.jpg")
            #expect(try texts(in: "\(folder)/actually-a-png.jpg") == [Self.pass])
        }
    }

    // MARK: - Files that must fail, and how

    @Test func missingFile() {
        let error = error(reading: "/nonexistent/gatepass/pass.png")
        #expect(error == .unreadable(path: "/nonexistent/gatepass/pass.png", reason: "No such file or directory"))
    }

    @Test func directoryIsNotAnImage() throws {
        try withTemporaryDirectory { folder in
            #expect(error(reading: folder) == .unreadable(path: folder, reason: "it is a directory"))
        }
    }

    @Test func emptyFile() throws {
        try withTemporaryDirectory { folder in
            try writeFile([], to: "\(folder)/empty.png")
            #expect(error(reading: "\(folder)/empty.png") == .undecodable(path: "\(folder)/empty.png", reason: "the file is empty"))
        }
    }

    @Test func textFileNamedPNG() throws {
        try withTemporaryDirectory { folder in
            try writeFile(Array("this is not an image\n".utf8), to: "\(folder)/notes.png")
            #expect(error(reading: "\(folder)/notes.png")
                    == .undecodable(path: "\(folder)/notes.png", reason: "not a PNG, JPEG or PGM image"))
        }
    }

    /// ImageMagick reads SVG, MVG, text and more; none of them may get through to it.
    @Test func otherFormatsImageMagickKnowsAreRefused() throws {
        try withTemporaryDirectory { folder in
            let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"/>"
            for (name, content) in [("a.svg", svg), ("b.png", "push graphic-context\nviewbox 0 0 10 10\n"), ("c.gif", "GIF89a")] {
                try writeFile(Array(content.utf8), to: "\(folder)/\(name)")
                guard case .undecodable = error(reading: "\(folder)/\(name)") else {
                    Issue.record("\(name) was not refused")
                    continue
                }
            }
        }
    }

    @Test(arguments: ["png", "jpeg"])
    func truncatedImage(format: String) throws {
        try withTemporaryDirectory { folder in
            var canvas = Self.codeCanvas(degrees: 10)
            canvas.addNoise(amplitude: 30)   // no long runs, so the compressed data is long enough to cut
            let whole = canvas.encoded(as: format == "png" ? "PNG" : "JPEG")
            let path = "\(folder)/cut.\(format)"
            try writeFile(Array(whole.prefix(whole.count / 2)), to: path)
            guard case .undecodable(let failedPath, let reason) = error(reading: path) else {
                Issue.record("a truncated \(format) was read as an image")
                return
            }
            #expect(failedPath == path)
            #expect(!reason.isEmpty && !reason.contains("@ "))
        }
    }

    @Test func pngSignatureFollowedByGarbage() throws {
        try withTemporaryDirectory { folder in
            try writeFile([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0x41, count: 100), to: "\(folder)/bad.png")
            guard case .undecodable = error(reading: "\(folder)/bad.png") else {
                Issue.record("garbage after a PNG signature was read as an image")
                return
            }
        }
    }

    @Test func hostileDimensionsAreRefusedBeforeAllocating() throws {
        try withTemporaryDirectory { folder in
            // 100000 × 100000 claimed, a few bytes given: refused by the size limit, not by memory.
            try writeFile(Array("P5\n100000 100000\n255\n".utf8) + [0, 0, 0], to: "\(folder)/huge.pgm")
            guard case .undecodable = error(reading: "\(folder)/huge.pgm") else {
                Issue.record("a 100000×100000 PGM header was accepted")
                return
            }
        }
    }

    // MARK: - Sources

    @Test func fileSourceGivesOneFramePerFileInOrderAndGoesOnAfterABadOne() throws {
        try withTemporaryDirectory { folder in
            try writeFile(Self.codeCanvas("first").encoded(as: "PNG"), to: "\(folder)/1.png")
            try writeFile(Array("nope".utf8), to: "\(folder)/2.png")
            try writeFile(Self.codeCanvas("third").pgm(), to: "\(folder)/3.pgm")
            let source = ImageFileSource(paths: ["\(folder)/1.png", "\(folder)/2.png", "\(folder)/3.pgm"])
            let decoder = try QRDecoder()
            var seen: [(Int, String?, [String])] = []
            var failures: [ScannerError] = []
            while true {
                do {
                    guard try source.withNextFrame({ frame in
                        seen.append((frame.index, frame.label, try decoder.decode(frame).codes.map(\.text)))
                    }) else { break }
                } catch let error as ScannerError {
                    failures.append(error)
                }
            }
            #expect(seen.map(\.0) == [0, 2])
            #expect(seen.map(\.1) == ["\(folder)/1.png", "\(folder)/3.pgm"])
            #expect(seen.map(\.2) == [["first"], ["third"]])
            #expect(failures == [.undecodable(path: "\(folder)/2.png", reason: "not a PNG, JPEG or PGM image")])
        }
    }

    @Test func folderListsRegularFilesInNameOrder() throws {
        try withTemporaryDirectory { folder in
            for name in ["b.png", "a10.pgm", "a2.jpg", ".hidden.png", "B.png"] { try writeFile([1], to: "\(folder)/\(name)") }
            try FileManager.default.createDirectory(atPath: "\(folder)/subfolder", withIntermediateDirectories: false)
            let source = try ImageFileSource(directory: folder)
            #expect(source.paths == ["B.png", "a10.pgm", "a2.jpg", "b.png"].map { "\(folder)/\($0)" })
        }
    }

    @Test func emptyFolderGivesNoFrames() throws {
        try withTemporaryDirectory { folder in
            let source = try ImageFileSource(directory: folder)
            #expect(try source.withNextFrame { _ in Issue.record("a frame from an empty folder") } == false)
        }
    }

    @Test func missingFolderOrFileAsFolder() throws {
        #expect(throws: ScannerError.unreadable(path: "/nonexistent/gatepass", reason: "No such file or directory")) {
            try ImageFileSource(directory: "/nonexistent/gatepass")
        }
        try withTemporaryDirectory { folder in
            try writeFile([1], to: "\(folder)/file")
            #expect(throws: ScannerError.unreadable(path: "\(folder)/file", reason: "Not a directory")) {
                try ImageFileSource(directory: "\(folder)/file")
            }
        }
    }
}
