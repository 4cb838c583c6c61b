import Foundation
import GatePassCommands
import GatePassClient
import GatePassServer

// MARK: - Command line (the same declarative parser as `gatepass`)

struct Options: Sendable {
    var scenario = "server"
    var entries = 10_000
    var visitors = 10_000
    var connections = 32
    var seconds = 5.0
    var warmup = 1.0
    var threads = ServerConfiguration().threads
    var synchronous = ServerConfiguration().sqliteSynchronous
    // server
    var database = BenchDatabase.sqlite
    var instances = 1
    var json = false
    // events
    var subscribers = [100, 1000]
    var events = 200
    var rate = 20.0
    var anchor = 200
    // scanner
    var frames = 100_000
    var distinct = 300
    var rounds = 5
    var passes = 200
    var scannerSeconds = 10.0
    // kiosk-offline
    var lanes = OutboxDrainer.defaultLanes
}

/// The options of the server, outbox, scanner and events scenarios, declared once for the
/// parser and `--help`; every scenario accepts all of them (each uses its own, see the help).
enum BenchCommandLine {
    static let scenario = Argument<String>(
        "SCENARIO", missing: "missing scenario: run gatepass-bench server (or outbox, events, scanner, passes, kiosk-offline, console)",
        help: "server, outbox, scanner, events, passes, kiosk-offline or console (see below).") { (text: String) throws(UsageError) in
        guard ["server", "outbox", "events", "scanner", "passes", "kiosk-offline", "console"].contains(text) else {
            throw UsageError("unknown scenario \(text); the scenarios are: server, outbox, events, scanner, passes, kiosk-offline, console")
        }
        return text
    }
    static let visitors = Option<Int>("--visitors", value: "N", in: 1...1_000_000, help: "server: visitors seeded (default 10000).")
    static let entries = Option<Int>("--entries", value: "N", in: 1...1_000_000,
                                     help: "outbox: check-ins queued; kiosk-offline: passes cached and scans replayed (default 10000).")
    // At least one connection for each of wrk's 2 threads.
    static let connections = Option<Int>("--connections", value: "N", in: 2...1024,
                                         help: "server: wrk's keep-alive connections over its 2 threads (default 32).")
    static let seconds = Option<Double>("--seconds", value: "S", seconds: 0.2...600,
                                        help: "server: seconds of each wrk run, rounded to whole seconds (default 5); scanner: seconds at a steady 30 fps (default 10).")
    static let warmup = Option<Double>("--warmup", value: "S", seconds: 0...60,
                                       help: "server: seconds of the uncounted wrk run before each measured one (default 1; 0 = none).")
    static let threads = Option<Int>("--threads", value: "N", in: 1...256,
                                     help: "The server's worker threads (default \(ServerConfiguration().threads)).")
    static let synchronous = Option<String>(
        "--synchronous", value: "OFF|NORMAL|FULL|EXTRA",
        help: "SQLite's synchronous setting for the server (default \(ServerConfiguration().sqliteSynchronous)).") {
        (text: String) throws(UsageError) in
        let mode = text.uppercased()
        guard ["OFF", "NORMAL", "FULL", "EXTRA"].contains(mode) else { throw UsageError("--synchronous must be OFF, NORMAL, FULL or EXTRA") }
        return mode
    }
    static let database = Option<BenchDatabase>(
        "--database", value: "sqlite|postgres|URL",
        help: "server: sqlite (default), postgres (a durable cluster started for the run and stopped after) or an empty "
            + "postgres://USER@HOST:PORT/DATABASE made for the bench.") { (text: String) throws(UsageError) in
        try BenchDatabase(text)
    }
    static let instances = Option<Int>("--instances", value: "N", in: 1...2,
                                       help: "server, on PostgreSQL: servers sharing the database, one wrk process on each (default 1).")
    static let subscribers = Option<[Int]>("--subscribers", value: "N,N…",
                                           help: "events: subscriber counts, each run in turn (default 100,1000).") {
        (text: String) throws(UsageError) in
        guard let counts = parseSubscriberCounts(text) else {
            throw UsageError("--subscribers must be a comma-separated list of counts from 1 to 20000, not \(text)")
        }
        return counts
    }
    static let events = Option<Int>("--events", value: "K", in: 1...100_000, help: "events: visitors checked in (default 200).")
    static let rate = Option<Double>("--rate", value: "R", help: "events: paced check-ins per second (default 20).") {
        (text: String) throws(UsageError) in
        guard let rate = Double(text), rate > 0, rate <= 10_000 else {
            throw UsageError("--rate must be check-ins per second, above 0 and at most 10000, not \(text)")
        }
        return rate
    }
    static let anchor = Option<Int>("--anchor", value: "A", in: 10...100_000,
                                    help: "events: anchor check-ins of each kind (default 200).")
    static let frames = Option<Int>("--frames", value: "N", in: 1...10_000_000, help: "scanner: frames for the RSS check (default 100000).")
    static let distinct = Option<Int>("--distinct", value: "N", in: 30...10_000,
                                      help: "scanner, kiosk-offline: distinct frames drawn (default 300).")
    static let rounds = Option<Int>("--rounds", value: "R", in: 1...1000, help: "scanner, kiosk-offline: decode rounds (default 5).")
    static let passes = Option<Int>("--passes", value: "K", in: 1...100_000,
                                    help: "scanner: passes the kiosk checks in; passes: renders of each form (default 200).")
    static let lanes = Option<Int>("--lanes", value: "L", in: 1...64,
                                   help: "kiosk-offline: check-ins the replay keeps in flight (default \(OutboxDrainer.defaultLanes)).")
    static let json = Flag("--json", help: "Print the report as one JSON object on stdout (progress still goes to stderr).")

