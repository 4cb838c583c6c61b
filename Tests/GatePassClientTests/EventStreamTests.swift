import CurlHTTP
import Foundation
import GatePassCore
import Synchronization
import Testing
@testable import GatePassClient

// MARK: - Parser

@Suite struct ServerSentEventParserTests {
    /// Feeds `text` in one piece.
    private func parse(_ text: String, maxEventBytes: Int = ServerSentEventParser.defaultMaxEventBytes) -> [ServerEvent] {
        var parser = ServerSentEventParser(maxEventBytes: maxEventBytes)
        return parser.feed(Array(text.utf8))
    }

    @Test func everyLineEndingEndsALine() {
        let events = parse("id: 1\nevent: a\ndata: x\n\n" + "id: 2\r\nevent: b\r\ndata: y\r\n\r\n" + "id: 3\revent: c\rdata: z\r\r")
        #expect(events == [ServerEvent(id: 1, kindName: "a", data: "x"),
                           ServerEvent(id: 2, kindName: "b", data: "y"),
                           ServerEvent(id: 3, kindName: "c", data: "z")])
    }

    /// Every way of cutting the stream in two, and byte by byte, gives the same events; a CR LF
    /// cut between its two bytes must not count as two line ends.
    @Test func chunkBoundariesDoNotMatter() {
        let bytes = Array(("\u{FEFF}: ping\r\nid: 1\r\nevent: a\r\ndata: x\r\ndata: y\r\n\r\n" + "id: 2\rdata: z\r\r" + "data: w\n\n").utf8)
        let expected = [ServerEvent(id: 1, kindName: "a", data: "x\ny"),
                        ServerEvent(id: 2, kindName: "message", data: "z"),
                        ServerEvent(id: nil, kindName: "message", data: "w")]
        var whole = ServerSentEventParser()
        #expect(whole.feed(bytes) == expected)
        for cut in 0...bytes.count {
            var parser = ServerSentEventParser()
            let events = parser.feed(bytes[..<cut]) + parser.feed(bytes[cut...])
            #expect(events == expected, "cut at \(cut)")
        }
        var parser = ServerSentEventParser()
        #expect(bytes.flatMap { parser.feed([$0]) } == expected)
        #expect(parser.commentsSeen == 1)
    }

    @Test func dataLinesAreJoinedAndOneSpaceIsStripped() {
        #expect(parse("data: first\ndata:second\ndata:  third\n\n")
                == [ServerEvent(id: nil, kindName: "message", data: "first\nsecond\n third")])
    }

    @Test func commentsAreCountedAndDispatchNothing() {
        var parser = ServerSentEventParser()
        #expect(parser.feed(Array(": ping\n\n:\n: another\n\n".utf8)).isEmpty)
        #expect(parser.commentsSeen == 3)
    }

    @Test func aLeadingByteOrderMarkIsSkippedEvenWhenSplit() {
        var parser = ServerSentEventParser()
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("data: x\n\n".utf8)
        let events = parser.feed(bytes[..<1]) + parser.feed(bytes[1..<2]) + parser.feed(bytes[2...])
        #expect(events == [ServerEvent(id: nil, kindName: "message", data: "x")])
        // Only at the very start: later it is part of a field name, and the line is ignored.
        #expect(parser.feed([0xEF, 0xBB, 0xBF] + Array("data: y\n\n".utf8)).isEmpty)
    }

    @Test func idsThatAreNotDecimalInt64sAreNil() {
        let events = parse("""
            data: no id

            id: abc
            data: letters

            id: -1
            data: signed

            id: 99999999999999999999
            data: too big

            id: 9223372036854775807
            data: largest


            """)
        #expect(events.map(\.id) == [nil, nil, nil, nil, Int64.max])
    }

    @Test func anIDWithNULIsIgnored() {
        #expect(parse("id: 4\nid: 5\u{0}\ndata: x\n\n") == [ServerEvent(id: 4, kindName: "message", data: "x")])
    }

    @Test func anIDBelongsToItsOwnEventOnly() {
        // A stream.gap comes without an id; inheriting the previous one would get it deduped away.
        #expect(parse("id: 7\ndata: a\n\nevent: stream.gap\ndata: {}\n\n").map(\.id) == [7, nil])
    }

    @Test func retryKeepsTheLastValidValue() {
        var parser = ServerSentEventParser()
        #expect(parser.feed(Array("retry: 2500\n\n".utf8)).isEmpty)
        #expect(parser.retryMilliseconds == 2500)
        _ = parser.feed(Array("retry: 12a\nretry: \nretry: -5\n\n".utf8))
        #expect(parser.retryMilliseconds == 2500)
    }

    @Test func emptyDataIsAnEventButNoDataIsNot() {
        #expect(parse("data\n\n") == [ServerEvent(id: nil, kindName: "message", data: "")])
        #expect(parse("data:\n\n") == [ServerEvent(id: nil, kindName: "message", data: "")])
        #expect(parse("event: visitor.arrived\nid: 3\n\n\n\n").isEmpty)
        #expect(parse("foo: bar\nevent\ndata: x\n\n") == [ServerEvent(id: nil, kindName: "message", data: "x")])
    }

    @Test func anOversizedEventIsDroppedWithoutGrowingAndTheParserResyncs() {
        let cap = 1024
        var parser = ServerSentEventParser(maxEventBytes: cap)
        var events = parser.feed(Array("id: 1\ndata: before\n\n".utf8))
        let longLine = Array("id: 2\ndata: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 100_000)
        for start in stride(from: 0, to: longLine.count, by: 100) {
            events += parser.feed(longLine[start..<min(start + 100, longLine.count)])
            #expect(parser.bufferedBytes <= cap)
        }
        // Still the oversized event: this data line must not be dispatched on its own.
        events += parser.feed(Array("\ndata: tail of the dropped event\n\n".utf8))
        // Many short data lines that together pass the cap are dropped the same way.
        for _ in 0..<200 {
            events += parser.feed(Array("data: 0123456789\n".utf8))
            #expect(parser.bufferedBytes <= cap)
        }
        events += parser.feed(Array("\nid: 3\ndata: after\n\n".utf8))
        #expect(events.map(\.data) == ["before", "after"])
        #expect(events.map(\.id) == [1, 3])
        #expect(parser.malformedEvents == 2)
    }

    @Test func binaryGarbageDoesNotCrashAndTheStreamRecovers() {
        var generator = SplitMix64(seed: 42)
        var parser = ServerSentEventParser()
        for _ in 0..<200 {
            let chunk = (0..<Int.random(in: 1...1000, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = parser.feed(chunk)
        }
        let events = parser.feed(Array("\n\nid: 1\ndata: ok\n\n".utf8))
        #expect(events.last == ServerEvent(id: 1, kindName: "message", data: "ok"))
        // Invalid UTF-8 in data becomes U+FFFD instead of failing.
        #expect(parser.feed(Array("data: ".utf8) + [0xFF, 0xFE] + Array("\n\n".utf8)).first?.data == "\u{FFFD}\u{FFFD}")
    }
}

// MARK: - Consumer against a scripted server

@Suite struct EventStreamConsumerTests {
    private static let fastBackoff = Backoff(base: 0.02, cap: 0.1)

    @Test func deliversTypedEventsAndPresentsTheTokens() throws {
        let visitor = Visitor(id: "v-1", shortId: ShortID("K7Q2M9XD")!, name: "Ana Pop",
                              validity: ValidityWindow(from: Date(timeIntervalSince1970: 1_795_939_200),
                                                       until: Date(timeIntervalSince1970: 1_795_975_200)),
                              createdAt: Date(timeIntervalSince1970: 1_795_860_000))
        let visitorJSON = String(decoding: try JSONEncoder().encode(VisitorEventData(visitor: visitor, checkpointId: "gate")),
                                 as: UTF8.self)
        try withFakeServer([.init(chunks: [
            "event: stream.gap\ndata: {\"oldestKeptId\":40}\n\n",
            ": ping\n\n",
            "id: 41\nevent: visitor.awaiting\ndata: \(visitorJSON)\n\n",
            "id: 42\nevent: notification.deleted\ndata: {\"id\":\"17\"}\n\n",
        ], thenClose: false)]) { server in
            let recorder = EventStreamRecorder()
            withConsumer(port: server.port, recorder: recorder, deviceToken: "gpd_test") { _ in
                #expect(recorder.wait { recorder.events.count == 3 })
            }
            let events = recorder.events
            #expect(events.map(\.id) == [nil, 41, 42])
            #expect(try events[0].payload() == .gap(StreamGapData(oldestKeptId: 40)))
            #expect(try events[1].payload() == .visitor(VisitorEventData(visitor: visitor, checkpointId: "gate")))
            #expect(try events[2].payload() == .notificationDeleted(id: "17"))

            let request = try #require(server.requests.first)
            #expect(request.line == "GET /api/events HTTP/1.1")
            #expect(request.headers["authorization"] == "Bearer token-1")
            #expect(request.headers["accept"] == "text/event-stream")
            #expect(request.headers["x-device-token"] == "gpd_test")
            #expect(request.headers["last-event-id"] == nil)
            #expect(recorder.statuses.starts(with: [.connecting, .connected]))
            #expect(recorder.statuses.last == .stopped(reason: nil))
        }
    }

    @Test func reconnectsWithLastEventIDAndAFreshToken() throws {
        try withFakeServer([
            .init(chunks: ["id: 1\ndata: a\n\n", "id: 2\ndata: b\n\n"]),
            .init(chunks: ["id: 3\ndata: c\n\n"], thenClose: false),
        ]) { server in
            let recorder = EventStreamRecorder()
            withConsumer(port: server.port, recorder: recorder) { _ in
                #expect(recorder.wait { recorder.events.count == 3 })
            }
            let requests = server.requests
            #expect(requests.count == 2)
            #expect(requests.first?.headers["last-event-id"] == nil)
            #expect(requests.last?.headers["last-event-id"] == "2")
            #expect(requests.last?.headers["authorization"] == "Bearer token-2")
            #expect(requests.last?.headers["x-device-token"] == nil)
            #expect(recorder.statuses.contains { if case .waiting = $0 { true } else { false } })
        }
    }

    @Test func anEventRepeatedAfterAReconnectIsDeliveredOnce() throws {
        try withFakeServer([
            .init(chunks: ["id: 1\ndata: a\n\nid: 2\ndata: b\n\n"]),
            .init(chunks: ["id: 1\ndata: a\n\nid: 2\ndata: b\n\nevent: stream.gap\ndata: {}\n\nid: 3\ndata: c\n\n"],
                  thenClose: false),
        ]) { server in
            let recorder = EventStreamRecorder()
            withConsumer(port: server.port, recorder: recorder) { consumer in
                #expect(recorder.wait { recorder.events.last?.id == 3 })
                // The id is recorded just after `onEvent` returns: once stop() has joined the
                // thread, that has happened.
                consumer.stop()
                #expect(consumer.lastDeliveredID == 3)
            }
            #expect(recorder.events.map(\.id) == [1, 2, nil, 3])
            #expect(recorder.events.map(\.data) == ["a", "b", "{}", "c"])
        }
    }

    @Test func aRestartedServerOnTheSamePortIsReconnectedTo() throws {
        let recorder = EventStreamRecorder()
        let first = try FakeEventServer(replies: [.init(chunks: ["id: 1\ndata: a\n\nid: 2\ndata: b\n\n"], thenClose: false)])
        defer { first.stop() }
        try withConsumer(port: first.port, recorder: recorder) { _ in
            #expect(recorder.wait { recorder.events.count == 2 })
            first.stop()
            // Refused while the server is down, and retried.
            #expect(recorder.wait {
                recorder.statuses.contains { if case .waiting(_, .offline) = $0 { true } else { false } }
            })
            try withFakeServer(port: first.port, [.init(chunks: ["id: 3\ndata: c\n\n"], thenClose: false)]) { second in
                #expect(recorder.wait { recorder.events.count == 3 })
                #expect(second.requests.first?.headers["last-event-id"] == "2")
            }
        }
        #expect(recorder.events.map(\.id) == [1, 2, 3])
    }

    @Test(arguments: [401, 403]) func aRefusedSessionStopsForGood(status: Int) throws {
        try withFakeServer([.init(status: status, contentType: "application/json",
                                  chunks: [#"{"error":{"code":"UNAUTHORIZED","message":"no"}}"#])]) { server in
            let recorder = EventStreamRecorder()
            withConsumer(port: server.port, recorder: recorder) { _ in
                #expect(recorder.wait { if case .stopped = recorder.statuses.last { true } else { false } })
            }
            switch (status, recorder.statuses.last) {
            case (401, .stopped(reason: .unauthorized?)), (403, .stopped(reason: .permanent(status: 403, _, _)?)): break
            default: Issue.record("unexpected final status \(String(describing: recorder.statuses.last))")
            }
            #expect(server.requests.count == 1)
            #expect(recorder.events.isEmpty)
        }
    }

    @Test func otherStatusesAndWrongContentAreRetried() throws {
        try withFakeServer([
            .init(status: 503, contentType: "application/json", chunks: ["{}"]),
            .init(contentType: "text/html", chunks: ["<html>id: 9\ndata: not an event\n\n</html>"]),
            .init(chunks: ["id: 1\ndata: a\n\n"], thenClose: false),
        ]) { server in
            let recorder = EventStreamRecorder()
            withConsumer(port: server.port, recorder: recorder) { _ in
                #expect(recorder.wait { recorder.events.count == 1 })
            }
            #expect(recorder.events.map(\.id) == [1])
            let reasons = recorder.statuses.compactMap { if case .waiting(_, let reason) = $0 { reason } else { nil } }
            #expect(reasons.count == 2)
            #expect(reasons.first == .transient(status: 503, message: "/api/events answered 503"))
            if case .decoding? = reasons.last {} else { Issue.record("expected a decoding failure, got \(reasons)") }
        }
    }

    @Test func theServersRetryHintIsTheMinimumWait() throws {
        try withFakeServer([
            .init(chunks: ["retry: 700\n\n: ping\n\n"]),
            .init(chunks: ["id: 1\ndata: a\n\n"], thenClose: false),
        ]) { server in
            let recorder = EventStreamRecorder()
            withConsumer(port: server.port, recorder: recorder) { _ in
                #expect(recorder.wait { recorder.events.count == 1 })
            }
            let waits = recorder.statuses.compactMap { if case .waiting(let delay, _) = $0 { delay } else { nil } }
            #expect(waits.count == 1)
            #expect(waits.allSatisfy { $0 >= 0.7 })
        }
    }

    @Test func anIdleStreamCountsAsAFailure() throws {
        try withFakeServer([
            .init(chunks: [], thenClose: false),
            .init(chunks: ["id: 1\ndata: a\n\n"], thenClose: false),
        ]) { server in
            let recorder = EventStreamRecorder()
            withConsumer(port: server.port, recorder: recorder, idleTimeout: .seconds(1)) { _ in
                #expect(recorder.wait(timeout: 20) { recorder.events.count == 1 })
            }
            // At least two: on a slow machine the second stream can idle out too before stop.
            #expect(server.requests.count >= 2)
            #expect(recorder.statuses.contains { if case .waiting(_, .transient(nil, _)) = $0 { true } else { false } })
        }
    }

    @Test func stopEndsAnOpenIdleStreamPromptly() throws {
        try withFakeServer([.init(chunks: [], thenClose: false)]) { server in
            let recorder = EventStreamRecorder()
            let consumer = makeConsumer(port: server.port, recorder: recorder)
            consumer.start()
            defer { consumer.stop() }
            #expect(recorder.wait { recorder.statuses.last == .connected })
            // The stream would idle out after 45 s; stop() returning well before that (the
            // wait's 30 s only catches a hang) shows it cut the open transfer short.
            let stopped = DispatchSemaphore(value: 0)
            Thread { consumer.stop(); stopped.signal() }.start()
            #expect(stopped.wait(timeout: .now() + 30) == .success)
            #expect(recorder.statuses.last == .stopped(reason: nil))
            #expect(server.requests.count == 1)
        }
    }

    @Test func theLastIDSurvivesANewConsumerOnTheSameStore() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-events-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try ClientDatabase(directory: StateDirectory(path: folder))
        defer { store.close() }
        try withFakeServer([
            .init(chunks: ["id: 5\ndata: a\n\nid: 6\ndata: b\n\n"], thenClose: false),
            .init(chunks: ["id: 6\ndata: b\n\nid: 7\ndata: c\n\n"], thenClose: false),
        ]) { server in
            let firstRun = EventStreamRecorder()
            withConsumer(port: server.port, recorder: firstRun, store: store) { _ in
                #expect(firstRun.wait { firstRun.events.count == 2 })
            }
            let saved = try store.lastEventID(server: "http://127.0.0.1:\(server.port)")
            #expect(saved == 6)
            let otherServer = try store.lastEventID(server: "http://127.0.0.1:1")
            #expect(otherServer == nil)

            let secondRun = EventStreamRecorder()
            withConsumer(port: server.port, recorder: secondRun, store: store) { _ in
                #expect(secondRun.wait { secondRun.events.count == 1 })
            }
            #expect(secondRun.events.map(\.id) == [7])
            #expect(server.requests.last?.headers["last-event-id"] == "6")
            let savedAgain = try store.lastEventID(server: "http://127.0.0.1:\(server.port)")
            #expect(savedAgain == 7)
        }
    }

    // MARK: Fixtures

    /// A consumer of the fake server whose token changes on every connect (token-1, token-2, …).
    private func makeConsumer(port: UInt16, recorder: EventStreamRecorder, deviceToken: String? = nil,
                              idleTimeout: Duration = .seconds(45), store: (any LastEventIDStore)? = nil) -> EventStreamConsumer {
        let connects = Atomic<Int>(0)
        return EventStreamConsumer(
            configuration: .init(server: "http://127.0.0.1:\(port)/", deviceToken: deviceToken, idleTimeout: idleTimeout,
                                 backoff: Self.fastBackoff),
            transport: CurlSession(options: .init(connectTimeout: .seconds(2))),
            token: { "token-\(connects.add(1, ordering: .relaxed).newValue)" },
            lastEventIDs: store,
            onStatus: { recorder.record($0) },
            onEvent: { recorder.record($0) })
    }

    /// Runs `body` with a started consumer and stops it on every path out.
    private func withConsumer(port: UInt16, recorder: EventStreamRecorder, deviceToken: String? = nil,
                              idleTimeout: Duration = .seconds(45), store: (any LastEventIDStore)? = nil,
                              _ body: (EventStreamConsumer) throws -> Void) rethrows {
        let consumer = makeConsumer(port: port, recorder: recorder, deviceToken: deviceToken, idleTimeout: idleTimeout,
                                    store: store)
        consumer.start()
        defer { consumer.stop() }
        try body(consumer)
    }

    private func withFakeServer(port: UInt16 = 0, _ replies: [FakeEventServer.Reply],
                                _ body: (FakeEventServer) throws -> Void) throws {
        let server = try FakeEventServer(port: port, replies: replies)
        defer { server.stop() }
        try body(server)
    }
}

/// What a consumer reported, for assertions from the test's thread.
private final class EventStreamRecorder: @unchecked Sendable {
    // @unchecked: the Mutexes guard the records; `changed` only carries the signal.
    private let recordedEvents = Locked<[ServerEvent]>([])
    private let recordedStatuses = Locked<[EventStreamConsumer.Status]>([])
    /// Broadcast after every record, so a waiter looks again at once.
    private let changed = NSCondition()

    var events: [ServerEvent] { recordedEvents.withLock { $0 } }
    var statuses: [EventStreamConsumer.Status] { recordedStatuses.withLock { $0 } }
    func record(_ event: ServerEvent) { recordedEvents.withLock { $0.append(event) }; signal() }
    func record(_ status: EventStreamConsumer.Status) { recordedStatuses.withLock { $0.append(status) }; signal() }

    private func signal() {
        changed.lock()
        changed.broadcast()
        changed.unlock()
    }

    /// Waits until `condition` holds, looking again after each record; false after
    /// `timeout` seconds (only a hang gets there).
    func wait(timeout: TimeInterval = 30, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        changed.lock()
        defer { changed.unlock() }
        while !condition() {
            if !changed.wait(until: deadline) { return condition() }
        }
        return true
    }
}

// MARK: - A scripted event-stream server

/// Just enough HTTP/1.1 on 127.0.0.1 to script an event stream: one connection at a time,
/// each one reads and records the request head and plays the next reply (the last one
/// repeats). Plain POSIX sockets, so the test controls every byte and when it is sent.
private final class FakeEventServer: Sendable {
    struct Reply: Sendable {
        var status = 200
        var contentType = "text/event-stream"
        /// Written one after the other as separate sends.
        var chunks: [String] = []
        /// False keeps the connection open (sending nothing more) until the client leaves
        /// or the server stops.
        var thenClose = true
    }

    struct Request: Sendable {
        var line: String
        /// Names in lower case.
        var headers: [String: String]
    }

    let port: UInt16
    private let listener: Int32
    private let replies: [Reply]
    private let recorded = Locked<[Request]>([])
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    var requests: [Request] { recorded.withLock { $0 } }

    /// - Parameter port: 0 for any free port; a port used before to play a restart.
    init(port: UInt16 = 0, replies: [Reply]) throws {
        precondition(!replies.isEmpty)
        self.replies = replies
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ClientTestFailure("socket() failed (errno \(errno))") }
        // The previous server's closed connections linger in TIME_WAIT on this port.
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && listen(descriptor, 8) == 0
                    && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            close(descriptor)
            throw ClientTestFailure("cannot listen on 127.0.0.1:\(port) (errno \(code))")
        }
        listener = descriptor
        self.port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in
            serve()
            close(listener)
            finished.signal()
        }
        thread.name = "fake-event-server"
        thread.start()
    }

    deinit { stop() }

    /// Closes the listener and every connection, and returns when the thread has ended.
    func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        finished.wait()
    }

    private var isStopping: Bool { stopping.load(ordering: .relaxed) }

    /// Waits up to 100 ms for `descriptor` to be readable, so the loops notice `stop()`.
    private func readable(_ descriptor: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 100) > 0
    }

    private func serve() {
        var served = 0
        while !isStopping {
            guard readable(listener) else { continue }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            var one: Int32 = 1
            setsockopt(connection, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if let request = readHead(connection) {
                recorded.withLock { $0.append(request) }
                play(replies[min(served, replies.count - 1)], on: connection)
                served += 1
            }
            close(connection)
        }
    }

    private func readHead(_ connection: Int32) -> Request? {
        var bytes: [UInt8] = []
        let end = Array("\r\n\r\n".utf8)
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !isStopping, bytes.count < 65_536 {
            guard readable(connection) else { continue }
            let count = recv(connection, &chunk, chunk.count, 0)
            guard count > 0 else { return nil }
            bytes += chunk[..<count]
            if let range = bytes.firstRange(of: end) {
                let lines = String(decoding: bytes[..<range.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
                var headers: [String: String] = [:]
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                return Request(line: lines.first ?? "", headers: headers)
            }
        }
        return nil
    }

    private func play(_ reply: Reply, on connection: Int32) {
        let reason = [200: "OK", 401: "Unauthorized", 403: "Forbidden", 503: "Service Unavailable"][reply.status] ?? "Other"
        var head = "HTTP/1.1 \(reply.status) \(reason)\r\nContent-Type: \(reply.contentType)\r\nCache-Control: no-store\r\n"
        if reply.status != 200 { head += "Content-Length: \(reply.chunks.joined().utf8.count)\r\n" }
        head += "Connection: close\r\n\r\n"
        for text in [head] + reply.chunks {
            let bytes = Array(text.utf8)
            guard bytes.withUnsafeBytes({ send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
                return
            }
        }
        guard !reply.thenClose else { return }
        // Hold the stream open until the client hangs up or the server stops.
        var scratch = [UInt8](repeating: 0, count: 1024)
        while !isStopping {
            guard readable(connection) else { continue }
            if recv(connection, &scratch, scratch.count, 0) <= 0 { return }
        }
    }
}
