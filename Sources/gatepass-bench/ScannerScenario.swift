import CZBar
import CurlHTTP
import Foundation
import GatePassAPI
import GatePassClient
import GatePassCommands
import GatePassCore
import GatePassScanner
import GatePassServer
import LoopbackHTTP
import QRCode
import Synchronization

// MARK: - The scanner scenario (issue 5: the kiosk's scanner)
//
// A library of distinct 640×480 grey frames (a fixed camera at a gate: a few lit scenes, noise,
// visitors holding up a pass for a few frames, empty frames between) is decoded
//   1. by our pipeline (`QRDecoder.decode`) and by zbar called directly with the same
//      configuration, interleaved frame by frame (anchor: direct zbar);
//   2. from a Y4M recording of the same frames through Y4MSource → QRDecoder → CodeDeduplicator,
//      as fast as possible (anchor: direct zbar over the frames in memory, before and after);
//   3. paced at 30 fps for a while, measuring the process's CPU (anchor: direct zbar, paced alike);
//   4. for `--frames` frames, reading the RSS before and after;
// then a real server is started in-process and a KioskRunner fed paced frames checks `--passes`
// visitors in; each decision line is timed from the hand-off of the first frame with that
// visitor's code (anchor: a plain check-in POST sent in the gap after each visitor).

struct ScannerDecodeFigures: Codable, Sendable {
    var samples: Int
    var medianMilliseconds: Double
    var p95Milliseconds: Double
    var meanMilliseconds: Double
    var maxMilliseconds: Double
}

struct ScannerReport: Codable, Sendable {
    var cores: Int
    var zbarVersion: String
    // The frame library.
    var width: Int
    var height: Int
    var distinctFrames: Int
    var framesWithCode: Int
    var emptyFrames: Int
    var visitsInLibrary: Int
    var y4mBytes: Int
    // 1. Decode, interleaved.
    var rounds: Int
    var pipelineDecode: ScannerDecodeFigures
    var zbarDecode: ScannerDecodeFigures
    var pipelineDecodeWithCode: ScannerDecodeFigures
    var zbarDecodeWithCode: ScannerDecodeFigures
    var pipelineDecodeEmpty: ScannerDecodeFigures
    var zbarDecodeEmpty: ScannerDecodeFigures
    /// QRDecoder's own `milliseconds` (measured inside `decode`).
    var pipelineSelfReportedMedianMilliseconds: Double
    /// Decode + `texts` + CodeDeduplicator.observe, per frame.
    var pipelineWithDedupeMedianMilliseconds: Double
    var decodeRatio: Double
    var decodeP95Ratio: Double
    /// Median over samples of (pipeline ms / zbar ms) for the same frame in the same round.
    var pairedMedianRatio: Double
    /// Frames with a code where the pipeline read it (fraction), and where pipeline and direct zbar disagreed.
    var pipelineHitRate: Double
    var zbarHitRate: Double
    var disagreements: Int
    var falseReads: Int
    // 2. Throughput from Y4M.
    var y4mFrames: Int
    var y4mFramesPerSecond: Double
    var y4mMillisecondsPerFrame: Double
    var anchorZbarFramesPerSecondBefore: Double
    var anchorZbarFramesPerSecondAfter: Double
    var anchorZbarMillisecondsPerFrame: Double
    var y4mRatioToZbar: Double
    var y4mNewCodes: Int
    // 3. CPU at 30 fps.
    var pacedFramesPerSecond: Double
    var pacedSeconds: Double
    var pacedFrames: Int
    var pacedLateFrames: Int
    var pacedCPUPercent: Double
    var pacedDecodePercent: Double
    var anchorPacedZbarCPUPercent: Double
    var pacedCPURatioToZbar: Double
    // 4. Memory.
    var rssFrames: Int
    var rssBeforeKiB: Int
    var rssAfterWarmUpKiB: Int
    var rssAfterKiB: Int
    var rssGrowthKiB: Int
    var rssGrowthAfterWarmUpKiB: Int
    var rssBytesPerFrameAfterWarmUp: Double
    var rssSamplesKiB: [Int]
    var rssRunFramesPerSecond: Double
    var rssNewCodes: Int
    /// Heap in use (malloc_info) at the same three points, and its growth per frame after the
    /// warm-up; nil without glibc.
    var heapBeforeBytes: Int?
    var heapAfterWarmUpBytes: Int?
    var heapAfterBytes: Int?
    var heapBytesPerFrameAfterWarmUp: Double?
    /// Anchors: heap growth per frame of direct zbar over the frames in memory, one scanner for
    /// the whole run, and the scanner recreated every 1,000 frames.
    var memoryAnchorFrames: Int
    var memoryAnchorZbarBytesPerFrame: Double?
    var memoryAnchorZbarRecreatedBytesPerFrame: Double?
    // 5. Kiosk decision latency.
    var passes: Int
    var decisions: Int
    var missingDecisions: Int
    var admitted: Int
    var firstFrameMisses: Int
    var latencyP50Milliseconds: Double
    var latencyP95Milliseconds: Double
    var latencyMaxMilliseconds: Double
    /// The decode of the first frame with the code (hand-off → codes out).
    var decodeP50Milliseconds: Double
    /// Decode done → decision line (dedupe, queue hop, client core check-in, line).
    var afterDecodeP50Milliseconds: Double
    var afterDecodeP95Milliseconds: Double
    var anchorCheckIns: Int
    var anchorCheckInP50Milliseconds: Double
    var anchorCheckInP95Milliseconds: Double
    var latencyP50RatioToAnchor: Double
    var latencyP95RatioToAnchor: Double
    var kioskFramesRead: Int
    var kioskLateFrames: Int
    var kioskCPUPercent: Double
    // Goals.
    var decodeRatioGoal: Double
    var decodeRatioGoalMet: Bool
    var latencyGoalMilliseconds: Double
    var latencyGoalMet: Bool
    /// On the heap in use after the warm-up; without glibc on RSS, nil when fewer than 20,000
    /// frames ran after the warm-up.
    var rssGoalMet: Bool?
}

// MARK: - Frames

/// SplitMix64: fast, seedable, good enough for noise.
struct ScannerRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One library frame: its Y plane and the code drawn in it (nil for an empty frame).
struct ScannerFrame {
    var pixels: [UInt8]
    var code: String?
}

enum ScannerFrames {
    static let width = 640
    static let height = 480

    /// A few lit scenes of the same gate: gradient, a door, posts, a sign; the camera does not move.
    static func scenes(_ random: inout ScannerRandom) -> [[UInt8]] {
        (0..<4).map { scene in
            var pixels = [UInt8](repeating: 0, count: width * height)
            let brightness = 90 + 25 * scene
            for y in 0..<height {
                for x in 0..<width {
                    let value = brightness + 60 * y / height + Int(18 * sin(Double(x) / 37 + Double(scene)))
                    pixels[y * width + x] = UInt8(clamping: value)
                }
            }
            var shapes = ScannerRandom(seed: 7)   // the same furniture in every scene, lit differently
            for _ in 0..<12 {
                let w = 20 + Int(shapes.next() % 180), h = 20 + Int(shapes.next() % 220)
                let x0 = Int(shapes.next() % UInt64(width - w)), y0 = Int(shapes.next() % UInt64(height - h))
                let grey = UInt8(clamping: 40 + Int(shapes.next() % 170) + 10 * scene)
                for y in y0..<(y0 + h) {
                    for x in x0..<(x0 + w) { pixels[y * width + x] = grey }
                }
            }
            // Thin dark lines: a door frame, railings.
            for line in 0..<6 {
                let x = 40 + line * 105
                for y in 0..<height { pixels[y * width + x] = 25; pixels[y * width + x + 1] = 30 }
            }
            _ = random.next()
            return pixels
        }
    }

