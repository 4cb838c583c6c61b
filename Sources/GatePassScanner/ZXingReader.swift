import CZXingShim

/// What zxing-cpp made of one grey plane.
public enum ZXingOutcome: Sendable, Equatable {
    /// A QR code decoded to this text (UTF-8 from zxing; bytes that are not become U+FFFD).
    /// Text from outside: shown only through the paths that escape it.
    case decoded(String)
    /// A QR code was located but could not be decoded (zxing's `setReturnErrors(true)`): a sign
    /// that a code is in view, which zbar cannot give.
    case foundNotDecoded
    /// No QR code in view.
    case nothingFound
}

/// Reads QR codes with zxing-cpp 1.4 (Debian `libzxing-dev`), through the C shim `CZXingShim`.
///
/// ```swift
/// let reader = ZXingReader()
/// if case .decoded(let text) = try reader.read(frame, inverted: true) { … }
/// ```
///
/// The second decoder of ``ReadingPipeline``: zxing's QR reader locates codes that zbar's
/// misses (strong keystone, blur with rotation), and reads a light-on-dark code from the
/// plane's negative. Restricted to QR codes, `tryHarder` on, `tryRotate` off. All raw calls go
/// through this file; the shim catches every C++ exception and returns a status instead.
///
/// Not thread-safe (it reuses one text buffer): use a reader from one thread at a time.
public final class ZXingReader {
    /// zxing-cpp's version ("1.4.0"), from its headers at build time (`zxing_shim_version`).
    public static var version: String { String(cString: zxing_shim_version()) }

    /// The longest text taken: a QR code holds at most 2,953 bytes, and zxing's UTF-8 of
    /// Latin-1 bytes can be twice that.
    private static let textCapacity = 16_384
    private var text = [UInt8](repeating: 0, count: ZXingReader.textCapacity)
    private var errorMessage = [CChar](repeating: 0, count: 256)

    public init() {}

    /// The shim's sentence for the last failure (NUL-terminated in `errorMessage`).
    private var shimMessage: String {
        String(decoding: errorMessage.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Reads one QR code from a frame (`zxing_shim_read_qr`).
    ///
    /// - Parameters:
    ///   - frame: a grey frame, only read during this call.
    ///   - inverted: read the frame's negative (light modules on a dark ground).
    /// - Throws: ``ScannerError/decoder(_:)`` when zxing fails (out of memory, an exception).
    public func read(_ frame: FrameView, inverted: Bool) throws(ScannerError) -> ZXingOutcome {
        try read(plane: frame.luma, width: frame.width, height: frame.height, stride: frame.width, inverted: inverted)
    }

    /// Reads one QR code from a plane of `height` rows of `stride` bytes, `width` pixels each
    /// (`zxing_shim_read_qr`).
    ///
    /// - Throws: ``ScannerError/decoder(_:)`` when the plane is smaller than its size says, the
    ///   size or stride make no sense (zero, negative, stride under width), a side is over
    ///   8,192 pixels (refused before anything is allocated), or zxing fails.
    public func read(plane: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int,
                     inverted: Bool) throws(ScannerError) -> ZXingOutcome {
        let limit = Int(ZXING_SHIM_MAXIMUM_DIMENSION)
        guard width > 0, height > 0, stride >= width else {
            throw .decoder("zxing: a \(width)×\(height) plane with stride \(stride) is not valid (stride must be at least the width)")
        }
        guard width <= limit, height <= limit, stride <= 4 * limit else {
            throw .decoder("zxing: a \(width)×\(height) plane is larger than \(limit)×\(limit)")
        }
        let needed = stride * (height - 1) + width
        guard plane.count >= needed, let pixels = plane.baseAddress else {
            throw .decoder("zxing: the plane holds \(plane.count) bytes, \(needed) needed for \(width)×\(height) with stride \(stride)")
        }
        var length = 0
        let status = text.withUnsafeMutableBufferPointer { text in
            errorMessage.withUnsafeMutableBufferPointer { message in
                zxing_shim_read_qr(pixels.assumingMemoryBound(to: UInt8.self), Int32(width), Int32(height), Int32(stride),
                                   inverted ? 1 : 0, text.baseAddress, text.count, &length, message.baseAddress, message.count)
            }
        }
        switch status {
        case ZXING_SHIM_DECODED:
            return .decoded(String(decoding: text[0..<length], as: UTF8.self))
        case ZXING_SHIM_FOUND_NOT_DECODED:
            return .foundNotDecoded
        case ZXING_SHIM_NOTHING_FOUND:
            return .nothingFound
        case ZXING_SHIM_TEXT_TOO_LONG:
            throw .decoder("zxing: a decoded text of \(length) bytes is longer than \(Self.textCapacity)")
        case ZXING_SHIM_BAD_ARGUMENT, ZXING_SHIM_TOO_LARGE:
            // Checked above; reaching here means the two checks disagree.
            throw .decoder("zxing refused the plane: \(shimMessage)")
        default:
            throw .decoder("zxing failed: \(shimMessage)")
        }
    }
}