    static let configuration = CommandConfiguration(
        name: "gatepass-bench",
        overview: "Measures Gate Pass against anchors taken in the same run, on loopback only.",
        usage: """
            gatepass-bench server [--visitors N] [--connections N] [--seconds S] [--warmup S]
                                         [--threads N] [--synchronous OFF|NORMAL|FULL|EXTRA] [--json]
                   gatepass-bench server --database postgres|postgres://… [--instances 1|2] [--visitors N] [--connections N]
                                         [--seconds S] [--warmup S] [--threads N] [--json]
                   gatepass-bench outbox [--entries N] [--json]
                   gatepass-bench scanner [--distinct N] [--rounds R] [--seconds S] [--frames N] [--passes K]
                                          [--threads N] [--synchronous OFF|NORMAL|FULL|EXTRA] [--json]
                   gatepass-bench events [--subscribers N,N...] [--events K] [--rate R] [--anchor A]
                                         [--threads N] [--synchronous OFF|NORMAL|FULL|EXTRA] [--json]
                   gatepass-bench passes [--passes K] [--json]
                   gatepass-bench kiosk-offline [--entries N] [--distinct N] [--rounds R] [--lanes L]
                                                [--threads N] [--synchronous OFF|NORMAL|FULL|EXTRA] [--json]
                   gatepass-bench console [--pending N] [--repeats N] [--startups N] [--logins N] [--json]
            """,
        arguments: [scenario.spec],
        options: [visitors, entries, connections, seconds, warmup, threads, synchronous, database, instances, subscribers, events, rate, anchor,
                  frames, distinct, rounds, passes, lanes, json],
        discussion: discussion)

