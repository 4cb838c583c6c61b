import Foundation
import GatePassCore

/// Where the server writes its log lines. Passed in, so tests can read what was logged.
public protocol LogSink: Sendable {
    func log(_ line: String)
}

/// What the application logs through: every line is made one visible line before any sink
/// sees it (`TerminalText.visible`), whatever it quotes — a request's method, an error that
/// names a value, a program's name — so no request can forge a log line, erase one (CR,
/// ESC[2K) or hide text in it (bidi overrides, zero-width characters).
struct VisibleLineLog: LogSink {
    let sink: any LogSink

    init(_ sink: any LogSink) {
        // Wrapping twice changes nothing but costs a scan of every line.
        self.sink = (sink as? VisibleLineLog)?.sink ?? sink
    }

    func log(_ line: String) { sink.log(TerminalText.visible(line)) }

    /// A field from a request (its method, say): visible, and cut to `maxLength` characters
    /// so one request cannot make a line of megabytes.
    static func field(_ text: String, maxLength: Int = 32) -> String {
        let visible = TerminalText.visible(text)
        return visible.count <= maxLength ? visible : visible.prefix(maxLength) + "…"
    }
}

/// Writes each line to standard error in one write, so lines from threads never interleave.
public struct StandardErrorLog: LogSink {
    public init() {}
    public func log(_ line: String) { writeLogLine(line, to: 2) }
}

/// Appends each line to a file (created 0600: request logs name routes and callers) in one
/// `write` with O_APPEND, so lines from threads never interleave. For a server whose standard
/// error belongs to something else, such as `gatepass demo`'s console.
public struct FileLog: LogSink {
    private let descriptor: Int32

    /// - Throws: a message naming the file when it cannot be opened for appending.
    public init(path: String) throws(FileLogError) {
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw FileLogError(message: "cannot open the log \(path): \(String(cString: strerror(errno)))") }
    }

    public func log(_ line: String) { writeLogLine(line, to: descriptor) }
}

public struct FileLogError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// One line, newline included, in one `write`.
private func writeLogLine(_ line: String, to descriptor: Int32) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
}
