import GatePassConsole

/// Turns what a terminal sends into `Key`s: characters one by one, and escape sequences
/// parsed whole as ECMA-48 (5th edition, 1991) frames them, so a sequence nobody knows is
/// consumed and ignored instead of arriving as letters and digits that would act as commands.
///
/// Pure and without a terminal: the curses driver feeds it what `get_wch` reads, and decides
/// how long to wait for more (a lone ESC is the Esc key only once nothing follows soon; see
/// `pending` and `inputPaused()`).
///
/// ```swift
/// var decoder = KeyDecoder()
/// decoder.feed("\u{1B}[1;5A")   // [.up]  (Ctrl-Up: modifiers are dropped)
/// decoder.feed("\u{1B}[1;2a")   // []     (unknown: consumed whole)
/// decoder.feed("\u{1B}")        // []     pending == .escape
/// decoder.inputPaused()         // [.escape]
/// ```
///
/// What it knows, whatever `TERM` says (terminals disagree with their terminfo entries, and
/// tmux sends `ESC [ 1 ~` for Home under `TERM=xterm-256color`, whose entry says `ESC O H`):
/// - arrows `CSI A`…`D` and `SS3 A`…`D`; Home `CSI H`, `SS3 H`, `CSI 1 ~`, `CSI 7 ~`; End
///   `CSI F`, `SS3 F`, `CSI 4 ~`, `CSI 8 ~`; Delete `CSI 3 ~`; PgUp `CSI 5 ~`; PgDn `CSI 6 ~`;
///   Shift-Tab `CSI Z` — each also with xterm's modifier parameter (`CSI 1 ; 5 A`, `CSI 3 ; 2 ~`),
///   which screens do not distinguish;
/// - everything else framed by ECMA-48 is consumed and ignored: other control sequences
///   (`CSI` parameters 0x30–0x3F, intermediates 0x20–0x2F, final 0x40–0x7E), other `SS3` keys,
///   two-character escape sequences (Alt with a key), control strings (OSC, DCS, SOS, PM, APC,
///   ended by ST or BEL), the Linux console's `CSI [ x` and the X10 mouse report `CSI M b x y`;
///   the 8-bit introducers (U+009B CSI, U+008F SS3, U+009D OSC …) too.
public struct KeyDecoder: Sendable {
    /// One thing `get_wch` read.
    public enum Input: Sendable, Equatable {
        /// A character: `get_wch` answered `OK` with this Unicode scalar value.
        case character(UInt32)
        /// A curses key code: `get_wch` answered `KEY_CODE_YES` (with keypad translation off,
        /// only `KEY_RESIZE`).
        case keyCode(UInt32)
    }

    /// What the decoder holds, so the driver knows how long to wait for the next input.
    public enum Pending: Sendable, Equatable {
        /// Nothing: the next input starts a new key.
        case nothing
        /// A lone ESC: the Esc key if nothing follows soon, else the start of a sequence.
        case escape
        /// Part of a sequence; terminals write a sequence at once, so the rest is on its way.
        case sequence
    }

    private enum State: Sendable, Equatable {
        case ground
        /// After ESC.
        case escape
        /// After ESC and intermediates (0x20–0x2F): an nF escape sequence, ended by 0x30–0x7E.
        case escapeIntermediates
        /// After CSI (`ESC [` or U+009B).
        case controlSequence(SequenceBytes)
        /// After SS3 (`ESC O` or U+008F); some terminals put xterm's modifier parameters here too.
        case singleShift(SequenceBytes)
        /// A control string (OSC, DCS, SOS, PM, APC) until ST or BEL; `afterEscape` when its
        /// last character was ESC (ST is `ESC \`).
        case controlString(afterEscape: Bool)
        /// The characters still to skip after a sequence that carries raw characters behind its
        /// final byte: the Linux console's F1–F5 (`CSI [ A`) and the X10 mouse (`CSI M b x y`).
        case skipping(Int)
    }

    /// The parameter and intermediate bytes of a control sequence so far.
    private struct SequenceBytes: Sendable, Equatable {
        var parameters: [UInt8] = []
        var intermediates: [UInt8] = []
        /// Out of order, not ASCII, or too long: the sequence is consumed up to its final
        /// byte and then ignored.
        var malformed = false

        /// Longer than any key a terminal sends; beyond it nothing more is kept.
        static let maximumLength = 32

