import Foundation
import GatePassScanner
import GatePassScannerCorpus

// MARK: - Hard cases (issue 15): what the reading pipeline reads beyond zbar, and at what CPU
//
// The corpus (GatePassScannerCorpus, seed 15): `casesPerClass` passes of each hard-case class,
// each drawn in `distinctFrames` frames (noise and a hand's tremble differ). At the gate a pass
// is held for `hold` frames (the distinct frames in turn), then `gap` frames of the empty scene.
// In one run:
//   - zbar alone (QRDecoder) and zxing with no budget, on every distinct frame in both
//     polarities: what each can read at all (deterministic, so not paced);
//   - zbar alone and the pipeline (ReadingPipeline, thread CPU clock) over the gate's stream at a
//     steady 30 fps, the process's CPU per frame measured for each;
//   - false reads: any text but the case's own, on the stream and on the decoys (noise,
//     checkerboard, stripes, finder-like squares, the empty scene) through every decoder.

struct HardCaseClassFigures: Codable, Sendable {
    var kind: String
    var cases: Int
    var zbar: Int
    var zxingUnbudgeted: Int
    var pipeline: Int
}

struct HardCaseFigures: Codable, Sendable {
    var cases: Int
    var distinctFramesPerCase: Int
    var holdFrames: Int
    var gapFrames: Int
    var streamFrames: Int
    var zxingVersion: String
    /// Thread CPU per call over the distinct frames: zbar (QRDecoder) and one zxing read (one polarity).
    var zbarMillisecondsPerCall: Double
    var zxingMillisecondsPerCall: Double
    var classes: [HardCaseClassFigures]
    var zbarReads: Int
    var zxingUnbudgetedReads: Int
    /// Cases zbar misses that zxing (no budget, both polarities, every frame) reads.
    var zxingBeyondZbar: Int
    /// Of those, the cases the pipeline read.
    var pipelineRecovered: Int
    var pipelineReads: Int
    /// Cases zbar reads that the pipeline did not (must be 0).
    var zbarReadsLost: Int
    var recoveredFraction: Double
    var zbarCPUMillisecondsPerFrame: Double
    var pipelineCPUMillisecondsPerFrame: Double
    var cpuRatio: Double
    var secondTries: Int
    var lateFrames: Int
    var falseReads: Int
    var decoyFrames: Int
    var recoveredGoal: Double
    var cpuRatioGoal: Double
    var goalsMet: Bool
}

