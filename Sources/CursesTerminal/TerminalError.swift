/// Why the curses terminal could not be opened.
public enum TerminalError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Standard input or output is not a terminal (a pipe, a file, a script).
    case notATerminal
    /// A `CursesTerminal` is already open in this process (curses drives one screen).
    case alreadyOpen
    /// `newterm` refused the terminal type (unknown or missing `TERM`).
    case unknownTerminal(type: String?)

    public var description: String {
        switch self {
        case .notATerminal:
            "gatepass console needs a terminal; for scripts use the commands: gatepass approvals, approve, checkin … (gatepass --help)"
        case .alreadyOpen:
            "the console terminal is already open in this process"
        case .unknownTerminal(let type):
            "cannot drive the terminal type \(type.map { "'\($0)'" } ?? "(TERM is not set)"); set TERM to a known type such as xterm-256color"
        }
    }
}
