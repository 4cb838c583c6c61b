import QRCode

/// A rectangle in pass units.
public struct PassRect: Sendable, Equatable {
    public var x: Int, y: Int, width: Int, height: Int
}

/// One line of text on the pass, already cleaned, cut and sized to fit.
public struct PassTextLine: Sendable, Equatable {
    public enum Face: Sendable, Equatable { case regular, bold, monospaceBold }
    public enum Role: Sendable, Equatable {
        case siteName, visitorLabel, visitorName, hostLabel, hostName, validityLabel, validity, shortId, footer
    }
    public let role: Role
    public let text: String
    public let face: Face
    /// Pass units per em.
    public let fontSize: Double
    /// Where the pen starts (left end of the line) and the baseline.
    public let x: Double
    public let baseline: Double
    /// The set width, never more than the layout's ``PassLayout/contentWidth``.
    public let width: Double
    /// 0 is black, 255 white.
    public let grey: UInt8
}

/// Where the QR code sits: a fixed box, and inside it the code drawn on whole pass units.
public struct PassQRPlacement: Sendable {
    /// The box the layout keeps for the code: room for ``PassLayout/largestQRModules`` modules.
    public let box: PassRect
    /// The code itself, without its quiet zone.
    public let code: QRCode
    /// Pass units per module: a whole number, so on the PNG and on an SVG drawn at 300 dpi
    /// every module covers whole pixels.
    public let moduleSize: Int
    /// Top-left corner of the quiet zone, on whole units, centred in the box.
    public let originX: Int
    public let originY: Int

    public static let quietZone = 4
    public var modulesWithQuietZone: Int { code.width + 2 * Self.quietZone }
    /// The top-left corner of module (0, 0), inside the quiet zone.
    public var firstModuleX: Int { originX + Self.quietZone * moduleSize }
    public var firstModuleY: Int { originY + Self.quietZone * moduleSize }
}

extension PassQRPlacement: CustomStringConvertible {
    /// Short, so a failing test does not print every module.
    public var description: String {
        "QR \(code.width)×\(code.width) modules at \(moduleSize) units each, origin (\(originX), \(originY))"
    }
}

/// The pass's one design: every text line and the QR box, in pass units.
///
/// A pass unit is one pixel of the printed PNG: the page is A6 (105 × 148 mm) at 300 dpi,
/// 1240 × 1748 units. The SVG uses the same units in its `viewBox` and says 105mm × 148mm, the
/// HTML page shows that SVG. Laid out top to bottom: site name, a rule, visitor, host, validity,
/// the QR code, the short id in large monospace, a footer line.
///
/// The QR box is sized for the largest code the pass must carry: a signed GP2 text at version 9
/// (53 modules, 61 with the quiet zone) at 12 units a module, 732 units; today's GP1 code
/// (version 1 or 2) is drawn larger in the same box, still on whole units.
///
/// Pure: the fonts are only asked for advances. Nothing here reads a file or a clock.
public struct PassLayout: Sendable {
    public static let pageWidth = 1240
    public static let pageHeight = 1748
    public static let margin = 72
    public static var contentWidth: Int { pageWidth - 2 * margin }
    /// Version 9's 53 modules plus the quiet zone.
    public static let largestQRModules = 61
    public static let qrBoxSide = 732  // 61 × 12

    public let content: PassContent
    public let lines: [PassTextLine]
    public let rules: [PassRect]
    public let qr: PassQRPlacement

    /// Lays `content` out with `fonts`.
    ///
    /// - Throws: ``PassError/payloadTooLong(byteCount:modules:)`` when the QR payload needs a
    ///   code larger than version 9 at error correction Q (or libqrencode refuses it). Outside
    ///   text never throws: it is cleaned (``PassText/cleaned(_:limit:)``), shrunk and cut.
    public init(content: PassContent, fonts: PassFonts) throws(PassError) {
        self.content = content
        precondition(!content.qrPayload.utf8.contains(0), "a pass payload holds no NUL")
        let code: QRCode
        do {
            code = try QRCode(content.qrPayload, errorCorrection: .quartile)
        } catch {
            throw .payloadTooLong(byteCount: content.qrPayload.utf8.count, modules: nil)
        }
        let modules = code.width + 2 * PassQRPlacement.quietZone
        guard modules <= Self.largestQRModules else {
            throw .payloadTooLong(byteCount: content.qrPayload.utf8.count, modules: modules)
        }
        let box = PassRect(x: (Self.pageWidth - Self.qrBoxSide) / 2, y: 632,
                           width: Self.qrBoxSide, height: Self.qrBoxSide)
        let moduleSize = Self.qrBoxSide / modules
        let drawn = moduleSize * modules
        qr = PassQRPlacement(box: box, code: code, moduleSize: moduleSize,
                             originX: box.x + (box.width - drawn) / 2, originY: box.y + (box.height - drawn) / 2)

        let left = Double(Self.margin)
        let width = Double(Self.contentWidth)
        func line(_ role: PassTextLine.Role, _ text: String, _ face: PassTextLine.Face,
                  size: ClosedRange<Double>, baseline: Double, grey: UInt8 = 0, centred: Bool = false) -> PassTextLine {
            let font = fonts.font(face)
            let (fitted, fontSize, setWidth) = Self.fit(text, font: font, sizes: size, width: width)
            let x = centred ? (Double(Self.pageWidth) - setWidth) / 2 : left
            return PassTextLine(role: role, text: fitted, face: face, fontSize: fontSize, x: x,
                                baseline: baseline, width: setWidth, grey: grey)
        }
        let labelGrey: UInt8 = 0x55
        let host = PassText.cleaned(content.hostName)
        lines = [
            line(.siteName, PassText.cleaned(content.siteName), .bold, size: 36...64, baseline: 140),
            line(.visitorLabel, "VISITOR", .regular, size: 30...30, baseline: 246, grey: labelGrey),
            line(.visitorName, PassText.cleaned(content.visitorName), .bold, size: 40...84, baseline: 336),
            line(.hostLabel, "HOST", .regular, size: 30...30, baseline: 404, grey: labelGrey),
            line(.hostName, host.isEmpty ? "\u{2014}" : host, .regular, size: 32...52, baseline: 466),
            line(.validityLabel, "VALID", .regular, size: 30...30, baseline: 534, grey: labelGrey),
            line(.validity, PassText.cleaned(content.validity), .regular, size: 28...46, baseline: 592),
            line(.shortId, Self.grouped(PassText.cleaned(content.shortId, limit: 24)), .monospaceBold,
                 size: 60...150, baseline: 1530, centred: true),
            line(.footer, "Show this pass at the gate. If the scan fails, type the code above.", .regular,
                 size: 24...30, baseline: 1660, grey: labelGrey, centred: true),
        ]
        rules = [PassRect(x: Self.margin, y: 176, width: Self.contentWidth, height: 4)]
    }

