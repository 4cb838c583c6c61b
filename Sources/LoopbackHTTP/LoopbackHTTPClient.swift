import Foundation

/// A small blocking HTTP/1.1 client over one keep-alive TCP connection, for tests and the
/// benchmark's load generator. It speaks exactly what they need (Content-Length and chunked
/// responses); the product's own client is built on libcurl.
///
/// Not thread-safe: use one client per thread.
public final class LoopbackHTTPClient {
    public struct Response: Sendable {
        public var status: Int
        /// Header names in lower case.
        public var headers: [String: String]
        public var body: [UInt8]

        public init(status: Int, headers: [String: String], body: [UInt8]) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        public var text: String { String(decoding: body, as: UTF8.self) }

        /// The body parsed as a JSON object (nil if it is not one).
        public var json: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    public let host: String
    public let port: UInt16
    public var timeoutSeconds: Int
    private var socket: Int32 = -1
    private var buffer: [UInt8] = []

    public init(host: String = "127.0.0.1", port: UInt16, timeoutSeconds: Int = 30) {
        self.host = host
        self.port = port
        self.timeoutSeconds = timeoutSeconds
    }

    deinit { disconnect() }

    public func disconnect() {
        if socket >= 0 { close(socket) }
        socket = -1
        buffer = []
    }

    private func connect() throws {
        disconnect()
        let descriptor = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(message: "socket() failed") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, host, &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Foundation.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(descriptor)
            throw Failure(message: "cannot connect to \(host):\(port) (errno \(errno))")
        }
        socket = descriptor
    }

    /// Sends one request and reads its response. A request on a connection the server closed
    /// in the meantime is retried once on a new connection.
    public func send(_ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8]? = nil) throws -> Response {
        var request = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        if let body { request += "Content-Length: \(body.count)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8) + (body ?? [])
        for attempt in 0..<2 {
            if socket < 0 { try connect() }
            do {
                try writeAll(bytes)
                return try readResponse(method: method)
            } catch let failure as Failure where attempt == 0 && failure.message.hasPrefix("connection closed before") {
                disconnect()
                continue
            }
        }
        throw Failure(message: "unreachable")
    }

    /// A JSON request: encodes `json` (any JSONSerialization value) and sets Content-Type.
    public func send(_ method: String, _ path: String, token: String? = nil, headers: [String: String] = [:],
                     json: Any) throws -> Response {
        var all = headers
        all["Content-Type"] = "application/json"
        if let token { all["Authorization"] = "Bearer \(token)" }
        // Sorted keys: the same value gives the same bytes every time (a dictionary's order may differ
        // between two equal dictionaries), so a repeated request is byte-identical, as idempotency needs.
        let data = try JSONSerialization.data(withJSONObject: json, options: [.fragmentsAllowed, .sortedKeys])
        return try send(method, path, headers: all, body: Array(data))
    }

    public func get(_ path: String, token: String? = nil, headers: [String: String] = [:]) throws -> Response {
        var all = headers
        if let token { all["Authorization"] = "Bearer \(token)" }
        return try send("GET", path, headers: all)
    }

    /// Writes raw bytes as they are (for malformed-request tests), then reads one response.
    public func sendRaw(_ bytes: [UInt8], method: String = "GET") throws -> Response {
        if socket < 0 { try connect() }
        try writeAll(bytes)
        return try readResponse(method: method)
    }

    private func writeAll(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(socket, $0.baseAddress, $0.count) }
            if written <= 0 {
                if errno == EINTR { continue }
                // The server may answer (413) and close before reading a large body.
                if errno == EPIPE || errno == ECONNRESET { return }
                throw Failure(message: "write failed (errno \(errno))")
            }
            offset += written
        }
    }

    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                return true
            }
            if count == 0 { return false }
            if errno == EINTR { continue }
            if errno == ECONNRESET { return false }
            throw Failure(message: "read failed (errno \(errno)); timed out or reset")
        }
    }

    private func readLine() throws -> String? {
        while true {
            if let index = indexOfCRLF() {
                let line = String(decoding: buffer[0..<index], as: UTF8.self)
                buffer.removeFirst(index + 2)
                return line
            }
            guard try fill() else { return nil }
        }
    }

    private func indexOfCRLF() -> Int? {
        guard buffer.count >= 2 else { return nil }
        for index in 0..<(buffer.count - 1) where buffer[index] == 13 && buffer[index + 1] == 10 { return index }
        return nil
    }

    private func readExactly(_ count: Int) throws -> [UInt8] {
        while buffer.count < count {
            guard try fill() else { throw Failure(message: "connection closed in the middle of a body") }
        }
        let out = Array(buffer[0..<count])
        buffer.removeFirst(count)
        return out
    }

    private func readResponse(method: String) throws -> Response {
        guard let statusLine = try readLine() else {
            throw Failure(message: "connection closed before a response")
        }
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let status = Int(parts[1]) else { throw Failure(message: "bad status line: \(statusLine)") }
        var headers: [String: String] = [:]
        while let line = try readLine(), !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        var body: [UInt8] = []
        if method == "HEAD" || status == 204 || status == 304 {
            body = []
        } else if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            while let sizeLine = try readLine() {
                let size = Int(sizeLine.split(separator: ";")[0], radix: 16) ?? 0
                if size == 0 {
                    while let trailer = try readLine(), !trailer.isEmpty {}
                    break
                }
                body += try readExactly(size)
                _ = try readLine()
            }
        } else if let length = headers["content-length"].flatMap({ Int($0) }) {
            body = try readExactly(length)
        } else {
            while try fill() {}
            body = buffer
            buffer = []
        }
        if headers["connection"]?.lowercased() == "close" { disconnect() }
        return Response(status: status, headers: headers, body: body)
    }
}
