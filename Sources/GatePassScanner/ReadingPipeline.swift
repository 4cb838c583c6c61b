import Foundation

/// How the reading pipeline measures what each decoder costs: a reading in nanoseconds that
/// only goes up. Passed in, so that tests script it and never depend on the machine's speed.
public struct DecoderCostClock: Sendable {
    /// Nanoseconds since any fixed point.
    public let nanoseconds: @Sendable () -> UInt64

    public init(nanoseconds: @escaping @Sendable () -> UInt64) {
        self.nanoseconds = nanoseconds
    }

    /// CPU time of the calling thread (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`): what the
    /// budget is about is the gate machine's CPU, and a thread preempted by the other core's
    /// work should not be charged for the wait. The kiosk, `scan` and the console use it.
    public static let threadCPUTime = DecoderCostClock {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}

/// zbar on every frame; on frames zbar cannot read, a second try within a CPU budget: zxing-cpp
/// on the frame, zxing-cpp on its negative (light-on-dark codes: phones in dark mode), zbar on
/// the negative.
///
/// ```swift
/// let pipeline = try ReadingPipeline(clock: .threadCPUTime)
/// let decoded = try pipeline.decode(frame)   // the same DecodedFrame QRDecoder gives
/// ```
///
/// ## The budget
/// zbar's cost on each frame earns the second tries a credit of `secondaryShare` (0.25) of it;
/// a frame zbar read nothing in gets one second try while the credit is not negative, and
/// that try's cost is taken off. So over any stretch the second tries cost at most a quarter
/// of what zbar costs, plus one try: on an empty scene the pipeline costs about 1.25× zbar
/// alone, never 2× as zbar's own inverted test would. Unspent credit (a code zbar reads held
/// in view) is capped at two tries' worth, so a long read does not bank a burst.
///
/// ## Which try
/// The tries take turns: zxing, zxing on the negative, zbar on the negative. A try that
/// decoded something is repeated on the next frame instead of moving on (the code is probably
/// still in view, in that polarity), and so is one in which zxing located a code it could not
/// decode yet (``ZXingOutcome/foundNotDecoded``), for up to two frames in a row.
///
/// What zbar reads is returned as zbar reads it; the second tries only ever add reads on
/// frames where zbar read nothing. Not thread-safe, like ``QRDecoder``.
public final class ReadingPipeline {
    /// The second tries, in the order they take turns: cheapest first. A zxing read of a
    /// 640×480 frame costs about a tenth of a zbar frame (`gatepass-bench scanner`: 0.9–1.0 ms
    /// against 10–11 ms of CPU), zbar on the negative a whole zbar frame.
    public enum SecondTry: Int, Sendable, CaseIterable {
        case zxing, zxingNegative, zbarNegative
    }

    /// What the pipeline did so far: for logs and the bench.
    public struct Counters: Sendable, Equatable {
        public var frames = 0
        public var framesReadByZbar = 0
        public var secondTries = 0
        public var framesReadBySecondTry = 0
    }

    public let secondaryShare: Double
    public private(set) var counters = Counters()

    private let clock: DecoderCostClock
    private let zbar: QRDecoder
    /// A scanner of its own for negatives, so the two polarities never share zbar's cache.
    private let zbarForNegatives: QRDecoder
    private let zxing = ZXingReader()
    /// The frame's negative, filled when a try needs it, reused from frame to frame.
    private var negative: [UInt8] = []
    private var credit: Double = 0
    private var lastTryCost: Double = 0
    private var nextTry: SecondTry = .zxing
    /// Frames in a row in which the current try located a code without decoding it.
    private var unreadSightings = 0
    /// How many such frames the same try is repeated for before the next takes its turn.
    static let unreadSightingsFollowed = 2

    /// - Parameters:
    ///   - clock: what costs are measured with (``DecoderCostClock/threadCPUTime`` in the field).
    ///   - secondaryShare: the second tries' share of zbar's cost, over 0.
    /// - Throws: ``ScannerError/decoder(_:)`` if zbar cannot be set up.
    public init(clock: DecoderCostClock, secondaryShare: Double = 0.25) throws(ScannerError) {
        precondition(secondaryShare > 0, "the second tries need a share of zbar's cost")
        self.clock = clock
        self.secondaryShare = secondaryShare
        zbar = try QRDecoder()
        zbarForNegatives = try QRDecoder()
    }