    static let discussion = """
    console: needs tmux and the gatepass executable of the same build (swift build --product
    gatepass). Starts an in-process server (dev mode, demo data) with --pending N walk-ins
    awaiting approval (default 10000), then measures, each against an anchor in the same run:
    (1) start -> login screen drawn: the real `gatepass console` in a tmux pane 100x30 with a
    fresh empty state folder, the pane polled with capture-pane about every 2 ms until "> Email"
    shows, --startups N times (default 20), interleaved with the same procedure for `printf` in
    sh and for `gatepass console --help` (the same binary starting without state or curses).
    (2) End to end in the pane (--logins N, default 5; 0 skips): Enter on the typed code -> the
    approvals title drawn. (3) In-process, --repeats N times (default 30), logged in as OWNER:
    the request the console makes (ClientCoreServices.pendingApprovals(): GET
    /api/visitors?status=AWAITING_APPROVAL&limit=500, decode, re-encode and cache write; the
    console reads that first page only), against GET /api/healthz on the same curl session; then
    response -> painted: the tabs a login builds, Approvals appear, one tick, the status line,
    ConsoleApp render into a 200x60 canvas and the real CursesTerminal.draw on a pseudo-terminal
    (read by a thread, as a terminal would; the login frame drawn before), against JSONDecoder
    on the same body. The paint is measured for the first page and with every pending visitor
    loaded into the screen. p50/p95 and ratios; --json prints the report as one JSON object.
    Goal: response -> painted p95 under 100 ms.

    events: for each N of --subscribers (default 100,1000), opens N GET /api/events streams
    (raw sockets, one epoll reader thread; OWNER/ADMIN/APPROVER logins shared), then checks in
    --events K EXPECTED visitors (default 200) one at a time, first paced at --rate R per second
    (default 20), then back-to-back; each visitor.arrived a subscriber receives is matched by
    scanId to its check-in. Reports the delay send-of-check-in -> receipt (p50/p99/max over every
    subscriber x event), missing and duplicate deliveries, frames fanned out per second, and the
    check-in latency with the streams open. Anchor in the same run, before any stream opens: the
    same check-ins (--anchor A of each kind, default 200) with no subscriber, and a fan-out floor
    (the same reader fed by one thread writing frames of the same size to N plain loopback sockets).
    Goal: p99 under 50 ms at 1,000 subscribers (paced).

    passes: draws one realistic visitor pass --passes K times in each form (default 200): the SVG,
    the 1240x1748 PNG (MagickWand) and the HTML page, interleaved with the anchor, ImageMagick
    encoding a blank PNG of the same size (the floor of the PNG form); then, on an in-process
    server, GET /api/visitors/:id/pass.png against GET /api/healthz on one connection. Reports
    p50 (and p95 for the PNG) and the PNG's ratio to the anchor.

    kiosk-offline: an in-process server (dev mode, synchronous=FULL) with --entries N passes
    (default 10000) valid since 4 h ago, and a kiosk's client core logged in as a guard. Each
    figure against an anchor in the same run: (c) the pass cache's full load of the N passes
    from /expected (with the keys and the on-site list), then, after N more passes are made, a
    delta of those N and an empty delta -- anchor: the same number of visitors read through GET
    /api/visitors pages of 500. (a) N offline scans (9 in 10 a first scan, 1 in 10 a second scan
    of a pass scanned before), each its GP2 text signed with the server's own Ed25519 admit key:
    ClientCore.decideOffline (the cached pass read from the state file, the signature, the
    domain's OfflineDecision, the admission written) -- anchors: Ed25519.verify of the same
    text, and OfflineDecision.decide over an in-memory cache of the N passes; each decided scan
    is queued with its offlineDecision as the kiosk queues it. (b) --distinct 640x480 frames
    (default 300) showing GP2 passes of the cache (error correction Q, module 3-6 px), over
    --rounds R rounds (default 5): for each frame with a code, QRDecoder's decode + the offline
    decision of what it read, against zbar called directly on the same frame (alternating which
    goes first). (d) the queued scans replayed by one drain of the kiosk's outbox (--lanes L in flight), against the
    same pattern of check-ins (the N other passes) sent one by one online with their GP2 texts
    (half before the replay, half after, so both meet the database at the same sizes);
    then the server's scan history is read: duplicates and scans of a pass out of order.
    Goals: (a) p95 < 5 ms; (b) p95 of (frame -> decision - zbar's decode of the same frame) under
    one frame interval (33.3 ms); (d) replay >= 1.5 x the one-by-one online rate, 0 duplicates,
    order kept per pass.

    outbox: queues --entries check-ins (default 10000) in a client's outbox while the server
    is down, starts the server, and times one drain to empty; reports the enqueue cost per
    entry (p50/p99, each entry durable on disk), drain entries/s, and duplicates found in the
    server's scan history (must be 0). Anchors in the same run: a bare 4 KiB write+fdatasync
    for the enqueue, and sequential direct check-ins (no outbox) for the drain.
    Goals: 10,000 replayed in under 10 s; enqueue p99 under 2 ms.

    scanner: draws --distinct 640x480 grey frames (default 300; a fixed camera's scenes with noise,
    passes GP1:<id> held up for 6-14 frames at module 3-6 px, about a third empty) and writes them
    to a temporary Y4M file. Measures, anchored to zbar called directly (same configuration) in
    the same run: median/p95 decode ms/frame of QRDecoder vs zbar_scan_image, interleaved frame
    by frame over --rounds R rounds (default 5); frames/s of Y4MSource -> QRDecoder ->
    CodeDeduplicator from the file; CPU % of one core at a steady 30 fps for --seconds S (default
    10); RSS before/after --frames N frames (default 100000); then, against an in-process server
    (dev mode), a KioskRunner fed 30 fps frames checks in --passes K visitors (default 200) and the
    time from the first frame with a new code to its decision line is reported (p50/p95), against
    a plain check-in POST sent in each gap. Goals: decode ratio <= 1.1; p95 under 60 ms online.
    First, the hard cases (issue 15): 40 generated passes (rotation, keystone, blur + noise + JPEG
    q30, light-on-dark, small modules) read by zbar alone and by zxing-cpp with no budget in both
    polarities, then 1,200 frames at 30 fps through zbar alone and through the ReadingPipeline the
    kiosk uses. Goals: of the passes zbar misses and zxing reads, >= 80% read by the pipeline;
    its CPU per frame <= 1.3 x zbar alone's; 0 false reads (the stream and 5 decoys).

    server: starts, on 127.0.0.1 only:
      - the Gate Pass server (dev mode, SQLite file in a temporary folder) holding
        --visitors visitors, logged into as an OWNER through the OTP routes, with a scanner token;
        with --database postgres or a postgres:// URL, --instances servers on that database
        instead (one secret and pass-keys file), and for the check-ins PostgreSQL's write
        transactions per second, WAL flushes and the write lock's waiters (pg_locks every
        20 ms; mean wait by Little's law);
      - the C ceiling, the anchor of every ratio: gatepass-ceiling (built beside the bench), a
        bare libmicrohttpd responder in C (-O2, MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL,
        --threads threads as the server) answering the real stats answer's bytes, keep-alive;
      - a secondary line: the same kind of fixed answer behind our own HTTPServer wrapper;
    then loads each with wrk (/usr/bin/wrk -t2 -c<--connections> --latency, a separate process)
    for --seconds (whole seconds) after a --warmup run, and prints req/s, p50, p99 and errors
    (socket errors, answers >= 400, check-ins not admitted) per scenario:
      C ceiling GET  /                               (measured before and after; the mean divides)
      wrapper   GET  /                               (our wrapper's own cost, as a ratio to C)
      stats     GET  /api/visitor-scanner/stats      (wrk -H with the scanner token)
      checkin   POST /api/visitor-scanner/checkin    (scanner token; a wrk Lua script gives every
                                                      request a different EXPECTED pass, so each
                                                      one commits a change, and a fresh random
                                                      Idempotency-Key, as the kiosk sends; a probe
                                                      sizes the pool)
    With --instances 2, each run is two wrk processes at once, -t1 -c<half> on each server;
    req/s are summed and p50/p99 are the larger of the two.
    Defaults: --visitors 10000 --connections 32 --seconds 5 --warmup 1
              --threads \(ServerConfiguration().threads) --synchronous \(ServerConfiguration().sqliteSynchronous)
    --json prints one JSON object on stdout instead of the table (progress still goes to stderr).

    Goals, as ratios to the C ceiling: stats >= 0.5; checkin >= 0.1 with durable commits
    (synchronous=FULL, or PostgreSQL); p99 of both under 10 ms; no errors.
    """