    /// Draws a frame: the scene, optionally a pass (quiet zone included), then uniform noise.
    static func draw(scene: [UInt8], code: QRCode?, module: Int, origin: (x: Int, y: Int), dark: UInt8, light: UInt8,
                     noise: Int, random: inout ScannerRandom) -> [UInt8] {
        var pixels = scene
        pixels.withUnsafeMutableBufferPointer { pixels in
            if let code {
                let quiet = 4
                let side = (code.width + 2 * quiet) * module
                for y in origin.y..<(origin.y + side) {
                    for x in origin.x..<(origin.x + side) { pixels[y * width + x] = light }
                }
                for row in 0..<code.width {
                    for column in 0..<code.width where code.isDark(x: column, y: row) {
                        let top = origin.y + (quiet + row) * module, left = origin.x + (quiet + column) * module
                        for dy in 0..<module {
                            for dx in 0..<module { pixels[(top + dy) * width + left + dx] = dark }
                        }
                    }
                }
            }
            if noise > 0 {
                let span = UInt64(2 * noise + 1)
                var index = 0
                while index < pixels.count {
                    var bits = random.next()
                    // Eight noise values from one draw.
                    for _ in 0..<8 where index < pixels.count {
                        let delta = Int((bits & 0xFF) % span) - noise
                        bits >>= 8
                        pixels[index] = UInt8(clamping: Int(pixels[index]) + delta)
                        index += 1
                    }
                }
            }
        }
        return pixels
    }

    static func randomShortId(_ random: inout ScannerRandom) -> String {
        String((0..<8).map { _ in ShortID.alphabet[Int(random.next() % 32)] })
    }

    /// `count` distinct frames in camera order: visits of 6–14 frames with one pass held up
    /// (module 3–6 px, drifting a few pixels, its own contrast) between runs of 2–10 empty
    /// frames; every frame gets its own uniform sensor noise of ±2…±7 grey levels.
    static func library(count: Int) throws -> (frames: [ScannerFrame], visits: Int) {
        var random = ScannerRandom(seed: 0x6A7E_9A55)
        let scenes = scenes(&random)
        var frames: [ScannerFrame] = []
        frames.reserveCapacity(count)
        var visits = 0
        while frames.count < count {
            let scene = scenes[Int(random.next() % UInt64(scenes.count))]
            for _ in 0..<(2 + Int(random.next() % 9)) where frames.count < count {
                frames.append(ScannerFrame(pixels: draw(scene: scene, code: nil, module: 0, origin: (0, 0), dark: 0, light: 0,
                                                        noise: 2 + Int(random.next() % 6), random: &random), code: nil))
            }
            guard frames.count < count else { break }
            visits += 1
            let text = "GP1:" + randomShortId(&random)
            let code = try QRCode(text)
            let module = 3 + Int(random.next() % 4)
            let side = (code.width + 8) * module
            let drift = 6
            var x = drift + Int(random.next() % UInt64(width - side - 2 * drift))
            var y = drift + Int(random.next() % UInt64(height - side - 2 * drift))
            let dark = UInt8(20 + random.next() % 50), light = UInt8(185 + random.next() % 55)
            let noise = 2 + Int(random.next() % 6)
            for _ in 0..<(6 + Int(random.next() % 9)) where frames.count < count {
                x = min(max(x + Int(random.next() % 5) - 2, 0), width - side)
                y = min(max(y + Int(random.next() % 5) - 2, 0), height - side)
                frames.append(ScannerFrame(pixels: draw(scene: scene, code: code, module: module, origin: (x, y), dark: dark,
                                                        light: light, noise: noise, random: &random), code: text))
            }
        }
        return (frames, visits)
    }

    /// Writes the frames as a mono Y4M recording at 30 fps; returns its size.
    static func writeY4M(_ frames: [ScannerFrame], to path: String) throws -> Int {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw BenchFailure("cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var total = 0
        func put(_ bytes: UnsafeRawBufferPointer) throws {
            var done = 0
            while done < bytes.count {
                let wrote = write(descriptor, bytes.baseAddress! + done, bytes.count - done)
                guard wrote > 0 else { throw BenchFailure("writing \(path): \(String(cString: strerror(errno)))") }
                done += wrote
            }
            total += bytes.count
        }
        try Array("YUV4MPEG2 W\(width) H\(height) F30:1 Ip A1:1 Cmono\n".utf8).withUnsafeBytes(put)
        let marker = Array("FRAME\n".utf8)
        for frame in frames {
            try marker.withUnsafeBytes(put)
            try frame.pixels.withUnsafeBytes(put)
        }
        return total
    }
}

// MARK: - zbar, called directly

/// zbar configured exactly as QRDecoder configures it (QR only, inverted test off, cache on,
/// one Y800 image reused, data set in place), with nothing of ours around `zbar_scan_image`
/// but a walk over the unfiltered results counting QR symbols (no strings made).
final class DirectZBar {
    let scanner: OpaquePointer
    let image: OpaquePointer
    var width = -1
    var height = -1

    init() throws {
        guard let scanner = zbar_image_scanner_create(), let image = zbar_image_create() else {
            throw BenchFailure("zbar could not create its scanner")
        }
        self.scanner = scanner
        self.image = image
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_ENABLE, 1)
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_TEST_INVERTED, 0)
        zbar_image_scanner_enable_cache(scanner, 1)
        zbar_image_set_format(image, 0x3030_3859)
    }

    deinit {
        zbar_image_scanner_recycle_image(scanner, image)
        zbar_image_set_data(image, nil, 0, nil)
        zbar_image_destroy(image)
        zbar_image_scanner_destroy(scanner)
    }

    /// Scans one Y800 frame; returns the number of QR symbols in the unfiltered results.
    @inline(never)
    func scan(_ pixels: UnsafeRawBufferPointer, width: Int, height: Int) -> Int {
        if width != self.width || height != self.height {
            zbar_image_set_size(image, UInt32(width), UInt32(height))
            self.width = width
            self.height = height
        }
        zbar_image_set_data(image, pixels.baseAddress, UInt(width * height), { _ in })
        let status = zbar_scan_image(scanner, image)
        zbar_image_set_data(image, nil, 0, nil)
        guard status >= 0, let results = zbar_image_scanner_get_results(scanner) else { return 0 }
        var count = 0
        var symbol = zbar_symbol_set_first_unfiltered(results)
        while let current = symbol {
            if zbar_symbol_get_type(current) == ZBAR_QRCODE { count += 1 }
            symbol = zbar_symbol_next(current)
        }
        return count
    }

    /// The first QR text of the last scan (for checks outside the timed path).
    func lastText() -> String? {
        guard let results = zbar_image_scanner_get_results(scanner) else { return nil }
        var symbol = zbar_symbol_set_first_unfiltered(results)
        while let current = symbol {
            if zbar_symbol_get_type(current) == ZBAR_QRCODE, let data = zbar_symbol_get_data(current) {
                return String(cString: data)
            }
            symbol = zbar_symbol_next(current)
        }
        return nil
    }
}

// MARK: - Measuring