    /// Decodes the QR codes in one frame: zbar's reads, or else one second try's within the budget.
    ///
    /// - Throws: ``ScannerError/decoder(_:)`` if a decoder fails (not for a frame without a code).
    public func decode(_ frame: FrameView) throws(ScannerError) -> DecodedFrame {
        counters.frames += 1
        let started = clock.nanoseconds()
        let byZbar = try zbar.decode(frame)
        let zbarCost = Double(clock.nanoseconds() &- started)
        credit = min(credit + secondaryShare * zbarCost, 2 * lastTryCost)
        guard byZbar.codes.isEmpty else {
            counters.framesReadByZbar += 1
            return byZbar
        }
        guard credit >= 0, frame.width > 0, frame.height > 0 else { return byZbar }
        let wall = ContinuousClock.now
        let tryStarted = clock.nanoseconds()
        let attempt = nextTry
        let (codes, sawCode) = try secondTry(attempt, on: frame)
        lastTryCost = Double(clock.nanoseconds() &- tryStarted)
        credit -= lastTryCost
        counters.secondTries += 1
        if !codes.isEmpty { counters.framesReadBySecondTry += 1 }
        // A read is followed as long as it lasts; a code located but not decoded only for a
        // few frames, so that one zxing keeps seeing but cannot read never starves the others.
        unreadSightings = !codes.isEmpty ? 0 : (sawCode ? unreadSightings + 1 : 0)
        let stay = !codes.isEmpty || (sawCode && unreadSightings <= Self.unreadSightingsFollowed)
        if !stay {
            unreadSightings = 0
            nextTry = SecondTry(rawValue: (attempt.rawValue + 1) % SecondTry.allCases.count)!
        }
        return DecodedFrame(frameIndex: frame.index, codes: codes, milliseconds: byZbar.milliseconds + Self.milliseconds(since: wall))
    }

    /// Decodes a still picture with every try there is: zbar, then each second try in turn
    /// until one reads — no budget. For image files (`gatepass scan --image`), where each
    /// picture is seen once and no frame rate is to be kept.
    public func decodeWithEveryTry(_ frame: FrameView) throws(ScannerError) -> DecodedFrame {
        counters.frames += 1
        let byZbar = try zbar.decode(frame)
        guard byZbar.codes.isEmpty, frame.width > 0, frame.height > 0 else {
            if !byZbar.codes.isEmpty { counters.framesReadByZbar += 1 }
            return byZbar
        }
        let wall = ContinuousClock.now
        var codes: [DecodedCode] = []
        for attempt in SecondTry.allCases where codes.isEmpty {
            counters.secondTries += 1
            codes = try secondTry(attempt, on: frame).codes
        }
        if !codes.isEmpty { counters.framesReadBySecondTry += 1 }
        return DecodedFrame(frameIndex: frame.index, codes: codes, milliseconds: byZbar.milliseconds + Self.milliseconds(since: wall))
    }

    private static func milliseconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    }

    /// Forgets what zbar's caches hold (``QRDecoder/resetCache()``), e.g. after a camera replug.
    public func resetCache() {
        zbar.resetCache()
        zbarForNegatives.resetCache()
    }

    /// Runs one try; `sawCode` when it read a code or zxing located one.
    private func secondTry(_ attempt: SecondTry, on frame: FrameView) throws(ScannerError) -> (codes: [DecodedCode], sawCode: Bool) {
        switch attempt {
        case .zbarNegative:
            let codes = try withNegative(of: frame) { negative throws(ScannerError) in try zbarForNegatives.decode(negative).codes }
            return (codes, !codes.isEmpty)
        case .zxing:
            return Self.codes(from: try zxing.read(frame, inverted: false))
        case .zxingNegative:
            let outcome = try withNegative(of: frame) { negative throws(ScannerError) in try zxing.read(negative, inverted: false) }
            return Self.codes(from: outcome)
        }
    }

    private static func codes(from outcome: ZXingOutcome) -> (codes: [DecodedCode], sawCode: Bool) {
        switch outcome {
        case .decoded(let text): ([DecodedCode(text: text)], true)
        case .foundNotDecoded: ([], true)
        case .nothingFound: ([], false)
        }
    }

    /// Calls `body` with the frame's negative (255 − each byte), in the reused buffer.
    private func withNegative<Value>(of frame: FrameView,
                                      _ body: (FrameView) throws(ScannerError) -> Value) throws(ScannerError) -> Value {
        let count = frame.width * frame.height
        if negative.count != count { negative = [UInt8](repeating: 0, count: count) }
        negative.withUnsafeMutableBytes { target in
            for index in 0..<count { target[index] = 255 &- frame.luma[index] }
        }
        // withUnsafeBytes rethrows untyped errors: carry the typed one out in a Result.
        let outcome = negative.withUnsafeBytes { bytes in
            Result { () throws(ScannerError) in
                try body(FrameView(width: frame.width, height: frame.height, luma: bytes, index: frame.index, label: frame.label))
            }
        }
        return try outcome.get()
    }
}
