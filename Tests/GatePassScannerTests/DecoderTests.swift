import Testing
@testable import GatePassScanner

/// QR codes drawn with libqrencode into grey frames, decoded by zbar through `QRDecoder`.
@Suite struct DecoderTests {
    static let pass = "GP1:K7Q2M9XD"

    private func decode(_ canvas: GreyCanvas, with decoder: QRDecoder? = nil, index: Int = 0) throws -> DecodedFrame {
        let decoder = try decoder ?? QRDecoder()
        return try canvas.withFrame(index: index) { try decoder.decode($0) }
    }

    // MARK: - Codes that must be read

    @Test(arguments: [2.0, 3.0, 4.0, 6.0, 2.5])
    func moduleSizes(moduleSize: Double) throws {
        var canvas = GreyCanvas()
        canvas.drawQR(Self.pass, moduleSize: moduleSize)
        let decoded = try decode(canvas)
        #expect(decoded.codes.map(\.text) == [Self.pass])
        #expect(decoded.codes.first?.format == "QR-Code")
    }

    @Test(arguments: [0.0, 10.0, 30.0, 45.0, 90.0, 137.0, 180.0, 250.0, 315.0])
    func rotations(degrees: Double) throws {
        var canvas = GreyCanvas()
        canvas.drawQR(Self.pass, moduleSize: 6, degrees: degrees)
        #expect(try decode(canvas).codes.map(\.text) == [Self.pass])
    }

    @Test(arguments: [(30.0, 30.0), (590.0, 440.0), (100.0, 400.0), (500.0, 60.0)])
    func placement(x: Double, y: Double) throws {
        var canvas = GreyCanvas()
        // Version 1 at 2 px per module with a 4-module quiet zone: 58 px across, near the edges.
        canvas.drawQR("edge", moduleSize: 2, center: (x, y))
        #expect(try decode(canvas).codes.map(\.text) == ["edge"])
    }

    @Test func noise() throws {
        var canvas = GreyCanvas()
        canvas.drawQR(Self.pass, moduleSize: 4, degrees: 12)
        canvas.addNoise(amplitude: 60)
        #expect(try decode(canvas).codes.map(\.text) == [Self.pass])
    }

    @Test func blur() throws {
        var canvas = GreyCanvas()
        canvas.drawQR(Self.pass, moduleSize: 6, degrees: 20)
        canvas.boxBlur(radius: 1)
        #expect(try decode(canvas).codes.map(\.text) == [Self.pass])
    }

    @Test func lowContrast() throws {
        var canvas = GreyCanvas(background: 150)
        canvas.drawQR(Self.pass, moduleSize: 4, degrees: 5, dark: 110, light: 150)
        canvas.addNoise(amplitude: 4)
        #expect(try decode(canvas).codes.map(\.text) == [Self.pass])
    }

    @Test func everythingAtOnce() throws {
        var canvas = GreyCanvas()
        canvas.drawQR(Self.pass, moduleSize: 6, center: (220, 300), degrees: 33)
        canvas.boxBlur(radius: 1)
        canvas.reduceContrast(low: 60, high: 190)
        canvas.addNoise(amplitude: 8)
        #expect(try decode(canvas).codes.map(\.text) == [Self.pass])
    }

    @Test func longAndUnicodeTexts() throws {
        let long = String(repeating: "GP1:K7Q2M9XD;", count: 20)
        let unicode = "Zoë Ødegård — 来访者"
        for text in [long, unicode] {
            var canvas = GreyCanvas()
            canvas.drawQR(text, moduleSize: 3)
            #expect(try decode(canvas).codes.map(\.text) == [text])
        }
    }

    @Test func twoCodesInOneFrameComeBackSortedOnce() throws {
        var canvas = GreyCanvas()
        canvas.drawQR("zulu", moduleSize: 4, center: (160, 240))
        canvas.drawQR("alpha", moduleSize: 4, center: (480, 240), degrees: 20)
        #expect(try decode(canvas).codes.map(\.text) == ["alpha", "zulu"])

        var copies = GreyCanvas()
        copies.drawQR("same", moduleSize: 4, center: (160, 240))
        copies.drawQR("same", moduleSize: 4, center: (480, 240))
        #expect(try decode(copies).codes.map(\.text) == ["same"])
    }

    // MARK: - Frames that must give nothing

