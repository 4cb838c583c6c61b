import CQREncode

/// A QR code as a square of modules, drawn by libqrencode (`QRcode_encodeString`, qrencode.h).
public struct QRCode: Sendable {
    /// Modules per side, without the quiet zone.
    public let width: Int
    /// Row-major, true = dark.
    public let modules: [Bool]

    public enum ErrorCorrection: Sendable {
        case low, medium, quartile, high
        var level: QRecLevel {
            switch self {
            case .low: QR_ECLEVEL_L
            case .medium: QR_ECLEVEL_M
            case .quartile: QR_ECLEVEL_Q
            case .high: QR_ECLEVEL_H
            }
        }
    }

    public struct EncodingError: Error, Sendable, CustomStringConvertible {
        public var byteCount: Int
        public var description: String { "libqrencode could not encode \(byteCount) bytes" }
    }

    /// Encodes `text` in 8-bit mode at the smallest version that fits.
    public init(_ text: String, errorCorrection: ErrorCorrection = .medium) throws(EncodingError) {
        guard let code = QRcode_encodeString(text, 0, errorCorrection.level, QR_MODE_8, 1) else {
            throw EncodingError(byteCount: text.utf8.count)
        }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        var modules = [Bool](repeating: false, count: width * width)
        // Bit 0 of each byte is the module's colour (1 = dark); the other bits describe its role.
        for index in 0..<(width * width) { modules[index] = code.pointee.data[index] & 1 == 1 }
        self.width = width
        self.modules = modules
    }

    public func isDark(x: Int, y: Int) -> Bool { modules[y * width + x] }

    /// An SVG drawing: one path of unit squares, a 4-module quiet zone, scaled by `moduleSize`.
    public func svg(moduleSize: Int = 8, caption: String? = nil) -> String {
        let quiet = 4
        let side = (width + 2 * quiet) * moduleSize
        let captionHeight = caption == nil ? 0 : 4 * moduleSize
        var path = ""
        for y in 0..<width {
            for x in 0..<width where isDark(x: x, y: y) {
                path += "M\(x + quiet),\(y + quiet)h1v1h-1z"
            }
        }
        var svg = """
        <?xml version="1.0" encoding="UTF-8"?>
        <svg xmlns="http://www.w3.org/2000/svg" width="\(side)" height="\(side + captionHeight)" \
        viewBox="0 0 \(side) \(side + captionHeight)" shape-rendering="crispEdges">
        <rect width="100%" height="100%" fill="#ffffff"/>
        <g transform="scale(\(moduleSize))"><path fill="#000000" d="\(path)"/></g>

        """
        if let caption {
            svg += "<text x=\"\(side / 2)\" y=\"\(side + captionHeight / 2)\" font-family=\"monospace\" font-size=\"\(2 * moduleSize)\" text-anchor=\"middle\">\(XML.escape(caption))</text>\n"
        }
        svg += "</svg>\n"
        return svg
    }
}

/// Escaping for XML and HTML text and attribute values (the pass's SVG and HTML use it too).
public enum XML {
    /// `text` with `& < > " '` as entities; `'` as `&#39;`, which HTML 4 also reads.
    public static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
