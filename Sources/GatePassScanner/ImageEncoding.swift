import CMagickWand

extension GreyImage {
    /// The image as a PNG file's bytes, encoded by ImageMagick (the same library that reads
    /// images here). `gatepass demo` writes its passes with it so that they can be opened in
    /// any viewer, or fed back to `gatepass scan --image`.
    /// - Throws: `.decoder` when ImageMagick cannot make or encode the image.
    public func pngData() throws(ScannerError) -> [UInt8] {
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
        guard imported == MagickTrue, MagickSetImageFormat(wand, "PNG") == MagickTrue,
              MagickSetImageType(wand, GrayscaleType) == MagickTrue else {
            throw .decoder("ImageMagick could not take the pixels for a PNG")
        }
        var length = 0
        guard let blob = MagickGetImageBlob(wand, &length) else { throw .decoder("ImageMagick could not encode the PNG") }
        defer { MagickRelinquishMemory(blob) }
        return Array(UnsafeRawBufferPointer(start: blob, count: length))
    }
}
