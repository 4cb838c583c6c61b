import CMagickWand
import Foundation

// MARK: - Grey images from files

/// An 8-bit grey image read from a PGM (or other PNM), PNG or JPEG file with MagickWand.
///
/// ```swift
/// let image = try GreyImage(contentsOf: "pass.png")
/// let decoded = try image.withFrame(index: 0) { try decoder.decode($0) }
/// ```
public struct GreyImage: Sendable {
    public let width: Int
    public let height: Int
    /// `width × height` bytes, row by row: the image's intensity (ImageMagick's `I` channel),
    /// transparent areas laid on white first.
    public let pixels: [UInt8]

    /// The largest file read, so that a hostile path (a huge file, a device) cannot exhaust memory.
    public static let maximumFileSize = 64 << 20
    /// The largest width and height accepted; ImageMagick refuses larger images before
    /// allocating them (its width/height resource limits).
    public static let maximumDimension = 8192

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width >= 0 && height >= 0 && pixels.count == width * height, "a grey image needs width × height bytes")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// Reads and decodes an image file.
    ///
    /// The format is recognised from the file's first bytes (PNG signature, JPEG SOI marker,
    /// `P1`…`P6` for the PNM family) and then decoded by ImageMagick with that format fixed,
    /// from bytes read here: nothing else ImageMagick can read (scripts, vector formats,
    /// `format:path` names) is ever handed to it. Uses `MagickReadImageBlob` and
    /// `MagickExportImagePixels(…, "I", CharPixel, …)` (MagickWand, magick-image.h).
    ///
    /// - Throws: ``ScannerError/unreadable(path:reason:)`` when the file cannot be opened or
    ///   read (missing, a directory, no permission);
    ///   ``ScannerError/undecodable(path:reason:)`` when it is empty, too big, not one of
    ///   these formats, or damaged (a truncated PNG, a corrupt JPEG).
    public init(contentsOf path: String) throws(ScannerError) {
        try self.init(fileBytes: Self.readFile(path), path: path)
    }

    /// Decodes the bytes of an image file held in memory, as `init(contentsOf:)` decodes the
    /// file's; `path` names it in errors (the console reads the server's pass PNG this way; the
    /// fuzzing package feeds it bytes directly).
    public init(fileBytes bytes: [UInt8], path: String) throws(ScannerError) {
        guard !bytes.isEmpty else { throw .undecodable(path: path, reason: "the file is empty") }
        guard let format = Self.sniffFormat(bytes) else {
            throw .undecodable(path: path, reason: "not a PNG, JPEG or PGM image")
        }
        self = try Self.decode(bytes, format: format, path: path)
    }

    /// Calls `body` with the image as a frame.
    public func withFrame<Result>(index: Int, label: String? = nil,
                                  _ body: (FrameView) throws -> Result) rethrows -> Result {
        try pixels.withUnsafeBytes { luma in
            try body(FrameView(width: width, height: height, luma: luma, index: index, label: label))
        }
    }

    // MARK: Reading

    private static func readFile(_ path: String) throws(ScannerError) -> [UInt8] {
        // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw .unreadable(path: path, reason: errnoText()) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .unreadable(path: path, reason: errnoText()) }
        if status.st_mode & S_IFMT == S_IFDIR { throw .unreadable(path: path, reason: "it is a directory") }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .unreadable(path: path, reason: "not a regular file") }
        guard status.st_size <= maximumFileSize else {
            throw .undecodable(path: path, reason: "the file is larger than \(maximumFileSize >> 20) MB")
        }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var filled = 0
        // Read to end of file, not to st_size: a file that changes meanwhile is read as it is.
        while true {
            if filled == bytes.count {
                guard bytes.count < maximumFileSize else {
                    throw .undecodable(path: path, reason: "the file is larger than \(maximumFileSize >> 20) MB")
                }
                bytes.append(contentsOf: repeatElement(0, count: max(4096, bytes.count)))
            }
            let count = bytes.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, reason: errnoText())
            }
            if count == 0 { break }
            filled += count
        }
        bytes.removeSubrange(filled...)
        return bytes
    }

    /// The ImageMagick format name for the file's magic bytes, or nil for anything else.
    static func sniffFormat(_ bytes: [UInt8]) -> String? {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "PNG" }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "JPEG" }
        if bytes.count >= 2, bytes[0] == UInt8(ascii: "P"), (UInt8(ascii: "1")...UInt8(ascii: "6")).contains(bytes[1]) {
            return "PNM"
        }
        return nil
    }

    private static func decode(_ bytes: [UInt8], format: String, path: String) throws(ScannerError) -> GreyImage {
        _ = magickWandReady
        guard let wand = NewMagickWand() else { throw .decoder("MagickWand could not be created (out of memory)") }
        defer { DestroyMagickWand(wand) }
        _ = MagickSetFormat(wand, format)
        let read = bytes.withUnsafeBytes { MagickReadImageBlob(wand, $0.baseAddress, $0.count) }
        // A damaged file may still "read", with a warning (libpng and libjpeg fill in what is
        // missing: a truncated JPEG comes out half grey); a pass that is half missing must not
        // be scanned as if it were whole. The coders put such warnings on the image rather
        // than on the wand, so both are looked at. Other warnings (an odd colour profile, say)
        // leave the pixels whole and are let through.
        let wandProblem = exception(of: wand)
        guard read == MagickTrue, !isDamage(wandProblem.severity) else {
            throw .undecodable(path: path, reason: wandProblem.message ?? "the \(format) data is damaged or incomplete")
        }
        MagickSetFirstIterator(wand)
        if let image = GetImageFromMagickWand(wand), isDamage(image.pointee.exception.severity) {
            let reason = image.pointee.exception.reason.map { cleaned(String(cString: $0)) }
            throw .undecodable(path: path, reason: reason ?? "the \(format) data is damaged or incomplete")
        }
        let width = MagickGetImageWidth(wand)
        let height = MagickGetImageHeight(wand)
        guard width > 0, height > 0 else { throw .undecodable(path: path, reason: "the image has no pixels") }
        guard width <= maximumDimension, height <= maximumDimension else {
            throw .undecodable(path: path, reason: "\(width)×\(height) is larger than \(maximumDimension)×\(maximumDimension)")
        }
        if MagickGetImageAlphaChannel(wand) == MagickTrue {
            // Lay transparent areas on white: a dark code on a transparent background reads
            // as a dark code on white, which is how a viewer shows it.
            if let white = NewPixelWand() {
                defer { DestroyPixelWand(white) }
                _ = PixelSetColor(white, "white")
                _ = MagickSetImageBackgroundColor(wand, white)
                _ = MagickSetImageAlphaChannel(wand, RemoveAlphaChannel)
            }
        }
        var pixels = [UInt8](repeating: 0, count: width * height)
        let exported = pixels.withUnsafeMutableBytes { buffer in
            MagickExportImagePixels(wand, 0, 0, width, height, "I", CharPixel, buffer.baseAddress)
        }
        guard exported == MagickTrue else {
            throw .undecodable(path: path, reason: exception(of: wand).message ?? "ImageMagick could not export its pixels")
        }
        return GreyImage(width: width, height: height, pixels: pixels)
    }

    /// Whether an exception of this severity means the pixels are not (all) the file's.
    private static func isDamage(_ severity: ExceptionType) -> Bool {
        severity == CorruptImageWarning || severity.rawValue >= ErrorException.rawValue
    }

    /// The wand's pending exception: severity and a one-line message.
    private static func exception(of wand: OpaquePointer) -> (severity: ExceptionType, message: String?) {
        var severity = UndefinedException
        guard let raw = MagickGetException(wand, &severity) else { return (severity, nil) }
        defer { MagickRelinquishMemory(raw) }
        let message = cleaned(String(cString: raw))
        return (severity, message.isEmpty ? nil : message)
    }

    /// An ImageMagick message without its source location (`… @ error/png.c/ReadPNGImage/…`)
    /// and the empty file name a blob has (`` `' ``).
    private static func cleaned(_ message: String) -> String {
        var message = message
        if let location = message.range(of: " @ ") { message = String(message[..<location.lowerBound]) }
        return message.replacingOccurrences(of: " `'", with: "").trimmingCharacters(in: .whitespaces)
    }
}