    /// The options of a scenario other than console; nil for `--help` (or `-h`, or `help` first).
    static func parse(_ arguments: [String]) throws(UsageError) -> Options? {
        if arguments.first == "help" { return nil }
        guard case .parsed(let parsed) = try CommandParser.parse(arguments, for: configuration) else { return nil }
        var options = Options()
        options.scenario = try parsed.required(scenario)
        options.visitors = try parsed.value(visitors) ?? options.visitors
        options.entries = try parsed.value(entries) ?? options.entries
        options.connections = try parsed.value(connections) ?? options.connections
        if let seconds = try parsed.value(seconds) { (options.seconds, options.scannerSeconds) = (seconds, seconds) }
        options.warmup = try parsed.value(warmup) ?? options.warmup
        options.threads = try parsed.value(threads) ?? options.threads
        options.synchronous = try parsed.value(synchronous) ?? options.synchronous
        options.database = try parsed.value(database) ?? options.database
        options.instances = try parsed.value(instances) ?? options.instances
        if options.instances > 1 && !options.database.isPostgres {
            throw UsageError("--instances \(options.instances) needs --database postgres or a postgres:// URL: one SQLite file has one server")
        }
        options.subscribers = try parsed.value(subscribers) ?? options.subscribers
        options.events = try parsed.value(events) ?? options.events
        options.rate = try parsed.value(rate) ?? options.rate
        options.anchor = try parsed.value(anchor) ?? options.anchor
        options.frames = try parsed.value(frames) ?? options.frames
        options.distinct = try parsed.value(distinct) ?? options.distinct
        options.rounds = try parsed.value(rounds) ?? options.rounds
        options.passes = try parsed.value(passes) ?? options.passes
        options.lanes = try parsed.value(lanes) ?? options.lanes
        options.json = parsed.has(json)
        return options
    }

    /// Prints the help (`nil` error) or the usage error, and gives the exit status.
    static func report(_ error: UsageError?) -> Int32 {
        guard let error else {
            print(configuration.help)
            return 0
        }
        FileHandle.standardError.write(Data("gatepass-bench: \(error.message); run gatepass-bench --help for usage.\n".utf8))
        return 2
    }
}