    @Test func emptyFrames() throws {
        let decoder = try QRDecoder()
        for level: UInt8 in [255, 0, 128] {
            let decoded = try decode(GreyCanvas(background: level), with: decoder)
            #expect(decoded.codes.isEmpty)
        }
        var noise = GreyCanvas(background: 128)
        noise.addNoise(amplitude: 127)
        #expect(try decode(noise, with: decoder).codes.isEmpty)
    }

    @Test func nonQRPattern() throws {
        var canvas = GreyCanvas()
        canvas.drawNonQRPattern()
        #expect(try decode(canvas).codes.isEmpty)
    }

    /// `ZBAR_CFG_TEST_INVERTED` is off on purpose (architecture.md): a light-on-dark code is
    /// not looked for by `QRDecoder` (ReadingPipeline reads it from the negative, within its
    /// budget: ReadingPipelineTests). If this starts reading it, the configuration changed.
    @Test func invertedCodeIsNotLookedFor() throws {
        var canvas = GreyCanvas(background: 0)
        canvas.drawQR(Self.pass, moduleSize: 4, dark: 255, light: 0)
        #expect(try decode(canvas).codes.isEmpty)
        var normal = GreyCanvas()
        normal.drawQR(Self.pass, moduleSize: 4)
        #expect(try decode(normal).codes.map(\.text) == [Self.pass])
    }

    @Test func zeroSizedFrameGivesNothing() throws {
        let decoder = try QRDecoder()
        let decoded = try [UInt8]().withUnsafeBytes { try decoder.decode(FrameView(width: 0, height: 0, luma: $0, index: 7)) }
        #expect(decoded.codes.isEmpty)
        #expect(decoded.frameIndex == 7)
    }

    // MARK: - What a frame sequence returns (zbar's cache)

    /// zbar's filtered results would show a held code once; the decoder returns it in every
    /// frame it is in view, with zbar's count going 0, 1, 2.
    @Test func heldCodeIsReturnedEveryFrame() throws {
        let decoder = try QRDecoder()
        var canvas = GreyCanvas()
        canvas.drawQR(Self.pass, moduleSize: 4)
        let frames = try (0..<3).map { try decode(canvas, with: decoder, index: $0) }
        #expect(frames.map { $0.codes.map(\.text) } == [[Self.pass], [Self.pass], [Self.pass]])
        #expect(frames.map(\.frameIndex) == [0, 1, 2])
        #expect(frames[0].codes.first?.zbarCount == 0)
        // Frames back to back are well within zbar's 1 s proximity window.
        #expect(frames[1].codes.first?.zbarCount ?? 0 > 0)
        #expect(frames[2].codes.first?.zbarCount ?? 0 > frames[1].codes.first?.zbarCount ?? 0)
        #expect(frames.allSatisfy { $0.milliseconds > 0 })
    }

    @Test func codeThatLeavesAndComesBackIsReturnedWheneverInView() throws {
        let decoder = try QRDecoder()
        var code = GreyCanvas()
        code.drawQR(Self.pass, moduleSize: 4)
        let empty = GreyCanvas()
        let sequence = [code, code, empty, code]
        let texts = try sequence.enumerated().map { try decode($1, with: decoder, index: $0).texts }
        #expect(texts == [[Self.pass], [Self.pass], [], [Self.pass]])
    }

    @Test func resetCacheMakesACodeNewToZbarAgain() throws {
        let decoder = try QRDecoder()
        var canvas = GreyCanvas()
        canvas.drawQR(Self.pass, moduleSize: 4)
        _ = try decode(canvas, with: decoder)
        #expect(try decode(canvas, with: decoder).codes.first?.zbarCount ?? 0 > 0)
        decoder.resetCache()
        #expect(try decode(canvas, with: decoder).codes.first?.zbarCount == 0)
    }

    @Test func framesOfDifferentSizesShareOneDecoder() throws {
        let decoder = try QRDecoder()
        var small = GreyCanvas(width: 160, height: 120)
        small.drawQR("small", moduleSize: 3)
        var large = GreyCanvas(width: 640, height: 480)
        large.drawQR("large", moduleSize: 4, degrees: 45)
        #expect(try decode(small, with: decoder).texts == ["small"])
        #expect(try decode(large, with: decoder).texts == ["large"])
        #expect(try decode(small, with: decoder).texts == ["small"])
    }

    @Test func theFrameIsNotModified() throws {
        var canvas = GreyCanvas()
        canvas.drawQR(Self.pass, moduleSize: 4, degrees: 30)
        canvas.addNoise(amplitude: 10)
        let before = canvas.pixels
        _ = try decode(canvas)
        #expect(canvas.pixels == before)
    }
}
