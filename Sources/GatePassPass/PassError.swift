/// Why a pass could not be drawn. Every case comes from the world (a missing font file, a
/// payload too long for the pass's QR box, an image library failure), never from the visitor
/// text, which is cleaned and cut rather than refused.
public enum PassError: Error, Sendable, Equatable, CustomStringConvertible {
    /// FreeType could not open or read a font file (`FT_New_Face`, `FT_Load_Glyph`): the path and
    /// FreeType's error code.
    case font(path: String, freeTypeError: Int32)
    /// The QR payload needs a larger code than the pass is laid out for (version 9 at error
    /// correction Q: 53 modules, 61 with the quiet zone), or libqrencode refused it.
    case payloadTooLong(byteCount: Int, modules: Int?)
    /// ImageMagick failed while drawing or encoding the PNG: the call and its message.
    case raster(call: String, message: String)

    public var description: String {
        switch self {
        case let .font(path, code):
            "FreeType could not read the font \(path) (error \(code)); install fonts-dejavu-core"
        case let .payloadTooLong(byteCount, modules):
            if let modules {
                "the pass payload (\(byteCount) bytes) needs a \(modules)-module QR code; the pass holds at most \(PassLayout.largestQRModules) (version 9, level Q)"
            } else {
                "libqrencode could not encode the pass payload (\(byteCount) bytes)"
            }
        case let .raster(call, message):
            "ImageMagick \(call) failed: \(message)"
        }
    }
}
