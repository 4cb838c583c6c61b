import Foundation
import LoopbackHTTP

/// One frame of an event stream as the tests see it.
struct SSEFrame: CustomStringConvertible {
    var id: Int64?
    var event: String?
    var data: String = ""
    /// `: ping` and other comment lines.
    var comment: String?
    var isEvent: Bool { event != nil }
    var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] }
    var description: String { comment.map { ":\($0)" } ?? "\(id.map(String.init) ?? "-") \(event ?? "?")" }
}

/// A raw-socket reader of `GET /api/events` (LoopbackHTTPClient reads whole bodies, and this
/// body never ends). Decodes the chunked framing and splits frames on blank lines.
final class SSETestClient {
    /// The status line and headers; for an error answer, its whole body too.
    private(set) var answer: HTTPAnswer
    private let socket: Int32
    private var raw: [UInt8] = []
    private var text: [UInt8] = []
    private(set) var ended = false

    convenience init(port: UInt16, token: String?, lastEventId: String? = nil, deviceToken: String? = nil) throws {
        var headers: [String: String] = [:]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        if let lastEventId { headers["Last-Event-ID"] = lastEventId }
        if let deviceToken { headers["X-Device-Token"] = deviceToken }
        try self.init(port: port, headers: headers)
    }

    /// - Parameter path: the request target (`/api/events?ticket=…` for a ticket).
    init(port: UInt16, path: String = "/api/events", headers: [String: String]) throws {
        let fd = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            Foundation.close(fd)
            throw TestFailure("connect: \(errno)")
        }
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        socket = fd
        answer = HTTPAnswer(status: 0, headers: [:], body: [])
        try readHead()
    }

    deinit { Foundation.close(socket) }

    func close() {
        shutdown(socket, Int32(SHUT_RDWR))
    }

    private func fill(timeout: TimeInterval) -> Bool {
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Int32(timeout * 1000)) > 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        guard count > 0 else {
            ended = true
            return false
        }
        raw += buffer[0..<count]
        return true
    }

    private func readHead() throws {
        let deadline = Date().addingTimeInterval(10)
        while true {
            if let end = find([13, 10, 13, 10], in: raw) {
                let head = String(decoding: raw[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
                raw.removeFirst(end + 4)
                let status = Int(head.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
                var headers: [String: String] = [:]
                for line in head.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                answer = HTTPAnswer(status: status, headers: headers, body: [])
                if status != 200, let length = headers["content-length"].flatMap(Int.init) {
                    while raw.count < length, fill(timeout: 5) {}
                    answer.body = Array(raw.prefix(length))
                }
                return
            }
            guard Date() < deadline, fill(timeout: 5) || !ended else { throw TestFailure("no response head") }
        }
    }

    /// Moves complete chunks from `raw` to `text`.
    private func dechunk() {
        while let lineEnd = find([13, 10], in: raw) {
            let sizeText = String(decoding: raw[0..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { return }
            if size == 0 {
                ended = true
                return
            }
            guard raw.count >= lineEnd + 2 + size + 2 else { return }
            text += raw[(lineEnd + 2)..<(lineEnd + 2 + size)]
            raw.removeFirst(lineEnd + 2 + size + 2)
        }
    }

    private func parseFrame() -> SSEFrame? {
        while let end = find([10, 10], in: text) {
            let lines = String(decoding: text[0..<end], as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            text.removeFirst(end + 2)
            var frame = SSEFrame()
            var dataLines: [String] = []
            for line in lines {
                if line.hasPrefix(":") { frame.comment = String(line.dropFirst()).trimmingCharacters(in: .whitespaces) }
                else if line.hasPrefix("id: ") { frame.id = Int64(line.dropFirst(4)) }
                else if line.hasPrefix("event: ") { frame.event = String(line.dropFirst(7)) }
                else if line.hasPrefix("data: ") { dataLines.append(String(line.dropFirst(6))) }
            }
            frame.data = dataLines.joined(separator: "\n")
            // A frame with only `retry:` dispatches nothing.
            if frame.event != nil || frame.comment != nil { return frame }
        }
        return nil
    }

    /// The next frame (event or comment), or nil if none came within `timeout` or the stream ended.
    func nextFrame(timeout: TimeInterval = 5) -> SSEFrame? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            dechunk()
            if let frame = parseFrame() { return frame }
            let left = deadline.timeIntervalSinceNow
            guard left > 0, !ended, fill(timeout: left) else { return nil }
        }
    }

    /// The next event, skipping comments.
    func nextEvent(timeout: TimeInterval = 5) -> SSEFrame? {
        let deadline = Date().addingTimeInterval(timeout)
        while let frame = nextFrame(timeout: max(0, deadline.timeIntervalSinceNow)) {
            if frame.isEvent { return frame }
        }
        return nil
    }

    /// Exactly `count` events (fewer if they do not come within `timeout`).
    func events(_ count: Int, timeout: TimeInterval = 5) -> [SSEFrame] {
        var frames: [SSEFrame] = []
        let deadline = Date().addingTimeInterval(timeout)
        while frames.count < count, let frame = nextEvent(timeout: max(0, deadline.timeIntervalSinceNow)) {
            frames.append(frame)
        }
        return frames
    }

    /// Events that arrive within `window` (used to show that nothing more comes).
    func drain(for window: TimeInterval) -> [SSEFrame] {
        var frames: [SSEFrame] = []
        let deadline = Date().addingTimeInterval(window)
        while deadline.timeIntervalSinceNow > 0, let frame = nextEvent(timeout: deadline.timeIntervalSinceNow) {
            frames.append(frame)
        }
        return frames
    }

    private func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where haystack[index] == needle[0] {
            if Array(haystack[index..<(index + needle.count)]) == needle { return index }
        }
        return nil
    }
}
