import CMagickWand

extension GreyImage {
    /// The image as a PNG file's bytes, encoded by ImageMagick (the same library that reads
    /// images here). `gatepass demo` writes its passes with it so that they can be opened in
    /// any viewer, or fed back to `gatepass scan --image`.
    /// - Throws: `.decoder` when ImageMagick cannot make or encode the image.
    public func pngData() throws(ScannerError) -> [UInt8] {
        try encoded(format: "PNG", quality: nil)
    }

    /// The image as a grey JPEG file's bytes at `quality` (1–100), encoded by ImageMagick: the
    /// scanner's hard-case corpus spoils frames with it (q30 blocks and ringing, as a cheap
    /// camera's compressed stream has them).
    /// - Throws: `.decoder` when ImageMagick cannot make or encode the image.
    public func jpegData(quality: Int) throws(ScannerError) -> [UInt8] {
        precondition((1...100).contains(quality), "a JPEG quality is 1 to 100")
        return try encoded(format: "JPEG", quality: quality)
    }

    /// `MagickImportImagePixels(…, "I", CharPixel, …)` then `MagickGetImageBlob` in `format`.
    private func encoded(format: String, quality: Int?) throws(ScannerError) -> [UInt8] {
        _ = magickWandReady
        guard let wand = NewMagickWand(), let background = NewPixelWand() else {
            throw .decoder("MagickWand could not be created (out of memory)")
        }
        defer { DestroyMagickWand(wand); DestroyPixelWand(background) }
        _ = PixelSetColor(background, "white")
        guard MagickNewImage(wand, width, height, background) == MagickTrue else {
            throw .decoder("ImageMagick could not make a \(width)×\(height) image")
        }
        let imported = pixels.withUnsafeBytes { MagickImportImagePixels(wand, 0, 0, width, height, "I", CharPixel, $0.baseAddress) }
        guard imported == MagickTrue, MagickSetImageFormat(wand, format) == MagickTrue,
              MagickSetImageType(wand, GrayscaleType) == MagickTrue else {
            throw .decoder("ImageMagick could not take the pixels for a \(format)")
        }
        if let quality, MagickSetImageCompressionQuality(wand, quality) != MagickTrue {
            throw .decoder("ImageMagick refused \(format) quality \(quality)")
        }
        var length = 0
        guard let blob = MagickGetImageBlob(wand, &length) else { throw .decoder("ImageMagick could not encode the \(format)") }
        defer { MagickRelinquishMemory(blob) }
        return Array(UnsafeRawBufferPointer(start: blob, count: length))
    }
}
