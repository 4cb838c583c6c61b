import CZBar

/// One QR code in view in a decoded frame.
public struct DecodedCode: Sendable, Hashable {
    /// The code's text: zbar's data, which zbar has already turned into UTF-8 for QR codes
    /// (`ZBAR_CFG_BINARY` off). Bytes that are still not UTF-8 become U+FFFD.
    public let text: String
    /// zbar's name for the symbology (`zbar_get_symbol_name`): always `"QR-Code"` here.
    public let format: String
    /// zbar's cache count for this text (`zbar_symbol_get_count`), summarised in
    /// ``QRDecoder``'s documentation: 0 the first time zbar sees the text after it was out of
    /// sight for 2 s or more (wall clock), then 1, 2, … each further frame in which it is seen.
    /// Informative only: the decoder never drops a code because of it.
    public let zbarCount: Int

    public init(text: String, format: String = QRDecoder.format, zbarCount: Int = 0) {
        self.text = text
        self.format = format
        self.zbarCount = zbarCount
    }
}

/// What one frame held: every QR code in view, and how long decoding took.
public struct DecodedFrame: Sendable {
    /// The frame's ``FrameView/index``.
    public let frameIndex: Int
    /// Every distinct QR text decoded from this frame — newly seen and held alike — sorted by
    /// text. Empty when the frame holds no readable QR code.
    public let codes: [DecodedCode]
    /// Wall time spent in the decoder for this frame (handing the frame to zbar, `zbar_scan_image`,
    /// reading the results), in milliseconds.
    public let milliseconds: Double

    public init(frameIndex: Int, codes: [DecodedCode], milliseconds: Double) {
        self.frameIndex = frameIndex
        self.codes = codes
        self.milliseconds = milliseconds
    }

    /// The texts in view, as `CodeDeduplicator.observe(_:at:)` takes them.
    public var texts: Set<String> { Set(codes.map(\.text)) }
}

/// Reads QR codes from grey frames with zbar's image scanner.
///
/// ```swift
/// let decoder = try QRDecoder()
/// while try source.withNextFrame({ frame in
///     let decoded = try decoder.decode(frame)
///     for code in deduplicator.observe(decoded.texts, at: clock.now()) { … }
/// }) {}
/// ```
///
/// ## Configuration
/// One `zbar_image_scanner_t` and one `zbar_image_t` (format `Y800`) live as long as the
/// decoder and serve every frame. All symbologies are disabled and only `ZBAR_QRCODE` is
/// enabled; `ZBAR_CFG_TEST_INVERTED` stays off (it doubles the cost of an empty frame and
/// flushes the cache on every miss); the scanner's duplicate cache is on
/// (`zbar_image_scanner_enable_cache`). Each frame's luma plane is given to zbar in place with
/// `zbar_image_set_data` and a cleanup handler that does nothing, so zbar neither copies nor
/// frees it, and is taken back before `decode` returns (zbar keeps no pointer into a frame that
/// is no longer valid).
///
/// ## What `decode` returns, and zbar's cache
/// zbar's cache (zbar/img_scanner.c, `cache_sym`) keys results by symbology and data and
/// timestamps them with the wall clock at each `zbar_scan_image`, not with frame numbers. For
/// a QR code (uncertainty 0) a text that is not cached, or was last seen 2 s or more ago, gets
/// count 0 and is what zbar calls *new*: `zbar_scan_image` counts it and the filtered iterator
/// (`zbar_symbol_set_first_symbol`) shows it. Seen again within 2 s, its count goes up by one
/// each frame and zbar *hides* it from the filtered iterator and from the return value. Cache
/// entries unseen for 4 s are dropped.
///
/// A caller that used zbar's filtered results would therefore lose a code that stays in view
/// (it is reported once) and a code that comes back within 2 s — and that rule runs on wall
/// time, so it means something else when a recording is decoded faster than real time. So
/// `decode` walks the *unfiltered* results (`zbar_symbol_set_first_unfiltered`) and returns
/// every QR text zbar decoded in the frame, new and held alike, once each, with zbar's count
/// attached (``DecodedCode/zbarCount``). What counts as "newly seen" is left to the layer
/// above (`CodeDeduplicator` in GatePassCore), which works on frame times it is given.
///
/// A frame with no decodable QR code returns no codes; that is not an error.
///
/// ## Cost
/// Per frame: no copy of the frame, no allocation on our side when nothing is in view; one
/// small array (and the strings of texts over 15 bytes) when codes are. zbar itself allocates
/// inside its QR reader.
///
/// Not thread-safe: zbar's scanner is not. Use a decoder from one thread at a time; it holds
/// no thread affinity, so it may be created on one thread and used on another.
public final class QRDecoder {
    /// The format name reported for every code (`zbar_get_symbol_name(ZBAR_QRCODE)`).
    public static let format = "QR-Code"

    /// `zbar_image_scanner_t *`
    private var scanner: OpaquePointer
    /// Frames decoded by the current scanner. zbar's scanner grows by about 70 bytes per
    /// frame over long runs (measured by `gatepass-bench scanner`: a scanner recreated every
    /// 1,000 frames does not), so it is replaced every `scannerLifetime` frames. A held code
    /// then shows zbar count 0 once, which nothing here relies on.
    private var framesOnScanner = 0
    static let scannerLifetime = 1_000
    /// `zbar_image_t *`, reused for every frame.
    private let image: OpaquePointer
    private var imageWidth = -1
    private var imageHeight = -1

