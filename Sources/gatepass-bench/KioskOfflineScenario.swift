import CurlHTTP
import Foundation
import GatePassAPI
import GatePassClient
import GatePassCore
import GatePassCrypto
import GatePassScanner
import GatePassServer
import LoopbackHTTP

// MARK: - The kiosk-offline scenario (issue 13: the offline gate)

struct KioskOfflineReport: Codable, Sendable {
    var passes: Int
    // (c) the pass cache
    var fullLoadSeconds: Double
    var fullLoadPasses: Int
    var fullLoadPages: Int
    var fullLoadAnchorSeconds: Double
    var deltaSeconds: Double
    var deltaPasses: Int
    var deltaPages: Int
    var deltaAnchorSeconds: Double
    var emptyDeltaMilliseconds: Double
    // (a) the decision after decode
    var decisions: Int
    var decisionResults: [String: Int]
    var decisionP50Milliseconds: Double
    var decisionP95Milliseconds: Double
    var inMemoryDecisionP50Milliseconds: Double
    var inMemoryDecisionP95Milliseconds: Double
    var verifyP50Milliseconds: Double
    var verifyP95Milliseconds: Double
    var decisionGoalMet: Bool
    // (b) frame → decision
    var frames: Int
    var framesWithPass: Int
    var framesRead: Int
    var samples: Int
    var frameToDecisionP50Milliseconds: Double
    var frameToDecisionP95Milliseconds: Double
    var zbarSameFrameP50Milliseconds: Double
    var zbarSameFrameP95Milliseconds: Double
    /// p95 over frames of (frame → decision − zbar's decode of the same frame).
    var frameExcessP95Milliseconds: Double
    var frameGoalMet: Bool
    // (d) the replay
    var replayEntries: Int
    var replaySeconds: Double
    var replayPerSecond: Double
    var onlineCheckIns: Int
    var onlineSeconds: Double
    var onlinePerSecond: Double
    /// CPU of the whole process (server and client) per check-in, in each phase.
    var onlineCPUMillisecondsPerCheckIn: Double
    var replayCPUMillisecondsPerCheckIn: Double
    var replayRatio: Double
    var replayLanes: Int
    var remainingInOutbox: Int
    var offlineScansOnServer: Int
    var duplicatesOnServer: Int
    var passesOutOfOrder: Int
    var conflicts: Int
    var replayGoalMet: Bool
}

/// The server's own pass keys, read from its keys file (the bench runs beside the server, as
/// `gatepass keys` does), so the GP2 texts scanned are the ones the server's passes carry.
struct ServerAdmitKey {
    var id: String
    var privateKey: [UInt8]

    private struct File: Decodable {
        struct Key: Decodable {
            var id: String
            var purpose: PassKeyPurpose
            var privateKey: String
            var retiredAt: Timestamp?
            var revokedAt: Timestamp?
        }
        var keys: [Key]
    }