    /// An 8-character short id as `XXXX-XXXX`, easier to read out and type (parsing ignores the
    /// hyphen); anything else as given.
    public static func grouped(_ shortId: String) -> String {
        guard shortId.count == 8 else { return shortId }
        return shortId.prefix(4) + "-" + shortId.suffix(4)
    }

    /// The largest size in `sizes` at which `text` fits `width`; at the smallest size, the
    /// longest prefix (whole characters) that fits with "…" after it.
    static func fit(_ text: String, font: OutlineFont, sizes: ClosedRange<Double>,
                    width: Double) -> (text: String, size: Double, width: Double) {
        let atLargest = font.width(of: text, size: sizes.upperBound)
        if atLargest <= width { return (text, sizes.upperBound, atLargest) }
        // Width grows linearly with size; round down to a half unit so it stays inside.
        let scaled = (sizes.upperBound * width / atLargest * 2).rounded(.down) / 2
        if scaled >= sizes.lowerBound {
            return (text, scaled, font.width(of: text, size: scaled))
        }
        let size = sizes.lowerBound
        var characters = Array(text)
        let ellipsis = String(PassText.ellipsis)
        // Binary search on the prefix length: widths only grow with length.
        var low = 0, high = characters.count
        while low < high {
            let middle = (low + high + 1) / 2
            if font.width(of: String(characters[..<middle]) + ellipsis, size: size) <= width {
                low = middle
            } else {
                high = middle - 1
            }
        }
        characters = Array(characters[..<low])
        while characters.last == " " { characters.removeLast() }
        let cut = String(characters) + ellipsis
        return (cut, size, font.width(of: cut, size: size))
    }
}

// MARK: - Drawing in pass units

extension PassLayout {
    /// The outline of `line`: its glyphs placed along the baseline and scaled to pass units.
    public func outline(of line: PassTextLine, fonts: PassFonts) -> [PathCommand] {
        let font = fonts.font(line.face)
        let scale = line.fontSize / font.unitsPerEm
        var penX = line.x
        var commands: [PathCommand] = []
        for scalar in line.text.unicodeScalars {
            let glyph = font.glyph(for: scalar)
            func x(_ value: Double) -> Double { penX + value * scale }
            func y(_ value: Double) -> Double { line.baseline - value * scale }
            for command in glyph.commands {
                switch command {
                case let .move(px, py): commands.append(.move(x: x(px), y: y(py)))
                case let .line(px, py): commands.append(.line(x: x(px), y: y(py)))
                case let .quadratic(cx, cy, px, py):
                    commands.append(.quadratic(controlX: x(cx), controlY: y(cy), x: x(px), y: y(py)))
                case let .cubic(c1x, c1y, c2x, c2y, px, py):
                    commands.append(.cubic(control1X: x(c1x), control1Y: y(c1y), control2X: x(c2x),
                                           control2Y: y(c2y), x: x(px), y: y(py)))
                case .close: commands.append(.close)
                }
            }
            penX += glyph.advance * scale
        }
        return commands
    }

    /// The dark modules as rectangles, one per horizontal run, on whole pass units.
    public var qrRuns: [PassRect] {
        var runs: [PassRect] = []
        let size = qr.moduleSize
        for row in 0..<qr.code.width {
            var column = 0
            while column < qr.code.width {
                guard qr.code.isDark(x: column, y: row) else { column += 1; continue }
                let start = column
                while column < qr.code.width, qr.code.isDark(x: column, y: row) { column += 1 }
                runs.append(PassRect(x: qr.firstModuleX + start * size, y: qr.firstModuleY + row * size,
                                     width: (column - start) * size, height: size))
            }
        }
        return runs
    }
}
