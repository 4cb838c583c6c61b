import Foundation
import GatePassCore

/// The sink of `smtp_sink.py` (Debian's python3-aiosmtpd) on a free loopback port, with its
/// own folder: the CA it made, the recorded conversation, one file per received message.
/// Shared by the mail library's tests and the server's end-to-end mail tests.
public final class SMTPSink {
    public enum Mode: String, Sendable { case starttls, plain, smtps }

    public static let python = "/usr/bin/python3"
    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("smtp_sink.py").path
    public static let user = "gatepass-mailer"
    public static let password = "correct-horse-battery-staple"

    public let mode: Mode
    public let folder: String
    public private(set) var port = 0
    private var process: Process?

    public var url: String { (mode == .smtps ? "smtps" : "smtp") + "://127.0.0.1:\(port)" }
    public var caFile: String { folder + "/ca.pem" }

    /// Starts a sink; throws when python3-aiosmtpd is missing or the sink does not come up.
    public init(mode: Mode) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.python) else {
            throw SinkFailure("\(Self.python) is missing: install python3-aiosmtpd (.ci/install-packages does)")
        }
        self.mode = mode
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-smtp-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Starts the sink: on a free port the first time, on the same port (with the same CA and
    /// folder) after `stop()`, as a mail server that comes back after an outage.
    public func start() throws {
        guard process == nil else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = [Self.script, "--out", folder, "--mode", mode.rawValue, "--user", Self.user,
                             "--password", Self.password, "--port", String(port)]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        let errorLog = folder + "/sink.err"
        if !FileManager.default.fileExists(atPath: errorLog) { _ = FileManager.default.createFile(atPath: errorLog, contents: nil) }
        let errors = FileHandle(forWritingAtPath: errorLog)
        errors?.seekToEndOfFile()
        process.standardError = errors
        try process.run()
        self.process = process
        guard let line = Self.firstLine(output.fileHandleForReading),
              let portText = line.split(separator: ":").last, let port = Int(portText) else {
            stop()
            throw SinkFailure("the SMTP sink did not start: \(self.errors())")
        }
        self.port = port
    }

    /// Ends the sink (SIGKILL: a child inherits ignored signals, and the runner may ignore
    /// SIGTERM); its port is closed when this returns.
    public func stop() {
        guard let process else { return }
        self.process = nil
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    public func errors() -> String { (try? String(contentsOfFile: folder + "/sink.err", encoding: .utf8)) ?? "" }

    /// The recorded conversation: `C: VERB …` and `S: reply` lines, `-- connection`, `-- TLS`.
    public func conversation() -> [String] {
        ((try? String(contentsOfFile: folder + "/conversation.log", encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init)
    }

    /// The verbs the client sent, in order.
    public func commands() -> [String] {
        conversation().filter { $0.hasPrefix("C: ") }.map { String($0.dropFirst(3).prefix { $0 != " " }) }
    }

    /// The verbs of each connection, in order (a STARTTLS upgrade stays in its connection).
    public func sessions() -> [[String]] {
        var sessions: [[String]] = []
        for line in conversation() {
            if line == "-- connection" { sessions.append([]) }
            if line.hasPrefix("C: "), !sessions.isEmpty {
                sessions[sessions.count - 1].append(String(line.dropFirst(3).prefix { $0 != " " }))
            }
        }
        return sessions
    }

    public func messageFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix("message-") }
    }

    /// Every complete message received so far, in order.
    public func messages() throws -> [ReceivedMessage] {
        let count = messageFiles().filter { $0.hasSuffix(".json") }.count
        return try (0..<count).map { try message($0 + 1) }
    }

    /// The bytes of message `number` as they arrived (after DATA, dot-stuffing undone).
    public func rawMessage(_ number: Int) throws -> [UInt8] {
        _ = try message(number)
        return Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/message-\(number).eml")))
    }

    /// Message `number` as the sink parsed it. The sink renames the file into place when the
    /// message is complete; it is polled, as another process's state, for at most 30 s.
    public func message(_ number: Int) throws -> ReceivedMessage {
        let path = folder + "/message-\(number).json"
        let deadline = ContinuousClock.now + .seconds(30)
        while !FileManager.default.fileExists(atPath: path) {
            guard ContinuousClock.now < deadline else { throw SinkFailure("no message \(number) after 30 s: \(errors())") }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return try JSONDecoder().decode(ReceivedMessage.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Reads the sink's output up to its first line break; nil when it ends first (it failed)
    /// or after 30 s (only a hung sink). A reader thread keeps draining the pipe afterwards.
    static func firstLine(_ output: FileHandle) -> String? {
        let ready = DispatchSemaphore(value: 0)
        let line = Locked<String?>(nil)
        Thread {
            var printed = ""
            var said = false
            while true {
                let chunk = output.availableData
                if chunk.isEmpty { break }
                printed += String(decoding: chunk, as: UTF8.self)
                if !said, let end = printed.firstIndex(of: "\n") {
                    said = true
                    let first = String(printed[..<end])
                    line.withLock { $0 = first }
                    ready.signal()
                }
                if printed.count > 4_096 { printed = String(printed.suffix(16)) }
            }
            if !said { ready.signal() }
        }.start()
        _ = ready.wait(timeout: .now() + 30)
        return line.withLock { $0 }
    }
}

/// A message as the sink's Python email package (policy.default) read it.
public struct ReceivedMessage: Decodable, Sendable {
    public struct Part: Decodable, Sendable {
        public var contentType: String
        public var disposition: String?
        public var filename: String?
        public var contentID: String?
        public var charset: String?
        public var method: String?
        public var payloadBase64: String?

        /// The part's bytes, transfer encoding undone.
        public var payload: [UInt8] { payloadBase64.flatMap { Data(base64Encoded: $0) }.map(Array.init) ?? [] }
        public var text: String { String(decoding: payload, as: UTF8.self) }
    }
    public var headerNames: [String]
    public var subject: String
    public var from: String
    public var to: String
    public var date: String
    public var messageID: String
    public var parts: [Part]
    public var defects: [String]
    /// The envelope (nil for a message read from a file with `parse(emlFile:)`).
    public var mailFrom: String?
    public var recipients: [String]?

    /// The first part of this media type.
    public func part(_ contentType: String) -> Part? { parts.first { $0.contentType == contentType } }

    /// An `.eml` file parsed by the same Python code as the sink's messages.
    public static func parse(emlFile path: String) throws -> ReceivedMessage {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: SMTPSink.python)
        process.arguments = [SMTPSink.script, "--describe", path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw SinkFailure("smtp_sink.py --describe \(path) exited \(process.terminationStatus)") }
        return try JSONDecoder().decode(ReceivedMessage.self, from: data)
    }
}

public struct SinkFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A sink for `body`, stopped afterwards whatever happens.
public func withSMTPSink<T>(_ mode: SMTPSink.Mode, _ body: (SMTPSink) throws -> T) throws -> T {
    let sink = try SMTPSink(mode: mode)
    defer { sink.stop() }
    return try body(sink)
}