func runHardCaseScenario(casesPerClass: Int = 8, distinctFrames: Int = 6, hold: Int = 20, gap: Int = 10) throws -> HardCaseFigures {
    let drawStart = monotonicNanoseconds()
    let cases = try ScannerCorpus.hardCases(seed: 15, casesPerClass: casesPerClass, framesPerCase: distinctFrames)
    let empty = ScannerCorpus.emptyScene(seed: 15)
    let decoys = ScannerCorpus.decoys(seed: 15)
    progress("hard cases: drew \(cases.count) cases × \(distinctFrames) frames and \(decoys.count) decoys in "
             + "\(format(Double(monotonicNanoseconds() - drawStart) / 1e9, 1)) s")
    var falseReads = 0
    func judge(_ texts: [String], expected: String?) -> Bool {
        var read = false
        for text in texts {
            if text == expected { read = true } else { falseReads += 1 }
        }
        return read
    }

    // What each decoder can read at all, on every distinct frame.
    let zbar = try QRDecoder()
    let zxing = ZXingReader()
    var zbarRead = [Bool](repeating: false, count: cases.count)
    var zxingRead = [Bool](repeating: false, count: cases.count)
    var (zbarNanoseconds, zxingNanoseconds, zbarCalls, zxingCalls) = (UInt64(0), UInt64(0), 0, 0)
    let cpu = DecoderCostClock.threadCPUTime
    for (index, hardCase) in cases.enumerated() {
        for image in hardCase.frames {
            try withCorpusFrame(image) { frame in
                var start = cpu.nanoseconds()
                let zbarTexts = try zbar.decode(frame).codes.map(\.text)
                zbarNanoseconds += cpu.nanoseconds() - start
                zbarCalls += 1
                if judge(zbarTexts, expected: hardCase.text) { zbarRead[index] = true }
                for inverted in [false, true] {
                    start = cpu.nanoseconds()
                    let outcome = try zxing.read(frame, inverted: inverted)
                    zxingNanoseconds += cpu.nanoseconds() - start
                    zxingCalls += 1
                    if case .decoded(let text) = outcome, judge([text], expected: hardCase.text) { zxingRead[index] = true }
                }
            }
        }
    }
    progress("hard cases: zbar reads \(zbarRead.filter { $0 }.count), zxing with no budget \(zxingRead.filter { $0 }.count) "
             + "of \(cases.count)")

    // The gate's stream at 30 fps: zbar alone, then the pipeline.
    let stream: [(pixels: [UInt8], caseIndex: Int?)] = cases.enumerated().flatMap { index, hardCase in
        (0..<hold).map { (hardCase.frames[$0 % hardCase.frames.count].pixels, Optional(index)) }
            + (0..<gap).map { _ in (empty.pixels, nil) }
    }
    var late = 0
    func paced(_ decode: (FrameView) throws -> [String]) throws -> (cpuPerFrame: Double, read: [Bool]) {
        var read = [Bool](repeating: false, count: cases.count)
        let interval = UInt64(1e9 / 30)
        let cpu = processCPUSeconds()
        let start = monotonicNanoseconds()
        for (index, entry) in stream.enumerated() {
            let due = start + UInt64(index) * interval
            if monotonicNanoseconds() > due + interval { late += 1 }
            sleepUntil(due)
            let texts = try entry.pixels.withUnsafeBytes { bytes in
                try decode(FrameView(width: ScannerCorpus.width, height: ScannerCorpus.height, luma: bytes, index: index))
            }
            if judge(texts, expected: entry.caseIndex.map { cases[$0].text }), let caseIndex = entry.caseIndex {
                read[caseIndex] = true
            }
        }
        return ((processCPUSeconds() - cpu) * 1000 / Double(stream.count), read)
    }
    progress("hard cases: \(stream.count) frames at 30 fps through zbar alone, then through the pipeline")
    let streamZbar = try QRDecoder()
    let zbarPaced = try paced { try streamZbar.decode($0).codes.map(\.text) }
    let pipeline = try ReadingPipeline(clock: .threadCPUTime)
    let pipelinePaced = try paced { try pipeline.decode($0).codes.map(\.text) }

    // Decoys through every decoder: 30 frames each through the pipeline, so every second try runs.
    let decoyPipeline = try ReadingPipeline(clock: .threadCPUTime)
    var decoyFrames = 0
    for decoy in decoys {
        try withCorpusFrame(decoy.image) { frame in
            _ = judge(try zbar.decode(frame).codes.map(\.text), expected: nil)
            for inverted in [false, true] {
                if case .decoded(let text) = try zxing.read(frame, inverted: inverted) { _ = judge([text], expected: nil) }
            }
            for _ in 0..<30 { _ = judge(try decoyPipeline.decode(frame).codes.map(\.text), expected: nil) }
            decoyFrames += 1
        }
    }

    let classes = HardCaseClass.allCases.map { kind in
        let indices = cases.indices.filter { cases[$0].kind == kind }
        return HardCaseClassFigures(kind: kind.rawValue, cases: indices.count,
                                    zbar: indices.filter { zbarRead[$0] }.count,
                                    zxingUnbudgeted: indices.filter { zxingRead[$0] }.count,
                                    pipeline: indices.filter { pipelinePaced.read[$0] }.count)
    }
    let beyond = cases.indices.filter { !zbarRead[$0] && zxingRead[$0] }
    let recovered = beyond.filter { pipelinePaced.read[$0] }.count
    let lost = cases.indices.filter { zbarRead[$0] && !pipelinePaced.read[$0] }.count
    let fraction = beyond.isEmpty ? 1 : Double(recovered) / Double(beyond.count)
    let ratio = pipelinePaced.cpuPerFrame / max(zbarPaced.cpuPerFrame, 1e-9)
    let (recoveredGoal, ratioGoal) = (0.8, 1.3)
    progress("hard cases: pipeline reads \(pipelinePaced.read.filter { $0 }.count); recovered \(recovered) of \(beyond.count); "
             + "CPU ratio \(format(ratio, 3)); \(falseReads) false reads")
    return HardCaseFigures(
        cases: cases.count, distinctFramesPerCase: distinctFrames, holdFrames: hold, gapFrames: gap, streamFrames: stream.count,
        zxingVersion: ZXingReader.version,
        zbarMillisecondsPerCall: Double(zbarNanoseconds) / 1e6 / Double(max(1, zbarCalls)),
        zxingMillisecondsPerCall: Double(zxingNanoseconds) / 1e6 / Double(max(1, zxingCalls)), classes: classes,
        zbarReads: zbarRead.filter { $0 }.count, zxingUnbudgetedReads: zxingRead.filter { $0 }.count,
        zxingBeyondZbar: beyond.count, pipelineRecovered: recovered, pipelineReads: pipelinePaced.read.filter { $0 }.count,
        zbarReadsLost: lost, recoveredFraction: fraction,
        zbarCPUMillisecondsPerFrame: zbarPaced.cpuPerFrame, pipelineCPUMillisecondsPerFrame: pipelinePaced.cpuPerFrame,
        cpuRatio: ratio, secondTries: pipeline.counters.secondTries, lateFrames: late, falseReads: falseReads,
        decoyFrames: decoyFrames, recoveredGoal: recoveredGoal, cpuRatioGoal: ratioGoal,
        goalsMet: fraction >= recoveredGoal && ratio <= ratioGoal && falseReads == 0 && lost == 0)
}

