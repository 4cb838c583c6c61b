import Foundation
import GatePassCore
@testable import GatePassServer

extension FuzzTarget {
    /// Raw bytes sent to a real Gate Pass server (libmicrohttpd, our HTTP layer, router,
    /// credentials, handlers, SQLite) on a loopback port, one fresh connection per input.
    ///
    /// `@OWNER@` and `@SCANNER@` in an input are replaced by live tokens (an OWNER's login
    /// token, a scanner token for the default checkpoint), minted for that input, so the
    /// fuzzer reaches the routes behind a credential too.
    static let httpRequest = FuzzTarget(name: "http-request", summary: "raw bytes into a real GatePassServer over loopback TCP") { input in
        let server = FuzzedServer.shared
        let request = server.substitutingTokens(in: Array(input))
        let started = ContinuousClock.now
        let outcome = LoopbackExchange.send(request, port: server.port, timeout: FuzzedServer.answerTimeout)
        server.statistics.count(outcome, took: ContinuousClock.now - started)
        switch outcome {
        case .answered(let answer):
            // Whatever arrived is HTTP (libmicrohttpd's own answers included), or nothing at all.
            FuzzCheck.require(answer.isEmpty || answer.starts(with: Array("HTTP/1.".utf8)),
                              "the server answered something that is not HTTP: \(answer.prefix(40))")
        case .noAnswerInTime:
            let shown = String(decoding: request.prefix(300), as: UTF8.self).unicodeScalars
                .map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? String($0) : "\\u{\(String($0.value, radix: 16))}" }.joined()
            FileHandle.standardError.write(Data("http-request: no answer in \(FuzzedServer.answerTimeout) s to: \(shown)\n".utf8))
            // A request may legitimately wait (a push-test waits up to 30 s), or libmicrohttpd
            // missed the end of the input (see answerTimeout); the server must still answer
            // everybody else.
            FuzzCheck.require(server.isAnswering(), "the server no longer answers /api/healthz after this input")
        }
    }
}

/// The one server of a fuzzing run, started on first use, with an organization whose OWNER
/// the token placeholders stand for. Its files live in a temporary folder removed at exit.
final class FuzzedServer: Sendable {
    static let shared = FuzzedServer()
    /// How long one input's connection waits for the first byte of an answer. Short, because
    /// libmicrohttpd 0.9.75 (epoll, edge-triggered) at times misses the end of a half-closed
    /// connection whose last bytes are an incomplete request, and then waits for more until
    /// its idle timeout; a real answer comes in milliseconds, and a late one only costs the
    /// healthz check.
    static let answerTimeout: TimeInterval = 0.25

    let server: GatePassServer
    let owner: Profile
    let statistics = ExchangeStatistics()
    var port: UInt16 { server.port }

    private init() {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-fuzz-\(getpid())").path
        try? FileManager.default.removeItem(atPath: directory)
        try! FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: FileManager.default.temporaryDirectory
            .appendingPathComponent("gatepass-fuzz-\(getpid())").path) }
        var configuration = ServerConfiguration()
        configuration.database = directory + "/gatepass.db"
        configuration.port = 0
        configuration.threads = 4
        // Nothing here needs to survive a power cut; the fuzzer needs speed.
        configuration.sqliteSynchronous = "OFF"
        // Every input is a new connection from 127.0.0.1, and an unfinished request may hold
        // its connection until the header deadline: like the benchmarks, the fuzzer raises
        // the per-address cap (ConnectionGuardTests test the cap itself).
        configuration.maxConnectionsPerIP = configuration.maxConnections
        // One listed origin, so preflights and CORS headers are fuzzed too (the corpus's `Origin`s).
        configuration.corsOrigins = ["http://fuzz.example"]
        do {
            server = try GatePassServer(configuration: configuration, devMode: true, clock: SystemWallClock(),
                                        logSink: DiscardedLog())
            owner = try Administration.addUser(store: server.store, email: "owner@fuzz.example", name: "Fuzz Owner",
                                               role: .owner, organization: "Fuzz", canScan: true, now: Date())
        } catch {
            fatalError("the fuzzed server did not start: \(error)")
        }
        // Where the time went, in the log after libFuzzer's own statistics.
        atexit { FuzzedServer.shared.statistics.print() }
    }

    /// The input with its placeholders replaced by fresh tokens (a new session each time, so
    /// an input that logs out does not disarm the ones after it).
    func substitutingTokens(in input: [UInt8]) -> [UInt8] {
        let ownerMark = Array("@OWNER@".utf8)
        let scannerMark = Array("@SCANNER@".utf8)
        let wantsOwner = input.firstRange(of: ownerMark) != nil
        let wantsScanner = input.firstRange(of: scannerMark) != nil
        guard wantsOwner || wantsScanner else { return input }
        let application = server.application
        let owner = self.owner
        let (login, scanner): (TokenClaims, TokenClaims?) = try! server.store.write { tx in
            let now = Date()
            let login = try Sessions.create(userId: owner.id, kind: .login, parent: nil, checkpointId: nil, now: now,
                                            lifetime: 3600, tx)
            guard wantsScanner else { return (login, nil) }
            let checkpoint = try tx.checkpoints.defaultCheckpoint(organizationId: owner.organizationId)!
            let scanner = try Sessions.create(userId: owner.id, kind: .scanner, parent: login.sessionId,
                                              checkpointId: checkpoint.id, now: now, lifetime: 3600, tx)
            return (login, scanner)
        }
        var output = input.replacing(ownerMark, with: Array(application.signer.sign(login).utf8))
        if let scanner { output = output.replacing(scannerMark, with: Array(application.signer.sign(scanner).utf8)) }
        return output
    }

    /// Whether a plain `GET /api/healthz` still gets its answer.
    func isAnswering() -> Bool {
        let request = Array("GET /api/healthz HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n\r\n".utf8)
        guard case .answered(let answer) = LoopbackExchange.send(request, port: port, timeout: 5) else { return false }
        return answer.starts(with: Array("HTTP/1.1 200".utf8))
    }
}