        mutating func append(_ byte: UInt8) {
            if parameters.count + intermediates.count >= Self.maximumLength { malformed = true }
            guard !malformed else { return }
            if (0x30...0x3F).contains(byte) {
                // ECMA-48: parameter bytes come before intermediate bytes.
                if intermediates.isEmpty { parameters.append(byte) } else { malformed = true }
            } else {
                intermediates.append(byte)
            }
        }
    }

    private var state = State.ground

    public init() {}

    /// What the decoder holds now.
    public var pending: Pending {
        switch state {
        case .ground: .nothing
        case .escape: .escape
        default: .sequence
        }
    }

    /// The keys `input` completes (none while a sequence is still open, or when it is ignored).
    public mutating func feed(_ input: Input) -> [Key] {
        switch input {
        case .keyCode(let code):
            // Out of band (the terminal was resized): a sequence in progress stays open.
            return KeyTranslation.key(isKeyCode: true, value: code).map { [$0] } ?? []
        case .character(let value):
            return feed(character: value)
        }
    }

    /// Feeds every character of `text` (tests, and anything that reads bytes as text).
    public mutating func feed(_ text: String) -> [Key] {
        text.unicodeScalars.flatMap { feed(.character($0.value)) }
    }

    /// Nothing came within the driver's wait: a lone ESC is the Esc key, and a sequence left
    /// unfinished is dropped whole (none of it becomes a key).
    public mutating func inputPaused() -> [Key] {
        defer { state = .ground }
        return state == .escape ? [.escape] : []
    }

    // MARK: - States

    private static let escapeCharacter: UInt32 = 0x1B
    /// CAN and SUB cancel a sequence (as DEC terminals and xterm treat them).
    private static let cancelCharacters: Set<UInt32> = [0x18, 0x1A]

    private mutating func feed(character value: UInt32) -> [Key] {
        switch state {
        case .ground:
            return ground(value)
        case .escape:
            return escape(value)
        case .escapeIntermediates:
            // Ended by 0x30–0x7E, started again by ESC, or ended malformed by anything else.
            if (0x20...0x2F).contains(value) { return [] }
            state = value == Self.escapeCharacter ? .escape : .ground
            return []
        case .controlSequence(let bytes):
            if (0x40...0x7E).contains(value) { return finishControlSequence(bytes, final: UInt8(value)) }
            guard let bytes = continued(bytes, with: value) else { return [] }
            state = .controlSequence(bytes)
            return []
        case .singleShift(let bytes):
            if (0x40...0x7E).contains(value) {
                state = .ground
                return bytes.malformed ? [] : Self.singleShiftKey(bytes, final: UInt8(value)).map { [$0] } ?? []
            }
            guard let bytes = continued(bytes, with: value) else { return [] }
            state = .singleShift(bytes)
            return []
        case .controlString(let afterEscape):
            return controlString(value, afterEscape: afterEscape)
        case .skipping(let count):
            if value == Self.escapeCharacter { state = .escape; return [] }
            state = count > 1 ? .skipping(count - 1) : .ground
            return []
        }
    }

    private mutating func ground(_ value: UInt32) -> [Key] {
        switch value {
        case Self.escapeCharacter: state = .escape
        case 0x9B: state = .controlSequence(SequenceBytes())
        case 0x8F: state = .singleShift(SequenceBytes())
        case 0x90, 0x98, 0x9D, 0x9E, 0x9F: state = .controlString(afterEscape: false)
        default: return KeyTranslation.key(isKeyCode: false, value: value).map { [$0] } ?? []
        }
        return []
    }

    private mutating func escape(_ value: UInt32) -> [Key] {
        switch value {
        case 0x5B: state = .controlSequence(SequenceBytes())   // [
        case 0x4F: state = .singleShift(SequenceBytes())       // O
        case 0x5D, 0x50, 0x58, 0x5E, 0x5F:                     // ] P X ^ _
            state = .controlString(afterEscape: false)
        case Self.escapeCharacter:
            // The first ESC was the Esc key (pressed twice, or Alt-Esc); the second starts over.
            return [.escape]
        case 0x20...0x2F:
            state = .escapeIntermediates
        default:
            // ESC with any other character is a two-character escape sequence (ECMA-35's Fp,
            // Fe and Fs), which is also what Alt with a key sends; it is consumed. So is ESC
            // with a control character, DEL or a non-ASCII character (Alt with those keys).
            state = .ground
        }
        return []
    }

