import CFreeType
import Foundation

/// One step of a path: a glyph's outline in font units with y up (TrueType's coordinates), or
/// a line of the pass in pass units with y down (``PassLayout/outline(of:fonts:)``).
public enum PathCommand: Sendable, Equatable {
    case move(x: Double, y: Double)
    case line(x: Double, y: Double)
    case quadratic(controlX: Double, controlY: Double, x: Double, y: Double)
    case cubic(control1X: Double, control1Y: Double, control2X: Double, control2Y: Double, x: Double, y: Double)
    case close
}

/// A glyph's outline and its advance, in font units.
public struct OutlineGlyph: Sendable, Equatable {
    public let advance: Double
    public let commands: [PathCommand]
}

/// A TrueType font read through FreeType, giving each character's outline and advance.
///
/// Why outlines: the pass must look the same in librsvg, Chromium, ImageMagick and cairosvg, and
/// a `<text>` element would be set in whatever font each of them finds. Drawing every glyph as a
/// path from one font file (DejaVu, from Debian's `fonts-dejavu-core`, pinned by
/// `.ci/install-packages`) makes the SVG self-contained, and the PNG is filled from the very same
/// paths, so the two cannot drift. A hand-made stroke font was the other choice; it would cover
/// ASCII only, where DejaVu covers Latin, Greek, Cyrillic and more.
///
/// What this does not do: shaping (no kerning, ligatures, Arabic joining or Indic reordering) and
/// bidi reordering: characters are set left to right in logical order. A character the font has
/// no glyph for is drawn as the font's `.notdef` box.
///
/// Glyphs are loaded unscaled and unhinted (`FT_LOAD_NO_SCALE | FT_LOAD_NO_HINTING`), decomposed
/// with `FT_Outline_Decompose` (freetype/ftoutln.h) and cached per character.
///
/// Synchronisation: a FreeType face is not thread-safe, so the face and the cache sit behind one
/// lock, an `NSLock` (a pthread mutex ThreadSanitizer sees; `Synchronization.Mutex` is a raw
/// futex to it, and passes drawn on two threads were reported as a race); the class is `final`
/// and releases the face and library in `deinit`.
// @unchecked: `state` is only touched while `lock` is held.
public final class OutlineFont: @unchecked Sendable {
    public let path: String
    /// The em square, in font units (2048 for DejaVu).
    public let unitsPerEm: Double
    /// The ascender and descender (negative), in font units.
    public let ascender: Double
    public let descender: Double

    private struct State {
        var library: FT_Library
        var face: FT_Face
        var cache: [Unicode.Scalar: OutlineGlyph] = [:]
    }
    private var state: State
    private let lock = NSLock()

    /// Opens the font file at `path` (face 0).
    ///
    /// - Throws: ``PassError/font(path:freeTypeError:)`` when FreeType cannot open it.
    public init(path: String) throws(PassError) {
        var library: FT_Library?
        var error = FT_Init_FreeType(&library)
        guard error == 0, let library else { throw .font(path: path, freeTypeError: error) }
        var face: FT_Face?
        error = FT_New_Face(library, path, 0, &face)
        guard error == 0, let face else {
            FT_Done_FreeType(library)
            throw .font(path: path, freeTypeError: error)
        }
        self.path = path
        unitsPerEm = Double(face.pointee.units_per_EM)
        ascender = Double(face.pointee.ascender)
        descender = Double(face.pointee.descender)
        state = State(library: library, face: face)
    }

    deinit {
        FT_Done_Face(state.face)
        FT_Done_FreeType(state.library)
    }

    /// The glyph for `scalar`, or the `.notdef` box when the font has none. A glyph FreeType
    /// cannot load (a damaged font) is drawn as nothing, with the font's average advance.
    public func glyph(for scalar: Unicode.Scalar) -> OutlineGlyph {
        lock.lock()
        defer { lock.unlock() }
        if let cached = state.cache[scalar] { return cached }
        let glyph = Self.load(scalar, face: state.face)
        state.cache[scalar] = glyph
        return glyph
    }

    /// The width of `text` set at `size` pass units per em.
    public func width(of text: String, size: Double) -> Double {
        var units = 0.0
        for scalar in text.unicodeScalars { units += glyph(for: scalar).advance }
        return units * size / unitsPerEm
    }

