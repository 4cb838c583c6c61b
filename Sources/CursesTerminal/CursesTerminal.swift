#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CNcursesw
import GatePassConsole
import GatePassCore

/// The thin curses driver of the console: paints a `Canvas`, reads `Key`s, rings the bell.
/// Everything the screens decide lives in `GatePassConsole`; this type only talks to ncursesw.
///
/// One per process (curses drives one screen). Not `Sendable`: use it from the console's one
/// UI thread. The terminal is given back by `close()`, and also on `exit`, on SIGINT, SIGTERM,
/// SIGHUP, SIGQUIT and on a crash (see `TerminalRestore`).
///
/// ```swift
/// let terminal = try CursesTerminal.open(environment: ProcessInfo.processInfo.environment)
/// defer { terminal.close() }
/// while true {
///     var canvas = Canvas(width: terminal.size().width, height: terminal.size().height)
///     canvas.put("Hello", x: 0, y: 0, style: .title)
///     terminal.draw(canvas)
///     if terminal.readKey() == .control("c") { break }
/// }
/// ```
public final class CursesTerminal {
    /// Whether a terminal is open in this process.
    private static let isOpen = Locked<Bool>(false)

    /// The ncurses `SCREEN *` made by `newterm`.
    private let screen: OpaquePointer
    private let window: UnsafeMutablePointer<WINDOW>
    /// Whether styles get colour pairs (`ColorPolicy`).
    public let usesColor: Bool
    /// How long `readKey()` waits for a key before answering nil.
    private let readTimeout: Int32
    /// How long a lone ESC waits for the rest of a sequence before it is the Esc key.
    private let escapeWait: Int32
    /// How long an unfinished sequence waits for its next character before it is dropped.
    private let sequenceWait: Int32
    /// Turns the characters read into keys; holds a sequence between reads.
    private var decoder = KeyDecoder()
    /// Keys decoded but not yet answered by `readKey()`.
    private var decodedKeys: [Key] = []
    private var previousFrame: Canvas?
    private var needsFullRepaint = true
    private var isClosed = false
    /// Reused for every `setcchar` (up to `CCHARW_MAX` wide characters and a terminating 0).
    private var characterBuffer = [wchar_t](repeating: 0, count: CellText.maximumScalars + 1)

    private init(screen: OpaquePointer, window: UnsafeMutablePointer<WINDOW>, usesColor: Bool,
                 readTimeout: Int32, escapeWait: Int32, sequenceWait: Int32) {
        self.screen = screen
        self.window = window
        self.usesColor = usesColor
        self.readTimeout = readTimeout
        self.escapeWait = escapeWait
        self.sequenceWait = sequenceWait
    }

    deinit { close() }

    // MARK: - Opening and closing

