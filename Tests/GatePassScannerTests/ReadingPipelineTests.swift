import CZXingShim
import GatePassScannerCorpus
import GatePassCore
import Testing
@testable import GatePassScanner

/// The reading pipeline (zbar, then zbar on the negative and zxing-cpp within a budget) and the
/// zxing shim under it. Costs come from clocks the tests script, so no outcome here depends on
/// the machine's speed; nothing is timed.
@Suite struct ReadingPipelineTests {
    static let pass = "GP1:K7Q2M9XD"

    /// Every reading is the same instant: every try costs nothing, so every frame zbar cannot
    /// read gets a second try.
    static let standingClock = DecoderCostClock { 0 }

    /// A clock that moves 1 ms each time it is read: zbar and every second try cost 1 ms each.
    final class SteppingClock: Sendable {
        private let readings = Locked<UInt64>(0)
        var clock: DecoderCostClock { DecoderCostClock { self.advance() } }
        private func advance() -> UInt64 { readings.withLock { $0 += 1_000_000; return $0 } }
    }

    /// The texts the pipeline reads from `frames`, shown in turn `rounds` times (a pass held in
    /// view).
    private func texts(through pipeline: ReadingPipeline, _ frames: [GreyImage], rounds: Int = 3) throws -> Set<String> {
        var texts: Set<String> = []
        for round in 0..<rounds {
            for (index, image) in frames.enumerated() {
                texts.formUnion(try image.withFrame(index: round * frames.count + index) { try pipeline.decode($0).texts })
            }
        }
        return texts
    }

    private static let corpus = Result { try ScannerCorpus.hardCases(seed: 15, casesPerClass: 2, framesPerCase: 3) }

    // MARK: - What is read

