import Foundation
import GatePassAPI
import GatePassCore
import GatePassServer
import LoopbackHTTP
import Synchronization

// MARK: - The events scenario (issue 4: server-sent events)
//
// N subscribers hold `GET /api/events` open on raw non-blocking sockets, all read by one
// epoll (or poll) thread; one client checks EXPECTED visitors in, one request at a time, and each
// `visitor.arrived` frame a subscriber receives is matched by its scanId to the check-in
// that caused it. The delay is receipt − send time of that check-in POST.

struct EventsCheckInFigures: Codable, Sendable {
    var mode: String
    var checkIns: Int
    var p50Milliseconds: Double
    var p99Milliseconds: Double
    var maxMilliseconds: Double
    var checkInsPerSecond: Double
    var processCPUPercent: Double
}

struct EventsPhaseReport: Codable, Sendable {
    var subscribers: Int
    var mode: String
    var checkIns: Int
    /// subscribers × check-ins: every subscriber must get every `visitor.arrived` once.
    var expectedDeliveries: Int
    var deliveries: Int
    var missing: Int
    var duplicates: Int
    /// Receipt at a subscriber − send time of the check-in POST, over all (subscriber, event).
    var delayP50Milliseconds: Double
    var delayP99Milliseconds: Double
    var delayMaxMilliseconds: Double
    /// Per event: the first subscriber's delay, and the spread from first to last subscriber.
    var firstReceiptP50Milliseconds: Double
    var firstReceiptP99Milliseconds: Double
    var spreadP50Milliseconds: Double
    var spreadP99Milliseconds: Double
    /// Receipt − the moment the check-in's answer was read (negative: the event came first).
    var afterAnswerP50Milliseconds: Double
    var afterAnswerP99Milliseconds: Double
    /// From the first check-in sent to the last frame of the phase received.
    var seconds: Double
    /// `visitor.arrived` frames delivered to subscribers per second, and every event frame.
    var arrivedFramesPerSecond: Double
    var framesPerSecond: Double
    /// The check-ins themselves, with the streams open.
    var checkIn: EventsCheckInFigures
    var delayP99RatioToAnchor: Double
    var checkInP50RatioToAnchor: Double
    var streamsOpenSeconds: Double
    /// CPU per thread group over the phase (check-ins and delivery), in % of one core.
    var threadCPUPercent: [String: Double]
}

struct EventsReport: Codable, Sendable {
    var cores: Int
    var serverThreads: Int
    var sqliteSynchronous: String
    var loginTokens: Int
    /// How the one reader thread waits for its sockets: epoll, or poll where epoll is missing.
    var readerWait: String
    var pacedRate: Double
    var checkInsPerPhase: Int
    var anchorPaced: EventsCheckInFigures
    var anchorBackToBack: EventsCheckInFigures
    /// The same anchors measured again after every stream closed: how much the machine drifted.
    var anchorPacedAfter: EventsCheckInFigures
    var anchorBackToBackAfter: EventsCheckInFigures
    var phases: [EventsPhaseReport]
    /// Per subscriber count: the same reader fed by one thread writing to plain sockets.
    var floors: [EventsFloor]
    /// `visitor.arrived` frames whose scanId matched no check-in of this run.
    var unexpectedDeliveries: Int
    var openFileLimit: Int
    var goalMilliseconds: Double
    /// Nil when 1,000 subscribers were not measured.
    var goalMet: Bool?
}

/// "100,1000" → [100, 1000].
func parseSubscriberCounts(_ text: String) -> [Int]? {
    let counts = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
    guard !counts.isEmpty, counts.allSatisfy({ $0.map { (1...20_000).contains($0) } ?? false }) else { return nil }
    return counts.map { $0! }
}

// MARK: - File descriptors

/// Raises the soft RLIMIT_NOFILE to the hard limit; returns the soft limit now in force.
func raiseOpenFileLimit() -> Int {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
    let before = limit.rlim_cur
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max
        if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            progress("open-file limit raised from \(before) to \(limit.rlim_cur)")
        } else {
            limit.rlim_cur = before
        }
    }
    return Int(clamping: limit.rlim_cur)
}

/// Runs `body` with file descriptor 2 sent to `path`, and returns the lines written there.
func capturingStandardError(path: String, _ body: () throws -> Void) throws -> [String] {
    let file = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard file >= 0 else {
        try body()
        return []
    }
    let saved = dup(2)
    dup2(file, 2)
    close(file)
    defer {
        dup2(saved, 2)
        close(saved)
    }
    try body()
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").map(String.init)
}

/// Open sockets of this process (client and server sides alike); SQLite's pool of read
/// connections and libmicrohttpd's eventfds come and go for their own reasons.
func openSocketCount() -> Int {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return -1 }
    return entries.reduce(0) { count, entry in
        let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + entry)) ?? ""
        return count + (target.hasPrefix("socket:") ? 1 : 0)
    }
}

// MARK: - CPU per thread (/proc/self/task)

