import Foundation
import GatePassAPI
import GatePassCore
import GatePassServer
import LoopbackHTTP
import Synchronization

// MARK: - One subscriber's socket and parser (reader thread only while it runs)

final class EventsCounters: Sendable {
    let headersOK = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    let arrived = Atomic<Int>(0)
    let frames = Atomic<Int>(0)
}

final class EventsSubscriber {
    enum Kind { case none, arrived, notification, other }
    private enum Body { case size, data(Int), dataEnd(Int), end }

    let fd: Int32
    let counters: EventsCounters
    var status = 0
    var headersDone = false
    var failure: String?
    var closedByServer = false
    /// (scanId, receipt time in monotonic ns) of every `visitor.arrived` frame.
    var arrivals: [(scanId: String, at: UInt64)] = []
    var frames = 0
    var pings = 0
    var arrivedWithoutScanId = 0

    private var header: [UInt8] = []
    private var chunked = false
    private var body = Body.size
    private var sizeLine: [UInt8] = []
    private var pending: [UInt8] = []
    private var kind = Kind.none
    private var scanId: String?

    init(fd: Int32, counters: EventsCounters) {
        self.fd = fd
        self.counters = counters
    }

    private static let headerEnd = Array("\r\n\r\n".utf8)
    private static let eventPrefix = Array("event:".utf8)
    private static let dataPrefix = Array("data:".utf8)
    private static let scanIdKey = Array(#""scanId":""#.utf8)
    private static let arrivedKind = Array("visitor.arrived".utf8)
    private static let notificationKind = Array("notification.new".utf8)

    func fail(_ message: String) {
        if failure == nil { failure = message }
    }

    /// Bytes just read from the socket at monotonic time `now`.
    func consume(_ bytes: UnsafeRawBufferPointer, at now: UInt64) {
        guard headersDone else {
            header.append(contentsOf: bytes)
            guard let end = Self.find(Self.headerEnd, in: header) else {
                if header.count > 65_536 { fail("no end of the response headers in 64 KiB") }
                return
            }
            let text = String(decoding: header[0..<end], as: UTF8.self)
            let lines = text.components(separatedBy: "\r\n")
            let parts = lines[0].split(separator: " ", maxSplits: 2)
            status = parts.count >= 2 ? Int(parts[1]) ?? 0 : 0
            chunked = lines.dropFirst().contains {
                $0.lowercased().hasPrefix("transfer-encoding:") && $0.lowercased().contains("chunked")
            }
            headersDone = true
            let rest = Array(header[(end + 4)...])
            header = []
            if status == 200 {
                counters.headersOK.add(1, ordering: .relaxed)
            } else {
                fail("GET /api/events answered \(status): \(String(decoding: rest.prefix(300), as: UTF8.self))")
                counters.failed.add(1, ordering: .relaxed)
                return
            }
            rest.withUnsafeBytes { consumeBody($0, at: now) }
            return
        }
        consumeBody(bytes, at: now)
    }

    private func consumeBody(_ bytes: UnsafeRawBufferPointer, at now: UInt64) {
        guard chunked else {
            consumeEvents(bytes, at: now)
            return
        }
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        let count = bytes.count
        while offset < count {
            switch body {
            case .size:
                if let newline = memchr(base + offset, 10, count - offset) {
                    let index = base.distance(to: UnsafeRawPointer(newline))
                    sizeLine.append(contentsOf: bytes[offset..<index])
                    offset = index + 1
                    let text = String(decoding: sizeLine, as: UTF8.self)
                    sizeLine.removeAll(keepingCapacity: true)
                    let digits = text.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
                    guard let size = Int(digits, radix: 16) else {
                        fail("bad chunk size line \(text.debugDescription)")
                        body = .end
                        return
                    }
                    body = size == 0 ? .end : .data(size)
                } else {
                    sizeLine.append(contentsOf: bytes[offset..<count])
                    offset = count
                }
            case .data(let left):
                let take = min(left, count - offset)
                consumeEvents(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + take)]), at: now)
                offset += take
                body = left == take ? .dataEnd(2) : .data(left - take)
            case .dataEnd(let left):
                let take = min(left, count - offset)
                offset += take
                body = left == take ? .size : .dataEnd(left - take)
            case .end:
                offset = count
            }
        }
    }

    /// SSE: lines end with "\n"; a blank line ends a frame.
    private func consumeEvents(_ bytes: UnsafeRawBufferPointer, at now: UInt64) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        let count = bytes.count
        while offset < count {
            guard let newline = memchr(base + offset, 10, count - offset) else {
                pending.append(contentsOf: bytes[offset..<count])
                return
            }
            let index = base.distance(to: UnsafeRawPointer(newline))
            if pending.isEmpty {
                line(UnsafeRawBufferPointer(rebasing: bytes[offset..<index]), at: now)
            } else {
                pending.append(contentsOf: bytes[offset..<index])
                pending.withUnsafeBytes { line($0, at: now) }
                pending.removeAll(keepingCapacity: true)
            }
            offset = index + 1
        }
    }

    private func line(_ raw: UnsafeRawBufferPointer, at now: UInt64) {
        var length = raw.count
        if length > 0 && raw[length - 1] == 13 { length -= 1 }
        let text = UnsafeRawBufferPointer(rebasing: raw[0..<length])
        if length == 0 {
            dispatch(at: now)
        } else if text[0] == UInt8(ascii: ":") {
            pings += 1
        } else if Self.hasPrefix(text, Self.eventPrefix) {
            var value = UnsafeRawBufferPointer(rebasing: text[Self.eventPrefix.count...])
            if value.first == UInt8(ascii: " ") { value = UnsafeRawBufferPointer(rebasing: value[1...]) }
            kind = Self.equal(value, Self.arrivedKind) ? .arrived : Self.equal(value, Self.notificationKind) ? .notification : .other
        } else if Self.hasPrefix(text, Self.dataPrefix), kind == .arrived {
            scanId = Self.scanId(in: text)
        }
    }

    private func dispatch(at now: UInt64) {
        guard kind != .none else { return }
        frames += 1
        counters.frames.add(1, ordering: .relaxed)
        if kind == .arrived {
            if let scanId {
                arrivals.append((scanId, now))
                counters.arrived.add(1, ordering: .relaxed)
            } else {
                arrivedWithoutScanId += 1
            }
        }
        kind = .none
        scanId = nil
    }

    private static func hasPrefix(_ text: UnsafeRawBufferPointer, _ prefix: [UInt8]) -> Bool {
        text.count >= prefix.count && prefix.withUnsafeBytes { memcmp(text.baseAddress!, $0.baseAddress!, prefix.count) == 0 }
    }

    private static func equal(_ text: UnsafeRawBufferPointer, _ other: [UInt8]) -> Bool {
        text.count == other.count && hasPrefix(text, other)
    }

    /// The value of `"scanId":"…"` in a data line.
    private static func scanId(in text: UnsafeRawBufferPointer) -> String? {
        guard let base = text.baseAddress else { return nil }
        let key = scanIdKey
        var offset = 0
        while offset + key.count <= text.count {
            guard let quote = memchr(base + offset, 34, text.count - offset - key.count + 1) else { return nil }
            let at = base.distance(to: UnsafeRawPointer(quote))
            if key.withUnsafeBytes({ memcmp(base + at, $0.baseAddress!, key.count) }) == 0 {
                let start = at + key.count
                guard start < text.count, let close = memchr(base + start, 34, text.count - start) else { return nil }
                let end = base.distance(to: UnsafeRawPointer(close))
                return String(decoding: UnsafeRawBufferPointer(rebasing: text[start..<end]), as: UTF8.self)
            }
            offset = at + 1
        }
        return nil
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where haystack[index] == needle[0] {
            if haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
        }
        return nil
    }
}

