import Foundation
import Synchronization
import Testing

/// The sink of `smtp_sink.py` (Debian's python3-aiosmtpd) on a free loopback port, with its
/// own folder: the CA it made, the recorded conversation, one file per received message.
final class SMTPSink {
    enum Mode: String { case starttls, plain, smtps }

    static let python = "/usr/bin/python3"
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("smtp_sink.py").path
    static let user = "gatepass-mailer"
    static let password = "correct-horse-battery-staple"

    let mode: Mode
    let folder: String
    private(set) var port = 0
    private let process = Process()
    private var stopped = false

    var url: String { (mode == .smtps ? "smtps" : "smtp") + "://127.0.0.1:\(port)" }
    var caFile: String { folder + "/ca.pem" }

    init(mode: Mode) throws {
        self.mode = mode
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-smtp-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = [Self.script, "--out", folder, "--mode", mode.rawValue, "--user", Self.user, "--password", Self.password]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: folder + "/sink.err", contents: nil)
        process.standardError = FileHandle(forWritingAtPath: folder + "/sink.err")
        try process.run()
        guard let line = Self.firstLine(output.fileHandleForReading),
              let portText = line.split(separator: ":").last, let port = Int(portText) else {
            stop()
            throw SinkFailure("the SMTP sink did not start: \(errors())")
        }
        self.port = port
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Ends the sink (SIGKILL: a child inherits ignored signals, and the runner may ignore SIGTERM).
    func stop() {
        guard !stopped else { return }
        stopped = true
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func errors() -> String { (try? String(contentsOfFile: folder + "/sink.err", encoding: .utf8)) ?? "" }

    /// The recorded conversation: `C: VERB …` and `S: reply` lines, `-- connection`, `-- TLS`.
    func conversation() -> [String] {
        ((try? String(contentsOfFile: folder + "/conversation.log", encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init)
    }

    /// The verbs the client sent, in order.
    func commands() -> [String] {
        conversation().filter { $0.hasPrefix("C: ") }.map { String($0.dropFirst(3).prefix { $0 != " " }) }
    }

    func messageFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix("message-") }
    }

    /// Message `number` as the sink parsed it. The sink renames the file into place when the
    /// message is complete; it is polled, as another process's state, for at most 30 s.
    func message(_ number: Int) throws -> ReceivedMessage {
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
        let line = Mutex<String?>(nil)
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
struct ReceivedMessage: Decodable {
    struct Part: Decodable {
        var contentType: String
        var disposition: String?
        var filename: String?
        var contentID: String?
        var charset: String?
        var method: String?
        var payloadBase64: String?

        var payload: [UInt8] { payloadBase64.flatMap { Data(base64Encoded: $0) }.map(Array.init) ?? [] }
    }
    var headerNames: [String]
    var subject: String
    var from: String
    var to: String
    var date: String
    var messageID: String
    var parts: [Part]
    var defects: [String]
    var mailFrom: String
    var recipients: [String]
}

struct SinkFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func withSMTPSink(_ mode: SMTPSink.Mode, _ body: (SMTPSink) throws -> Void) throws {
    try #require(FileManager.default.isExecutableFile(atPath: SMTPSink.python), "install python3-aiosmtpd (.ci/install-packages does)")
    let sink = try SMTPSink(mode: mode)
    defer { sink.stop() }
    try body(sink)
}