    /// `fourcc('Y','8','0','0')`: 8-bit grey, one byte per pixel, rows back to back.
    private static let y800: UInt = 0x3030_3859

    /// Creates a zbar image scanner configured for QR codes only.
    ///
    /// - Throws: ``ScannerError/decoder(_:)`` if zbar cannot create its scanner or image or
    ///   refuses the configuration.
    public init() throws(ScannerError) {
        let scanner = try Self.makeScanner()
        guard let image = zbar_image_create() else {
            zbar_image_scanner_destroy(scanner)
            throw .decoder("zbar_image_create failed (out of memory)")
        }
        self.scanner = scanner
        self.image = image
        zbar_image_set_format(image, Self.y800)
    }

    /// A zbar image scanner for QR codes only, inverted test off, cache on.
    private static func makeScanner() throws(ScannerError) -> OpaquePointer {
        guard let scanner = zbar_image_scanner_create() else {
            throw .decoder("zbar_image_scanner_create failed (out of memory)")
        }
        // zbar_image_scanner_set_config returns 0 on success.
        let failures = [
            zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0),
            zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_ENABLE, 1),
            zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_TEST_INVERTED, 0),
        ].filter { $0 != 0 }
        guard failures.isEmpty else {
            zbar_image_scanner_destroy(scanner)
            throw .decoder("zbar refused the QR-only configuration")
        }
        zbar_image_scanner_enable_cache(scanner, 1)
        return scanner
    }

    /// Replaces the scanner once it has decoded `scannerLifetime` frames (see `framesOnScanner`).
    private func renewScannerIfOld() throws(ScannerError) {
        framesOnScanner += 1
        guard framesOnScanner > Self.scannerLifetime else { return }
        let fresh = try Self.makeScanner()
        zbar_image_scanner_recycle_image(scanner, image)
        zbar_image_scanner_destroy(scanner)
        scanner = fresh
        framesOnScanner = 1
    }

    deinit {
        // Memory only, no descriptor: releasing it here is enough. Detach the last results
        // from the image before destroying either handle.
        zbar_image_scanner_recycle_image(scanner, image)
        zbar_image_set_data(image, nil, 0, nil)
        zbar_image_destroy(image)
        zbar_image_scanner_destroy(scanner)
    }

    /// Decodes the QR codes in one frame.
    ///
    /// - Parameter frame: a grey frame; only `frame.luma`'s first `width × height` bytes are
    ///   read, and only during this call.
    /// - Returns: every distinct QR text in view (see the type's documentation), and the time
    ///   taken.
    /// - Throws: ``ScannerError/decoder(_:)`` if `zbar_scan_image` fails (it only does for an
    ///   image format it does not take, which would be a bug here).
    public func decode(_ frame: FrameView) throws(ScannerError) -> DecodedFrame {
        try renewScannerIfOld()
        let start = ContinuousClock.now
        guard frame.width > 0, frame.height > 0, let pixels = frame.luma.baseAddress else {
            return DecodedFrame(frameIndex: frame.index, codes: [], milliseconds: 0)
        }
        if frame.width != imageWidth || frame.height != imageHeight {
            zbar_image_set_size(image, UInt32(frame.width), UInt32(frame.height))
            imageWidth = frame.width
            imageHeight = frame.height
        }
        // The handler is called when zbar lets go of the data; the frame belongs to its source.
        zbar_image_set_data(image, pixels, UInt(frame.width * frame.height), { _ in })
        let status = zbar_scan_image(scanner, image)
        zbar_image_set_data(image, nil, 0, nil)
        guard status >= 0 else { throw .decoder("zbar_scan_image failed (status \(status))") }
        let codes = inViewCodes()
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        return DecodedFrame(frameIndex: frame.index, codes: codes, milliseconds: milliseconds)
    }

    /// Forgets every code zbar's cache holds (`zbar_image_scanner_enable_cache` flushes it), so
    /// the next sighting of any code has ``DecodedCode/zbarCount`` 0 — e.g. after the camera
    /// was replugged.
    public func resetCache() {
        zbar_image_scanner_enable_cache(scanner, 1)
    }

    /// The QR symbols of the last scan, unfiltered, one per text, sorted by text.
    private func inViewCodes() -> [DecodedCode] {
        guard let results = zbar_image_scanner_get_results(scanner) else { return [] }
        var symbol = zbar_symbol_set_first_unfiltered(results)
        guard symbol != nil else { return [] }
        var codes: [DecodedCode] = []
        while let current = symbol {
            symbol = zbar_symbol_next(current)
            guard zbar_symbol_get_type(current) == ZBAR_QRCODE, let data = zbar_symbol_get_data(current) else { continue }
            let bytes = UnsafeRawBufferPointer(start: data, count: Int(zbar_symbol_get_data_length(current)))
            let text = String(decoding: bytes, as: UTF8.self)
            let count = Int(zbar_symbol_get_count(current))
            if let existing = codes.firstIndex(where: { $0.text == text }) {
                // The same text twice in one frame (two copies of a pass): keep the lower count,
                // so a copy zbar calls new is not shown as held.
                if count < codes[existing].zbarCount { codes[existing] = DecodedCode(text: text, zbarCount: count) }
                continue
            }
            codes.append(DecodedCode(text: text, zbarCount: count))
        }
        if codes.count > 1 { codes.sort { $0.text < $1.text } }
        return codes
    }
}