    private static func load(_ scalar: Unicode.Scalar, face: FT_Face) -> OutlineGlyph {
        let index = FT_Get_Char_Index(face, FT_ULong(scalar.value))  // 0 is .notdef
        let flags = Int32(FT_LOAD_NO_SCALE | FT_LOAD_NO_HINTING | FT_LOAD_NO_BITMAP)
        guard FT_Load_Glyph(face, index, flags) == 0, let slot = face.pointee.glyph,
              slot.pointee.format == FT_GLYPH_FORMAT_OUTLINE else {
            return OutlineGlyph(advance: Double(face.pointee.units_per_EM) / 2, commands: [])
        }
        // With FT_LOAD_NO_SCALE the advance is in font units.
        let advance = Double(slot.pointee.advance.x)
        let collector = OutlineCollector()
        var funcs = FT_Outline_Funcs(
            move_to: { to, user in
                OutlineCollector.from(user).moveTo(to!.pointee)
                return 0
            },
            line_to: { to, user in
                OutlineCollector.from(user).commands.append(.line(x: Double(to!.pointee.x), y: Double(to!.pointee.y)))
                return 0
            },
            conic_to: { control, to, user in
                OutlineCollector.from(user).commands.append(.quadratic(
                    controlX: Double(control!.pointee.x), controlY: Double(control!.pointee.y),
                    x: Double(to!.pointee.x), y: Double(to!.pointee.y)))
                return 0
            },
            cubic_to: { control1, control2, to, user in
                OutlineCollector.from(user).commands.append(.cubic(
                    control1X: Double(control1!.pointee.x), control1Y: Double(control1!.pointee.y),
                    control2X: Double(control2!.pointee.x), control2Y: Double(control2!.pointee.y),
                    x: Double(to!.pointee.x), y: Double(to!.pointee.y)))
                return 0
            },
            shift: 0, delta: 0)
        var outline = slot.pointee.outline
        let unmanaged = Unmanaged.passRetained(collector)
        defer { unmanaged.release() }
        guard FT_Outline_Decompose(&outline, &funcs, unmanaged.toOpaque()) == 0 else {
            return OutlineGlyph(advance: advance, commands: [])
        }
        if !collector.commands.isEmpty { collector.commands.append(.close) }
        return OutlineGlyph(advance: advance, commands: collector.commands)
    }
}

/// Gathers `FT_Outline_Decompose`'s callbacks; reached through the `void *` user argument,
/// since C callbacks cannot capture. Lives only inside one locked `load`.
private final class OutlineCollector {
    var commands: [PathCommand] = []

    static func from(_ user: UnsafeMutableRawPointer?) -> OutlineCollector {
        Unmanaged<OutlineCollector>.fromOpaque(user!).takeUnretainedValue()
    }

    /// FreeType starts each contour with a move and does not close the one before.
    func moveTo(_ point: FT_Vector) {
        if !commands.isEmpty { commands.append(.close) }
        commands.append(.move(x: Double(point.x), y: Double(point.y)))
    }
}

/// The three faces a pass is set in.
public struct PassFonts: Sendable {
    public let regular: OutlineFont
    public let bold: OutlineFont
    public let monospaceBold: OutlineFont

    public init(regular: OutlineFont, bold: OutlineFont, monospaceBold: OutlineFont) {
        self.regular = regular
        self.bold = bold
        self.monospaceBold = monospaceBold
    }

    /// Where Debian's `fonts-dejavu-core` puts its files.
    public static let dejaVuDirectory = "/usr/share/fonts/truetype/dejavu"

    /// DejaVu Sans, DejaVu Sans Bold and DejaVu Sans Mono Bold from `directory`.
    ///
    /// - Throws: ``PassError/font(path:freeTypeError:)`` when a file is missing or unreadable.
    public static func dejaVu(directory: String = dejaVuDirectory) throws(PassError) -> PassFonts {
        try PassFonts(regular: OutlineFont(path: directory + "/DejaVuSans.ttf"),
                      bold: OutlineFont(path: directory + "/DejaVuSans-Bold.ttf"),
                      monospaceBold: OutlineFont(path: directory + "/DejaVuSansMono-Bold.ttf"))
    }

    public func font(_ face: PassTextLine.Face) -> OutlineFont {
        switch face {
        case .regular: regular
        case .bold: bold
        case .monospaceBold: monospaceBold
        }
    }
}
