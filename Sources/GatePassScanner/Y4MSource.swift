import Foundation

/// A YUV4MPEG2 (`.y4m`) recording as frames: each frame's Y plane, in order; the chroma
/// planes are skipped, not read into memory.
///
/// ```swift
/// let video = try Y4MSource(path: "gate.y4m")
/// defer { video.close() }
/// while try video.withNextFrame({ frame in … }) {}
/// ```
///
/// The stream header must start with `YUV4MPEG2` and give `W` and `H` (1…``maximumDimension``
/// each, so a hostile header cannot make us allocate more than 64 MB). `C` may be `420jpeg`
/// (the default), `420paldv`, `420`, `420mpeg2`, `411`, `422`, `444`, `444alpha` or `mono`
/// — the 8-bit layouts; high-bit-depth ones (`420p10`, `mono16`, …) are refused. `F` is read
/// when well formed; the other tags (`I`, `A`, `X`) are ignored. Each frame is `FRAME`, optional
/// tags, a newline, then the planes.
///
/// Errors: `init` throws ``ScannerError/unreadable(path:reason:)`` for a file that cannot be
/// opened and ``ScannerError/undecodable(path:reason:)`` for a malformed or unsupported header;
/// `withNextFrame` throws `undecodable` for a malformed frame header or a truncated frame, after
/// which the source is exhausted (returns false). End of file exactly between frames is the end.
///
/// Owns a file descriptor: call ``close()`` when done (`deinit` closes it too, as a backstop).
/// Not thread-safe; one caller at a time.
public final class Y4MSource: FrameSource {
    /// The largest width and height accepted.
    public static let maximumDimension = 8192
    /// The longest stream or frame header line accepted.
    static let maximumHeaderLength = 4096

    public let path: String
    public let width: Int
    public let height: Int
    /// The `C` tag as written (without the `C`), `420jpeg` when absent.
    public let colourSpace: String
    /// From the `F` tag (`F30000:1001` → 29.97), nil when absent or malformed.
    public let framesPerSecond: Double?

    private var reader: BufferedReader
    private var luma: [UInt8]
    /// Bytes after the Y plane in each frame (chroma, alpha).
    private let trailingBytes: Int
    private var nextIndex = 0
    private var finished = false

