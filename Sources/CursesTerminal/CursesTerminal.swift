#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CNcursesw
import GatePassConsole
import Synchronization

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
    private static let isOpen = Mutex<Bool>(false)

    /// The ncurses `SCREEN *` made by `newterm`.
    private let screen: OpaquePointer
    private let window: UnsafeMutablePointer<WINDOW>
    /// Whether styles get colour pairs (`ColorPolicy`).
    public let usesColor: Bool
    private var previousFrame: Canvas?
    private var needsFullRepaint = true
    private var isClosed = false
    /// Reused for every `setcchar` (up to `CCHARW_MAX` wide characters and a terminating 0).
    private var characterBuffer = [wchar_t](repeating: 0, count: CellText.maximumScalars + 1)

    private init(screen: OpaquePointer, window: UnsafeMutablePointer<WINDOW>, usesColor: Bool) {
        self.screen = screen
        self.window = window
        self.usesColor = usesColor
    }

    deinit { close() }

    // MARK: - Opening and closing

    /// Takes over the terminal: raw keys (Ctrl-C arrives as `.control("c")`), no echo, keypad
    /// keys, a fast Esc, a hidden cursor, and colours when `ColorPolicy` allows them.
    ///
    /// The corresponding C functions are `newterm`, `raw`, `noecho`, `keypad`, `set_escdelay`,
    /// `curs_set`, `wtimeout`, `start_color`, `use_default_colors` and `init_pair`.
    ///
    /// - Parameters:
    ///   - environment: the process environment; `TERM` picks the terminal type, a non-empty
    ///     `NO_COLOR` turns colour off.
    ///   - readTimeoutMilliseconds: how long `readKey()` waits before answering nil, so the
    ///     shell can poll its events between keys.
    /// - Throws: `TerminalError.notATerminal` when standard input or output is not a terminal,
    ///   `.alreadyOpen`, or `.unknownTerminal` when `newterm` refuses `TERM`.
    public static func open(environment: [String: String], readTimeoutMilliseconds: Int32 = 100) throws(TerminalError) -> CursesTerminal {
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
        keypad(window, true)
        set_escdelay(25)
        curs_set(0)
        leaveok(window, true)
        wtimeout(window, readTimeoutMilliseconds)

        let usesColor = ColorPolicy.usesColor(environment: environment, terminalHasColors: has_colors())
        if usesColor {
            start_color()
            // -1 is "the terminal's own background"; without use_default_colors it is black.
            let background: Int16 = use_default_colors() == OK ? -1 : Int16(COLOR_BLACK)
            for (pair, foreground) in ColorPalette.pairs {
                init_pair(pair, foreground.rawValue, background)
            }
        }
        return CursesTerminal(screen: newScreen, window: window, usesColor: usesColor)
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

    /// The next key, or nil when none came within the read timeout (or the key means nothing
    /// to screens). The corresponding C function is `wget_wch`.
    public func readKey() -> Key? {
        precondition(!isClosed, "CursesTerminal used after close()")
        var value: wint_t = 0
        let result = wget_wch(window, &value)
        let key: Key?
        switch result {
        case KEY_CODE_YES: key = KeyTranslation.key(isKeyCode: true, value: UInt32(value))
        case OK: key = KeyTranslation.key(isKeyCode: false, value: UInt32(value))
        default: return nil
        }
        if key == .resize { needsFullRepaint = true }
        return key
    }

    /// Rings the terminal bell (`beep`).
    public func bell() {
        precondition(!isClosed, "CursesTerminal used after close()")
        beep()
    }
}