    init(keysFile path: String) throws {
        let file = try JSONDecoder().decode(File.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        guard let key = file.keys.last(where: { $0.purpose == .admit && $0.retiredAt == nil && $0.revokedAt == nil }),
              let privateKey = Base64URL.decode(key.privateKey)
        else { throw BenchFailure("\(path) holds no current admit key") }
        id = key.id
        self.privateKey = privateKey
    }

    func text(for visitor: Visitor) throws -> String {
        try SignedPassText.issue(for: visitor, keyId: id) { try Ed25519.sign($0, privateKey: privateKey) }.text
    }
}

func runKioskOfflineScenario(_ options: Options) throws -> KioskOfflineReport {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-bench-kiosk-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let count = options.entries

    var configuration = ServerConfiguration()
    // It seeds and scans at machine speed with one user and one scanner token, far beyond the
    // per-principal limits meant for people and gates (tested apart in RateLimitTests).
    configuration.limits.enabled = false
    configuration.database = directory + "/server.db"
    configuration.port = 0
    configuration.otpResendIntervalSeconds = 0
    configuration.otpSendsPerHour = 1000
    configuration.threads = options.threads
    configuration.sqliteSynchronous = options.synchronous
    var server = try GatePassServer(configuration: configuration, devMode: true, logSink: SilentLog())
    configuration.port = Int(server.port)
    _ = try Administration.addUser(store: server.store, email: "guard@bench.example", name: "Guard", role: .admin,
                                   organization: "Bench", canScan: true, now: Date())
    // Started again so the new organization gets its pass keys, as on any server's start.
    server.stop()
    server = try GatePassServer(configuration: configuration, devMode: true, logSink: SilentLog())
    defer { server.stop() }
    let port = server.port
    let base = "http://127.0.0.1:\(port)"
    let key = try ServerAdmitKey(keysFile: configuration.resolvedPassKeysFile)
    let token = try login(email: "guard@bench.example", port: port)
    // Windows open 4 h ago: the offline scans are dated over the last 3 h.
    progress("seeding \(count) passes")
    _ = try seedVisitors(count: count, startingAt: 0, port: port, token: token, connections: 16, validSince: 4 * 3600)

    let state = StateDirectory(path: directory + "/kiosk")
    let core = try ClientCore(directory: state, transport: CurlSession(options: .init(connectTimeout: .seconds(2))),
                              platform: "kiosk")
    _ = try core.login(server: base, email: "guard@bench.example", otp: try devCode(email: "guard@bench.example", port: port),
                       allowPurge: false)
    let reader = APIClient(baseURL: base, transport: CurlSession(options: .init(connectTimeout: .seconds(2))))
    func readVisitorPages(_ wanted: Int) throws -> Double {
        let start = monotonicNanoseconds()
        var read = 0
        var cursor: String?
        repeat {
            // 500: the largest page the API hands out (api.md "Lists"), as /expected's.
            let page = try reader.visitors(token: token, limit: 500, cursor: cursor)
            read += page.items.count
            cursor = page.nextCursor
        } while read < wanted && cursor != nil
        guard read >= wanted else { throw BenchFailure("GET /api/visitors gave \(read) visitors, not \(wanted)") }
        return Double(monotonicNanoseconds() - start) / 1e9
    }

    // (c) The full load, then its anchor.
    progress("pass cache: full load of \(count) passes, then \(count) visitors through GET /api/visitors")
    var start = monotonicNanoseconds()
    let full = try core.syncPassCache(timeZone: .current)
    let fullSeconds = Double(monotonicNanoseconds() - start) / 1e9
    guard full.fullLoad, full.items == count else { throw BenchFailure("the full load gave \(full.items) passes, not \(count)") }
    let fullAnchor = try readVisitorPages(count)
    let cached = try core.store.passCacheSnapshot()
    guard cached.keys.contains(where: { $0.id == key.id }) else { throw BenchFailure("the kiosk did not get the server's admit key") }

    // (a) Offline decisions over a cache of `count` passes: 9 in 10 first scans, 1 in 10 a
    // second scan of a pass scanned before, dated a second apart over the last 3 h.
    let visitors = cached.visitors.values.sorted { $0.shortId.rawValue < $1.shortId.rawValue }
    let repeats = count / 10
    let firsts = count - repeats
    let scanned: [Visitor] = Array(visitors.prefix(firsts)) + (0..<repeats).map { visitors[$0 * firsts / max(repeats, 1)] }
    let texts = try scanned.map(key.text(for:))
    let firstScanAt = Date().addingTimeInterval(-3 * 3600).timeIntervalSince1970.rounded(.down)
    let scannedAt = (0..<count).map { Date(timeIntervalSince1970: firstScanAt + Double($0)) }
    let inMemory = OfflineCacheSnapshot(visitors: cached.visitors, revoked: cached.revoked, keys: cached.keys)
    progress("deciding \(count) scans offline (state file, in memory, and Ed25519.verify alone)")
    var verifyTimes: [Double] = [], inMemoryTimes: [Double] = [], decisionTimes: [Double] = []
    var results: [String: Int] = [:]
    for (index, text) in texts.enumerated() {
        let signed = SignedPassText(parsing: text)!
        let publicKey = cached.keys.first { $0.id == signed.keyId }!.publicKeyBytes!
        start = monotonicNanoseconds()
        let verified = Ed25519.verify(signed.signature, of: signed.signedBytes, publicKey: publicKey)
        verifyTimes.append(Double(monotonicNanoseconds() - start) / 1e6)
        guard verified else { throw BenchFailure("the server's key does not verify its own GP2 text") }
        start = monotonicNanoseconds()
        _ = OfflineDecision.decide(text: text, scannedAt: scannedAt[index], cache: inMemory, policy: .signed,
                                   checkpointId: "", verify: { Ed25519.verify($0, of: $1, publicKey: $2) })
        inMemoryTimes.append(Double(monotonicNanoseconds() - start) / 1e6)
        start = monotonicNanoseconds()
        let decision = try core.decideOffline(code: text, scannedAt: scannedAt[index], policy: .signed)
        decisionTimes.append(Double(monotonicNanoseconds() - start) / 1e6)
        results[decision.result.rawValue, default: 0] += 1
        // Queued as the kiosk queues an offline scan: replayed later with its decision.
        try core.queueOfflineCheckIn(code: text, decision: decision.result, scannedAt: scannedAt[index])
    }
    guard results[ScanResult.checkedIn.rawValue] == firsts, results[ScanResult.alreadyCheckedIn.rawValue] == repeats else {
        throw BenchFailure("offline decisions were \(results), not \(firsts) CHECKED_IN and \(repeats) ALREADY_CHECKED_IN")
    }

    // (c) A delta of `count` new passes, its anchor, and an empty delta.
    progress("pass cache: a delta of \(count) new passes, then an empty one")
    _ = try seedVisitors(count: count, startingAt: count, port: port, token: token, connections: 16, validSince: 4 * 3600)
    start = monotonicNanoseconds()
    let delta = try core.syncPassCache(timeZone: .current)
    let deltaSeconds = Double(monotonicNanoseconds() - start) / 1e9
    guard !delta.fullLoad, delta.items == count else {
        throw BenchFailure("the delta gave \(delta.items) passes (full load: \(delta.fullLoad)), not \(count)")
    }
    let deltaAnchor = try readVisitorPages(count)
    start = monotonicNanoseconds()
    let empty = try core.syncPassCache(timeZone: .current)
    let emptyMilliseconds = Double(monotonicNanoseconds() - start) / 1e6
    guard empty.items == 0 else { throw BenchFailure("the empty delta gave \(empty.items) passes") }
    let others = try core.store.passCacheSnapshot().visitors.values
        .filter { inMemory.visitors[$0.shortId] == nil }.sorted { $0.shortId.rawValue < $1.shortId.rawValue }

    // (b) Frames showing passes of the cache (the new ones), decoded and decided.
    let frameFigures = try measureFrameToDecision(core: core, passes: others, key: key, options: options)

    // (d) The same pattern of check-ins on the other passes, one by one online: half before
    // the replay and half after, so the anchor meets the database at the sizes the replay does.
    let online: [Visitor] = Array(others.prefix(firsts)) + (0..<repeats).map { others[$0 * firsts / max(repeats, 1)] }
    let onlineTexts = try online.map(key.text(for:))
    let scanner = try scannerToken(loginToken: token, port: port)
    let http = LoopbackHTTPClient(host: "127.0.0.1", port: port, timeoutSeconds: 10)
    var onlineSeconds = 0.0, onlineCPUSeconds = 0.0
    func sendOnline(_ texts: ArraySlice<String>) throws {
        progress("\(texts.count) check-ins one by one online")
        let cpu = processCPUSeconds()
        let start = monotonicNanoseconds()
        for text in texts {
            let answer = try http.send("POST", Endpoint.scannerCheckIn.path(), token: scanner, json: ["shortId": text])
            guard answer.status == 200 else { throw BenchFailure("an online check-in answered \(answer.status): \(answer.text)") }
        }
        onlineSeconds += Double(monotonicNanoseconds() - start) / 1e9
        onlineCPUSeconds += processCPUSeconds() - cpu
    }
    try sendOnline(onlineTexts.prefix(onlineTexts.count / 2))

    progress("replaying \(count) offline scans over \(options.lanes) lanes")
    // The kiosk's drain, with the lanes asked for (ClientCore's drainer has the default).
    let drainer = OutboxDrainer(store: core.store, transport: CurlSession(options: .init(connectTimeout: .seconds(2))),
                                clock: SystemWallClock(), directory: state, lanes: options.lanes)
    let cpu = processCPUSeconds()
    start = monotonicNanoseconds()
    var drained = drainer.drain()
    var applied = drained.applied.count
    var conflicts = 0
    func countConflicts(_ report: DrainReport) {
        for answer in report.answers.values where (try? APIClient.decode(CheckInAnswer.self, from: answer))?.conflict == true {
            conflicts += 1
        }
    }
    countConflicts(drained)
    while drained.remaining > 0 && !drained.applied.isEmpty {
        drained = drainer.drain()
        applied += drained.applied.count
        countConflicts(drained)
    }
    let replaySeconds = Double(monotonicNanoseconds() - start) / 1e9
    let replayCPU = (processCPUSeconds() - cpu) * 1000 / Double(max(applied, 1))
    try sendOnline(onlineTexts.dropFirst(onlineTexts.count / 2))
    http.disconnect()
    let onlineCPU = onlineCPUSeconds * 1000 / Double(onlineTexts.count)
    let remaining = try core.store.outboxCount()

    // What the server recorded: every offline scan once, and each pass's scans in the order made.
    var perPass: [String: [(scannedAt: String, result: String)]] = [:]
    var cursor: String?
    let history = LoopbackHTTPClient(host: "127.0.0.1", port: port, timeoutSeconds: 10)
    repeat {
        let page = try history.get(Endpoint.scannerHistory.path(query: [("limit", "500"), ("cursor", cursor)]), token: token).json
        for scan in (page?["items"] as? [[String: Any]]) ?? [] where scan["offline"] as? Bool == true {
            perPass[scan["shortId"] as? String ?? "", default: []].append(
                (scan["scannedAt"] as? String ?? "", scan["result"] as? String ?? ""))
        }
        cursor = page?["nextCursor"] as? String
    } while cursor != nil
    let offlineScans = perPass.values.map(\.count).reduce(0, +)
    let duplicates = perPass.values.map { $0.count - Set($0.map(\.scannedAt)).count }.reduce(0, +)
    // A pass's earlier scan must be the one that checked it in: replayed out of order, the
    // later scan would have, and the earlier would read ALREADY_CHECKED_IN.
    let outOfOrder = perPass.values.filter { scans in
        scans.count > 1 && scans.min { $0.scannedAt < $1.scannedAt }?.result != ScanResult.checkedIn.rawValue
    }.count

    let replayRate = Double(applied) / replaySeconds
    let onlineRate = Double(onlineTexts.count) / onlineSeconds
    let decisionP95 = percentile(decisionTimes, 0.95)
    return KioskOfflineReport(
        passes: count,
        fullLoadSeconds: fullSeconds, fullLoadPasses: full.items, fullLoadPages: full.pages, fullLoadAnchorSeconds: fullAnchor,
        deltaSeconds: deltaSeconds, deltaPasses: delta.items, deltaPages: delta.pages, deltaAnchorSeconds: deltaAnchor,
        emptyDeltaMilliseconds: emptyMilliseconds,
        decisions: count, decisionResults: results,
        decisionP50Milliseconds: percentile(decisionTimes, 0.5), decisionP95Milliseconds: decisionP95,
        inMemoryDecisionP50Milliseconds: percentile(inMemoryTimes, 0.5),
        inMemoryDecisionP95Milliseconds: percentile(inMemoryTimes, 0.95),
        verifyP50Milliseconds: percentile(verifyTimes, 0.5), verifyP95Milliseconds: percentile(verifyTimes, 0.95),
        decisionGoalMet: decisionP95 < 5,
        frames: frameFigures.frames, framesWithPass: frameFigures.framesWithPass, framesRead: frameFigures.framesRead,
        samples: frameFigures.decisionTimes.count,
        frameToDecisionP50Milliseconds: percentile(frameFigures.decisionTimes, 0.5),
        frameToDecisionP95Milliseconds: percentile(frameFigures.decisionTimes, 0.95),
        zbarSameFrameP50Milliseconds: percentile(frameFigures.zbarTimes, 0.5),
        zbarSameFrameP95Milliseconds: percentile(frameFigures.zbarTimes, 0.95),
        frameExcessP95Milliseconds: percentile(frameFigures.excess, 0.95),
        frameGoalMet: !frameFigures.excess.isEmpty && percentile(frameFigures.excess, 0.95) < 1000.0 / 30,
        replayEntries: count, replaySeconds: replaySeconds, replayPerSecond: replayRate,
        onlineCheckIns: onlineTexts.count, onlineSeconds: onlineSeconds, onlinePerSecond: onlineRate,
        onlineCPUMillisecondsPerCheckIn: onlineCPU, replayCPUMillisecondsPerCheckIn: replayCPU,
        replayRatio: replayRate / onlineRate, replayLanes: options.lanes,
        remainingInOutbox: remaining, offlineScansOnServer: offlineScans, duplicatesOnServer: duplicates,
        passesOutOfOrder: outOfOrder, conflicts: conflicts,
        replayGoalMet: replayRate / onlineRate >= 1.5 && duplicates == 0 && outOfOrder == 0 && remaining == 0
            && offlineScans == count)
}

struct FrameToDecisionFigures {
    var frames = 0
    var framesWithPass = 0
    var framesRead = 0
    /// Per frame in which a pass was read: decode + offline decision of what it read.
    var decisionTimes: [Double] = []
    /// zbar called directly on the same frame.
    var zbarTimes: [Double] = []
    var excess: [Double] = []
}

/// (b): frames of GP2 passes from the cache; for each frame, our decoder and the offline
/// decision of every code it read, against zbar on the same frame, alternating which goes first.
func measureFrameToDecision(core: ClientCore, passes: [Visitor], key: ServerAdmitKey,
                            options: Options) throws -> FrameToDecisionFigures {
    var next = 0
    var signingFailure: Error?
    let (frames, visits) = try ScannerFrames.library(count: options.distinct, errorCorrection: .quartile) { _ in
        defer { next += 1 }
        do {
            return try key.text(for: passes[next % passes.count])
        } catch {
            signingFailure = error
            return "GP1:00000000"
        }
    }
    if let signingFailure { throw signingFailure }
    progress("frame -> decision: \(frames.count) frames (\(visits) passes held up) x \(options.rounds) rounds, "
             + "QRDecoder + offline decision against direct zbar")
    let decoder = try QRDecoder()
    let direct = try DirectZBar()
    var figures = FrameToDecisionFigures()
    for round in 0..<options.rounds {
        for (index, frame) in frames.enumerated() {
            var decisionNanoseconds: UInt64 = 0, zbarNanoseconds: UInt64 = 0
            var read: Set<String> = []
            var failure: Error?
            frame.pixels.withUnsafeBytes { bytes in
                let view = FrameView(width: ScannerFrames.width, height: ScannerFrames.height, luma: bytes, index: index)
                func ours() {
                    let start = monotonicNanoseconds()
                    do {
                        read = try decoder.decode(view).texts
                        for text in read { _ = try core.decideOffline(code: text, scannedAt: Date(), policy: .signed) }
                    } catch {
                        failure = error
                    }
                    decisionNanoseconds = monotonicNanoseconds() - start
                }
                func theirs() {
                    let start = monotonicNanoseconds()
                    _ = direct.scan(bytes, width: ScannerFrames.width, height: ScannerFrames.height)
                    zbarNanoseconds = monotonicNanoseconds() - start
                }
                if (index + round) % 2 == 0 {
                    ours(); theirs()
                } else {
                    theirs(); ours()
                }
            }
            if let failure { throw failure }
            figures.frames += 1
            guard let code = frame.code else { continue }
            figures.framesWithPass += 1
            guard read.contains(code) else { continue }
            figures.framesRead += 1
            let ms = Double(decisionNanoseconds) / 1e6, zms = Double(zbarNanoseconds) / 1e6
            figures.decisionTimes.append(ms)
            figures.zbarTimes.append(zms)
            figures.excess.append(ms - zms)
        }
    }
    return figures
}

func printKioskOfflineReport(_ report: KioskOfflineReport) {
    print("gatepass-bench kiosk-offline: \(report.passes) passes, a kiosk's client core and a real server (loopback)")
    print("(c) pass cache full load: \(report.fullLoadPasses) passes in \(report.fullLoadPages) pages, \(format(report.fullLoadSeconds, 2)) s"
          + "   [anchor: the same number through GET /api/visitors pages \(format(report.fullLoadAnchorSeconds, 2)) s;"
          + " ratio \(format(report.fullLoadSeconds / max(report.fullLoadAnchorSeconds, 1e-9), 2))]")
    print("    delta of \(report.deltaPasses) new passes in \(report.deltaPages) pages: \(format(report.deltaSeconds, 2)) s"
          + "   [anchor: \(format(report.deltaAnchorSeconds, 2)) s; ratio \(format(report.deltaSeconds / max(report.deltaAnchorSeconds, 1e-9), 2))];"
          + " empty delta \(format(report.emptyDeltaMilliseconds, 1)) ms")
    print("(a) offline decision after decode (state file, Ed25519, OfflineDecision, admission written): p50 "
          + "\(format(report.decisionP50Milliseconds, 3)) ms, p95 \(format(report.decisionP95Milliseconds, 3)) ms over \(report.decisions)"
          + " \(report.decisionResults.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))"
          + "   [anchors: Ed25519.verify alone p50 \(format(report.verifyP50Milliseconds, 3)) ms, p95 \(format(report.verifyP95Milliseconds, 3)) ms;"
          + " OfflineDecision.decide in memory p50 \(format(report.inMemoryDecisionP50Milliseconds, 3)) ms, p95 \(format(report.inMemoryDecisionP95Milliseconds, 3)) ms]")
    print("(b) frame -> decision (640x480, GP2 at ECC Q): p50 \(format(report.frameToDecisionP50Milliseconds, 2)) ms, p95 "
          + "\(format(report.frameToDecisionP95Milliseconds, 2)) ms over \(report.samples) frames read"
          + " (\(report.framesRead) of \(report.framesWithPass) frames with a pass, \(report.frames) frames)"
          + "   [anchor: zbar on the same frames p50 \(format(report.zbarSameFrameP50Milliseconds, 2)) ms, p95 \(format(report.zbarSameFrameP95Milliseconds, 2)) ms;"
          + " p95 of the difference \(format(report.frameExcessP95Milliseconds, 2)) ms]")
    print("(d) replay: \(report.replayEntries) offline scans in \(format(report.replaySeconds, 2)) s = \(format(report.replayPerSecond, 0))/s over "
          + "\(report.replayLanes) lanes   [anchor: \(report.onlineCheckIns) check-ins one by one online \(format(report.onlinePerSecond, 0))/s;"
          + " ratio \(format(report.replayRatio, 2))]; CPU per check-in (server and client) \(format(report.replayCPUMillisecondsPerCheckIn, 2)) ms"
          + " replayed, \(format(report.onlineCPUMillisecondsPerCheckIn, 2)) ms online")
    print("    server scan history: \(report.offlineScansOnServer) offline scans, duplicates \(report.duplicatesOnServer), passes out of order "
          + "\(report.passesOutOfOrder), conflicts \(report.conflicts); left in outbox \(report.remainingInOutbox)")
    print("goals: (a) p95 < 5 ms: \(report.decisionGoalMet ? "met" : "NOT met"); (b) p95 of frame -> decision minus zbar < 33.3 ms: "
          + "\(report.frameGoalMet ? "met" : "NOT met"); (d) replay >= 1.5x online, 0 duplicates, order kept: "
          + "\(report.replayGoalMet ? "met" : "NOT met")")
}