    /// Takes over the terminal: raw keys (Ctrl-C arrives as `.control("c")`), no echo, keys
    /// decoded by `KeyDecoder`, a hidden cursor, and colours when `ColorPolicy` allows them.
    ///
    /// The corresponding C functions are `newterm`, `raw`, `noecho`, `keypad`, `curs_set`,
    /// `wtimeout`, `start_color`, `use_default_colors` and `init_pair`.
    ///
    /// - Parameters:
    ///   - environment: the process environment; `TERM` picks the terminal type, a non-empty
    ///     `NO_COLOR` turns colour off.
    ///   - readTimeoutMilliseconds: how long `readKey()` waits before answering nil, so the
    ///     shell can poll its events between keys.
    ///   - escapeWaitMilliseconds: how long a lone ESC waits for more before it is the Esc key
    ///     (a terminal writes a whole sequence at once; 50 ms leaves room for a slow link).
    ///   - sequenceWaitMilliseconds: how long a started sequence waits for its next character
    ///     before it is dropped (none of it becomes a key).
    /// - Throws: `TerminalError.notATerminal` when standard input or output is not a terminal,
    ///   `.alreadyOpen`, or `.unknownTerminal` when `newterm` refuses `TERM`.
    public static func open(environment: [String: String], readTimeoutMilliseconds: Int32 = 100,
                            escapeWaitMilliseconds: Int32 = 50,
                            sequenceWaitMilliseconds: Int32 = 500) throws(TerminalError) -> CursesTerminal {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else { throw .notATerminal }
        let claimed = isOpen.withLock { open in
            if open { return false }
            open = true
            return true
        }
        guard claimed else { throw .alreadyOpen }

        setlocale(LC_ALL, "")
        TerminalRestore.installHandlers()
        let terminalType = environment["TERM"]
        let newScreen: OpaquePointer? = if let terminalType {
            newterm(terminalType, gatepass_stdout(), gatepass_stdin())
        } else {
            newterm(nil, gatepass_stdout(), gatepass_stdin())
        }
        guard let newScreen, let window = gatepass_stdscr() else {
            TerminalRestore.removeHandlers()
            isOpen.withLock { $0 = false }
            throw .unknownTerminal(type: terminalType)
        }
        TerminalRestore.isActive.store(true, ordering: .sequentiallyConsistent)

        raw()
        noecho()
        // Keypad translation off: every character the terminal sends reaches `KeyDecoder`.
        // With it on, ncurses matches only the sequences of TERM's terminfo entry and hands
        // out any other sequence as separate characters (`ESC [ 1 ; 2 a` became Esc, `[`, `1`,
        // `;`, `2`, `a`: a tab switch), and terminals do not send what their entry says (tmux
        // sends `ESC [ 1 ~` for Home under TERM=xterm-256color, whose khome is `ESC O H`).
        // Off, ncurses also leaves the terminal in its normal cursor mode (no smkx), still
        // decodes UTF-8 in get_wch, and still reports KEY_RESIZE.
        keypad(window, false)
        curs_set(0)
        leaveok(window, true)

        let usesColor = ColorPolicy.usesColor(environment: environment, terminalHasColors: has_colors())
        if usesColor {
            start_color()
            // -1 is "the terminal's own background"; without use_default_colors it is black.
            let background: Int16 = use_default_colors() == OK ? -1 : Int16(COLOR_BLACK)
            for (pair, foreground) in ColorPalette.pairs {
                init_pair(pair, foreground.rawValue, background)
            }
            let code = ColorPalette.codePair
            init_pair(code.pair, code.foreground, code.background)
        }
        return CursesTerminal(screen: newScreen, window: window, usesColor: usesColor, readTimeout: readTimeoutMilliseconds,
                              escapeWait: escapeWaitMilliseconds, sequenceWait: sequenceWaitMilliseconds)
    }