/// The image as a frame, with untyped throws (a typed-throws closure here crashes Swift 6.3.1's
/// optimiser, ConsumeOperatorCopyableValuesChecker, in release builds).
private func withCorpusFrame(_ image: GreyImage, _ body: (FrameView) throws -> Void) rethrows {
    try image.pixels.withUnsafeBytes { bytes in
        try body(FrameView(width: image.width, height: image.height, luma: bytes, index: 0))
    }
}

func hardCaseReport(_ h: HardCaseFigures) -> String {
    func met(_ value: Bool) -> String { value ? "met" : "NOT met" }
    var out = "hard cases (issue 15; zxing-cpp \(h.zxingVersion)): \(h.cases) passes, \(h.distinctFramesPerCase) distinct frames "
        + "each, held \(h.holdFrames) frames then \(h.gapFrames) empty, \(h.streamFrames) frames at 30 fps\n"
    out += "".padding(toLength: 18, withPad: " ", startingAt: 0) + "cases".leftPadded(6) + "zbar".leftPadded(7)
        + "zxing*".leftPadded(8) + "pipeline".leftPadded(10) + "\n"
    for row in h.classes {
        out += "  " + row.kind.padding(toLength: 16, withPad: " ", startingAt: 0) + String(row.cases).leftPadded(6)
            + String(row.zbar).leftPadded(7) + String(row.zxingUnbudgeted).leftPadded(8) + String(row.pipeline).leftPadded(10) + "\n"
    }
    out += "  " + "all".padding(toLength: 16, withPad: " ", startingAt: 0) + String(h.cases).leftPadded(6)
        + String(h.zbarReads).leftPadded(7) + String(h.zxingUnbudgetedReads).leftPadded(8) + String(h.pipelineReads).leftPadded(10) + "\n"
    out += "  (zxing* = zxing-cpp with no budget, every distinct frame, both polarities); thread CPU per call: zbar "
        + "\(format(h.zbarMillisecondsPerCall, 3)) ms, zxing \(format(h.zxingMillisecondsPerCall, 3)) ms (one polarity)\n"
    out += "  recovered: \(h.pipelineRecovered) of the \(h.zxingBeyondZbar) cases zbar misses and zxing* reads = "
        + "\(format(h.recoveredFraction, 3)); cases zbar reads and the pipeline did not: \(h.zbarReadsLost)\n"
    out += "  CPU per frame at 30 fps (process): zbar alone \(format(h.zbarCPUMillisecondsPerFrame, 3)) ms, pipeline "
        + "\(format(h.pipelineCPUMillisecondsPerFrame, 3)) ms = \(format(h.cpuRatio, 3)) x; \(h.secondTries) second tries; "
        + "\(h.lateFrames) late frames\n"
    out += "  false reads: \(h.falseReads) (the stream, and \(h.decoyFrames) decoys through every decoder)\n"
    out += "goal: recovered ≥ \(format(h.recoveredGoal, 2)), CPU ≤ \(format(h.cpuRatioGoal, 2)) x zbar, 0 false reads, "
        + "nothing zbar reads lost: \(met(h.goalsMet))\n"
    return out
}
