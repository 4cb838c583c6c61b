import CZBar
import Foundation
import GatePassClient
import GatePassCommands
import GatePassCore
import GatePassScanner
import GatePassServer
import LoopbackHTTP
import QRCode

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
    let lines = Locked<[(at: UInt64, text: String)]>([])
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