    /// A control sequence with one more character that is not its final byte, or nil when
    /// that character ended it. ESC starts a new sequence and CAN or SUB cancel it (both drop
    /// what came so far); other control characters and DEL are ignored without ending it
    /// (terminals act on controls inside a sequence, and none may act as a key here); anything
    /// else that is not a parameter or intermediate byte (a non-ASCII character) makes it
    /// malformed: consumed up to its final byte, then ignored.
    private mutating func continued(_ bytes: SequenceBytes, with value: UInt32) -> SequenceBytes? {
        var bytes = bytes
        switch value {
        case 0x20...0x3F: bytes.append(UInt8(value))
        case Self.escapeCharacter: state = .escape; return nil
        case _ where Self.cancelCharacters.contains(value): state = .ground; return nil
        case 0..<0x20, 0x7F: break
        default: bytes.malformed = true
        }
        return bytes
    }

    private mutating func controlString(_ value: UInt32, afterEscape: Bool) -> [Key] {
        if afterEscape {
            // `ESC \` is ST; ESC followed by anything else ends the string and starts a new
            // escape sequence with that character, as terminals do.
            if value == 0x5C { state = .ground; return [] }
            state = .escape
            return escape(value)
        }
        switch value {
        case 0x07, 0x9C: state = .ground                       // BEL (xterm's OSC end), ST
        case Self.escapeCharacter: state = .controlString(afterEscape: true)
        case _ where Self.cancelCharacters.contains(value): state = .ground
        default: break                                          // the string's content
        }
        return []
    }

    private mutating func finishControlSequence(_ bytes: SequenceBytes, final: UInt8) -> [Key] {
        state = .ground
        guard !bytes.malformed, bytes.intermediates.isEmpty else { return [] }
        if bytes.parameters.isEmpty {
            switch final {
            case 0x5B: state = .skipping(1); return []   // Linux console F1–F5: CSI [ A … E
            case 0x4D: state = .skipping(3); return []   // X10 mouse: CSI M, button, column, row
            default: break
            }
        }
        return Self.controlSequenceKey(bytes.parameters, final: final).map { [$0] } ?? []
    }

    // MARK: - Keys

    /// The key of `CSI parameters final`, or nil for any sequence that is not a key.
    private static func controlSequenceKey(_ parameters: [UInt8], final: UInt8) -> Key? {
        guard let fields = numericFields(parameters) else { return nil }
        switch final {
        case 0x7E:  // ~ : the key's number, then an optional modifier
            guard (1...2).contains(fields.count), let number = fields[0] else { return nil }
            switch number {
            case 1, 7: return .home
            case 3: return .delete
            case 4, 8: return .end
            case 5: return .pageUp
            case 6: return .pageDown
            default: return nil   // 2 Insert, function keys, bracketed paste (200, 201) …
            }
        default:
            // A letter: no parameters, or 1 and a modifier (xterm's `CSI 1 ; 5 A`).
            guard fields.isEmpty || (fields.count <= 2 && (fields[0] == nil || fields[0] == 1)) else { return nil }
            return cursorKey(final: final, allowsBackTab: true)
        }
    }

    /// The key of `SS3 final`: what xterm sends in application cursor mode.
    private static func singleShiftKey(_ bytes: SequenceBytes, final: UInt8) -> Key? {
        guard bytes.intermediates.isEmpty, let fields = numericFields(bytes.parameters), fields.count <= 2 else { return nil }
        return cursorKey(final: final, allowsBackTab: false)
    }

    private static func cursorKey(final: UInt8, allowsBackTab: Bool) -> Key? {
        switch final {
        case 0x41: .up      // A
        case 0x42: .down    // B
        case 0x43: .right   // C
        case 0x44: .left    // D
        case 0x48: .home    // H
        case 0x46: .end     // F
        case 0x5A: allowsBackTab ? .backTab : nil   // Z
        default: nil
        }
    }

    /// The `;`-separated fields of `parameters` as numbers (nil for an empty field), or nil
    /// when any field is not plain decimal digits (private markers `< = > ?`, `:` sub-parameters).
    private static func numericFields(_ parameters: [UInt8]) -> [Int?]? {
        guard !parameters.isEmpty else { return [] }
        var fields: [Int?] = []
        for field in parameters.split(separator: 0x3B, omittingEmptySubsequences: false) {
            guard field.count <= 5, field.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            fields.append(field.isEmpty ? nil : field.reduce(0) { $0 * 10 + Int($1 - 0x30) })
        }
        return fields
    }
}
