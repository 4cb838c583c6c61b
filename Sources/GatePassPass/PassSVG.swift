import QRCode

/// The pass as an SVG document: text as outlines, QR modules as rectangles on whole units.
///
/// The only outside text in the document is the `<title>` (escaped); every visible character is
/// a path, so librsvg, Chromium, ImageMagick and cairosvg draw the same picture whatever fonts
/// they have. Drawn at 300 dpi (1240 × 1748 px) it matches ``PassPNG`` pixel for pixel in the QR.
public enum PassSVG {
    /// The whole document, with its XML declaration.
    public static func document(_ layout: PassLayout, fonts: PassFonts) -> String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + element(layout, fonts: fonts, id: "pass")
    }

    /// The `<svg>` element alone, for inlining in the HTML page. `id` prefixes the element ids.
    public static func element(_ layout: PassLayout, fonts: PassFonts, id: String) -> String {
        let width = PassLayout.pageWidth, height = PassLayout.pageHeight
        var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="105mm" height="148mm" \
        viewBox="0 0 \(width) \(height)" role="img" aria-labelledby="\(id)-title">
        <title id="\(id)-title">\(XML.escape(title(layout.content)))</title>
        <rect x="0" y="0" width="\(width)" height="\(height)" fill="#ffffff"/>

        """
        for rule in layout.rules {
            svg += "<rect x=\"\(rule.x)\" y=\"\(rule.y)\" width=\"\(rule.width)\" height=\"\(rule.height)\" fill=\"#000000\"/>\n"
        }
        for line in layout.lines {
            let d = pathData(layout.outline(of: line, fonts: fonts))
            guard !d.isEmpty else { continue }
            svg += "<path fill=\"\(hex(line.grey))\" d=\"\(d)\"/>\n"
        }
        var modules = ""
        for run in layout.qrRuns {
            modules += "M\(run.x) \(run.y)h\(run.width)v\(run.height)h-\(run.width)z"
        }
        svg += "<path fill=\"#000000\" shape-rendering=\"crispEdges\" d=\"\(modules)\"/>\n</svg>\n"
        return svg
    }

    /// What the pass is, in words: the title screen readers and file browsers show. It is all a
    /// screen reader gets of the picture, so it says everything the picture says in text: the
    /// visitor, the site, the host (when there is one), the validity and the short id.
    static func title(_ content: PassContent) -> String {
        var title = "Visitor pass for \(PassText.cleaned(content.visitorName)) at \(PassText.cleaned(content.siteName))"
        let host = PassText.cleaned(content.hostName)
        if !host.isEmpty { title += ", host \(host)" }
        title += ", valid \(PassText.cleaned(content.validity)), short id \(PassText.cleaned(content.shortId))"
        return title
    }

    static func hex(_ grey: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        let pair = String([digits[Int(grey >> 4)], digits[Int(grey & 15)]])
        return "#" + pair + pair + pair
    }

    static func pathData(_ commands: [PathCommand]) -> String {
        var d = ""
        for command in commands {
            switch command {
            case let .move(x, y): d += "M\(number(x)) \(number(y))"
            case let .line(x, y): d += "L\(number(x)) \(number(y))"
            case let .quadratic(cx, cy, x, y): d += "Q\(number(cx)) \(number(cy)) \(number(x)) \(number(y))"
            case let .cubic(c1x, c1y, c2x, c2y, x, y):
                d += "C\(number(c1x)) \(number(c1y)) \(number(c2x)) \(number(c2y)) \(number(x)) \(number(y))"
            case .close: d += "Z"
            }
        }
        return d
    }

    /// Two decimals, no exponent, no trailing zeros: a hundredth of a pass unit is far below a
    /// printed dot, and every SVG reader parses this form.
    static func number(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let sign = hundredths < 0 ? "-" : ""
        let magnitude = abs(hundredths)
        let whole = magnitude / 100, fraction = magnitude % 100
        if fraction == 0 { return sign + String(whole) }
        if fraction % 10 == 0 { return sign + "\(whole).\(fraction / 10)" }
        return sign + "\(whole).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
