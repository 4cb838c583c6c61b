import CMagickWand

/// The printable pass: a 1240 × 1748 PNG (A6 at 300 dpi, its `pHYs` chunk says 11811 pixels
/// per metre), drawn with ImageMagick's MagickWand from the same outlines as ``PassSVG``.
///
/// Text is filled as paths (`DrawPath…`, nonzero rule, anti-aliased); the QR code is written
/// straight into the pixels (`MagickImportImagePixels`), so every module is a block of whole,
/// pure black or white pixels with no anti-aliasing at its edges. The PNG carries no time
/// chunks (`png:exclude-chunk=date,time`), so the same pass gives the same bytes.
public enum PassPNG {
    public static let dotsPerInch = 300.0

    /// The PNG file's bytes.
    ///
    /// - Throws: ``PassError/raster(call:message:)`` when ImageMagick fails (out of memory).
    public static func data(_ layout: PassLayout, fonts: PassFonts) throws(PassError) -> [UInt8] {
        _ = passMagickReady
        let wand = NewMagickWand()!
        defer { DestroyMagickWand(wand) }
        let colour = NewPixelWand()!
        defer { DestroyPixelWand(colour) }
        PixelSetColor(colour, "#ffffff")
        try check(MagickNewImage(wand, PassLayout.pageWidth, PassLayout.pageHeight, colour), wand, "MagickNewImage")

        let drawing = NewDrawingWand()!
        defer { DestroyDrawingWand(drawing) }
        // ImageMagick puts integer coordinates on pixel centres, SVG on pixel corners: shift by
        // half a pixel so both draw the same edges.
        DrawTranslate(drawing, -0.5, -0.5)
        DrawSetFillRule(drawing, NonZeroRule)
        DrawSetStrokeOpacity(drawing, 0)
        DrawSetStrokeWidth(drawing, 0)
        PixelSetColor(colour, "#000000")
        DrawSetFillColor(drawing, colour)
        for rule in layout.rules {
            DrawRectangle(drawing, Double(rule.x), Double(rule.y),
                          Double(rule.x + rule.width), Double(rule.y + rule.height))
        }
        for line in layout.lines {
            let commands = layout.outline(of: line, fonts: fonts)
            guard !commands.isEmpty else { continue }
            PixelSetColor(colour, PassSVG.hex(line.grey))
            DrawSetFillColor(drawing, colour)
            DrawPathStart(drawing)
            for command in commands {
                switch command {
                case let .move(x, y): DrawPathMoveToAbsolute(drawing, x, y)
                case let .line(x, y): DrawPathLineToAbsolute(drawing, x, y)
                case let .quadratic(cx, cy, x, y): DrawPathCurveToQuadraticBezierAbsolute(drawing, cx, cy, x, y)
                case let .cubic(c1x, c1y, c2x, c2y, x, y): DrawPathCurveToAbsolute(drawing, c1x, c1y, c2x, c2y, x, y)
                case .close: DrawPathClose(drawing)
                }
            }
            DrawPathFinish(drawing)
        }
        try check(MagickDrawImage(wand, drawing), wand, "MagickDrawImage")

        // The QR code with its quiet zone, module by module into whole pixels.
        let qr = layout.qr
        let side = qr.modulesWithQuietZone * qr.moduleSize
        var pixels = [UInt8](repeating: 255, count: side * side * 3)
        let offset = PassQRPlacement.quietZone * qr.moduleSize
        for run in layout.qrRuns {
            for y in (run.y - qr.firstModuleY)..<(run.y - qr.firstModuleY + run.height) {
                let rowStart = ((y + offset) * side + (run.x - qr.firstModuleX + offset)) * 3
                for index in rowStart..<(rowStart + run.width * 3) { pixels[index] = 0 }
            }
        }
        let imported = pixels.withUnsafeBytes { bytes in
            MagickImportImagePixels(wand, qr.originX, qr.originY, side, side, "RGB", CharPixel, bytes.baseAddress)
        }
        try check(imported, wand, "MagickImportImagePixels")

        try check(MagickSetImageUnits(wand, PixelsPerInchResolution), wand, "MagickSetImageUnits")
        try check(MagickSetImageResolution(wand, dotsPerInch, dotsPerInch), wand, "MagickSetImageResolution")
        try check(MagickSetImageDepth(wand, 8), wand, "MagickSetImageDepth")
        try check(MagickSetOption(wand, "png:exclude-chunk", "date,time"), wand, "MagickSetOption")
        try check(MagickSetImageFormat(wand, "PNG"), wand, "MagickSetImageFormat")
        var length = 0
        guard let blob = MagickGetImageBlob(wand, &length) else {
            throw .raster(call: "MagickGetImageBlob", message: message(wand))
        }
        defer { MagickRelinquishMemory(blob) }
        return Array(UnsafeBufferPointer(start: blob, count: length))
    }

    private static func check(_ result: MagickBooleanType, _ wand: OpaquePointer, _ call: String) throws(PassError) {
        guard result == MagickFalse else { return }
        throw .raster(call: call, message: message(wand))
    }

    private static func message(_ wand: OpaquePointer) -> String {
        var severity = UndefinedException
        guard let text = MagickGetException(wand, &severity) else { return "no message" }
        defer { MagickRelinquishMemory(text) }
        return String(cString: text)
    }
}

/// MagickWandGenesis, once per process, before the first wand (a global's initialiser runs
/// exactly once, through `swift_once`). The scanner module does the same for its own wands;
/// ImageMagick counts the calls. One thread: a pass is small work on a two-core server.
let passMagickReady: Void = {
    MagickWandGenesis()
    _ = MagickSetResourceLimit(ThreadResource, 1)
}()