/// Removes the scratch folder. SQLite connections of the stopped server and kiosk may still be
/// closing (deleting their -wal/-shm files) when this runs, which can make one removal fail
/// half-way; so it is tried again a few times.
func removeScratch(_ directory: String) {
    for attempt in 1...10 {
        do {
            try FileManager.default.removeItem(atPath: directory)
            return
        } catch {
            guard FileManager.default.fileExists(atPath: directory) else { return }
            if attempt == 10 { progress("could not remove \(directory): \(error)") }
            Thread.sleep(forTimeInterval: 0.2)
        }
    }
}

/// Bytes of heap in use (glibc's `malloc_info`, summed over every arena: memory obtained from
/// the system, less the free chunks, plus chunks in use that are mmapped); nil without glibc.
/// Exact to the byte, unlike RSS, which moves in 4 KiB pages and does not grow while freed
/// memory of an earlier phase is being reused. `malloc_info` is looked up at run time
/// (malloc.h is not part of the Glibc module).
func heapInUseBytes() -> Int? {
    typealias MallocInfo = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
    guard let symbol = dlsym(nil, "malloc_info") else { return nil }
    var buffer: UnsafeMutablePointer<CChar>?
    var length = 0
    guard let stream = open_memstream(&buffer, &length) else { return nil }
    let status = unsafeBitCast(symbol, to: MallocInfo.self)(0, stream)
    fclose(stream)
    defer { free(buffer) }
    guard status == 0, let buffer else { return nil }
    let text = String(cString: buffer)
    // The totals over every arena follow the last </heap>.
    let totals = text.range(of: "</heap>", options: .backwards).map { text[$0.upperBound...] } ?? text[...]
    func sizeAttribute(_ prefix: String) -> Int? {
        guard let start = totals.range(of: prefix),
              let open = totals[start.upperBound...].range(of: "size=\""),
              let close = totals[open.upperBound...].firstIndex(of: "\"") else { return nil }
        return Int(totals[open.upperBound..<close])
    }
    guard let current = sizeAttribute("<system type=\"current\""), let fast = sizeAttribute("<total type=\"fast\""),
          let rest = sizeAttribute("<total type=\"rest\"") else { return nil }
    return current - fast - rest + (sizeAttribute("<total type=\"mmap\"") ?? 0)
}

func residentKiB() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.dropFirst("VmRSS:".count).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") ?? -1
    }
    return -1
}

func decodeFigures(_ values: [Double]) -> ScannerDecodeFigures {
    let sorted = values.sorted()
    return ScannerDecodeFigures(samples: sorted.count, medianMilliseconds: eventsPercentile(sorted, 0.5),
                                p95Milliseconds: eventsPercentile(sorted, 0.95),
                                meanMilliseconds: sorted.isEmpty ? 0 : sorted.reduce(0, +) / Double(sorted.count),
                                maxMilliseconds: sorted.last ?? 0)
}

func sleepUntil(_ deadline: UInt64) {
    let now = monotonicNanoseconds()
    guard deadline > now else { return }
    var request = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &request, nil) == EINTR {}
}

/// Library frames as a camera hands them over: in order, cycling, optionally paced.
final class LibraryFrameSource: FrameSource {
    let frames: [ScannerFrame]
    let total: Int
    let interval: UInt64?
    var next = 0
    var start: UInt64 = 0
    var late = 0

    init(_ frames: [ScannerFrame], total: Int, framesPerSecond: Double?) {
        self.frames = frames
        self.total = total
        interval = framesPerSecond.map { UInt64(1e9 / $0) }
    }

    func withNextFrame(_ body: (FrameView) throws -> Void) throws -> Bool {
        guard next < total else { return false }
        if let interval {
            if next == 0 { start = monotonicNanoseconds() }
            let due = start + UInt64(next) * interval
            if monotonicNanoseconds() > due + interval { late += 1 }
            sleepUntil(due)
        }
        let index = next
        next += 1
        try frames[index % frames.count].pixels.withUnsafeBytes { bytes in
            try body(FrameView(width: ScannerFrames.width, height: ScannerFrames.height, luma: bytes, index: index))
        }
        return true
    }
}

// MARK: - The kiosk's output, timestamped

final class TimestampingTerminal: Terminal {
    let lines = Mutex<[(at: UInt64, text: String)]>([])
    func out(_ text: String) {
        let now = monotonicNanoseconds()
        lines.withLock { $0.append((now, text)) }
    }
    func err(_ text: String) { progress("kiosk: " + text) }
    func readLine(prompt: String) -> String? { nil }
}

/// The kiosk's camera: per visitor, `hold` frames with the pass, then `gap` empty frames, at 30 fps.
/// Records when the first frame of each visitor is handed to the frame loop.
final class KioskFrameSource: FrameSource {
    let passFrames: [[UInt8]]
    let emptyFrames: [[UInt8]]
    let hold: Int
    let gap: Int
    let interval: UInt64
    let start: UInt64
    var next = 0
    var late = 0
    /// Per visitor: hand-off time of its first frame.
    var handOff: [UInt64]

    init(passFrames: [[UInt8]], emptyFrames: [[UInt8]], hold: Int, gap: Int, framesPerSecond: Double, start: UInt64) {
        self.passFrames = passFrames
        self.emptyFrames = emptyFrames
        self.hold = hold
        self.gap = gap
        interval = UInt64(1e9 / framesPerSecond)
        self.start = start
        handOff = [UInt64](repeating: 0, count: passFrames.count)
    }

    var period: Int { hold + gap }
    var total: Int { passFrames.count * period + gap }

    func withNextFrame(_ body: (FrameView) throws -> Void) throws -> Bool {
        guard next < total else { return false }
        let due = start + UInt64(next) * interval
        if monotonicNanoseconds() > due + interval { late += 1 }
        sleepUntil(due)
        let index = next
        next += 1
        // A gap of empty frames first, so the first visitor arrives at a running loop.
        let position = index - gap
        let visitor = position >= 0 ? position / period : -1
        let inHold = position >= 0 && position % period < hold && visitor < passFrames.count
        let pixels = inHold ? passFrames[visitor] : emptyFrames[index % emptyFrames.count]
        if inHold && position % period == 0 { handOff[visitor] = monotonicNanoseconds() }
        try pixels.withUnsafeBytes { bytes in
            try body(FrameView(width: ScannerFrames.width, height: ScannerFrames.height, luma: bytes, index: index))
        }
        return true
    }
}

// MARK: - The scenario