// MARK: - The set of subscribers and its reader thread

final class EventsSubscriberSet: @unchecked Sendable {
    let subscribers: [EventsSubscriber]
    let counters: EventsCounters
    private let stopFlag = Atomic<Bool>(false)
    /// Whether the reader waits with epoll (else poll).
    let usesEpoll = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private var running = false
    private var closed = false

    private init(subscribers: [EventsSubscriber], counters: EventsCounters) {
        self.subscribers = subscribers
        self.counters = counters
    }

    deinit {
        stop()
        close()
    }

    /// Connects `count` sockets (blocking connect and request write, then non-blocking);
    /// subscriber i presents `tokens[i % tokens.count]`.
    static func open(count: Int, port: UInt16, tokens: [String]) throws -> EventsSubscriberSet {
        let counters = EventsCounters()
        var subscribers: [EventsSubscriber] = []
        subscribers.reserveCapacity(count)
        var failure: Error?
        for index in 0..<count {
            let request = "GET \(Endpoint.eventsStream.path()) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
                + "Authorization: Bearer \(tokens[index % tokens.count])\r\nAccept: text/event-stream\r\n"
                + "Cache-Control: no-cache\r\n\r\n"
            do {
                let fd = try connectStream(port: port, request: Array(request.utf8))
                subscribers.append(EventsSubscriber(fd: fd, counters: counters))
            } catch {
                failure = error
                break
            }
        }
        let set = EventsSubscriberSet(subscribers: subscribers, counters: counters)
        if let failure {
            set.close()
            throw BenchFailure("opening subscriber \(subscribers.count + 1) of \(count): \(failure)")
        }
        return set
    }

    /// Subscribers on sockets already connected (the raw fan-out floor); made non-blocking.
    static func adopt(_ descriptors: [Int32]) -> EventsSubscriberSet {
        let counters = EventsCounters()
        let subscribers = descriptors.map { fd in
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            return EventsSubscriber(fd: fd, counters: counters)
        }
        return EventsSubscriberSet(subscribers: subscribers, counters: counters)
    }

    static func connectStream(port: UInt16, request: [UInt8]) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchFailure("socket() failed (errno \(errno))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            throw BenchFailure("connect failed (errno \(code))")
        }
        var offset = 0
        while offset < request.count {
            let written = request[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                let code = errno
                Glibc.close(fd)
                throw BenchFailure("write failed (errno \(code))")
            }
            offset += written
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }

    func start() {
        running = true
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "events-reader"
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Stops and joins the reader; afterwards the subscribers may be read from this thread.
    func stop() {
        guard running else { return }
        running = false
        stopFlag.store(true, ordering: .releasing)
        finished.wait()
    }

    func close() {
        guard !closed else { return }
        closed = true
        for subscriber in subscribers { Glibc.close(subscriber.fd) }
    }

    private func run() {
        // Foundation does not name the kernel thread; this does (for the CPU breakdown).
        let comm = Glibc.open("/proc/thread-self/comm", O_WRONLY)
        if comm >= 0 {
            _ = write(comm, "events-reader", 13)
            Glibc.close(comm)
        }
        let capacity = 1 << 18
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        defer { buffer.deallocate() }
        /// Reads what subscriber `index` has; false when its socket is finished.
        func drain(_ index: Int) -> Bool {
            let subscriber = subscribers[index]
            while true {
                let count = read(subscriber.fd, buffer, capacity)
                let now = monotonicNanoseconds()
                if count > 0 {
                    subscriber.consume(UnsafeRawBufferPointer(start: buffer, count: count), at: now)
                    if count < capacity { return true }
                    continue
                }
                if count < 0 && errno == EINTR { continue }
                if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return true }
                if count == 0 {
                    subscriber.closedByServer = true
                } else {
                    subscriber.fail("read failed (errno \(errno))")
                }
                if !subscriber.headersDone { counters.failed.add(1, ordering: .relaxed) }
                return false
            }
        }
        if let epoll = EventsEpoll() {
            defer { epoll.release() }
            var registered = true
            for (index, subscriber) in subscribers.enumerated() where !epoll.add(subscriber.fd, token: UInt64(index)) {
                registered = false
            }
            if registered {
                usesEpoll.store(true, ordering: .relaxed)
                while !stopFlag.load(ordering: .acquiring) {
                    epoll.wait(timeoutMilliseconds: 20) { index in
                        if !drain(index) { epoll.remove(subscribers[index].fd) }
                    }
                }
                return
            }
        }
        // poll() over every socket: works anywhere, but costs a scan of all N per wake.
        var descriptors = subscribers.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        while !stopFlag.load(ordering: .acquiring) {
            let ready = poll(&descriptors, nfds_t(descriptors.count), 20)
            guard ready > 0 else { continue }
            var left = ready
            for index in descriptors.indices where descriptors[index].revents != 0 {
                if !drain(index) { descriptors[index].fd = -1 }
                left -= 1
                if left == 0 { break }
            }
        }
    }
}

/// epoll through dlsym: Swift's Glibc module does not import `epoll_wait`, and imports
/// `struct epoll_event` without its x86-64 packing, so the events are laid out by hand.
struct EventsEpoll {
    private typealias Create = @convention(c) (Int32) -> Int32
    private typealias Control = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    private typealias Wait = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32
    #if arch(x86_64)
    private static let stride = 12, dataOffset = 4
    #else
    private static let stride = 16, dataOffset = 8
    #endif
    private static let maximumEvents = 1024
    private let control: Control
    private let waitFunction: Wait
    private let events: UnsafeMutableRawPointer
    let descriptor: Int32

    init?() {
        guard let create = dlsym(nil, "epoll_create1"), let control = dlsym(nil, "epoll_ctl"),
              let wait = dlsym(nil, "epoll_wait") else { return nil }
        let descriptor = unsafeBitCast(create, to: Create.self)(0x80000) // EPOLL_CLOEXEC
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
        self.control = unsafeBitCast(control, to: Control.self)
        self.waitFunction = unsafeBitCast(wait, to: Wait.self)
        events = UnsafeMutableRawPointer.allocate(byteCount: Self.stride * Self.maximumEvents, alignment: 8)
    }

    func release() {
        Glibc.close(descriptor)
        events.deallocate()
    }

    func add(_ fd: Int32, token: UInt64) -> Bool {
        var event = [UInt8](repeating: 0, count: 16)
        return event.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: UInt32(1), toByteOffset: 0, as: UInt32.self) // EPOLLIN
            raw.storeBytes(of: token, toByteOffset: Self.dataOffset, as: UInt64.self)
            return control(descriptor, 1, fd, raw.baseAddress) == 0 // EPOLL_CTL_ADD
        }
    }

    func remove(_ fd: Int32) {
        var event = [UInt8](repeating: 0, count: 16)
        _ = event.withUnsafeMutableBytes { control(descriptor, 2, fd, $0.baseAddress) } // EPOLL_CTL_DEL
    }

    /// Calls `ready` with the token of each socket that has something to read.
    func wait(timeoutMilliseconds: Int32, _ ready: (Int) -> Void) {
        let count = waitFunction(descriptor, events, Int32(Self.maximumEvents), timeoutMilliseconds)
        guard count > 0 else { return }
        for index in 0..<Int(count) {
            ready(Int(events.loadUnaligned(fromByteOffset: index * Self.stride + Self.dataOffset, as: UInt64.self)))
        }
    }
}

