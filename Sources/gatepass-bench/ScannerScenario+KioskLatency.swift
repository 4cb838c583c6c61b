import CZBar
import CurlHTTP
import Foundation
import GatePassClient
import GatePassCommands
import GatePassAPI
import GatePassCore
import GatePassScanner
import GatePassServer
import LoopbackHTTP
import QRCode

struct KioskLatency {
    var passes: Int
    var decisions: Int
    var missing: Int
    var admitted: Int
    var firstFrameMisses: Int
    var latencyP50: Double
    var latencyP95: Double
    var latencyMax: Double
    var decodeP50: Double
    var afterDecodeP50: Double
    var afterDecodeP95: Double
    var anchorCount: Int
    var anchorP50: Double
    var anchorP95: Double
    var framesRead: Int
    var lateFrames: Int
    var cpuPercent: Double
}

func runKioskLatency(_ options: Options, directory: String, library: [ScannerFrame]) throws -> KioskLatency {
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
    let server = try GatePassServer(configuration: configuration, devMode: true, logSink: try DevNullLog())
    defer { server.stop(grace: .seconds(5)) }
    let port = server.port
    progress("kiosk: Gate Pass server on 127.0.0.1:\(port), synchronous=\(options.synchronous), \(options.threads) threads")

    let email = "kiosk@bench.gatepass"
    _ = try Administration.addUser(store: server.store, email: email, name: "Bench Kiosk", role: .owner,
                                   organization: "Bench Site", canScan: true, now: Date())
    let ownerToken = try login(email: email, port: port)
    let passes = options.passes
    let seeded = try seedVisitors(count: 2 * passes + 10, startingAt: 1, port: port, token: ownerToken, connections: 8)
    let kioskPasses = Array(seeded.prefix(passes))
    let anchorPasses = Array(seeded.dropFirst(passes))
    let anchorScanner = try scannerToken(loginToken: ownerToken, port: port)

    // The kiosk's client core in its own state folder, logged in like `gatepass login`.
    let state = StateDirectory(path: directory + "/kiosk-state")
    let core = try ClientCore(directory: state,
                              transport: CurlSession(options: .init(connectTimeout: .seconds(3), requestTimeout: .seconds(10))),
                              platform: "kiosk")
    _ = try core.login(server: "http://127.0.0.1:\(port)", email: email, otp: try devCode(email: email, port: port),
                       allowPurge: true)
    _ = try core.ensureScannerToken(now: Date())

    // One pass frame per visitor (module 4–6 px, somewhere in the picture), checked readable
    // beforehand so the first frame with the code is the one that decodes.
    var random = SplitMix64(seed: 0x5CA7)
    let scenes = ScannerFrames.scenes(&random)
    let checker = try QRDecoder()
    var passFrames: [[UInt8]] = []
    for (number, shortId) in kioskPasses.enumerated() {
        let text = "GP1:" + shortId
        let code = try QRCode(text)
        var module = 4 + Int(random.next() % 3)
        var frame: [UInt8] = []
        for attempt in 0..<4 {
            let side = (code.width + 8) * module
            let x = Int(random.next() % UInt64(ScannerFrames.width - side)), y = Int(random.next() % UInt64(ScannerFrames.height - side))
            frame = ScannerFrames.draw(scene: scenes[number % scenes.count], code: code, module: module, origin: (x, y),
                                       dark: UInt8(25 + random.next() % 40), light: UInt8(195 + random.next() % 45),
                                       noise: 4, random: &random)
            let read = try frame.withUnsafeBytes { bytes in
                try checker.decode(FrameView(width: ScannerFrames.width, height: ScannerFrames.height, luma: bytes, index: 0))
            }
            checker.resetCache()
            if read.texts.contains(text) { break }
            if attempt == 3 { throw BenchFailure("could not draw a readable pass frame for \(text)") }
            module = 6
        }
        passFrames.append(frame)
    }
    let emptyFrames = library.filter { $0.code == nil }.prefix(30).map(\.pixels)
    guard !emptyFrames.isEmpty else { throw BenchFailure("the frame library has no empty frames; use more --distinct frames") }

    let terminal = TimestampingTerminal()
    // As `gatepass kiosk` reads (issue 15): zbar, then second tries within the budget.
    let decoder = try ReadingPipeline(clock: .threadCPUTime)
    // Written by the frame loop only (read once it has returned): when each frame's decode ended.
    final class DecodeLog { var ended: [Int: (at: UInt64, found: Bool)] = [:] }
    let decodeLog = DecodeLog()
    let hold = 10, gap = 5
    let runner = KioskRunner(core: core, terminal: terminal, clock: SystemWallClock(), options: .init(cooldown: 3),
                             notifier: SystemdNotifier(environment: [:])) { frame in
        let codes = try decoder.decode(frame).codes.map(\.text)
        let position = frame.index - gap
        if position >= 0, position % (hold + gap) < 2 {
            decodeLog.ended[frame.index] = (monotonicNanoseconds(), !codes.isEmpty)
        }
        return codes
    }
    try runner.start()
    // Let the event stream connect and the outbox service make its first round.
    Thread.sleep(forTimeInterval: 1.0)

    let start = monotonicNanoseconds() + 50_000_000
    let source = KioskFrameSource(passFrames: passFrames, emptyFrames: emptyFrames, hold: hold, gap: gap,
                                  framesPerSecond: 30, start: start)
    // The anchor: a plain check-in POST of another EXPECTED pass, sent halfway through each gap
    // (the kiosk's own check-in is over by then; its frame loop keeps decoding meanwhile).
    let anchorTimes = Locked<[Double]>([])
    let anchorFailure = Locked<String?>(nil)
    let anchorThread = Thread {
        let http = LoopbackHTTPClient(host: "127.0.0.1", port: port, timeoutSeconds: 10)
        defer { http.disconnect() }
        let headers = ["Authorization": "Bearer \(anchorScanner)", "Content-Type": "application/json"]
        let interval = UInt64(1e9 / 30)
        for (visitor, shortId) in anchorPasses.prefix(passes).enumerated() {
            let frame = gap + visitor * (hold + gap) + hold + gap / 2
            sleepUntil(start + UInt64(frame) * interval)
            let body = Array(#"{"confirmApprovalRequest":false,"shortId":"GP1:\#(shortId)"}"#.utf8)
            let sent = monotonicNanoseconds()
            do {
                let response = try http.send("POST", Endpoint.scannerCheckIn.path(), headers: headers, body: body)
                let took = Double(monotonicNanoseconds() - sent) / 1e6
                guard response.status == 200 else {
                    anchorFailure.withLock { $0 = $0 ?? "anchor check-in answered \(response.status): \(response.text.prefix(200))" }
                    continue
                }
                anchorTimes.withLock { $0.append(took) }
            } catch {
                anchorFailure.withLock { $0 = $0 ?? "anchor check-in failed: \(error)" }
            }
        }
    }
    progress("kiosk: \(passes) visitors at 30 fps, each pass held \(hold) frames then \(gap) empty frames "
             + "(\(format(Double(source.total) / 30, 0)) s); a plain check-in POST in each gap as the anchor")
    let cpuBefore = processCPUSeconds()
    let wallBefore = monotonicNanoseconds()
    anchorThread.start()
    let framesRead = try runner.scan(source)
    let cpuPercent = (processCPUSeconds() - cpuBefore) / (Double(monotonicNanoseconds() - wallBefore) / 1e9) * 100
    runner.settle(timeout: 5)
    // Wait for the last decision lines (and the anchor thread).
    let deadline = monotonicNanoseconds() + 10_000_000_000
    while terminal.lines.withLock({ $0.count }) < passes && monotonicNanoseconds() < deadline {
        Thread.sleep(forTimeInterval: 0.02)
    }
    while anchorTimes.withLock({ $0.count }) + (anchorFailure.withLock { $0 } == nil ? 0 : passes) < passes
            && monotonicNanoseconds() < deadline {
        Thread.sleep(forTimeInterval: 0.02)
    }
    runner.stop()
    if let failure = anchorFailure.withLock({ $0 }) { progress("kiosk: \(failure)") }

    // Match each decision line to its visitor by the short id in parentheses.
    let index = Dictionary(uniqueKeysWithValues: kioskPasses.enumerated().map { ($1, $0) })
    var decided = [UInt64?](repeating: nil, count: passes)
    var admitted = 0
    var unmatched: [String] = []
    for (at, text) in terminal.lines.withLock({ $0 }) {
        guard let open = text.lastIndex(of: "("), let close = text[open...].firstIndex(of: ")"),
              let visitor = index[String(text[text.index(after: open)..<close])] else {
            unmatched.append(text)
            continue
        }
        if decided[visitor] == nil { decided[visitor] = at }
        if text.hasPrefix("ADMITTED") { admitted += 1 }
    }
    if let first = unmatched.first { progress("kiosk: \(unmatched.count) lines matched no visitor, e.g. \(first)") }
    var latencies: [Double] = [], decodes: [Double] = [], afterDecode: [Double] = []
    var firstFrameMisses = 0
    for visitor in 0..<passes {
        guard let at = decided[visitor], source.handOff[visitor] > 0 else { continue }
        let handOff = source.handOff[visitor]
        latencies.append(Double(at - handOff) / 1e6)
        let firstFrame = gap + visitor * (hold + gap)
        if let decode = decodeLog.ended[firstFrame], decode.found {
            decodes.append(Double(decode.at - handOff) / 1e6)
            afterDecode.append(Double(Int64(at) - Int64(decode.at)) / 1e6)
        } else {
            firstFrameMisses += 1
        }
    }
    let sorted = latencies.sorted()
    let anchors = anchorTimes.withLock { $0 }.sorted()
    let result = KioskLatency(
        passes: passes, decisions: latencies.count, missing: passes - latencies.count, admitted: admitted,
        firstFrameMisses: firstFrameMisses,
        latencyP50: eventsPercentile(sorted, 0.5), latencyP95: eventsPercentile(sorted, 0.95), latencyMax: sorted.last ?? 0,
        decodeP50: percentile(decodes, 0.5), afterDecodeP50: percentile(afterDecode, 0.5),
        afterDecodeP95: percentile(afterDecode, 0.95),
        anchorCount: anchors.count, anchorP50: eventsPercentile(anchors, 0.5), anchorP95: eventsPercentile(anchors, 0.95),
        framesRead: framesRead, lateFrames: source.late, cpuPercent: cpuPercent)
    progress("kiosk: \(result.decisions)/\(passes) decisions, latency p50 \(format(result.latencyP50, 2)) ms, "
             + "p95 \(format(result.latencyP95, 2)) ms; anchor check-in p50 \(format(result.anchorP50, 2)) ms")
    return result
}

