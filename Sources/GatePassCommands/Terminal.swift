import Foundation
import GatePassCore

/// Where a command writes. Tests pass a recording one; the executable passes the real streams.
public protocol Terminal: Sendable {
    func out(_ text: String)
    func err(_ text: String)
    /// Shows `prompt` and reads one line of input; nil at end of input.
    func readLine(prompt: String) -> String?
}

extension Terminal {
    /// A line for a person that quotes text from outside — a name, a note, a scanned code,
    /// a server's message, an argument: its controls, escape sequences, bidi overrides and
    /// invisible characters are spelled out (`TerminalText.visible`), never obeyed. Data
    /// meant for programs (`--json`, `--csv`) goes through `out(_:)` unchanged.
    func out(visible text: String) { out(TerminalText.visible(text)) }
    func err(visible text: String) { err(TerminalText.visible(text)) }
}

public struct StandardStreams: Terminal {
    public init() {}
    public func out(_ text: String) { write(1, text + "\n") }
    public func err(_ text: String) { write(2, text + "\n") }
    public func readLine(prompt: String) -> String? {
        write(2, prompt)
        return Swift.readLine(strippingNewline: true)
    }
    private func write(_ descriptor: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
    }
}

extension Terminal {
    /// With an empty terminator, prints `text` exactly when it ends with a line feed (`out`
    /// adds one). Checked on scalars: a CSV's last "\r\n" is one Character, which
    /// `hasSuffix("\n")` does not match, and the export then gained a stray line feed.
    func out(_ text: String, terminator: String) {
        if terminator.isEmpty, text.unicodeScalars.last == "\n" { out(String(text.unicodeScalars.dropLast())) } else { out(text) }
    }
}
