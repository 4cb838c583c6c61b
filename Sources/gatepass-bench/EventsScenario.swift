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
    // It seeds and scans at machine speed with one user and one scanner token, far beyond the
    // per-principal limits meant for people and gates (tested apart in RateLimitTests).
    configuration.limits.enabled = false
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
    let server = try GatePassServer(configuration: configuration, devMode: true, logSink: try DevNullLog())
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