/// Each thread's group and its user+system CPU in clock ticks. `labels` names threads by tid;
/// the others are grouped by what their name says.
func eventsThreadTicks(labels: [Int: String]) -> [Int: (group: String, ticks: Int)] {
    let pid = Int(getpid())
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return [:] }
    var out: [Int: (group: String, ticks: Int)] = [:]
    for entry in entries {
        guard let tid = Int(entry), let stat = eventsThreadStat(tid) else { continue }
        let group: String
        if let label = labels[tid] {
            group = label
        } else if tid == pid {
            group = "driver"
        } else if stat.comm == "MHD-worker" {
            group = "MHD workers"
        } else if stat.comm == "events-reader" {
            group = "bench reader"
        } else {
            group = "other"
        }
        out[tid] = (group, stat.ticks)
    }
    return out
}

/// Name, CPU ticks (utime + stime) and start time of one thread of this process.
func eventsThreadStat(_ tid: Int) -> (comm: String, ticks: Int, start: Int)? {
    guard let stat = try? String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8),
          let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")"),
          stat.index(close, offsetBy: 2) <= stat.endIndex
    else { return nil }
    let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
    guard fields.count > 19, let user = Int(fields[11]), let system = Int(fields[12]), let start = Int(fields[19]) else { return nil }
    return (String(stat[stat.index(after: open)..<close]), user + system, start)
}

/// The server's own unnamed threads: Linux shows the process name for the SQLite writer and
/// the event hub (Foundation does not pass Thread.name on), so they are told apart by
/// creation order (the store's writer starts before the hub). Call once the server has
/// answered requests (libmicrohttpd's workers name themselves when they first run).
func eventsServerThreadLabels() -> [Int: String] {
    let pid = Int(getpid())
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return [:] }
    var unnamed: [(tid: Int, start: Int)] = []
    for tid in entries.compactMap({ Int($0) }) where tid != pid {
        if let stat = eventsThreadStat(tid), stat.comm == "gatepass-bench" { unnamed.append((tid, stat.start)) }
    }
    unnamed.sort { ($0.start, $0.tid) < ($1.start, $1.tid) }
    guard unnamed.count == 2 else {
        var labels: [Int: String] = [:]
        for thread in unnamed { labels[thread.tid] = "hub+writer" }
        return labels
    }
    return [unnamed[0].tid: "sqlite writer", unnamed[1].tid: "event hub"]
}

func eventsThreadCPU(from before: [Int: (group: String, ticks: Int)], to after: [Int: (group: String, ticks: Int)],
                     seconds: Double) -> [String: Double] {
    let tick = Double(max(1, sysconf(Int32(_SC_CLK_TCK))))
    var out: [String: Double] = [:]
    for (tid, now) in after {
        let used = now.ticks - (before[tid]?.ticks ?? 0)
        out[now.group, default: 0] += Double(used) / tick / max(seconds, 0.001) * 100
    }
    return out
}

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

// MARK: - Check-ins

struct EventsCheckIn {
    var sent: UInt64
    var answered: UInt64
    var scanId: String
}