/// MagickWandGenesis, once per process, before the first wand. A global's initialiser runs
/// exactly once even when several threads reach it together (Swift uses `swift_once`).
/// MagickWandTerminus is never called: ImageMagick stays set up until the process exits.
let magickWandReady: Void = {
    MagickWandGenesis()
    _ = MagickSetResourceLimit(WidthResource, MagickSizeType(GreyImage.maximumDimension))
    _ = MagickSetResourceLimit(HeightResource, MagickSizeType(GreyImage.maximumDimension))
    // A PNM file may hold many images back to back; only the first is used, so do not let
    // ImageMagick build a long list. (A limit of 1 stops even MagickNewImage.)
    _ = MagickSetResourceLimit(ListLengthResource, 16)
    // One image at a time is small work; ImageMagick's OpenMP threads would only compete
    // with zbar for the kiosk's two cores.
    _ = MagickSetResourceLimit(ThreadResource, 1)
}()

func errnoText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}

// MARK: - Frame sources

/// Image files as frames, one per file, in the order given; frame `i` is `paths[i]`.
///
/// ```swift
/// let source = try ImageFileSource(directory: "captures")
/// while try source.withNextFrame({ frame in … }) {}
/// ```
///
/// A file that cannot be read or decoded throws from the `withNextFrame` call that reached it
/// (``ScannerError/unreadable(path:reason:)`` or ``ScannerError/undecodable(path:reason:)``);
/// its index is used up, and the next call goes on with the following file. So a caller can
/// report a bad file and keep scanning the rest.
///
/// Not thread-safe; one caller at a time.
public final class ImageFileSource: FrameSource {
    /// The files, in frame order.
    public let paths: [String]
    private var next = 0

    public init(paths: [String]) {
        self.paths = paths
    }

    /// The regular files of a folder, in name order (byte order of the names, as `LC_ALL=C ls`
    /// lists them). Hidden files (names starting with a dot) and subfolders are left out;
    /// symbolic links to files are followed.
    ///
    /// - Throws: ``ScannerError/unreadable(path:reason:)`` when the folder cannot be listed.
    public convenience init(directory: String) throws(ScannerError) {
        try self.init(paths: Self.listFiles(in: directory))
    }

    public func withNextFrame(_ body: (FrameView) throws -> Void) throws -> Bool {
        guard next < paths.count else { return false }
        let index = next
        next += 1
        let image = try GreyImage(contentsOf: paths[index])
        try image.withFrame(index: index, label: paths[index], body)
        return true
    }

    static func listFiles(in directory: String) throws(ScannerError) -> [String] {
        guard let stream = opendir(directory) else { throw .unreadable(path: directory, reason: errnoText()) }
        defer { closedir(stream) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw .unreadable(path: directory, reason: errnoText()) }
                break
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard !name.hasPrefix(".") else { continue }
            names.append(name)
        }
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        return names
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            .map { base + $0 }
            .filter { path in
                var status = stat()
                // An entry whose stat fails (a dangling link) stays in, so that it is
                // reported as unreadable rather than silently skipped.
                guard stat(path, &status) == 0 else { return true }
                return status.st_mode & S_IFMT == S_IFREG
            }
    }
}
