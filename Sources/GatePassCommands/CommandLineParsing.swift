import Foundation
import GatePassCore

/// A usage mistake: printed with a pointer to --help, exit status 2.
public struct UsageError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A failure while running a command: printed as one sentence, exit status 1.
public struct CommandFailure: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

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

/// Waiting for SIGTERM or SIGINT in a long-running command (`serve`, `outbox watch`).
/// The signals are taken off their default action and delivered on a dispatch queue, so the
/// shutdown that follows runs as ordinary code that may take locks.
// @unchecked: `sources` is set in init and only cancelled after; the semaphore is thread-safe.
final class TerminationSignals: @unchecked Sendable {
    private let received = DispatchSemaphore(value: 0)
    private var sources: [any DispatchSourceSignal] = []

    init() {
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [received] in received.signal() }
            source.resume()
            sources.append(source)
        }
    }

    /// Ends `wait()` as a signal would (the work being waited on ended by itself).
    func interrupt() { received.signal() }

    /// Blocks until one of the signals arrives.
    func wait() {
        received.wait()
        sources.forEach { $0.cancel() }
    }
}

/// Help in the shape swift-argument-parser uses: OVERVIEW / USAGE / OPTIONS / SUBCOMMANDS.
public struct HelpText: Sendable {
    public var overview: String
    public var usage: String
    public var options: [(String, String)] = []
    public var subcommands: [(String, String)] = []

    public var rendered: String {
        var text = "OVERVIEW: \(overview)\n\nUSAGE: \(usage)\n"
        func table(_ title: String, _ rows: [(String, String)]) {
            guard !rows.isEmpty else { return }
            let width = min(30, rows.map(\.0.count).max() ?? 0)
            text += "\n\(title):\n"
            for (name, about) in rows {
                let padded = name.count > width ? name + "\n" + String(repeating: " ", count: width + 4)
                                                 : name + String(repeating: " ", count: width - name.count)
                text += "  \(padded)  \(about)\n"
            }
        }
        table("OPTIONS", options + [("-h, --help", "Show help information.")])
        table("SUBCOMMANDS", subcommands)
        return text
    }
}

/// Reads `--name value`, `--name=value` and `--flag` from a command's arguments; whatever is
/// left at `finish()` is a usage error.
public struct ArgumentReader {
    private var arguments: [String]

    public init(_ arguments: [String]) { self.arguments = arguments }

    public var wantsHelp: Bool { arguments.contains("--help") || arguments.contains("-h") }

    public mutating func flag(_ name: String) -> Bool {
        guard let index = arguments.firstIndex(of: name) else { return false }
        arguments.remove(at: index)
        return true
    }

    public mutating func option(_ name: String) throws(UsageError) -> String? {
        if let index = arguments.firstIndex(where: { $0.hasPrefix(name + "=") }) {
            let value = String(arguments[index].dropFirst(name.count + 1))
            arguments.remove(at: index)
            return value
        }
        guard let index = arguments.firstIndex(of: name) else { return nil }
        guard index + 1 < arguments.count, !arguments[index + 1].hasPrefix("--") else {
            throw UsageError("\(name) needs a value")
        }
        let value = arguments[index + 1]
        arguments.removeSubrange(index...index + 1)
        return value
    }

    public mutating func requiredOption(_ name: String) throws(UsageError) -> String {
        guard let value = try option(name) else { throw UsageError("\(name) is required") }
        return value
    }

    public mutating func integerOption(_ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let raw = try option(name) else { return nil }
        guard let value = Int(raw), range.contains(value) else {
            throw UsageError("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// The first argument that is not an option, removed.
    public mutating func positional() -> String? {
        guard let index = arguments.firstIndex(where: { !$0.hasPrefix("--") || $0 == "--" }) else { return nil }
        return arguments.remove(at: index)
    }

    public mutating func finish() throws(UsageError) {
        if let unknown = arguments.first {
            throw UsageError(unknown.hasPrefix("-") ? "unknown option \(unknown)" : "unexpected argument \(unknown)")
        }
    }
}
