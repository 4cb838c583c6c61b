import Foundation
import GatePassAPI
import GatePassCore
import GatePassServer
import LoopbackHTTP
import Synchronization

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