    /// Gives the terminal back (`endwin`, then `delscreen`) and removes the signal handlers.
    /// Safe to call more than once.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        TerminalRestore.restore()
        delscreen(screen)
        TerminalRestore.removeHandlers()
        Self.isOpen.withLock { $0 = false }
    }

    // MARK: - Drawing

    /// The terminal's size in cells; right again after a `.resize` key (ncurses resizes its
    /// windows on SIGWINCH before `get_wch` reports `KEY_RESIZE`).
    public func size() -> (width: Int, height: Int) {
        precondition(!isClosed, "CursesTerminal used after close()")
        return (Int(getmaxx(window)), Int(getmaxy(window)))
    }

    /// Paints `canvas` from the top-left corner and refreshes. Rows equal to the previous
    /// frame are skipped; after a resize everything is erased (`werase`, not `clear`, so the
    /// terminal is not blanked first and nothing flickers) and painted again.
    ///
    /// A cell is one `Character`; a double-width character takes two terminal columns and
    /// pushes the rest of its row right (clipped at the edge).
    public func draw(_ canvas: Canvas) {
        let (width, height) = size()
        if let previousFrame, previousFrame.width != canvas.width || previousFrame.height != canvas.height {
            needsFullRepaint = true
        }
        if needsFullRepaint { werase(window) }
        for y in 0..<min(height, canvas.height) {
            let row = (y * canvas.width)..<((y + 1) * canvas.width)
            if !needsFullRepaint, let previousFrame, previousFrame.cells[row] == canvas.cells[row] { continue }
            paintRow(y, of: canvas, screenWidth: width)
        }
        // A refresh after `endwin` takes the terminal back; if a signal handler restored it and
        // the program carried on (its own SIGTERM handler), the exit hooks must restore it again.
        TerminalRestore.isActive.store(true, ordering: .sequentiallyConsistent)
        wrefresh(window)
        previousFrame = canvas
        needsFullRepaint = false
    }

    private func paintRow(_ y: Int, of canvas: Canvas, screenWidth: Int) {
        wmove(window, Int32(y), 0)
        wclrtoeol(window)
        var column = 0
        for x in 0..<canvas.width {
            guard column < screenWidth else { break }
            let cell = canvas[x, y]
            var scalars = CellText.scalars(of: cell.character)
            var cellWidth = Int(gatepass_wcwidth(wchar_t(bitPattern: scalars[0])))
            if cellWidth < 0 {
                scalars = [0x3F]  // "?" for what the locale cannot show
                cellWidth = 1
            } else if cellWidth == 0 {
                scalars = [0x20] + scalars.prefix(CellText.maximumScalars - 1)  // a lone combining mark
                cellWidth = 1
            }
            if column + cellWidth > screenWidth {
                scalars = [0x20]
                cellWidth = 1
            }
            put(scalars, appearance: CellAppearance(cell.style, usesColor: usesColor), y: y, x: column)
            column += cellWidth
        }
    }

    private func put(_ scalars: [UInt32], appearance: CellAppearance, y: Int, x: Int) {
        for (index, scalar) in scalars.enumerated() { characterBuffer[index] = wchar_t(bitPattern: scalar) }
        characterBuffer[scalars.count] = 0
        var attributes = gatepass_attr_normal()
        if appearance.bold { attributes |= gatepass_attr_bold() }
        if appearance.dim { attributes |= gatepass_attr_dim() }
        if appearance.reverse { attributes |= gatepass_attr_reverse() }
        if appearance.underline { attributes |= gatepass_attr_underline() }
        var character = cchar_t()
        characterBuffer.withUnsafeBufferPointer { buffer in
            _ = setcchar(&character, buffer.baseAddress, attributes, appearance.colorPair, nil)
        }
        // Writing the bottom-right cell answers ERR (the cursor cannot advance); it is painted.
        _ = mvwadd_wch(window, Int32(y), Int32(x), &character)
    }

    // MARK: - Keys and bell

    /// The next key, or nil when none came within the read timeout (or what came is no key:
    /// an ignored sequence, a code screens have no use for). The corresponding C function is
    /// `wget_wch`.
    ///
    /// After an ESC it waits the escape wait for more, then the sequence wait for each further
    /// character of a sequence, at most a bounded number of characters per call, so a flood
    /// of input cannot hold the shell's loop; the decoder keeps an unfinished sequence for the
    /// next call.
    public func readKey() -> Key? {
        precondition(!isClosed, "CursesTerminal used after close()")
        if decodedKeys.isEmpty { readInput() }
        guard !decodedKeys.isEmpty else { return nil }
        let key = decodedKeys.removeFirst()
        if key == .resize { needsFullRepaint = true }
        return key
    }

    /// The most characters one `readKey()` reads while no key comes of them.
    private static let charactersPerRead = 256

    private func readInput() {
        for _ in 0..<Self.charactersPerRead {
            let wait = switch decoder.pending {
            case .nothing: readTimeout
            case .escape: escapeWait
            case .sequence: sequenceWait
            }
            wtimeout(window, wait)
            var value: wint_t = 0
            switch wget_wch(window, &value) {
            case KEY_CODE_YES: decodedKeys += decoder.feed(.keyCode(UInt32(value)))
            case OK: decodedKeys += decoder.feed(.character(UInt32(value)))
            default: decodedKeys += decoder.inputPaused()   // nothing within the wait
            }
            if !decodedKeys.isEmpty || decoder.pending == .nothing { return }
        }
    }

    /// Rings the terminal bell (`beep`).
    public func bell() {
        precondition(!isClosed, "CursesTerminal used after close()")
        beep()
    }
}
