import Foundation
import Testing
@testable import GatePassScanner

/// YUV4MPEG2 recordings as frame sources.
@Suite struct Y4MTests {
    /// Every frame of a recording: index, luma bytes and the error that ended it, if any.
    private func readAll(_ source: Y4MSource) -> (frames: [(index: Int, luma: [UInt8])], error: ScannerError?) {
        var frames: [(Int, [UInt8])] = []
        do {
            while try source.withNextFrame({ frames.append(($0.index, Array($0.luma.prefix($0.width * $0.height)))) }) {}
            return (frames, nil)
        } catch {
            return (frames, error as? ScannerError)
        }
    }

    private func openError(_ bytes: [UInt8]) throws -> ScannerError? {
        try withTemporaryDirectory { folder -> ScannerError? in
            try writeFile(bytes, to: "\(folder)/v.y4m")
            do {
                _ = try Y4MSource(path: "\(folder)/v.y4m")
                return nil
            } catch {
                return error as? ScannerError
            }
        }
    }

    private static func ramp(_ width: Int, _ height: Int, start: Int) -> GreyCanvas {
        var canvas = GreyCanvas(width: width, height: height)
        for index in canvas.pixels.indices { canvas.pixels[index] = UInt8((start + index) % 251) }
        return canvas
    }

    @Test func codeCodeNothingCodeDecodesFrameByFrame() throws {
        var code = GreyCanvas(width: 320, height: 240)
        code.drawQR("GP1:K7Q2M9XD", moduleSize: 4)
        let frames = [code, code, GreyCanvas(width: 320, height: 240), code]
        try withTemporaryDirectory { folder in
            try writeFile(Y4MWriter.recording(frames), to: "\(folder)/gate.y4m")
            let source = try Y4MSource(path: "\(folder)/gate.y4m")
            defer { source.close() }
            #expect(source.width == 320 && source.height == 240)
            #expect(source.colourSpace == "420jpeg")
            #expect(source.framesPerSecond == 30)
            let decoder = try QRDecoder()
            var seen: [Set<String>] = []
            var indices: [Int] = []
            while try source.withNextFrame({ frame in
                indices.append(frame.index)
                seen.append(try decoder.decode(frame).texts)
            }) {}
            #expect(indices == [0, 1, 2, 3])
            #expect(seen == [["GP1:K7Q2M9XD"], ["GP1:K7Q2M9XD"], [], ["GP1:K7Q2M9XD"]])
            #expect(try source.withNextFrame { _ in } == false)
        }
    }

    /// The Y plane comes first in every layout; what follows it differs in size.
    @Test(arguments: ["420jpeg", "420paldv", "420", "420mpeg2", "422", "444", "mono", nil] as [String?])
    func onlyTheLumaPlaneIsTaken(colourSpace: String?) throws {
        // Odd sizes, so that rounding of the half-size chroma planes matters.
        let frames = [Self.ramp(33, 17, start: 0), Self.ramp(33, 17, start: 100), Self.ramp(33, 17, start: 200)]
        try withTemporaryDirectory { folder in
            try writeFile(Y4MWriter.recording(frames, colourSpace: colourSpace), to: "\(folder)/v.y4m")
            let source = try Y4MSource(path: "\(folder)/v.y4m")
            let (read, error) = readAll(source)
            #expect(error == nil)
            #expect(read.map(\.index) == [0, 1, 2])
            #expect(read.map(\.luma) == frames.map(\.pixels))
        }
    }

    @Test func framesThroughAPipeAreReadWithoutSeeking() throws {
        let frames = [Self.ramp(32, 16, start: 7), Self.ramp(32, 16, start: 9)]
        let bytes = Y4MWriter.recording(frames)
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        // Small enough for the pipe's buffer, so it can all be written before reading.
        #expect(bytes.withUnsafeBytes { Foundation.write(ends[1], $0.baseAddress, $0.count) } == bytes.count)
        close(ends[1])
        let source = try Y4MSource(path: "/proc/self/fd/\(ends[0])")
        let (read, error) = readAll(source)
        #expect(error == nil)
        #expect(read.map(\.luma) == frames.map(\.pixels))
    }

    @Test func frameTagsAndOtherHeaderTagsAreAccepted() throws {
        var bytes = Array("YUV4MPEG2 W4 H2 Cmono XCOLORRANGE=FULL Ip A0:0 F25:1\n".utf8)
        bytes += Array("FRAME Ixyz\n".utf8) + [1, 2, 3, 4, 5, 6, 7, 8]
        try withTemporaryDirectory { folder in
            try writeFile(bytes, to: "\(folder)/v.y4m")
            let source = try Y4MSource(path: "\(folder)/v.y4m")
            #expect(source.framesPerSecond == 25)
            let (read, error) = readAll(source)
            #expect(error == nil)
            #expect(read.map(\.luma) == [[1, 2, 3, 4, 5, 6, 7, 8]])
        }
    }