/// How the exchanges of a run ended, so that a slow run says why.
final class ExchangeStatistics: Sendable {
    private let counts = Locked((inputs: 0, slow: 0, unanswered: 0, slowSeconds: 0.0))

    func count(_ outcome: LoopbackExchange.Outcome, took elapsed: Duration) {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        counts.withLock { counts in
            counts.inputs += 1
            if case .noAnswerInTime = outcome { counts.unanswered += 1 }
            if seconds >= 0.04 { counts.slow += 1; counts.slowSeconds += seconds }
        }
    }

    func print() {
        let counts = counts.withLock { $0 }
        FileHandle.standardError.write(Data("""
            http-request: \(counts.inputs) inputs; \(counts.unanswered) without an answer in \(FuzzedServer.answerTimeout) s; \
            \(counts.slow) took 40 ms or more, \(Int(counts.slowSeconds)) s together

            """.utf8))
    }
}

struct DiscardedLog: LogSink {
    func log(_ line: String) {}
}

/// One request over a fresh TCP connection to 127.0.0.1: write the bytes, end the sending
/// half (so the server sees the request is all there is), read until the server closes.
enum LoopbackExchange {
    enum Outcome {
        case answered([UInt8])
        case noAnswerInTime
    }

    static func send(_ bytes: [UInt8], port: UInt16, timeout: TimeInterval) -> Outcome {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        precondition(socket >= 0, "socket: \(String(cString: strerror(errno)))")
        defer { close(socket) }
        var wait = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if connected != 0 {
            // libFuzzer's timer signal (SIGALRM, for -timeout) can interrupt connect; the
            // connection then goes on in the background: wait until it is made.
            precondition(errno == EINTR, "connect to the fuzzed server: \(String(cString: strerror(errno)))")
            var ready = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
            while poll(&ready, 1, 5_000) < 0 && errno == EINTR {}
            var failure: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(socket, SOL_SOCKET, SO_ERROR, &failure, &size)
            precondition(ready.revents & Int16(POLLOUT) != 0 && failure == 0,
                         "connect to the fuzzed server: \(String(cString: strerror(failure)))")
        }
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if count < 0, errno == EINTR { continue }
            // The server may close early (an answer before the whole body, say): read what it said.
            guard count > 0 else { break }
            sent += count
        }
        shutdown(socket, Int32(SHUT_WR))
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                if answer.isEmpty {
                    // Once the answer has begun, a pause means it is over: libmicrohttpd may
                    // keep the half-closed connection open after answering (see answerTimeout).
                    var pause = timeval(tv_sec: 0, tv_usec: 50_000)
                    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &pause, socklen_t(MemoryLayout<timeval>.size))
                }
                answer += buffer[..<count]
                // The first answer complete is enough: waiting for the close as well would cost
                // a pause whenever libmicrohttpd keeps the half-closed connection open.
                if isFirstAnswerComplete(answer) { return .answered(answer) }
                continue
            }
            if count == 0 { return .answered(answer) }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return answer.isEmpty ? .noAnswerInTime : .answered(answer) }
            return .answered(answer) // a reset: the server dropped the connection
        }
    }

    /// Whether `answer` holds one whole response: its head and all of its Content-Length, the
    /// last chunk of a chunked body, or — for an event stream, which never ends by itself —
    /// just its head. Anything else (HEAD, 1xx) is read until the server closes or pauses.
    static func isFirstAnswerComplete(_ answer: [UInt8]) -> Bool {
        guard let end = answer.firstRange(of: Array("\r\n\r\n".utf8)) else { return false }
        let head = String(decoding: answer[..<end.lowerBound], as: UTF8.self).lowercased()
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.hasPrefix("http/1.1 ") || statusLine.hasPrefix("http/1.0 "),
              !statusLine.dropFirst(9).hasPrefix("1") else { return false }
        func value(_ name: String) -> Substring? {
            lines.dropFirst().first { $0.hasPrefix(name + ":") }.map { $0.dropFirst(name.count + 1).drop(while: { $0 == " " }) }
        }
        if value("content-type")?.hasPrefix("text/event-stream") == true { return true }
        if value("transfer-encoding") == "chunked" { return answer.suffix(7).elementsEqual("\r\n0\r\n\r\n".utf8) }
        guard let length = value("content-length").flatMap({ Int($0) }) else { return false }
        return answer.count - end.upperBound >= length
    }
}