/// Checks the passes in one after another on one keep-alive connection; with `rate`, the
/// i-th is sent at start + i/rate (or at once if the previous one ended later).
func eventsCheckIns(_ passes: ArraySlice<String>, rate: Double?, port: UInt16, scanner: String) throws -> [EventsCheckIn] {
    let http = LoopbackHTTPClient(host: "127.0.0.1", port: port, timeoutSeconds: 10)
    defer { http.disconnect() }
    let headers = ["Authorization": "Bearer \(scanner)", "Content-Type": "application/json"]
    var out: [EventsCheckIn] = []
    out.reserveCapacity(passes.count)
    let begin = monotonicNanoseconds()
    for (index, shortId) in passes.enumerated() {
        if let rate {
            let due = begin + UInt64(Double(index) / rate * 1e9)
            let now = monotonicNanoseconds()
            if due > now { Thread.sleep(forTimeInterval: Double(due - now) / 1e9) }
        }
        let body = Array(#"{"shortId":"\#(shortId)"}"#.utf8)
        let sent = monotonicNanoseconds()
        let response = try http.send("POST", Endpoint.scannerCheckIn.path(), headers: headers, body: body)
        let answered = monotonicNanoseconds()
        guard response.status == 200, let json = response.json, json["result"] as? String == "CHECKED_IN",
              let scanId = json["scanId"] as? String
        else {
            throw BenchFailure("check-in of \(shortId) answered \(response.status): \(response.text.prefix(300))")
        }
        out.append(EventsCheckIn(sent: sent, answered: answered, scanId: scanId))
    }
    return out
}

func eventsModeName(_ rate: Double?) -> String {
    rate.map { "paced \(format($0, $0.rounded() == $0 ? 0 : 1))/s" } ?? "back-to-back"
}

/// Nearest-rank percentile of an ascending array.
func eventsPercentile(_ sorted: [Double], _ fraction: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
}

func eventsCheckInFigures(_ samples: [EventsCheckIn], mode: String, cpuSeconds: Double) -> EventsCheckInFigures {
    let latencies = samples.map { Double($0.answered - $0.sent) / 1e6 }.sorted()
    let span = Double((samples.last?.answered ?? 0) - (samples.first?.sent ?? 0)) / 1e9
    return EventsCheckInFigures(mode: mode, checkIns: samples.count, p50Milliseconds: eventsPercentile(latencies, 0.5),
                                p99Milliseconds: eventsPercentile(latencies, 0.99),
                                maxMilliseconds: latencies.last ?? 0,
                                checkInsPerSecond: span > 0 ? Double(samples.count) / span : 0,
                                processCPUPercent: span > 0 ? cpuSeconds / span * 100 : 0)
}

// MARK: - The raw fan-out floor

struct EventsFloor: Codable, Sendable {
    var subscribers: Int
    var events: Int
    var bytesPerEvent: Int
    var delayP50Milliseconds: Double
    var delayP99Milliseconds: Double
    var delayMaxMilliseconds: Double
    var spreadP50Milliseconds: Double
    var spreadP99Milliseconds: Double
    var missing: Int
    var duplicates: Int
    var threadCPUPercent: [String: Double]
}

/// The floor of a fan-out on this machine, measured with the same reader: one thread
/// send()s, per event, one chunk holding frames the size of a real visitor.arrived and its
/// notification.new to each of `count` plain loopback TCP connections (no HTTP server,
/// no database, no hub). `visitorJSON` is a real visitor as the API encodes it.
func eventsFanOutFloor(count: Int, events: Int, rate: Double, visitorJSON: String,
                       labels: [Int: String]) throws -> EventsFloor {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard listener >= 0 else { throw BenchFailure("socket() failed (errno \(errno))") }
    defer { Glibc.close(listener) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
            bind(listener, socketAddress, length) == 0 && listen(listener, 1024) == 0
                && getsockname(listener, socketAddress, &length) == 0
        }
    }
    guard bound else { throw BenchFailure("cannot listen on 127.0.0.1 for the fan-out floor (errno \(errno))") }
    let port = UInt16(bigEndian: address.sin_port)

    var clients: [Int32] = []
    var servers: [Int32] = []
    defer { for fd in servers { Glibc.close(fd) } }
    var one: Int32 = 1
    for _ in 0..<count {
        let client: Int32
        do {
            client = try EventsSubscriberSet.connectStream(port: port, request: [])
        } catch {
            for fd in clients { Glibc.close(fd) }
            throw error
        }
        clients.append(client)
        let server = accept(listener, nil, nil)
        guard server >= 0 else {
            for fd in clients { Glibc.close(fd) }
            throw BenchFailure("accept failed (errno \(errno))")
        }
        setsockopt(server, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        servers.append(server)
    }
    let set = EventsSubscriberSet.adopt(clients)
    defer {
        set.stop()
        set.close()
    }
    func chunk(_ payload: String) -> [UInt8] {
        let bytes = Array(payload.utf8)
        return Array((String(bytes.count, radix: 16) + "\r\n").utf8) + bytes + [13, 10]
    }
    func sendAll(_ bytes: [UInt8]) throws {
        for fd in servers {
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { throw BenchFailure("fan-out floor: write failed (errno \(errno))") }
                offset += written
            }
        }
    }
    set.start()
    try sendAll(Array("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
                + chunk("retry: 3000\n\n"))
    let deadline = monotonicNanoseconds() + 10_000_000_000
    while set.counters.headersOK.load(ordering: .relaxed) < count && monotonicNanoseconds() < deadline {
        Thread.sleep(forTimeInterval: 0.002)
    }
    guard set.counters.headersOK.load(ordering: .relaxed) == count else {
        throw BenchFailure("fan-out floor: only \(set.counters.headersOK.load(ordering: .relaxed)) of \(count) sockets got the headers")
    }
    let checkpointId = UUID().uuidString.lowercased()
    let visitorId = UUID().uuidString.lowercased()
    let scanIds = (0..<events).map { "raw-\(UUID().uuidString.lowercased())-\($0)" }
    let payloads = (0..<events).map { index in
        chunk("id: \(1_000_000 + 2 * index)\nevent: visitor.arrived\n"
              + #"data: {"visitor":\#(visitorJSON),"scanId":"\#(scanIds[index])","checkpointId":"\#(checkpointId)"}"#
              + "\n\nid: \(1_000_001 + 2 * index)\nevent: notification.new\n"
              + #"data: {"notification":{"id":"\#(1_000_000 + 2 * index)","kind":"visitor.arrived","title":"Bench Visitor \#(index) arrived","#
              + #""visitorId":"\#(visitorId)","createdAt":"2026-01-01T08:00:00Z","readAt":null}}"# + "\n\n")
    }
    let threadsBefore = eventsThreadTicks(labels: labels)
    let start = monotonicNanoseconds()
    var samples: [EventsCheckIn] = []
    for (index, payload) in payloads.enumerated() {
        let due = start + UInt64(Double(index) / rate * 1e9)
        let now = monotonicNanoseconds()
        if due > now { Thread.sleep(forTimeInterval: Double(due - now) / 1e9) }
        let sent = monotonicNanoseconds()
        try sendAll(payload)
        samples.append(EventsCheckIn(sent: sent, answered: monotonicNanoseconds(), scanId: scanIds[index]))
    }
    let expected = count * events
    var last = 0
    var lastProgress = monotonicNanoseconds()
    while set.counters.arrived.load(ordering: .relaxed) < expected {
        Thread.sleep(forTimeInterval: 0.001)
        let now = set.counters.arrived.load(ordering: .relaxed)
        if now != last {
            last = now
            lastProgress = monotonicNanoseconds()
        } else if monotonicNanoseconds() - lastProgress > 3_000_000_000 {
            break
        }
    }
    let threads = eventsThreadCPU(from: threadsBefore, to: eventsThreadTicks(labels: labels),
                                  seconds: Double(monotonicNanoseconds() - start) / 1e9)
    set.stop()
    let none = EventsCheckInFigures(mode: "", checkIns: 0, p50Milliseconds: 0, p99Milliseconds: 0, maxMilliseconds: 0,
                                    checkInsPerSecond: 0, processCPUPercent: 0)
    let phase = eventsAnalyze(set.subscribers, samples, count: count, mode: "floor", frames: 0, cpuSeconds: 0,
                              anchor: none, openSeconds: 0, threads: threads)
    return EventsFloor(subscribers: count, events: events, bytesPerEvent: payloads.first?.count ?? 0,
                       delayP50Milliseconds: phase.delayP50Milliseconds, delayP99Milliseconds: phase.delayP99Milliseconds,
                       delayMaxMilliseconds: phase.delayMaxMilliseconds, spreadP50Milliseconds: phase.spreadP50Milliseconds,
                       spreadP99Milliseconds: phase.spreadP99Milliseconds, missing: phase.missing,
                       duplicates: phase.duplicates, threadCPUPercent: threads)
}

// MARK: - The scenario

func runEventsScenario(_ options: Options) throws -> EventsReport {
    let cores = ProcessInfo.processInfo.activeProcessorCount
    let fileLimit = raiseOpenFileLimit()
    let largest = options.subscribers.max() ?? 0
    // Each subscriber costs two descriptors here: the client socket and the server's.
    guard fileLimit >= 2 * largest + 256 else {
        throw BenchFailure("the open-file limit is \(fileLimit); \(largest) subscribers need about \(2 * largest + 256) (raise ulimit -Hn)")
    }
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("gatepass-bench-events-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }

    var configuration = ServerConfiguration()
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configuration.database = directory + "/gatepass.db"
    configuration.threads = options.threads
    configuration.sqliteSynchronous = options.synchronous
    configuration.otpResendIntervalSeconds = 0
    configuration.otpSendsPerHour = 1000
    configuration.maxConnections = max(configuration.maxConnections, 2 * (largest + 256))
    // Every subscriber connects from 127.0.0.1: the per-address cap must let them all in.
    configuration.maxConnectionsPerIP = configuration.maxConnections
    let server = try GatePassServer(configuration: configuration, devMode: true, logSink: DevNullLog())
    defer { server.stop(grace: .seconds(5)) }
    let port = server.port
    progress("Gate Pass server on 127.0.0.1:\(port), database \(configuration.database), synchronous=\(options.synchronous), \(options.threads) threads")

    // One organization: an OWNER who scans, two ADMINs, two APPROVERs; one login each.
    let organization = "Bench Site"
    let people: [(String, String, Role, Bool)] = [
        ("owner@bench.gatepass", "Bench Owner", .owner, true),
        ("admin1@bench.gatepass", "Bench Admin One", .admin, false),
        ("admin2@bench.gatepass", "Bench Admin Two", .admin, false),
        ("approver1@bench.gatepass", "Bench Approver One", .approver, false),
        ("approver2@bench.gatepass", "Bench Approver Two", .approver, false),
    ]
    var tokens: [String] = []
    for (email, name, role, canScan) in people {
        _ = try Administration.addUser(store: server.store, email: email, name: name, role: role,
                                       organization: organization, canScan: canScan, now: Date())
        tokens.append(try login(email: email, port: port))
    }
    let scanner = try scannerToken(loginToken: tokens[0], port: port)

    let perPhase = options.events
    let warmUp = 20
    let flushes = 5
    let perSet = 5 + 2 * perPhase + flushes // warm-up, paced, back-to-back, flushing closed streams
    let needed = warmUp + 1 + 4 * options.anchor + options.subscribers.count * perSet
    let seedStart = monotonicNanoseconds()
    let seeded = try seedVisitors(count: needed, startingAt: 1, port: port, token: tokens[0], connections: 16)
    progress("seeded \(seeded.count) EXPECTED visitors in \(format(Double(monotonicNanoseconds() - seedStart) / 1e9, 2)) s")
    var unused = seeded.shuffled()[...]
    func take(_ count: Int) -> ArraySlice<String> {
        let slice = unused.prefix(count)
        unused = unused.dropFirst(count)
        return slice
    }
    var knownScanIds = Set<String>()
    func checkIns(_ count: Int, rate: Double?) throws -> (samples: [EventsCheckIn], cpuSeconds: Double) {
        let cpu = processCPUSeconds()
        let samples = try eventsCheckIns(take(count), rate: rate, port: port, scanner: scanner)
        let used = processCPUSeconds() - cpu
        for sample in samples { knownScanIds.insert(sample.scanId) }
        return (samples, used)
    }

    // Anchor: the same check-ins with no stream open.
    func anchors(_ when: String) throws -> (paced: EventsCheckInFigures, backToBack: EventsCheckInFigures) {
        progress("anchor (\(when)): \(options.anchor) check-ins \(eventsModeName(options.rate)), then \(options.anchor) back-to-back, no subscribers")
        let pacedRun = try checkIns(options.anchor, rate: options.rate)
        let paced = eventsCheckInFigures(pacedRun.samples, mode: eventsModeName(options.rate), cpuSeconds: pacedRun.cpuSeconds)
        let burstRun = try checkIns(options.anchor, rate: nil)
        let burst = eventsCheckInFigures(burstRun.samples, mode: eventsModeName(nil), cpuSeconds: burstRun.cpuSeconds)
        progress("anchor (\(when)): paced p50 \(format(paced.p50Milliseconds, 2)) ms p99 \(format(paced.p99Milliseconds, 2)) ms; "
                 + "back-to-back p50 \(format(burst.p50Milliseconds, 2)) ms p99 \(format(burst.p99Milliseconds, 2)) ms, "
                 + "\(format(burst.checkInsPerSecond, 0))/s")
        return (paced, burst)
    }
    _ = try checkIns(warmUp, rate: nil)
    // By now every libmicrohttpd worker has named itself.
    let threadLabels = eventsServerThreadLabels()
    progress("server threads by creation order: \(threadLabels.sorted { $0.key < $1.key }.map { "\($0.value) (tid \($0.key))" }.joined(separator: ", "))")
    let (anchorPaced, anchorBackToBack) = try anchors("before")

    // The floor: the same reader, fed by one thread writing frames of the same size to
    // plain loopback sockets, with the same pacing. One real check-in gives the visitor's JSON.
    let sample = try LoopbackHTTPClient(host: "127.0.0.1", port: port, timeoutSeconds: 10)
        .send("POST", Endpoint.scannerCheckIn.path(), token: scanner, json: ["shortId": take(1).first!])
    guard let visitor = sample.json?["visitor"],
          let visitorData = try? JSONSerialization.data(withJSONObject: visitor, options: [.withoutEscapingSlashes])
    else { throw BenchFailure("check-in answered \(sample.status): \(sample.text.prefix(300))") }
    let visitorJSON = String(decoding: visitorData, as: UTF8.self)
    let floorEvents = min(perPhase, 100)
    var floors: [EventsFloor] = []
    for count in options.subscribers {
        progress("fan-out floor: \(floorEvents) events \(eventsModeName(options.rate)) to \(count) plain loopback sockets")
        let floor = try eventsFanOutFloor(count: count, events: floorEvents, rate: options.rate, visitorJSON: visitorJSON,
                                          labels: threadLabels)
        progress("fan-out floor, \(count) sockets: delay p50 \(format(floor.delayP50Milliseconds, 2)) ms, "
                 + "p99 \(format(floor.delayP99Milliseconds, 2)) ms; spread p99 \(format(floor.spreadP99Milliseconds, 2)) ms; "
                 + "\(floor.missing) missing")
        floors.append(floor)
    }

    var phases: [EventsPhaseReport] = []
    var unexpected = 0
    var readerWait = "epoll"
    for count in options.subscribers {
        let baseline = openSocketCount()
        let openStart = monotonicNanoseconds()
        let set = try EventsSubscriberSet.open(count: count, port: port, tokens: tokens)
        set.start()
        // Every subscriber has its response headers (and so is registered with the hub).
        let headersDeadline = monotonicNanoseconds() + 30_000_000_000
        while set.counters.headersOK.load(ordering: .relaxed) + set.counters.failed.load(ordering: .relaxed) < count {
            guard monotonicNanoseconds() < headersDeadline else {
                set.stop()
                set.close()
                throw BenchFailure("only \(set.counters.headersOK.load(ordering: .relaxed)) of \(count) streams answered within 30 s")
            }
            Thread.sleep(forTimeInterval: 0.002)
        }
        let openSeconds = Double(monotonicNanoseconds() - openStart) / 1e9
        if !set.usesEpoll.load(ordering: .relaxed) { readerWait = "poll" }
        if set.counters.failed.load(ordering: .relaxed) > 0 {
            set.stop()
            set.close()
            throw BenchFailure("a stream failed: \(set.subscribers.lazy.compactMap(\.failure).first ?? "?")")
        }
        progress("\(count) streams open in \(format(openSeconds, 2)) s (\(openSocketCount()) sockets open in the process)")

        var expected = 0
        /// Waits until every subscriber has every `visitor.arrived` sent so far, or no frame
        /// arrived for 3 s (what is missing is then reported).
        func waitForDeliveries() {
            var last = set.counters.arrived.load(ordering: .relaxed)
            var lastProgress = monotonicNanoseconds()
            while last < expected {
                Thread.sleep(forTimeInterval: 0.001)
                let now = set.counters.arrived.load(ordering: .relaxed)
                if now != last {
                    last = now
                    lastProgress = monotonicNanoseconds()
                } else if monotonicNanoseconds() - lastProgress > 3_000_000_000 {
                    progress("gave up waiting: \(last) of \(expected) visitor.arrived frames received")
                    return
                }
            }
            // Let the notification.new that follows each visitor.arrived land too.
            Thread.sleep(forTimeInterval: 0.02)
        }

        _ = try checkIns(5, rate: nil)
        expected += 5 * count
        waitForDeliveries()

        var runs: [(rate: Double?, samples: [EventsCheckIn], cpuSeconds: Double, frames: Int, threads: [String: Double])] = []
        for rate in [options.rate, nil] as [Double?] {
            progress("\(count) subscribers: \(perPhase) check-ins \(eventsModeName(rate))")
            let framesBefore = set.counters.frames.load(ordering: .relaxed)
            let cpu = processCPUSeconds()
            let threadsBefore = eventsThreadTicks(labels: threadLabels)
            let start = monotonicNanoseconds()
            let samples = try eventsCheckIns(take(perPhase), rate: rate, port: port, scanner: scanner)
            for sample in samples { knownScanIds.insert(sample.scanId) }
            expected += perPhase * count
            waitForDeliveries()
            let threads = eventsThreadCPU(from: threadsBefore, to: eventsThreadTicks(labels: threadLabels),
                                          seconds: Double(monotonicNanoseconds() - start) / 1e9)
            let cpuSeconds = processCPUSeconds() - cpu
            runs.append((rate, samples, cpuSeconds, set.counters.frames.load(ordering: .relaxed) - framesBefore, threads))
        }
        set.stop()
        set.close()

        for run in runs {
            let mode = eventsModeName(run.rate)
            let anchor = run.rate == nil ? anchorBackToBack : anchorPaced
            let phase = eventsAnalyze(set.subscribers, run.samples, count: count, mode: mode, frames: run.frames,
                                      cpuSeconds: run.cpuSeconds, anchor: anchor, openSeconds: openSeconds,
                                      threads: run.threads)
            progress("\(count) subscribers, \(mode): delay p50 \(format(phase.delayP50Milliseconds, 2)) ms, "
                     + "p99 \(format(phase.delayP99Milliseconds, 2)) ms, max \(format(phase.delayMaxMilliseconds, 2)) ms; "
                     + "\(phase.deliveries)/\(phase.expectedDeliveries) delivered, \(phase.missing) missing, \(phase.duplicates) duplicates")
            phases.append(phase)
        }
        for subscriber in set.subscribers {
            unexpected += subscriber.arrivals.reduce(0) { $0 + (knownScanIds.contains($1.scanId) ? 0 : 1) }
            unexpected += subscriber.arrivedWithoutScanId
        }
        if let failure = set.subscribers.lazy.compactMap(\.failure).first { progress("a subscriber failed: \(failure)") }
        let closedEarly = set.subscribers.filter(\.closedByServer).count
        if closedEarly > 0 { progress("warning: the server closed \(closedEarly) streams during the run") }

        // The server's side of a closed stream stays suspended until it has frames to send,
        // and only the second write after the close fails (the first one draws the RST):
        // a few more check-ins, apart, end them all instead of the next ping (10 s). Their
        // "Failed to send" lines from libmicrohttpd are expected; they are counted, not shown.
        let releaseStart = monotonicNanoseconds()
        let serverLog = try capturingStandardError(path: directory + "/mhd-stderr.log") {
            for _ in 0..<flushes where openSocketCount() > baseline + 2 {
                _ = try checkIns(1, rate: nil)
                Thread.sleep(forTimeInterval: 0.2)
            }
            let releaseDeadline = monotonicNanoseconds() + 15_000_000_000
            while openSocketCount() > baseline + 2 && monotonicNanoseconds() < releaseDeadline {
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        let expectedLines = serverLog.filter { $0.contains("no longer available for sending") }.count
        for line in serverLog where !line.contains("no longer available for sending") { progress("server: \(line)") }
        progress("\(count) streams closed and released by the server in \(format(Double(monotonicNanoseconds() - releaseStart) / 1e9, 2)) s "
                 + "(\(expectedLines) 'socket no longer available' lines from libmicrohttpd); "
                 + "\(openSocketCount()) sockets open in the process, \(baseline) before")
    }

    let (anchorPacedAfter, anchorBackToBackAfter) = try anchors("after")

    let goal = 50.0
    let atThousand = phases.first { $0.subscribers == 1000 && $0.mode == eventsModeName(options.rate) }
    return EventsReport(cores: cores, serverThreads: options.threads, sqliteSynchronous: options.synchronous,
                        loginTokens: tokens.count, readerWait: readerWait, pacedRate: options.rate, checkInsPerPhase: perPhase,
                        anchorPaced: anchorPaced, anchorBackToBack: anchorBackToBack,
                        anchorPacedAfter: anchorPacedAfter, anchorBackToBackAfter: anchorBackToBackAfter, phases: phases, floors: floors,
                        unexpectedDeliveries: unexpected, openFileLimit: fileLimit, goalMilliseconds: goal,
                        goalMet: atThousand.map { $0.delayP99Milliseconds < goal && $0.missing == 0 && $0.duplicates == 0 })
}

/// Matches every subscriber's `visitor.arrived` receipts to the phase's check-ins.
func eventsAnalyze(_ subscribers: [EventsSubscriber], _ samples: [EventsCheckIn], count: Int, mode: String, frames: Int,
                   cpuSeconds: Double, anchor: EventsCheckInFigures, openSeconds: Double,
                   threads: [String: Double]) -> EventsPhaseReport {
    var indexOf: [String: Int] = [:]
    for (index, sample) in samples.enumerated() { indexOf[sample.scanId] = index }
    var delays: [Double] = []
    delays.reserveCapacity(samples.count * subscribers.count)
    var afterAnswer: [Double] = []
    afterAnswer.reserveCapacity(samples.count * subscribers.count)
    var first = [UInt64](repeating: .max, count: samples.count)
    var last = [UInt64](repeating: 0, count: samples.count)
    var missing = 0
    var duplicates = 0
    for subscriber in subscribers {
        var seen = [Bool](repeating: false, count: samples.count)
        for arrival in subscriber.arrivals {
            guard let index = indexOf[arrival.scanId] else { continue }
            if seen[index] {
                duplicates += 1
                continue
            }
            seen[index] = true
            let sample = samples[index]
            delays.append(Double(Int64(bitPattern: arrival.at &- sample.sent)) / 1e6)
            afterAnswer.append(Double(Int64(bitPattern: arrival.at &- sample.answered)) / 1e6)
            first[index] = min(first[index], arrival.at)
            last[index] = max(last[index], arrival.at)
        }
        missing += seen.lazy.filter { !$0 }.count
    }
    delays.sort()
    afterAnswer.sort()
    var firstDelays: [Double] = []
    var spreads: [Double] = []
    for index in samples.indices where first[index] != .max {
        firstDelays.append(Double(Int64(bitPattern: first[index] &- samples[index].sent)) / 1e6)
        spreads.append(Double(last[index] - first[index]) / 1e6)
    }
    firstDelays.sort()
    spreads.sort()
    let begin = samples.first?.sent ?? 0
    let end = max(last.max() ?? 0, samples.last?.answered ?? 0)
    let seconds = end > begin ? Double(end - begin) / 1e9 : 0
    let checkIn = eventsCheckInFigures(samples, mode: mode, cpuSeconds: cpuSeconds)
    let p99 = eventsPercentile(delays, 0.99)
    return EventsPhaseReport(
        subscribers: count, mode: mode, checkIns: samples.count, expectedDeliveries: samples.count * subscribers.count,
        deliveries: delays.count, missing: missing, duplicates: duplicates,
        delayP50Milliseconds: eventsPercentile(delays, 0.5), delayP99Milliseconds: p99,
        delayMaxMilliseconds: delays.last ?? 0,
        firstReceiptP50Milliseconds: eventsPercentile(firstDelays, 0.5),
        firstReceiptP99Milliseconds: eventsPercentile(firstDelays, 0.99),
        spreadP50Milliseconds: eventsPercentile(spreads, 0.5), spreadP99Milliseconds: eventsPercentile(spreads, 0.99),
        afterAnswerP50Milliseconds: eventsPercentile(afterAnswer, 0.5),
        afterAnswerP99Milliseconds: eventsPercentile(afterAnswer, 0.99),
        seconds: seconds,
        arrivedFramesPerSecond: seconds > 0 ? Double(delays.count) / seconds : 0,
        framesPerSecond: seconds > 0 ? Double(frames) / seconds : 0,
        checkIn: checkIn,
        delayP99RatioToAnchor: anchor.p99Milliseconds > 0 ? p99 / anchor.p99Milliseconds : 0,
        checkInP50RatioToAnchor: anchor.p50Milliseconds > 0 ? checkIn.p50Milliseconds / anchor.p50Milliseconds : 0,
        streamsOpenSeconds: openSeconds, threadCPUPercent: threads)
}

// MARK: - Report

func printEventsReport(_ report: EventsReport) {
    var out = """
        gatepass-bench events: \(report.cores) cores, \(report.serverThreads) server threads, SQLite synchronous = \(report.sqliteSynchronous); \
        server, subscribers and driver in one process on 127.0.0.1
        subscribers: raw TCP sockets holding GET /api/events, all read by one \(report.readerWait) thread; \(report.loginTokens) login tokens \
        (OWNER, 2 ADMIN, 2 APPROVER) shared round-robin
        check-ins: one client, one at a time: "\(eventsModeName(report.pacedRate))" sends one every \
        \(format(1000 / report.pacedRate, 0)) ms, "back-to-back" the next as soon as the previous answers; \
        \(report.checkInsPerPhase) per phase
        delay = receipt of visitor.arrived at a subscriber − send time of the check-in POST (matched by scanId), \
        over every (subscriber, event)
        anchor = the same check-ins with no stream open, measured first; x anchor = ratio to it


        """
    func anchorLine(_ a: EventsCheckInFigures) -> String {
        "  " + a.mode.padding(toLength: 14, withPad: " ", startingAt: 0)
            + "check-in p50 \(format(a.p50Milliseconds, 2)) ms, p99 \(format(a.p99Milliseconds, 2)) ms, "
            + "max \(format(a.maxMilliseconds, 2)) ms, \(format(a.checkInsPerSecond, 0))/s, cpu \(format(a.processCPUPercent, 0))%  "
            + "(\(a.checkIns) check-ins)\n"
    }
    out += "anchor, no subscribers (before any stream):\n" + anchorLine(report.anchorPaced) + anchorLine(report.anchorBackToBack)
    out += "the same after every stream closed (drift check; ratios use the first):\n"
        + anchorLine(report.anchorPacedAfter) + anchorLine(report.anchorBackToBackAfter) + "\n"
    out += "subs".leftPadded(5) + "  " + "mode".padding(toLength: 13, withPad: " ", startingAt: 0)
        + "delivered".leftPadded(14) + "miss".leftPadded(6) + "dup".leftPadded(5)
        + "p50 ms".leftPadded(8) + "p99 ms".leftPadded(8) + "max ms".leftPadded(8) + "p99 x anc".leftPadded(10)
        + "arrived/s".leftPadded(11) + "frames/s".leftPadded(10)
        + "chk p50".leftPadded(9) + "x anc".leftPadded(7) + "cpu%".leftPadded(6) + "\n"
    for p in report.phases {
        out += String(p.subscribers).leftPadded(5) + "  " + p.mode.padding(toLength: 13, withPad: " ", startingAt: 0)
            + "\(p.deliveries)/\(p.expectedDeliveries)".leftPadded(14) + String(p.missing).leftPadded(6)
            + String(p.duplicates).leftPadded(5)
            + format(p.delayP50Milliseconds, 2).leftPadded(8) + format(p.delayP99Milliseconds, 2).leftPadded(8)
            + format(p.delayMaxMilliseconds, 2).leftPadded(8) + format(p.delayP99RatioToAnchor, 2).leftPadded(10)
            + format(p.arrivedFramesPerSecond, 0).leftPadded(11) + format(p.framesPerSecond, 0).leftPadded(10)
            + format(p.checkIn.p50Milliseconds, 2).leftPadded(9) + format(p.checkInP50RatioToAnchor, 2).leftPadded(7)
            + format(p.checkIn.processCPUPercent, 0).leftPadded(6) + "\n"
    }
    out += "\nwhere the delay goes (per event: first subscriber after the send; first → last subscriber; "
        + "receipt after the check-in's answer):\n"
    for p in report.phases {
        out += String(p.subscribers).leftPadded(5) + "  " + p.mode.padding(toLength: 13, withPad: " ", startingAt: 0)
            + "first p50 \(format(p.firstReceiptP50Milliseconds, 2)) / p99 \(format(p.firstReceiptP99Milliseconds, 2)) ms; "
            + "spread p50 \(format(p.spreadP50Milliseconds, 2)) / p99 \(format(p.spreadP99Milliseconds, 2)) ms; "
            + "after answer p50 \(format(p.afterAnswerP50Milliseconds, 2)) / p99 \(format(p.afterAnswerP99Milliseconds, 2)) ms; "
            + "check-in p99 \(format(p.checkIn.p99Milliseconds, 2)) ms, \(format(p.checkIn.checkInsPerSecond, 0))/s; "
            + "streams opened in \(format(p.streamsOpenSeconds, 2)) s\n"
    }
    out += "\nfan-out floor, measured before any stream (same reader; one thread write()s one chunk of \(report.floors.first?.bytesPerEvent ?? 0) bytes "
        + "per event, frames like visitor.arrived + notification.new, to N plain loopback TCP sockets; "
        + "\(report.floors.first?.events ?? 0) events \(eventsModeName(report.pacedRate))):\n"
    for floor in report.floors {
        let paced = report.phases.first { $0.subscribers == floor.subscribers && $0.mode == eventsModeName(report.pacedRate) }
        out += String(floor.subscribers).leftPadded(5) + "  "
            + "delay p50 \(format(floor.delayP50Milliseconds, 2)) / p99 \(format(floor.delayP99Milliseconds, 2)) ms; "
            + "spread p50 \(format(floor.spreadP50Milliseconds, 2)) / p99 \(format(floor.spreadP99Milliseconds, 2)) ms; "
            + "\(floor.missing) missing"
            + (paced.map { p in
                "; server (paced) spread p50 = \(format(p.spreadP50Milliseconds / max(floor.spreadP50Milliseconds, 0.001), 1)) x floor, "
                    + "delay p99 = \(format(p.delayP99Milliseconds / max(floor.delayP99Milliseconds, 0.001), 1)) x floor"
            } ?? "") + "\n"
    }
    let groups = ["event hub", "MHD workers", "sqlite writer", "hub+writer", "driver", "bench reader", "other"]
    out += "\nCPU by thread over each phase, % of one core (\(report.cores) cores = \(report.cores * 100)%; "
        + "hub and writer told apart by creation order):\n"
    for floor in report.floors {
        out += String(floor.subscribers).leftPadded(5) + "  " + "floor".padding(toLength: 13, withPad: " ", startingAt: 0)
            + groups.compactMap { name in floor.threadCPUPercent[name].map { "\(name) \(format($0, 0))" } }.joined(separator: ", ")
            + "  (writer = driver)\n"
    }
    for p in report.phases {
        out += String(p.subscribers).leftPadded(5) + "  " + p.mode.padding(toLength: 13, withPad: " ", startingAt: 0)
            + groups.compactMap { name in p.threadCPUPercent[name].map { "\(name) \(format($0, 0))" } }.joined(separator: ", ")
            + "\n"
    }
    out += "\nframes/s counts every event frame (visitor.arrived and its notification.new); "
        + "visitor.arrived frames matching no check-in of the run: \(report.unexpectedDeliveries)\n"
    let pacedMode = eventsModeName(report.pacedRate)
    switch (report.goalMet, report.phases.first { $0.subscribers == 1000 && $0.mode == pacedMode }) {
    case (.some(let met), .some(let p)):
        out += "goal: p99 < \(format(report.goalMilliseconds, 0)) ms at 1,000 subscribers (\(pacedMode)): "
            + (met ? "met" : "NOT met") + " — p99 \(format(p.delayP99Milliseconds, 2)) ms "
            + "(\(format(p.delayP99RatioToAnchor, 2)) x the check-in p99 anchor), \(p.missing) missing, \(p.duplicates) duplicates\n"
    default:
        out += "goal: p99 < \(format(report.goalMilliseconds, 0)) ms at 1,000 subscribers: not measured (run with --subscribers including 1000)\n"
    }
    print(out, terminator: "")
}