    // MARK: - Malformed and hostile files

    @Test(arguments: [
        ("", "the file is empty"),
        ("P5 640 480\n", "not a YUV4MPEG2 recording (no YUV4MPEG2 header)"),
        ("YUV4MPEG2W640 H480\n", "not a YUV4MPEG2 recording (no YUV4MPEG2 header)"),
        ("YUV4MPEG2 H480 C420jpeg\n", "the header does not give the frame size (W and H)"),
        ("YUV4MPEG2 W0 H480\n", "the width 0 is not a whole number from 1 to 8192"),
        ("YUV4MPEG2 W-640 H480\n", "the width -640 is not a whole number from 1 to 8192"),
        ("YUV4MPEG2 Wabc H480\n", "the width abc is not a whole number from 1 to 8192"),
        ("YUV4MPEG2 W640 H480 C420p10\n", "colour space C420p10 is not supported (8-bit 420, 422, 444 or mono)"),
        ("YUV4MPEG2 W640 H480", "the file ends inside a header line"),
    ])
    func malformedHeader(header: String, reason: String) throws {
        let error = try openError(Array(header.utf8))
        guard case .undecodable(_, let got) = error else {
            Issue.record("expected undecodable, got \(String(describing: error))")
            return
        }
        #expect(got == reason)
    }

    @Test func hostileHeadersCannotAskForUnboundedMemory() throws {
        for header in ["YUV4MPEG2 W99999999 H99999999\n", "YUV4MPEG2 W8193 H2\n", "YUV4MPEG2 W2 H9223372036854775807\n",
                       "YUV4MPEG2 W99999999999999999999999 H2\n"] {
            guard case .undecodable(_, let reason) = try openError(Array(header.utf8)) else {
                Issue.record("\(header) was accepted")
                continue
            }
            #expect(reason.contains("is not a whole number from 1 to 8192"))
        }
        // A header line that never ends is cut off after 4 KB rather than read whole.
        let endless = Array("YUV4MPEG2 W2 H2 X".utf8) + [UInt8](repeating: 0x41, count: 100_000)
        guard case .undecodable(_, let reason) = try openError(endless) else {
            Issue.record("an endless header line was accepted")
            return
        }
        #expect(reason == "a header line is longer than 4096 bytes")
    }

    @Test func largestAllowedSizeIsAccepted() throws {
        #expect(try openError(Array("YUV4MPEG2 W8192 H8192 Cmono\n".utf8)) == nil)
    }

    @Test func truncatedFrameEndsTheRecordingWithAnError() throws {
        let frames = [Self.ramp(16, 8, start: 0), Self.ramp(16, 8, start: 50)]
        var bytes = Y4MWriter.recording(frames)
        for cut in [1, 10, 16 * 8 / 2 + 1] {   // inside the chroma planes, then inside the Y plane
            bytes.removeLast(cut)
            try withTemporaryDirectory { folder in
                try writeFile(bytes, to: "\(folder)/v.y4m")
                let source = try Y4MSource(path: "\(folder)/v.y4m")
                let (read, error) = readAll(source)
                #expect(read.map(\.luma) == [frames[0].pixels])
                #expect(error == .undecodable(path: "\(folder)/v.y4m", reason: "frame 1 is truncated"))
                #expect(try source.withNextFrame { _ in } == false)
            }
        }
    }

    @Test func frameWithoutFRAMEMarker() throws {
        var bytes = Array("YUV4MPEG2 W2 H2 Cmono\n".utf8) + Array("FRAME\n".utf8) + [1, 2, 3, 4]
        bytes += Array("FRAMES\n".utf8) + [1, 2, 3, 4]
        try withTemporaryDirectory { folder in
            try writeFile(bytes, to: "\(folder)/v.y4m")
            let (read, error) = readAll(try Y4MSource(path: "\(folder)/v.y4m"))
            #expect(read.count == 1)
            #expect(error == .undecodable(path: "\(folder)/v.y4m", reason: "frame 1 does not start with FRAME"))
        }
    }

    @Test func missingFileAndDirectory() throws {
        #expect(throws: ScannerError.unreadable(path: "/nonexistent/v.y4m", reason: "No such file or directory")) {
            try Y4MSource(path: "/nonexistent/v.y4m")
        }
        try withTemporaryDirectory { folder in
            #expect(throws: ScannerError.unreadable(path: folder, reason: "it is a directory")) {
                try Y4MSource(path: folder)
            }
        }
    }

    @Test func closeEndsTheRecording() throws {
        try withTemporaryDirectory { folder in
            try writeFile(Y4MWriter.recording([Self.ramp(4, 4, start: 0), Self.ramp(4, 4, start: 1)]), to: "\(folder)/v.y4m")
            let source = try Y4MSource(path: "\(folder)/v.y4m")
            #expect(try source.withNextFrame { _ in } == true)
            source.close()
            #expect(try source.withNextFrame { _ in } == false)
        }
    }
}
