import Foundation

/// A plain TCP connection to a loopback server from a chosen source address (any of
/// 127.0.0.0/8), for tests that must look like several clients, or send bytes no HTTP
/// client would.
final class RawSocket {
    let descriptor: Int32

    /// Connects to `127.0.0.1:port` from `source`; throws when the connection is refused.
    init(port: UInt16, source: String = "127.0.0.1", receiveTimeoutSeconds: Int = 10) throws {
        descriptor = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = port.bigEndian
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, connected == 0 else {
            let code = errno
            Foundation.close(descriptor)
            throw TestFailure("connect from \(source): errno \(code)")
        }
    }

    deinit { Foundation.close(descriptor) }

    /// Sends every byte; false when the peer has closed.
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    @discardableResult
    func write(_ text: String) -> Bool { write(Array(text.utf8)) }

    /// Reads until the peer closes (or the receive timeout passes); everything received.
    func readUntilClosed() -> (bytes: [UInt8], closed: Bool) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 { return (received, true) }
            if count < 0 { return (received, errno == ECONNRESET) }
            received += buffer[0..<count]
        }
    }

    /// Reads until `marker` has arrived, the peer closed or the timeout passed.
    func read(until marker: String) -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        let wanted = Array(marker.utf8)
        while !received.contains(subsequence: wanted) {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Reads one answer — its head and a body of its `Content-Length` — or what arrived before
    /// the peer closed or the timeout passed. Bytes past that answer are not read.
    func readResponse() -> String {
        var received: [UInt8] = []
        var byte: UInt8 = 0
        let endOfHead = Array("\r\n\r\n".utf8)
        while !received.suffix(4).elementsEqual(endOfHead) {
            guard recv(descriptor, &byte, 1, 0) == 1 else { return String(decoding: received, as: UTF8.self) }
            received.append(byte)
        }
        let head = String(decoding: received, as: UTF8.self)
        let length = head.components(separatedBy: "\r\n")
            .first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        var body = [UInt8](repeating: 0, count: length)
        var filled = 0
        while filled < length {
            let count = body[filled...].withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            filled += count
        }
        return head + String(decoding: body[..<filled], as: UTF8.self)
    }

    /// True when the peer has closed the connection (a read sees end-of-file or a reset).
    func peerClosed() -> Bool {
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, 0)
        return count == 0 || (count < 0 && errno == ECONNRESET)
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard !subsequence.isEmpty, count >= subsequence.count else { return subsequence.isEmpty }
        return (0...(count - subsequence.count)).contains { self[$0..<($0 + subsequence.count)].elementsEqual(subsequence) }
    }
}
