import CurlHTTP
import Foundation
import Synchronization
import Testing
@testable import GatePassClient

/// TLS verification is always on; a private CA is trusted only when its file is named.
/// The peer is `openssl s_server -www` with a certificate made for this test.
@Suite(.serialized) struct TLSTests {
    func run(_ arguments: [String], in directory: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ClientTestFailure("openssl \(arguments.first ?? "") failed") }
    }

    /// Reads s_server's output until it says ACCEPT (true) or ends (false: it exited, the
    /// port was taken); false after 30 s too, which only a hung openssl reaches. The reader
    /// thread keeps draining the output afterwards, so s_server never blocks on a full pipe.
    static func waitUntilListening(_ output: FileHandle) -> Bool {
        let listening = DispatchSemaphore(value: 0)
        let said = Atomic<Bool>(false)
        Thread {
            var printed = ""
            while true {
                let chunk = output.availableData
                if chunk.isEmpty { break }
                printed += String(decoding: chunk, as: UTF8.self)
                if !said.load(ordering: .relaxed), printed.contains("ACCEPT") {
                    said.store(true, ordering: .relaxed)
                    listening.signal()
                }
                if printed.count > 4_096 { printed = String(printed.suffix(16)) }
            }
            if !said.load(ordering: .relaxed) { listening.signal() }
        }.start()
        _ = listening.wait(timeout: .now() + 30)
        return said.load(ordering: .relaxed)
    }

    @Test func untrustedCertificateIsRefusedAndANamedCAIsTrusted() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl"), "install openssl (.ci/install-packages does)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A CA, and a server certificate for 127.0.0.1 signed by it.
        try run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "1",
                 "-subj", "/CN=Gate Pass Test CA"], in: directory)
        try run(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
                 "-subj", "/CN=127.0.0.1"], in: directory)
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: directory + "/san.ext", atomically: true, encoding: .utf8)
        try run(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", "server.pem", "-days", "1", "-extfile", "san.ext"], in: directory)

        // s_server cannot report an ephemeral port, so pick one below the kernel's ephemeral
        // range; if it is taken the process exits and another is tried. Its "ACCEPT" line
        // (printed once it listens) or the end of its output (it exited) is the signal.
        var lastError: TransportError?
        var port = 0
        var server: Process?
        defer { if let server { kill(server.processIdentifier, SIGKILL); server.waitUntilExit() } }
        attempts: for _ in 0..<5 {
            port = Int.random(in: 20_000...32_000)
            let candidate = Process()
            candidate.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            candidate.arguments = ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", "server.pem", "-key", "server.key", "-www"]
            candidate.currentDirectoryURL = URL(fileURLWithPath: directory)
            let output = Pipe()
            candidate.standardOutput = output
            FileManager.default.createFile(atPath: directory + "/s_server.log", contents: nil)
            candidate.standardError = FileHandle(forWritingAtPath: directory + "/s_server.log")
            candidate.standardInput = FileHandle.nullDevice
            try candidate.run()
            // SIGKILL: a child inherits ignored signals, and the test runner may ignore SIGTERM.
            server = candidate
            if Self.waitUntilListening(output.fileHandleForReading) {
                do {
                    _ = try CurlSession(options: .init(connectTimeout: .seconds(1), requestTimeout: .seconds(3)))
                        .perform(CurlRequest(method: "GET", url: "https://127.0.0.1:\(port)/"))
                    lastError = nil
                } catch {
                    lastError = error
                }
                break attempts
            }
            kill(candidate.processIdentifier, SIGKILL)
            candidate.waitUntilExit()
            server = nil
        }
        let request = CurlRequest(method: "GET", url: "https://127.0.0.1:\(port)/")
        // Not trusted by default.
        guard case .tls = lastError else {
            let log = (try? String(contentsOfFile: directory + "/s_server.log", encoding: .utf8)) ?? ""
            Issue.record("expected a TLS refusal, got \(String(describing: lastError)); s_server said: \(log)"); return
        }
        #expect(ClientError.from(HTTPTransportError(lastError!)).isRetryable == false)

        // Trusted once the CA file is named.
        let trusted = CurlSession(options: .init(connectTimeout: .seconds(1), requestTimeout: .seconds(3),
                                                 caFile: directory + "/ca.pem"))
        let answer = try trusted.perform(request)
        #expect(answer.status == 200)
    }
}
