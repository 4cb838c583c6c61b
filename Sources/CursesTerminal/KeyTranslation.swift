import CNcursesw
import GatePassConsole

/// Turns one thing `get_wch` reports into a `Key`, without a terminal, so every mapping is
/// tested. `KeyDecoder` calls it for everything outside escape sequences.
///
/// `get_wch` (curs_get_wch(3X)) returns `KEY_CODE_YES` with a `KEY_*` value when keypad mode
/// recognised a function key (the driver turns keypad mode off, so only `KEY_RESIZE` comes),
/// or `OK` with a wide character otherwise.
public enum KeyTranslation {
    /// The key for one `get_wch` result, or nil for codes screens have no use for.
    ///
    /// - Parameters:
    ///   - isKeyCode: true when `get_wch` returned `KEY_CODE_YES` (`value` is a `KEY_*` code).
    ///   - value: the key code or the Unicode scalar value read.
    public static func key(isKeyCode: Bool, value: UInt32) -> Key? {
        isKeyCode ? functionKey(Int32(bitPattern: value)) : characterKey(value)
    }

    private static func functionKey(_ code: Int32) -> Key? {
        switch code {
        case KEY_UP: .up
        case KEY_DOWN: .down
        case KEY_LEFT: .left
        case KEY_RIGHT: .right
        case KEY_HOME: .home
        case KEY_END: .end
        case KEY_PPAGE: .pageUp
        case KEY_NPAGE: .pageDown
        case KEY_BACKSPACE: .backspace
        case KEY_DC: .delete
        case KEY_BTAB: .backTab
        case KEY_ENTER: .enter
        case KEY_RESIZE: .resize
        default: nil
        }
    }

    private static func characterKey(_ value: UInt32) -> Key? {
        switch value {
        case 10, 13: return .enter
        case 9: return .tab
        case 27: return .escape
        // Terminals send DEL (127) or Ctrl-H (8) for the Backspace key.
        case 8, 127: return .backspace
        // In raw mode Ctrl-letter arrives as 1…26; Ctrl-C is 3 and reaches the shell as a key.
        case 1...26: return .control(Character(Unicode.Scalar(UInt8(value) + 0x60)))
        // Ctrl-@, Ctrl-\ … Ctrl-_ and the C1 controls have no meaning for screens.
        case 0..<32, 0x80..<0xA0: return nil
        default:
            guard let scalar = Unicode.Scalar(value) else { return nil }
            return .character(Character(scalar))
        }
    }
}