    /// Each class of hard case is read through the pipeline; whatever zbar alone or zxing alone
    /// (no budget, both polarities) reads from a case's frames, the pipeline reads too.
    @Test(arguments: HardCaseClass.allCases)
    func eachHardCaseClassDecodes(kind: HardCaseClass) throws {
        let cases = try Self.corpus.get().filter { $0.kind == kind }
        var readByPipeline = 0
        for hardCase in cases {
            let pipeline = try ReadingPipeline(clock: Self.standingClock)
            let read = try texts(through: pipeline, hardCase.frames)
            #expect(read.isSubset(of: [hardCase.text]), "a false read in a \(kind.rawValue) case")
            if read.contains(hardCase.text) { readByPipeline += 1 }
            let zbar = try QRDecoder()
            let zxing = ZXingReader()
            var readAlone = false
            for image in hardCase.frames {
                try image.withFrame(index: 0) { frame in
                    if try zbar.decode(frame).texts.contains(hardCase.text) { readAlone = true }
                    for inverted in [false, true] where try zxing.read(frame, inverted: inverted) == .decoded(hardCase.text) {
                        readAlone = true
                    }
                }
            }
            if readAlone { #expect(read.contains(hardCase.text), "the pipeline missed a \(kind.rawValue) case a decoder alone reads") }
        }
        #expect(readByPipeline >= 1, "no \(kind.rawValue) case was read")
    }

    /// The point of the second decoder: among the dark-on-light hard cases (rotation, keystone,
    /// blur + noise + JPEG, small modules) there are some zbar alone reads in none of their
    /// frames, and the pipeline reads them.
    @Test func readsDarkOnLightCasesZbarAloneMisses() throws {
        var missedByZbar = 0, recovered = 0
        let cases = try ScannerCorpus.hardCases(seed: 15, casesPerClass: 4, framesPerCase: 2,
                                                classes: [.rotation, .keystone, .blurNoiseJPEG, .smallModules])
        for hardCase in cases {
            let zbar = try QRDecoder()
            let readByZbar = try hardCase.frames.contains { image in
                try image.withFrame(index: 0) { try zbar.decode($0).texts.contains(hardCase.text) }
            }
            guard !readByZbar else { continue }
            missedByZbar += 1
            let pipeline = try ReadingPipeline(clock: Self.standingClock)
            if try texts(through: pipeline, hardCase.frames).contains(hardCase.text) { recovered += 1 }
        }
        #expect(missedByZbar >= 1, "the corpus has no dark-on-light case zbar misses: it is not hard enough")
        #expect(recovered >= 1)
    }

    /// A phone in dark mode: light modules on a dark screen. zbar alone never reads it (its
    /// inverted test is off); the pipeline does, from the frame's negative.
    @Test(arguments: [0.0, 20.0])
    func lightOnDarkPassDecodes(degrees: Double) throws {
        var canvas = GreyCanvas(background: 20)
        canvas.drawQR(Self.pass, moduleSize: 4, degrees: degrees, dark: 235, light: 20)
        canvas.addNoise(amplitude: 6)
        let zbarAlone = try QRDecoder()
        #expect(try canvas.withFrame { try zbarAlone.decode($0) }.codes.isEmpty)
        // The tries take turns, so it is read within one round of them; once read, the try that
        // read it is repeated, so it is read on every frame it stays in view.
        let pipeline = try ReadingPipeline(clock: Self.standingClock)
        let round = ReadingPipeline.SecondTry.allCases.count
        let firstRound = try (0..<round).map { index in try canvas.withFrame(index: index) { try pipeline.decode($0) } }
        let firstRead = try #require(firstRound.firstIndex { !$0.codes.isEmpty })
        #expect(firstRound[firstRead].codes.map(\.text) == [Self.pass])
        #expect(firstRound[firstRead].codes.first?.format == QRDecoder.format)
        #expect(firstRound[firstRead...].allSatisfy { $0.texts == [Self.pass] })
        let held = try (round..<round + 5).map { index in try canvas.withFrame(index: index) { try pipeline.decode($0).texts } }
        #expect(held.allSatisfy { $0 == [Self.pass] })
    }

    @Test func lightOnDarkCorpusCasesDecode() throws {
        for hardCase in try Self.corpus.get() where hardCase.kind == .lightOnDark {
            let pipeline = try ReadingPipeline(clock: Self.standingClock)
            #expect(try texts(through: pipeline, hardCase.frames) == [hardCase.text])
        }
    }

    /// What zbar reads comes back as zbar gives it, and no second try runs on that frame.
    @Test func zbarReadsPassStraightThrough() throws {
        var canvas = GreyCanvas()
        canvas.drawQR(Self.pass, moduleSize: 4, degrees: 10)
        let pipeline = try ReadingPipeline(clock: Self.standingClock)
        let zbar = try QRDecoder()
        let decoded = try canvas.withFrame(index: 3) { try pipeline.decode($0) }
        let alone = try canvas.withFrame(index: 3) { try zbar.decode($0) }
        #expect(decoded.codes == alone.codes)
        #expect(decoded.frameIndex == 3)
        #expect(pipeline.counters == .init(frames: 1, framesReadByZbar: 1, secondTries: 0, framesReadBySecondTry: 0))
    }

    // MARK: - What is never read

    /// Noise, a checkerboard, barcode-like stripes, finder-like squares and an empty scene give
    /// no text through any decoder, however many tries they get.
    @Test func noFalseReadsOnNoiseAndNonQRPatterns() throws {
        var decoys = ScannerCorpus.decoys(seed: 15) + ScannerCorpus.decoys(seed: 99)
        var stripes = GreyCanvas()
        stripes.drawNonQRPattern()
        decoys.append(Decoy(name: "stripes and checkerboard", image: GreyImage(width: stripes.width, height: stripes.height,
                                                                               pixels: stripes.pixels)))
        let zxing = ZXingReader()
        for decoy in decoys {
            let pipeline = try ReadingPipeline(clock: Self.standingClock)
            #expect(try texts(through: pipeline, [decoy.image], rounds: 9).isEmpty, "\(decoy.name) was read")
            #expect(pipeline.counters.secondTries == 9)
            try decoy.image.withFrame(index: 0) { frame in
                for inverted in [false, true] {
                    let outcome = try zxing.read(frame, inverted: inverted)
                    #expect(outcome == .nothingFound || outcome == .foundNotDecoded, "zxing read \(decoy.name)")
                }
            }
        }
    }

    // MARK: - The budget

    /// With zbar and a second try costing the same, a quarter share allows about one try every
    /// four frames zbar cannot read — never every frame, never none.
    @Test func secondTriesKeepToTheirShareOfZbarsCost() throws {
        let clock = SteppingClock()
        let pipeline = try ReadingPipeline(clock: clock.clock, secondaryShare: 0.25)
        let empty = ScannerCorpus.emptyScene()
        for index in 0..<100 { _ = try empty.withFrame(index: index) { try pipeline.decode($0) } }
        #expect(pipeline.counters.frames == 100)
        #expect((24...27).contains(pipeline.counters.secondTries), "\(pipeline.counters.secondTries) second tries")
    }

    /// Credit saved while zbar reads is capped: after a long read, the second tries do not run
    /// on every frame of the next stretch.
    @Test func creditSavedDuringReadsIsCapped() throws {
        let clock = SteppingClock()
        let pipeline = try ReadingPipeline(clock: clock.clock, secondaryShare: 0.25)
        var readable = GreyCanvas()
        readable.drawQR(Self.pass, moduleSize: 4)
        let empty = ScannerCorpus.emptyScene()
        for index in 0..<8 { _ = try empty.withFrame(index: index) { try pipeline.decode($0) } }
        for index in 0..<200 { _ = try readable.withFrame(index: index) { try pipeline.decode($0) } }
        let before = pipeline.counters.secondTries
        for index in 0..<8 { _ = try empty.withFrame(index: index) { try pipeline.decode($0) } }
        #expect(pipeline.counters.secondTries - before <= 4)
    }

    // MARK: - The zxing shim and its wrapper

    @Test func zxingReadsPlaneWithPaddedRowsAndItsNegative() throws {
        var canvas = GreyCanvas(width: 200, height: 200)
        canvas.drawQR(Self.pass, moduleSize: 4)
        let stride = 256
        var padded = [UInt8](repeating: 77, count: stride * 200)
        var negative = padded
        for y in 0..<200 {
            for x in 0..<200 {
                padded[y * stride + x] = canvas.pixels[y * 200 + x]
                negative[y * stride + x] = 255 - canvas.pixels[y * 200 + x]
            }
        }
        let zxing = ZXingReader()
        let read = { (plane: [UInt8], inverted: Bool) in
            try plane.withUnsafeBytes { try zxing.read(plane: $0, width: 200, height: 200, stride: stride, inverted: inverted) }
        }
        #expect(try read(padded, false) == .decoded(Self.pass))
        #expect(try read(negative, true) == .decoded(Self.pass))
        #expect(try read(negative, false) == .nothingFound)
    }

    @Test func zxingWrapperRefusesPlanesThatMakeNoSense() throws {
        let zxing = ZXingReader()
        let bytes = [UInt8](repeating: 255, count: 64)
        func refusal(width: Int, height: Int, stride: Int) -> String? {
            bytes.withUnsafeBytes { plane -> String? in
                do {
                    _ = try zxing.read(plane: plane, width: width, height: height, stride: stride, inverted: false)
                    return nil
                } catch {
                    return "\(error)"
                }
            }
        }
        #expect(refusal(width: 0, height: 8, stride: 8)?.contains("not valid") == true)
        #expect(refusal(width: 8, height: -1, stride: 8)?.contains("not valid") == true)
        #expect(refusal(width: 8, height: 8, stride: 4)?.contains("stride must be at least the width") == true)
        // Rejected on its size alone: nothing of 100,000 × 100,000 is ever allocated.
        #expect(refusal(width: 100_000, height: 100_000, stride: 100_000)?.contains("larger than") == true)
        #expect(refusal(width: 16, height: 16, stride: 16)?.contains("64 bytes, 256 needed") == true)
        #expect(refusal(width: 8, height: 8, stride: 8) == nil)
    }

    /// The C entry point itself, as any caller could misuse it.
    @Test func shimRejectsHostileArgumentsWithAStatus() {
        var text = [UInt8](repeating: 0, count: 4)
        var length = 99
        var message = [CChar](repeating: 0, count: 128)
        let plane = [UInt8](repeating: 0, count: 64)
        func read(_ pixels: UnsafePointer<UInt8>?, _ width: Int32, _ height: Int32, _ stride: Int32) -> zxing_shim_status {
            zxing_shim_read_qr(pixels, width, height, stride, 0, &text, text.count, &length, &message, message.count)
        }
        plane.withUnsafeBufferPointer { plane in
            #expect(read(nil, 8, 8, 8) == ZXING_SHIM_BAD_ARGUMENT)
            #expect(read(plane.baseAddress, 0, 8, 8) == ZXING_SHIM_BAD_ARGUMENT)
            #expect(read(plane.baseAddress, 8, 8, 7) == ZXING_SHIM_BAD_ARGUMENT)
            #expect(read(plane.baseAddress, -8, 8, 8) == ZXING_SHIM_BAD_ARGUMENT)
            #expect(read(plane.baseAddress, 1 << 20, 1, 1 << 20) == ZXING_SHIM_TOO_LARGE)
            #expect(read(plane.baseAddress, 8, 8, 8) == ZXING_SHIM_NOTHING_FOUND)
        }
        #expect(length == 0)
        // A text longer than the caller's buffer: its length is told, nothing is written past it.
        var canvas = GreyCanvas(width: 160, height: 160)
        canvas.drawQR(Self.pass, moduleSize: 4)
        let status = canvas.pixels.withUnsafeBufferPointer { read($0.baseAddress, 160, 160, 160) }
        #expect(status == ZXING_SHIM_TEXT_TOO_LONG)
        #expect(length == Self.pass.utf8.count)
    }
}
