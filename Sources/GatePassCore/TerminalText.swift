/// Text from outside (a scanned code, a name, a note, a server's message) made safe to show
/// on a terminal or write into a log line: every character a terminal would *interpret* or
/// a reader could not *see* is replaced by a visible spelling of itself.
///
/// A terminal acts on C0 and C1 controls (ESC starts a sequence that can move the cursor,
/// erase a line or recolour it; CR returns to the start of the line; 0x9B is an 8-bit CSI),
/// and a bidirectional override can make "DENIED" read as something else. Invisible
/// characters (zero-width spaces and joiners, the BOM, other Unicode format characters)
/// make two different texts look identical. None of them has a place in a name or a pass
/// code, so they are shown, never passed on:
///
///     TerminalText.visible("\u{1B}[2KADMITTED\r")   // "\x1b[2KADMITTED\r" (as 16 plain characters)
///     TerminalText.visible("abc\u{202E}fed")         // "abc<U+202E>fed"
///
/// Spellings: `\t`, `\n`, `\r` for those three; `\xNN` for the other C0 controls and DEL;
/// `<U+XXXX>` for C1 controls, line and paragraph separators and every format character
/// (general category Cf: the bidi embeddings, overrides, isolates and marks U+202A–202E,
/// U+2066–2069, U+200E, U+200F, U+061C; zero-width U+200B–200D, U+2060; the BOM U+FEFF).
/// Everything else — letters of any script, combining marks, emoji — is kept as it is.
/// The result contains no character this function would change, so applying it twice is
/// the same as once.
public enum TerminalText {
    public static func visible(_ text: String) -> String {
        // Fastest path: printable ASCII (every request's log line) needs no Unicode lookup.
        if text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) { return text }
        // Fast path: most names and codes have nothing to change.
        guard text.unicodeScalars.contains(where: needsSpelling) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard needsSpelling(scalar) else {
                out.append(scalar)
                continue
            }
            out.append(contentsOf: spelling(of: scalar).unicodeScalars)
        }
        return String(out)
    }

    /// Whether `scalar` would be interpreted by a terminal or is invisible.
    public static func needsSpelling(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x2028, 0x2029: return true
        default: return scalar.properties.generalCategory == .format
        }
    }

    private static func spelling(of scalar: Unicode.Scalar) -> String {
        switch scalar.value {
        case 0x09: return "\\t"
        case 0x0A: return "\\n"
        case 0x0D: return "\\r"
        case 0x00...0x1F, 0x7F: return "\\x" + hex(scalar.value, digits: 2)
        default: return "<U+" + hex(scalar.value, digits: 4) + ">"
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: digits == 4)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