    /// Opens a recording and reads its stream header.
    public init(path: String) throws(ScannerError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: path, reason: errnoText()) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT != S_IFDIR else {
            let reason = status.st_mode & S_IFMT == S_IFDIR ? "it is a directory" : errnoText()
            Foundation.close(descriptor)
            throw .unreadable(path: path, reason: reason)
        }
        var reader = BufferedReader(descriptor: descriptor, seekable: status.st_mode & S_IFMT == S_IFREG)
        let header: Header
        do throws(Failure) {
            header = try Header.parse(reader.readLine(maximumLength: Self.maximumHeaderLength))
        } catch {
            reader.close()
            switch error {
            case .unreadable(let reason): throw .unreadable(path: path, reason: reason)
            case .malformed(let reason): throw .undecodable(path: path, reason: reason)
            }
        }
        self.path = path
        self.reader = reader
        width = header.width
        height = header.height
        colourSpace = header.colourSpace
        framesPerSecond = header.framesPerSecond
        trailingBytes = header.trailingBytes
        luma = [UInt8](repeating: 0, count: header.width * header.height)
    }

    deinit { reader.close() }

    /// Closes the file; later calls to `withNextFrame` return false.
    public func close() {
        reader.close()
        finished = true
    }

    public func withNextFrame(_ body: (FrameView) throws -> Void) throws -> Bool {
        guard !finished else { return false }
        do throws(Failure) {
            guard let line = try reader.readLine(maximumLength: Self.maximumHeaderLength) else {
                finished = true
                return false
            }
            guard line.starts(with: Array("FRAME".utf8)), line.count == 5 || line[5] == UInt8(ascii: " ") else {
                throw Failure.malformed("frame \(nextIndex) does not start with FRAME")
            }
            let got = try luma.withUnsafeMutableBytes { bytes in Result { () throws(Failure) in try reader.read(into: bytes) } }.get()
            guard got == luma.count else { throw Failure.malformed("frame \(nextIndex) is truncated") }
            guard try reader.skip(trailingBytes) else { throw Failure.malformed("frame \(nextIndex) is truncated") }
        } catch {
            finished = true
            switch error {
            case .unreadable(let reason): throw ScannerError.unreadable(path: path, reason: reason)
            case .malformed(let reason): throw ScannerError.undecodable(path: path, reason: reason)
            }
        }
        let index = nextIndex
        nextIndex += 1
        try luma.withUnsafeBytes { bytes in
            try body(FrameView(width: width, height: height, luma: bytes, index: index))
        }
        return true
    }

    // MARK: - Header

    enum Failure: Error {
        case unreadable(String)
        case malformed(String)
    }

    struct Header: Equatable {
        var width: Int
        var height: Int
        var colourSpace: String
        var framesPerSecond: Double?
        var trailingBytes: Int

        static func parse(_ line: [UInt8]?) throws(Failure) -> Header {
            guard let line else { throw .malformed("the file is empty") }
            let tokens = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
            guard tokens.first.map({ Array($0) }) == Array("YUV4MPEG2".utf8) else {
                throw .malformed("not a YUV4MPEG2 recording (no YUV4MPEG2 header)")
            }
            var width: Int?
            var height: Int?
            var colourSpace = "420jpeg"
            var framesPerSecond: Double?
            for token in tokens.dropFirst() {
                let value = String(decoding: token.dropFirst(), as: UTF8.self)
                switch token.first {
                case UInt8(ascii: "W"): width = try dimension(value, "width")
                case UInt8(ascii: "H"): height = try dimension(value, "height")
                case UInt8(ascii: "C"): colourSpace = value
                case UInt8(ascii: "F"):
                    let parts = value.split(separator: ":")
                    if parts.count == 2, let numerator = Int(parts[0]), let denominator = Int(parts[1]),
                       numerator > 0, denominator > 0 {
                        framesPerSecond = Double(numerator) / Double(denominator)
                    }
                default: break
                }
            }
            guard let width, let height else { throw .malformed("the header does not give the frame size (W and H)") }
            let halfWidth = (width + 1) / 2
            let halfHeight = (height + 1) / 2
            let trailingBytes: Int
            switch colourSpace {
            case "420jpeg", "420paldv", "420", "420mpeg2": trailingBytes = 2 * halfWidth * halfHeight
            case "411": trailingBytes = 2 * ((width + 3) / 4) * height
            case "422": trailingBytes = 2 * halfWidth * height
            case "444": trailingBytes = 2 * width * height
            case "444alpha": trailingBytes = 3 * width * height
            case "mono": trailingBytes = 0
            default: throw .malformed("colour space C\(colourSpace) is not supported (8-bit 420, 422, 444 or mono)")
            }
            return Header(width: width, height: height, colourSpace: colourSpace, framesPerSecond: framesPerSecond,
                          trailingBytes: trailingBytes)
        }

        private static func dimension(_ text: String, _ name: String) throws(Failure) -> Int {
            // Digits only, and few enough that Int cannot overflow before the range check.
            guard !text.isEmpty, text.count <= 9, text.utf8.allSatisfy({ (48...57).contains($0) }), let value = Int(text),
                  (1...Y4MSource.maximumDimension).contains(value) else {
                throw .malformed("the \(name) \(text.prefix(20)) is not a whole number from 1 to \(Y4MSource.maximumDimension)")
            }
            return value
        }
    }

    // MARK: - Reading

    /// Buffered reads from a descriptor: header lines through a small buffer, plane data
    /// straight into the caller's memory once the buffer is drained.
    struct BufferedReader {
        private var descriptor: Int32
        private let seekable: Bool
        private var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        private var start = 0
        private var end = 0

        init(descriptor: Int32, seekable: Bool) {
            self.descriptor = descriptor
            self.seekable = seekable
        }

        mutating func close() {
            if descriptor >= 0 { Foundation.close(descriptor) }
            descriptor = -1
        }

        /// One line without its newline; nil at end of file when nothing was read.
        mutating func readLine(maximumLength: Int) throws(Failure) -> [UInt8]? {
            var line: [UInt8] = []
            while true {
                if start == end {
                    guard try fill() else {
                        if line.isEmpty { return nil }
                        throw .malformed("the file ends inside a header line")
                    }
                }
                if let newline = buffer[start..<end].firstIndex(of: UInt8(ascii: "\n")) {
                    line += buffer[start..<newline]
                    start = newline + 1
                    guard line.count <= maximumLength else { throw .malformed("a header line is longer than \(maximumLength) bytes") }
                    return line
                }
                line += buffer[start..<end]
                start = end
                guard line.count <= maximumLength else { throw .malformed("a header line is longer than \(maximumLength) bytes") }
            }
        }

        /// Fills `destination`; returns how many bytes were read (fewer only at end of file).
        mutating func read(into destination: UnsafeMutableRawBufferPointer) throws(Failure) -> Int {
            var filled = min(end - start, destination.count)
            if filled > 0 {
                buffer.withUnsafeBytes { source in
                    destination.baseAddress!.copyMemory(from: source.baseAddress! + start, byteCount: filled)
                }
                start += filled
            }
            while filled < destination.count {
                let count = Foundation.read(descriptor, destination.baseAddress! + filled, destination.count - filled)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw .unreadable(errnoText())
                }
                if count == 0 { break }
                filled += count
            }
            return filled
        }

        /// Skips `count` bytes; false if the file ends first.
        mutating func skip(_ count: Int) throws(Failure) -> Bool {
            let buffered = min(end - start, count)
            start += buffered
            var remaining = count - buffered
            guard remaining > 0 else { return true }
            if seekable {
                let offset = lseek(descriptor, off_t(remaining), SEEK_CUR)
                var status = stat()
                if offset >= 0, fstat(descriptor, &status) == 0 { return offset <= status.st_size }
            }
            // A pipe (or a failed seek): read through the buffer.
            while remaining > 0 {
                guard try fill() else { return false }
                let taken = min(end - start, remaining)
                start += taken
                remaining -= taken
            }
            return true
        }

        /// Refills the (empty) buffer; false at end of file.
        private mutating func fill() throws(Failure) -> Bool {
            start = 0
            end = 0
            while true {
                let count = buffer.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw .unreadable(errnoText())
                }
                end = count
                return count > 0
            }
        }
    }
}
