import Foundation
import GatePassCore

/// Where the server writes its log lines. Passed in, so tests can read what was logged.
public protocol LogSink: Sendable {
    func log(_ line: String)
    /// Writes out every line logged so far before returning (a buffered sink); the server
    /// calls it as its last step of `stop`.
    func flush()
}

extension LogSink {
    public func flush() {}
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
    func flush() { sink.flush() }

    /// A field from a request (its method, say): visible, and cut to `maxLength` characters
    /// so one request cannot make a line of megabytes.
    static func field(_ text: String, maxLength: Int = 32) -> String {
        let visible = TerminalText.visible(text)
        return visible.count <= maxLength ? visible : visible.prefix(maxLength) + "…"
    }
}

/// Writes lines to standard error, buffered (see `BufferedLogWriter`): lines from threads never
/// interleave, and a busy server makes one `write` per batch of lines, not one per request.
public final class StandardErrorLog: LogSink {
    private let writer = BufferedLogWriter(descriptor: 2)
    public init() {}
    public func log(_ line: String) { writer.append(line) }
    public func flush() { writer.flush() }
}

/// Appends lines to a file (created 0600: request logs name routes and callers) with O_APPEND,
/// buffered as `StandardErrorLog` is. For a server whose standard error belongs to something
/// else, such as `gatepass demo`'s console.
public final class FileLog: LogSink {
    private let writer: BufferedLogWriter

    /// - Throws: a message naming the file when it cannot be opened for appending.
    public init(path: String) throws(FileLogError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw FileLogError(message: "cannot open the log \(path): \(String(cString: strerror(errno)))") }
        writer = BufferedLogWriter(descriptor: descriptor, closesDescriptor: true)
    }

    public func log(_ line: String) { writer.append(line) }
    public func flush() { writer.flush() }
}

public struct FileLogError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// Lines kept in memory and written to a descriptor in batches, so a request costs no system
/// call of its own (issue 15: one `write` per request was a tenth of a cached answer's time).
///
/// When lines reach the descriptor:
/// - at most `flushInterval` (100 ms) after they were logged: a thread of the writer's own
///   wakes then whenever lines are waiting;
/// - at once when `highWater` bytes are waiting, so a burst never holds much in memory;
/// - at `flush()`, which the server calls as the last step of its stop (so SIGTERM, which
///   `gatepass serve` answers with a stop, loses no line), and at `deinit`.
///
/// Every batch is whole lines, written in a loop until all bytes are out (a short write to a
/// pipe continues where it stopped), so lines from threads never interleave or tear. A write
/// that fails (a closed pipe, a full disk) drops that batch: a log must never stop the server.
final class BufferedLogWriter: Sendable {
    private let buffer: LineBuffer
    static let flushInterval: TimeInterval = 0.1
    static let highWater = 64 * 1024

    init(descriptor: Int32, closesDescriptor: Bool = false) {
        buffer = LineBuffer(descriptor: descriptor, closesDescriptor: closesDescriptor)
    }

    /// The flusher thread holds the buffer, not the writer: a writer nobody uses any more is
    /// freed at once, writes what it held and ends the thread.
    deinit { buffer.stop() }

    func append(_ line: String) { buffer.append(line) }

    /// Writes out every line appended before the call, then returns.
    func flush() { buffer.flush() }
}

/// The lines waiting, and the one descriptor they go to.
private final class LineBuffer: @unchecked Sendable {
    // @unchecked: every field but the two constants is touched only with `condition` locked,
    // and the descriptor is written only by the one thread that holds `flushing`.
    private let descriptor: Int32
    private let closesDescriptor: Bool
    private let condition = NSCondition()
    private var pending: [UInt8] = []
    /// A batch is being written: the next one waits, so batches keep their order.
    private var flushing = false
    private var stopped = false
    private var flusherStarted = false

    init(descriptor: Int32, closesDescriptor: Bool) {
        self.descriptor = descriptor
        self.closesDescriptor = closesDescriptor
        pending.reserveCapacity(BufferedLogWriter.highWater)
    }

    func append(_ line: String) {
        condition.lock()
        guard !stopped else {
            // Only a line logged during the writer's own deinit could come here; never lose it.
            condition.unlock()
            writeAll(Array((line + "\n").utf8))
            return
        }
        pending.append(contentsOf: line.utf8)
        pending.append(UInt8(ascii: "\n"))
        let full = pending.count >= BufferedLogWriter.highWater
        if !flusherStarted { startFlusher() }
        condition.unlock()
        if full { flush() }
    }

    func flush() {
        condition.lock()
        while flushing { condition.wait() }
        guard !pending.isEmpty else {
            condition.unlock()
            return
        }
        var batch: [UInt8] = []
        swap(&batch, &pending)
        flushing = true
        condition.unlock()
        writeAll(batch)
        condition.lock()
        flushing = false
        // Hand the emptied buffer's storage back, so a steady stream of lines reuses it.
        if pending.isEmpty {
            batch.removeAll(keepingCapacity: true)
            swap(&batch, &pending)
        }
        condition.broadcast()
        condition.unlock()
    }

    /// The writer went away: what is held is written, the flusher ends, the descriptor closes.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
        flush()
        condition.lock()
        while flushing { condition.wait() }
        condition.unlock()
        if closesDescriptor { close(descriptor) }
    }

    private func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 { offset += written } else if written < 0 && errno == EINTR { continue } else { return }
            }
        }
    }

    /// The thread that writes waiting lines within `flushInterval`; called with the lock held.
    private func startFlusher() {
        flusherStarted = true
        let thread = Thread { [self] in
            while waitForInterval() { flush() }
        }
        thread.name = "gatepass-log"
        thread.start()
    }

    /// Waits `flushInterval`; false once the writer has stopped.
    private func waitForInterval() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(BufferedLogWriter.flushInterval)
        // A broadcast (a flush ending) wakes the wait early; the interval still runs out.
        while !stopped && condition.wait(until: deadline) {}
        return !stopped
    }
}