func runScannerScenario(_ options: Options) throws -> ScannerReport {
    let cores = ProcessInfo.processInfo.activeProcessorCount
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("gatepass-bench-scanner-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { removeScratch(directory) }
    let version: String = {
        var major: UInt32 = 0, minor: UInt32 = 0, patch: UInt32 = 0
        zbar_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }()

    // 1. The frame library and its recording.
    let drawStart = monotonicNanoseconds()
    let (library, visits) = try ScannerFrames.library(count: options.distinct)
    let withCode = library.filter { $0.code != nil }.count
    let y4mPath = directory + "/gate.y4m"
    let y4mBytes = try ScannerFrames.writeY4M(library, to: y4mPath)
    progress("drew \(library.count) frames (\(withCode) with a pass, \(visits) visits, \(library.count - withCode) empty) "
             + "and wrote \(y4mBytes >> 20) MiB of Y4M in \(format(Double(monotonicNanoseconds() - drawStart) / 1e9, 2)) s")

    // 2. Decode: our pipeline and zbar directly, interleaved frame by frame.
    let decoder = try QRDecoder()
    let direct = try DirectZBar()
    var deduplicator = CodeDeduplicator(cooldown: 3)
    var pipelineTimes: [Double] = [], zbarTimes: [Double] = [], selfReported: [Double] = [], withDedupe: [Double] = []
    var pairedRatios: [Double] = []
    var pipelineCodeTimes: [Double] = [], zbarCodeTimes: [Double] = [], pipelineEmptyTimes: [Double] = [],
        zbarEmptyTimes: [Double] = []
    var pipelineHits = 0, zbarHits = 0, disagreements = 0, falseReads = 0, codeSamples = 0
    let frameTime = Date()
    var clockFrame = 0
    progress("decode: \(options.rounds) timed rounds over \(library.count) frames (one untimed warm-up round), "
             + "QRDecoder and direct zbar alternating which goes first")
    for round in 0...options.rounds {
        for (index, frame) in library.enumerated() {
            var pipelineNanoseconds: UInt64 = 0, zbarNanoseconds: UInt64 = 0, dedupeNanoseconds: UInt64 = 0
            var decoded: DecodedFrame?
            var zbarCount = 0
            try frame.pixels.withUnsafeBytes { bytes in
                let view = FrameView(width: ScannerFrames.width, height: ScannerFrames.height, luma: bytes, index: index)
                func ours() throws {
                    let start = monotonicNanoseconds()
                    let result = try decoder.decode(view)
                    pipelineNanoseconds = monotonicNanoseconds() - start
                    let dedupeStart = monotonicNanoseconds()
                    _ = deduplicator.observe(result.texts, at: frameTime.addingTimeInterval(Double(clockFrame) / 30))
                    dedupeNanoseconds = monotonicNanoseconds() - dedupeStart
                    decoded = result
                }
                func theirs() {
                    let start = monotonicNanoseconds()
                    zbarCount = direct.scan(bytes, width: ScannerFrames.width, height: ScannerFrames.height)
                    zbarNanoseconds = monotonicNanoseconds() - start
                }
                if (index + round) % 2 == 0 {
                    try ours(); theirs()
                } else {
                    theirs(); try ours()
                }
            }
            clockFrame += 1
            guard round > 0, let decoded else { continue }
            let ms = Double(pipelineNanoseconds) / 1e6, zms = Double(zbarNanoseconds) / 1e6
            pipelineTimes.append(ms)
            zbarTimes.append(zms)
            selfReported.append(decoded.milliseconds)
            withDedupe.append(ms + Double(dedupeNanoseconds) / 1e6)
            pairedRatios.append(ms / max(zms, 1e-6))
            if frame.code != nil {
                pipelineCodeTimes.append(ms); zbarCodeTimes.append(zms); codeSamples += 1
            } else {
                pipelineEmptyTimes.append(ms); zbarEmptyTimes.append(zms)
            }
            let texts = decoded.codes.map(\.text)
            if let code = frame.code {
                if texts.contains(code) { pipelineHits += 1 }
                if zbarCount > 0, direct.lastText() == code { zbarHits += 1 }
            }
            if texts.contains(where: { $0 != frame.code }) { falseReads += 1 }
            if texts.count != zbarCount { disagreements += 1 }
        }
    }
    let pipelineDecode = decodeFigures(pipelineTimes), zbarDecode = decodeFigures(zbarTimes)
    let decodeRatio = pipelineDecode.medianMilliseconds / max(zbarDecode.medianMilliseconds, 1e-9)
    progress("decode: pipeline median \(format(pipelineDecode.medianMilliseconds, 3)) ms, zbar median "
             + "\(format(zbarDecode.medianMilliseconds, 3)) ms, ratio \(format(decodeRatio, 3)); "
             + "hit rate \(format(Double(pipelineHits) / Double(max(1, codeSamples)) * 100, 1))%")

    // 3. Throughput from the Y4M recording, between two in-memory direct-zbar anchors.
    func zbarPass(_ passes: Int) -> Double {
        let scanner = try! DirectZBar()
        let start = monotonicNanoseconds()
        var frames = 0
        for _ in 0..<passes {
            for frame in library {
                frame.pixels.withUnsafeBytes { _ = scanner.scan($0, width: ScannerFrames.width, height: ScannerFrames.height) }
                frames += 1
            }
        }
        return Double(frames) / (Double(monotonicNanoseconds() - start) / 1e9)
    }
    let y4mPasses = max(1, 600 / library.count)
    progress("throughput: direct zbar over the frames in memory, then Y4MSource → QRDecoder → CodeDeduplicator "
             + "over the recording (\(y4mPasses)×), then direct zbar again")
    let anchorBefore = zbarPass(y4mPasses)
    var y4mNewCodes = 0
    var y4mFrames = 0
    do {
        let pipelineDecoder = try QRDecoder()
        var dedupe = CodeDeduplicator(cooldown: 3)
        let begin = Date()
        let start = monotonicNanoseconds()
        for _ in 0..<y4mPasses {
            let video = try Y4MSource(path: y4mPath)
            defer { video.close() }
            while try video.withNextFrame({ frame in
                let decoded = try pipelineDecoder.decode(frame)
                y4mNewCodes += dedupe.observe(decoded.texts, at: begin.addingTimeInterval(Double(y4mFrames) / 30)).count
                y4mFrames += 1
            }) {}
        }
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        let rate = Double(y4mFrames) / seconds
        let anchorAfter = zbarPass(y4mPasses)
        let anchorRate = (anchorBefore + anchorAfter) / 2
        progress("throughput: \(format(rate, 1)) frames/s from Y4M; direct zbar \(format(anchorBefore, 1)) / \(format(anchorAfter, 1)) frames/s")

        // 4. CPU at a steady 30 fps: direct zbar paced alike first (anchor), then the pipeline.
        let pacedFrames = max(30, Int(options.scannerSeconds * 30))
        progress("paced: \(pacedFrames) frames at 30 fps through direct zbar, then through QRDecoder + CodeDeduplicator")
        let anchorSource = LibraryFrameSource(library, total: pacedFrames, framesPerSecond: 30)
        let anchorScanner = try DirectZBar()
        var cpu = processCPUSeconds()
        var wall = monotonicNanoseconds()
        while try anchorSource.withNextFrame({ frame in
            _ = anchorScanner.scan(frame.luma, width: frame.width, height: frame.height)
        }) {}
        let anchorCPU = (processCPUSeconds() - cpu) / (Double(monotonicNanoseconds() - wall) / 1e9) * 100
        let pacedSource = LibraryFrameSource(library, total: pacedFrames, framesPerSecond: 30)
        let pacedDecoder = try QRDecoder()
        var pacedDedupe = CodeDeduplicator(cooldown: 3)
        var decodeNanoseconds: UInt64 = 0
        cpu = processCPUSeconds()
        wall = monotonicNanoseconds()
        while try pacedSource.withNextFrame({ frame in
            let start = monotonicNanoseconds()
            let decoded = try pacedDecoder.decode(frame)
            _ = pacedDedupe.observe(decoded.texts, at: Date())
            decodeNanoseconds += monotonicNanoseconds() - start
        }) {}
        let pacedWall = Double(monotonicNanoseconds() - wall) / 1e9
        let pacedCPU = (processCPUSeconds() - cpu) / pacedWall * 100
        progress("paced: pipeline \(format(pacedCPU, 1))% of a core, direct zbar \(format(anchorCPU, 1))%")

        // 5. Memory over many frames: the recording reopened as often as needed.
        progress("memory: \(options.frames) frames through Y4MSource → QRDecoder → CodeDeduplicator")
        let rssBefore = residentKiB()
        let heapBefore = heapInUseBytes()
        var heapAfterWarmUp = heapBefore
        var rssSamples = [rssBefore]
        var rssAfterWarmUp = rssBefore
        // Samples are taken between two passes over the recording (the source just closed), so
        // every one sees the same state; the warm-up ends at the first such point past 1,000 frames.
        var warmUpFrames = 0
        let sampleEvery = max(1, options.frames / 10)
        var nextSample = sampleEvery
        let memoryDecoder = try QRDecoder()
        var memoryDedupe = CodeDeduplicator(cooldown: 3)
        var memoryFrames = 0
        var memoryNewCodes = 0
        let memoryStart = monotonicNanoseconds()
        let memoryBegin = Date()
        var lastReport = memoryStart
        while memoryFrames < options.frames {
            do {
                let video = try Y4MSource(path: y4mPath)
                defer { video.close() }
                while memoryFrames < options.frames, try video.withNextFrame({ frame in
                    let decoded = try memoryDecoder.decode(frame)
                    memoryNewCodes += memoryDedupe.observe(decoded.texts,
                                                           at: memoryBegin.addingTimeInterval(Double(memoryFrames) / 30)).count
                    memoryFrames += 1
                }) {
                    let now = monotonicNanoseconds()
                    if now - lastReport > 30_000_000_000 {
                        lastReport = now
                        progress("memory: \(memoryFrames) frames, RSS \(residentKiB()) KiB")
                    }
                }
            }
            if warmUpFrames == 0, memoryFrames >= min(options.frames, 1000) {
                warmUpFrames = memoryFrames
                rssAfterWarmUp = residentKiB()
                heapAfterWarmUp = heapInUseBytes()
            }
            if memoryFrames >= nextSample, memoryFrames < options.frames {
                rssSamples.append(residentKiB())
                nextSample += sampleEvery
            }
        }
        let memorySeconds = Double(monotonicNanoseconds() - memoryStart) / 1e9
        let rssAfter = residentKiB()
        let heapAfter = heapInUseBytes()
        if rssSamples.last != rssAfter { rssSamples.append(rssAfter) }
        let framesAfterWarmUp = max(1, memoryFrames - warmUpFrames)
        let heapBytesPerFrame: Double? = if let heapAfter, let heapAfterWarmUp {
            Double(heapAfter - heapAfterWarmUp) / Double(framesAfterWarmUp)
        } else {
            nil
        }
        let growthAfterWarmUp = rssAfter - rssAfterWarmUp
        let bytesPerFrame = Double(growthAfterWarmUp * 1024) / Double(framesAfterWarmUp)
        progress("memory: RSS \(rssBefore) → \(rssAfterWarmUp) (after \(warmUpFrames) frames) → \(rssAfter) KiB "
                 + "in \(format(memorySeconds, 1)) s; heap in use \(heapBefore.map { String($0 / 1024) } ?? "?") → "
                 + "\(heapAfterWarmUp.map { String($0 / 1024) } ?? "?") → \(heapAfter.map { String($0 / 1024) } ?? "?") KiB")
        // Anchors for the growth: zbar called directly over the same frames in memory, with one
        // scanner for the whole run, and with the scanner destroyed and recreated every 1,000 frames
        // (which frees what zbar keeps in its symbol recycle buckets).
        let controlFrames = min(options.frames, max(library.count, 6000 / library.count * library.count))
        func zbarGrowth(recreateEvery: Int?) throws -> Double? {
            var scanner = try DirectZBar()
            // Warm up over one pass so both start from a scanner that has seen every frame.
            for frame in library {
                frame.pixels.withUnsafeBytes { _ = scanner.scan($0, width: ScannerFrames.width, height: ScannerFrames.height) }
            }
            guard let before = heapInUseBytes() else { return nil }
            for index in 0..<controlFrames {
                if let every = recreateEvery, index % every == every - 1 { scanner = try DirectZBar() }
                library[index % library.count].pixels.withUnsafeBytes {
                    _ = scanner.scan($0, width: ScannerFrames.width, height: ScannerFrames.height)
                }
            }
            guard let after = heapInUseBytes() else { return nil }
            return Double(after - before) / Double(controlFrames)
        }
        // Recreated first: memory the other run frees at its end could otherwise hide growth.
        progress("memory: anchors, \(controlFrames) frames each: direct zbar with the scanner recreated every 1,000 frames, "
                 + "then with one scanner")
        let recreatedBytesPerFrame = try zbarGrowth(recreateEvery: 1000)
        let zbarBytesPerFrame = try zbarGrowth(recreateEvery: nil)
        progress("memory: heap growth of direct zbar \(zbarBytesPerFrame.map { format($0, 1) } ?? "?") bytes/frame; "
                 + "recreated every 1,000 frames \(recreatedBytesPerFrame.map { format($0, 1) } ?? "?") bytes/frame")

        // 6. The kiosk against a real server.
        let kiosk = try runKioskLatency(options, directory: directory, library: library)

        let withCodeFigures = (decodeFigures(pipelineCodeTimes), decodeFigures(zbarCodeTimes))
        let emptyFigures = (decodeFigures(pipelineEmptyTimes), decodeFigures(zbarEmptyTimes))
        let latencyGoal = 60.0
        let ratioGoal = 1.1
        return ScannerReport(
            cores: cores, zbarVersion: version, width: ScannerFrames.width, height: ScannerFrames.height,
            distinctFrames: library.count, framesWithCode: withCode, emptyFrames: library.count - withCode,
            visitsInLibrary: visits, y4mBytes: y4mBytes, rounds: options.rounds,
            pipelineDecode: pipelineDecode, zbarDecode: zbarDecode,
            pipelineDecodeWithCode: withCodeFigures.0, zbarDecodeWithCode: withCodeFigures.1,
            pipelineDecodeEmpty: emptyFigures.0, zbarDecodeEmpty: emptyFigures.1,
            pipelineSelfReportedMedianMilliseconds: percentile(selfReported, 0.5),
            pipelineWithDedupeMedianMilliseconds: percentile(withDedupe, 0.5),
            decodeRatio: decodeRatio,
            decodeP95Ratio: pipelineDecode.p95Milliseconds / max(zbarDecode.p95Milliseconds, 1e-9),
            pairedMedianRatio: percentile(pairedRatios, 0.5),
            pipelineHitRate: Double(pipelineHits) / Double(max(1, codeSamples)),
            zbarHitRate: Double(zbarHits) / Double(max(1, codeSamples)),
            disagreements: disagreements, falseReads: falseReads,
            y4mFrames: y4mFrames, y4mFramesPerSecond: rate, y4mMillisecondsPerFrame: 1000 / rate,
            anchorZbarFramesPerSecondBefore: anchorBefore, anchorZbarFramesPerSecondAfter: anchorAfter,
            anchorZbarMillisecondsPerFrame: 1000 / anchorRate, y4mRatioToZbar: (1000 / rate) / (1000 / anchorRate),
            y4mNewCodes: y4mNewCodes,
            pacedFramesPerSecond: Double(pacedFrames) / pacedWall, pacedSeconds: pacedWall, pacedFrames: pacedFrames,
            pacedLateFrames: pacedSource.late, pacedCPUPercent: pacedCPU,
            pacedDecodePercent: Double(decodeNanoseconds) / 1e9 / pacedWall * 100,
            anchorPacedZbarCPUPercent: anchorCPU, pacedCPURatioToZbar: pacedCPU / max(anchorCPU, 1e-9),
            rssFrames: memoryFrames, rssBeforeKiB: rssBefore, rssAfterWarmUpKiB: rssAfterWarmUp, rssAfterKiB: rssAfter,
            rssGrowthKiB: rssAfter - rssBefore, rssGrowthAfterWarmUpKiB: growthAfterWarmUp,
            rssBytesPerFrameAfterWarmUp: bytesPerFrame, rssSamplesKiB: rssSamples,
            rssRunFramesPerSecond: Double(memoryFrames) / memorySeconds, rssNewCodes: memoryNewCodes,
            heapBeforeBytes: heapBefore, heapAfterWarmUpBytes: heapAfterWarmUp, heapAfterBytes: heapAfter,
            heapBytesPerFrameAfterWarmUp: heapBytesPerFrame,
            memoryAnchorFrames: controlFrames, memoryAnchorZbarBytesPerFrame: zbarBytesPerFrame,
            memoryAnchorZbarRecreatedBytesPerFrame: recreatedBytesPerFrame,
            passes: kiosk.passes, decisions: kiosk.decisions, missingDecisions: kiosk.missing, admitted: kiosk.admitted,
            firstFrameMisses: kiosk.firstFrameMisses,
            latencyP50Milliseconds: kiosk.latencyP50, latencyP95Milliseconds: kiosk.latencyP95,
            latencyMaxMilliseconds: kiosk.latencyMax, decodeP50Milliseconds: kiosk.decodeP50,
            afterDecodeP50Milliseconds: kiosk.afterDecodeP50, afterDecodeP95Milliseconds: kiosk.afterDecodeP95,
            anchorCheckIns: kiosk.anchorCount, anchorCheckInP50Milliseconds: kiosk.anchorP50,
            anchorCheckInP95Milliseconds: kiosk.anchorP95,
            latencyP50RatioToAnchor: kiosk.latencyP50 / max(kiosk.anchorP50, 1e-9),
            latencyP95RatioToAnchor: kiosk.latencyP95 / max(kiosk.anchorP50, 1e-9),
            kioskFramesRead: kiosk.framesRead, kioskLateFrames: kiosk.lateFrames, kioskCPUPercent: kiosk.cpuPercent,
            decodeRatioGoal: ratioGoal, decodeRatioGoalMet: decodeRatio <= ratioGoal,
            latencyGoalMilliseconds: latencyGoal,
            latencyGoalMet: kiosk.missing == 0 && kiosk.decisions > 0 && kiosk.latencyP95 < latencyGoal,
            // No growth per frame: under 1 byte per frame after the warm-up (100,000 frames → under ~100 KiB),
            // judged on the heap in use (exact); from RSS only over 20,000 frames or more after the warm-up
            // (4 KiB pages, freed memory reused first).
            rssGoalMet: heapBytesPerFrame.map { $0 < 1 } ?? (framesAfterWarmUp >= 20_000 ? bytesPerFrame < 1 : nil))
    }
}

struct KioskLatency {
    var passes: Int
    var decisions: Int
    var missing: Int
    var admitted: Int
    var firstFrameMisses: Int
    var latencyP50: Double
    var latencyP95: Double
    var latencyMax: Double
    var decodeP50: Double
    var afterDecodeP50: Double
    var afterDecodeP95: Double
    var anchorCount: Int
    var anchorP50: Double
    var anchorP95: Double
    var framesRead: Int
    var lateFrames: Int
    var cpuPercent: Double
}

func runKioskLatency(_ options: Options, directory: String, library: [ScannerFrame]) throws -> KioskLatency {
    var configuration = ServerConfiguration()
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configuration.database = directory + "/gatepass.db"
    configuration.threads = options.threads
    configuration.sqliteSynchronous = options.synchronous
    configuration.otpResendIntervalSeconds = 0
    configuration.otpSendsPerHour = 1000
    let server = try GatePassServer(configuration: configuration, devMode: true, logSink: DevNullLog())
    defer { server.stop(grace: .seconds(5)) }
    let port = server.port
    progress("kiosk: Gate Pass server on 127.0.0.1:\(port), synchronous=\(options.synchronous), \(options.threads) threads")

    let email = "kiosk@bench.gatepass"
    _ = try Administration.addUser(store: server.store, email: email, name: "Bench Kiosk", role: .owner,
                                   organization: "Bench Site", canScan: true, now: Date())
    let ownerToken = try login(email: email, port: port)
    let passes = options.passes
    let seeded = try seedVisitors(count: 2 * passes + 10, startingAt: 1, port: port, token: ownerToken, connections: 8)
    let kioskPasses = Array(seeded.prefix(passes))
    let anchorPasses = Array(seeded.dropFirst(passes))
    let anchorScanner = try scannerToken(loginToken: ownerToken, port: port)

    // The kiosk's client core in its own state folder, logged in like `gatepass login`.
    let state = StateDirectory(path: directory + "/kiosk-state")
    let core = try ClientCore(directory: state,
                              transport: CurlSession(options: .init(connectTimeout: .seconds(3), requestTimeout: .seconds(10))),
                              platform: "kiosk")
    _ = try core.login(server: "http://127.0.0.1:\(port)", email: email, otp: try devCode(email: email, port: port),
                       allowPurge: true)
    _ = try core.ensureScannerToken(now: Date())

    // One pass frame per visitor (module 4–6 px, somewhere in the picture), checked readable
    // beforehand so the first frame with the code is the one that decodes.
    var random = ScannerRandom(seed: 0x5CA7)
    let scenes = ScannerFrames.scenes(&random)
    let checker = try QRDecoder()
    var passFrames: [[UInt8]] = []
    for (number, shortId) in kioskPasses.enumerated() {
        let text = "GP1:" + shortId
        let code = try QRCode(text)
        var module = 4 + Int(random.next() % 3)
        var frame: [UInt8] = []
        for attempt in 0..<4 {
            let side = (code.width + 8) * module
            let x = Int(random.next() % UInt64(ScannerFrames.width - side)), y = Int(random.next() % UInt64(ScannerFrames.height - side))
            frame = ScannerFrames.draw(scene: scenes[number % scenes.count], code: code, module: module, origin: (x, y),
                                       dark: UInt8(25 + random.next() % 40), light: UInt8(195 + random.next() % 45),
                                       noise: 4, random: &random)
            let read = try frame.withUnsafeBytes { bytes in
                try checker.decode(FrameView(width: ScannerFrames.width, height: ScannerFrames.height, luma: bytes, index: 0))
            }
            checker.resetCache()
            if read.texts.contains(text) { break }
            if attempt == 3 { throw BenchFailure("could not draw a readable pass frame for \(text)") }
            module = 6
        }
        passFrames.append(frame)
    }
    let emptyFrames = library.filter { $0.code == nil }.prefix(30).map(\.pixels)
    guard !emptyFrames.isEmpty else { throw BenchFailure("the frame library has no empty frames; use more --distinct frames") }

    let terminal = TimestampingTerminal()
    let decoder = try QRDecoder()
    // Written by the frame loop only (read once it has returned): when each frame's decode ended.
    final class DecodeLog { var ended: [Int: (at: UInt64, found: Bool)] = [:] }
    let decodeLog = DecodeLog()
    let hold = 10, gap = 5
    let runner = KioskRunner(core: core, terminal: terminal, clock: SystemWallClock(), options: .init(cooldown: 3),
                             notifier: SystemdNotifier(environment: [:])) { frame in
        let codes = try decoder.decode(frame).codes.map(\.text)
        let position = frame.index - gap
        if position >= 0, position % (hold + gap) < 2 {
            decodeLog.ended[frame.index] = (monotonicNanoseconds(), !codes.isEmpty)
        }
        return codes
    }
    try runner.start()
    // Let the event stream connect and the outbox service make its first round.
    Thread.sleep(forTimeInterval: 1.0)

    let start = monotonicNanoseconds() + 50_000_000
    let source = KioskFrameSource(passFrames: passFrames, emptyFrames: emptyFrames, hold: hold, gap: gap,
                                  framesPerSecond: 30, start: start)
    // The anchor: a plain check-in POST of another EXPECTED pass, sent halfway through each gap
    // (the kiosk's own check-in is over by then; its frame loop keeps decoding meanwhile).
    let anchorTimes = Mutex<[Double]>([])
    let anchorFailure = Mutex<String?>(nil)
    let anchorThread = Thread {
        let http = LoopbackHTTPClient(host: "127.0.0.1", port: port, timeoutSeconds: 10)
        defer { http.disconnect() }
        let headers = ["Authorization": "Bearer \(anchorScanner)", "Content-Type": "application/json"]
        let interval = UInt64(1e9 / 30)
        for (visitor, shortId) in anchorPasses.prefix(passes).enumerated() {
            let frame = gap + visitor * (hold + gap) + hold + gap / 2
            sleepUntil(start + UInt64(frame) * interval)
            let body = Array(#"{"confirmApprovalRequest":false,"shortId":"GP1:\#(shortId)"}"#.utf8)
            let sent = monotonicNanoseconds()
            do {
                let response = try http.send("POST", Endpoint.scannerCheckIn.path(), headers: headers, body: body)
                let took = Double(monotonicNanoseconds() - sent) / 1e6
                guard response.status == 200 else {
                    anchorFailure.withLock { $0 = $0 ?? "anchor check-in answered \(response.status): \(response.text.prefix(200))" }
                    continue
                }
                anchorTimes.withLock { $0.append(took) }
            } catch {
                anchorFailure.withLock { $0 = $0 ?? "anchor check-in failed: \(error)" }
            }
        }
    }
    progress("kiosk: \(passes) visitors at 30 fps, each pass held \(hold) frames then \(gap) empty frames "
             + "(\(format(Double(source.total) / 30, 0)) s); a plain check-in POST in each gap as the anchor")
    let cpuBefore = processCPUSeconds()
    let wallBefore = monotonicNanoseconds()
    anchorThread.start()
    let framesRead = try runner.scan(source)
    let cpuPercent = (processCPUSeconds() - cpuBefore) / (Double(monotonicNanoseconds() - wallBefore) / 1e9) * 100
    runner.settle(timeout: 5)
    // Wait for the last decision lines (and the anchor thread).
    let deadline = monotonicNanoseconds() + 10_000_000_000
    while terminal.lines.withLock({ $0.count }) < passes && monotonicNanoseconds() < deadline {
        Thread.sleep(forTimeInterval: 0.02)
    }
    while anchorTimes.withLock({ $0.count }) + (anchorFailure.withLock { $0 } == nil ? 0 : passes) < passes
            && monotonicNanoseconds() < deadline {
        Thread.sleep(forTimeInterval: 0.02)
    }
    runner.stop()
    if let failure = anchorFailure.withLock({ $0 }) { progress("kiosk: \(failure)") }

    // Match each decision line to its visitor by the short id in parentheses.
    let index = Dictionary(uniqueKeysWithValues: kioskPasses.enumerated().map { ($1, $0) })
    var decided = [UInt64?](repeating: nil, count: passes)
    var admitted = 0
    var unmatched: [String] = []
    for (at, text) in terminal.lines.withLock({ $0 }) {
        guard let open = text.lastIndex(of: "("), let close = text[open...].firstIndex(of: ")"),
              let visitor = index[String(text[text.index(after: open)..<close])] else {
            unmatched.append(text)
            continue
        }
        if decided[visitor] == nil { decided[visitor] = at }
        if text.hasPrefix("ADMITTED") { admitted += 1 }
    }
    if let first = unmatched.first { progress("kiosk: \(unmatched.count) lines matched no visitor, e.g. \(first)") }
    var latencies: [Double] = [], decodes: [Double] = [], afterDecode: [Double] = []
    var firstFrameMisses = 0
    for visitor in 0..<passes {
        guard let at = decided[visitor], source.handOff[visitor] > 0 else { continue }
        let handOff = source.handOff[visitor]
        latencies.append(Double(at - handOff) / 1e6)
        let firstFrame = gap + visitor * (hold + gap)
        if let decode = decodeLog.ended[firstFrame], decode.found {
            decodes.append(Double(decode.at - handOff) / 1e6)
            afterDecode.append(Double(Int64(at) - Int64(decode.at)) / 1e6)
        } else {
            firstFrameMisses += 1
        }
    }
    let sorted = latencies.sorted()
    let anchors = anchorTimes.withLock { $0 }.sorted()
    let result = KioskLatency(
        passes: passes, decisions: latencies.count, missing: passes - latencies.count, admitted: admitted,
        firstFrameMisses: firstFrameMisses,
        latencyP50: eventsPercentile(sorted, 0.5), latencyP95: eventsPercentile(sorted, 0.95), latencyMax: sorted.last ?? 0,
        decodeP50: percentile(decodes, 0.5), afterDecodeP50: percentile(afterDecode, 0.5),
        afterDecodeP95: percentile(afterDecode, 0.95),
        anchorCount: anchors.count, anchorP50: eventsPercentile(anchors, 0.5), anchorP95: eventsPercentile(anchors, 0.95),
        framesRead: framesRead, lateFrames: source.late, cpuPercent: cpuPercent)
    progress("kiosk: \(result.decisions)/\(passes) decisions, latency p50 \(format(result.latencyP50, 2)) ms, "
             + "p95 \(format(result.latencyP95, 2)) ms; anchor check-in p50 \(format(result.anchorP50, 2)) ms")
    return result
}

// MARK: - Report

func printScannerReport(_ r: ScannerReport) {
    func ms(_ value: Double) -> String { format(value, value < 10 ? 3 : 2) }
    func met(_ value: Bool) -> String { value ? "met" : "NOT met" }
    var out = """
        gatepass-bench scanner: \(r.cores) cores, zbar \(r.zbarVersion); frames \(r.width)×\(r.height) grey, \
        \(r.distinctFrames) distinct (\(r.framesWithCode) with a pass in \(r.visitsInLibrary) visits, module 3–6 px, \
        \(r.emptyFrames) empty), a fixed camera's scenes with ±2…±7 noise
        anchor = zbar called directly in the same run: same configuration as QRDecoder (QR only, inverted off, cache on), \
        same Y800 bytes; ratio = ours / anchor


        """
    func decodeRow(_ label: String, _ ours: ScannerDecodeFigures, _ anchor: ScannerDecodeFigures) -> String {
        label.padding(toLength: 26, withPad: " ", startingAt: 0)
            + ms(ours.medianMilliseconds).leftPadded(9) + ms(ours.p95Milliseconds).leftPadded(9)
            + ms(ours.meanMilliseconds).leftPadded(9)
            + ms(anchor.medianMilliseconds).leftPadded(10) + ms(anchor.p95Milliseconds).leftPadded(9)
            + ms(anchor.meanMilliseconds).leftPadded(9)
            + format(ours.medianMilliseconds / max(anchor.medianMilliseconds, 1e-9), 3).leftPadded(8)
            + format(ours.p95Milliseconds / max(anchor.p95Milliseconds, 1e-9), 3).leftPadded(8) + "\n"
    }
    out += "decode, ms/frame (\(r.rounds) rounds × \(r.distinctFrames) frames, interleaved)\n"
    out += "".padding(toLength: 26, withPad: " ", startingAt: 0) + "ours p50".leftPadded(9) + "p95".leftPadded(9)
        + "mean".leftPadded(9) + "zbar p50".leftPadded(10) + "p95".leftPadded(9) + "mean".leftPadded(9)
        + "x p50".leftPadded(8) + "x p95".leftPadded(8) + "\n"
    out += decodeRow("all frames", r.pipelineDecode, r.zbarDecode)
    out += decodeRow("  with a pass", r.pipelineDecodeWithCode, r.zbarDecodeWithCode)
    out += decodeRow("  empty", r.pipelineDecodeEmpty, r.zbarDecodeEmpty)
    out += "  paired median ratio (same frame, same round) \(format(r.pairedMedianRatio, 3)); QRDecoder's own "
        + "milliseconds p50 \(ms(r.pipelineSelfReportedMedianMilliseconds)); decode + dedupe p50 "
        + "\(ms(r.pipelineWithDedupeMedianMilliseconds))\n"
    out += "  passes read: ours \(format(r.pipelineHitRate * 100, 1))%, zbar \(format(r.zbarHitRate * 100, 1))% of frames "
        + "with a pass; \(r.disagreements) frames where the two found different counts, \(r.falseReads) false reads\n\n"
    out += "pipeline from Y4M (Y4MSource → QRDecoder → CodeDeduplicator, as fast as it goes, \(r.y4mFrames) frames): "
        + "\(format(r.y4mFramesPerSecond, 1)) frames/s = \(ms(r.y4mMillisecondsPerFrame)) ms/frame\n"
    out += "  anchor: direct zbar over the same frames in memory \(format(r.anchorZbarFramesPerSecondBefore, 1)) (before) / "
        + "\(format(r.anchorZbarFramesPerSecondAfter, 1)) (after) frames/s = \(ms(r.anchorZbarMillisecondsPerFrame)) ms/frame; "
        + "ratio \(format(r.y4mRatioToZbar, 3)); \(r.y4mNewCodes) new codes reported\n\n"
    out += "steady 30 fps (\(r.pacedFrames) frames in \(format(r.pacedSeconds, 1)) s = \(format(r.pacedFramesPerSecond, 2)) fps, "
        + "\(r.pacedLateFrames) late): CPU \(format(r.pacedCPUPercent, 1))% of one core (decode itself "
        + "\(format(r.pacedDecodePercent, 1))%); anchor: direct zbar paced alike \(format(r.anchorPacedZbarCPUPercent, 1))%; "
        + "ratio \(format(r.pacedCPURatioToZbar, 2))\n\n"
    out += "memory over \(r.rssFrames) frames (Y4M → decoder → dedupe, \(format(r.rssRunFramesPerSecond, 0)) frames/s): "
        + "RSS \(r.rssBeforeKiB) KiB before, \(r.rssAfterWarmUpKiB) KiB after the warm-up, \(r.rssAfterKiB) KiB after; "
        + "growth \(r.rssGrowthKiB) KiB in all, \(r.rssGrowthAfterWarmUpKiB) KiB after the warm-up = "
        + "\(format(r.rssBytesPerFrameAfterWarmUp, 2)) bytes/frame\n"
    out += "  RSS samples, KiB: \(r.rssSamplesKiB.map(String.init).joined(separator: " "))\n"
    func kib(_ bytes: Int?) -> String { bytes.map { String($0 / 1024) } ?? "?" }
    func perFrame(_ value: Double?) -> String { value.map { format($0, 1) } ?? "?" }
    out += "  heap in use (malloc_info): \(kib(r.heapBeforeBytes)) KiB before, \(kib(r.heapAfterWarmUpBytes)) KiB after "
        + "the warm-up, \(kib(r.heapAfterBytes)) KiB after = \(perFrame(r.heapBytesPerFrameAfterWarmUp)) bytes/frame after the warm-up\n"
    out += "  anchors (heap, \(r.memoryAnchorFrames) frames from memory): direct zbar, one scanner "
        + "\(perFrame(r.memoryAnchorZbarBytesPerFrame)) bytes/frame; scanner recreated every 1,000 frames "
        + "\(perFrame(r.memoryAnchorZbarRecreatedBytesPerFrame)) bytes/frame\n"
    if let ours = r.heapBytesPerFrameAfterWarmUp, let zbar = r.memoryAnchorZbarBytesPerFrame,
       let recreated = r.memoryAnchorZbarRecreatedBytesPerFrame, ours >= 1, zbar >= 0.5 * ours, recreated < 0.25 * zbar {
        out += "  the growth is zbar's own: direct zbar grows alike and stops when its scanner is recreated "
            + "(symbols of decoded QR codes pile up in the scanner's recycle buckets, mchehab/zbar issue 258)\n"
    }
    out += "\n"
    out += "kiosk on loopback (\(r.passes) visitors at 30 fps, pass held 10 frames, then 5 empty): "
        + "\(r.decisions) decisions (\(r.admitted) admitted), \(r.missingDecisions) missing, "
        + "\(r.firstFrameMisses) first frames not read\n"
    out += "  first frame with a new code → decision line: p50 \(ms(r.latencyP50Milliseconds)) ms, p95 "
        + "\(ms(r.latencyP95Milliseconds)) ms, max \(ms(r.latencyMaxMilliseconds)) ms\n"
    out += "  of which decode p50 \(ms(r.decodeP50Milliseconds)) ms; decode → line p50 \(ms(r.afterDecodeP50Milliseconds)) ms, "
        + "p95 \(ms(r.afterDecodeP95Milliseconds)) ms\n"
    out += "  anchor: plain check-in POST (LoopbackHTTP, one per gap, \(r.anchorCheckIns) sent) p50 "
        + "\(ms(r.anchorCheckInP50Milliseconds)) ms, p95 \(ms(r.anchorCheckInP95Milliseconds)) ms; "
        + "latency p50 = \(format(r.latencyP50RatioToAnchor, 2)) x, p95 = \(format(r.latencyP95RatioToAnchor, 2)) x anchor p50\n"
    out += "  \(r.kioskFramesRead) frames read, \(r.kioskLateFrames) late; process CPU \(format(r.kioskCPUPercent, 1))% "
        + "(kiosk + server + anchor client)\n\n"
    out += "goal: decode p50 ≤ \(format(r.decodeRatioGoal, 1)) x direct zbar: \(met(r.decodeRatioGoalMet)) "
        + "(\(format(r.decodeRatio, 3)))\n"
    out += "goal: frame → decision p95 < \(format(r.latencyGoalMilliseconds, 0)) ms online: \(met(r.latencyGoalMet)) "
        + "(\(ms(r.latencyP95Milliseconds)) ms, \(r.missingDecisions) missing)\n"
    out += "goal: no memory growth per frame (a few hundred KiB of warm-up allowed): "
        + (r.rssGoalMet.map(met) ?? "not judged (needs --frames of 20,000 or more after the warm-up)")
        + " (after the warm-up: heap \(perFrame(r.heapBytesPerFrameAfterWarmUp)), "
        + "RSS \(format(r.rssBytesPerFrameAfterWarmUp, 1)) bytes/frame)\n"
    print(out, terminator: "")
}
