import Foundation
import WrkOutput

// MARK: - Load generator: wrk

// Issue 15 measures the API the way its peers are measured: wrk -t2 -c32 on loopback, against a
// bare libmicrohttpd responder in C as the ceiling. Our own Swift load generator used to drive
// both sides here; it flatters every ratio (its per-request cost slows the ceiling more than the
// server), so the server scenario now drives everything with wrk, a separate process.

/// What one connection of the seeding clients saw; written only by its thread, read after the
/// threads are joined.
final class ConnectionLog: @unchecked Sendable {
    var firstError: String?
}

/// The shape of the load: wrk's threads and keep-alive connections, shared by every target of a run.
struct WrkLoad: Sendable {
    /// Debian's wrk (.ci/install-packages installs it).
    static let executable = "/usr/bin/wrk"
    var threads = 2
    var connections = 32
}

/// One wrk process: where it sends its requests and how.
struct WrkTarget: Sendable {
    var url: String
    /// `-H` headers, "Name: value".
    var headers: [String] = []
    /// The Lua script (`-s`) that makes each request, if any; it is told the process's thread count.
    var script: (@Sendable (_ threads: Int) -> String)?
}

/// The whole seconds wrk runs for `seconds` (its -d takes no fraction; at least 1).
func wrkDuration(_ seconds: Double) -> Int { max(1, Int(seconds.rounded())) }

/// Runs one wrk per target at the same time for `seconds` (whole seconds: wrk's -d takes no
/// fraction), the load's threads and connections split evenly among them (two servers of one
/// database get -t1 -c16 each), and returns what each printed. A run is one wrk per target so
/// that the two servers of `--instances 2` are driven at once, as one load.
func runWrk(_ targets: [WrkTarget], seconds: Double, load: WrkLoad, scratchFolder: String) throws -> [WrkSummary] {
    guard FileManager.default.isExecutableFile(atPath: WrkLoad.executable) else {
        throw BenchFailure("\(WrkLoad.executable) is missing: install wrk (apt-get install wrk; .ci/install-packages lists it)")
    }
    precondition(!targets.isEmpty && load.threads >= targets.count && load.connections >= load.threads,
                 "a wrk run needs at least one thread per target and one connection per thread")
    let threads = load.threads / targets.count
    let connections = load.connections / targets.count
    let duration = wrkDuration(seconds)
    var running: [(process: Process, output: Pipe, errors: Pipe)] = []
    for (index, target) in targets.enumerated() {
        var arguments = ["-t\(threads)", "-c\(connections)", "-d\(duration)s", "--latency"]
        for header in target.headers { arguments += ["-H", header] }
        if let script = target.script {
            let path = scratchFolder + "/wrk-\(UUID().uuidString.prefix(8))-\(index).lua"
            try script(threads).write(toFile: path, atomically: true, encoding: .utf8)
            arguments += ["-s", path]
        }
        arguments.append(target.url)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: WrkLoad.executable)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        running.append((process, output, errors))
    }
    // Each pipe is read to its end before the process is waited for: wrk prints a few hundred bytes.
    var summaries: [WrkSummary] = []
    var failure: String?
    for (index, run) in running.enumerated() {
        let text = String(decoding: run.output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errorText = String(decoding: run.errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        run.process.waitUntilExit()
        do {
            guard run.process.terminationStatus == 0 else {
                throw BenchFailure("wrk exited with \(run.process.terminationStatus)")
            }
            summaries.append(try WrkSummary(parsing: text))
        } catch {
            let said = (errorText + text).split(separator: "\n").prefix(3).joined(separator: " / ")
            failure = failure ?? "wrk against \(targets[index].url) failed: \(error) (it said: \(said))"
        }
    }
    if let failure { throw BenchFailure(failure) }
    return summaries
}

// MARK: - What one scenario measured

struct Measurement: Codable, Sendable {
    var name: String
    var route: String
    /// Responses wrk completed in the run (summed over its processes).
    var requests: Int
    /// Socket errors, answers of status 400 and above, and (check-ins) answers that did not admit the pass.
    var errors: Int
    var socketErrors: Int
    var non2xxOr3xxResponses: Int
    var seconds: Double
    /// wrk's Requests/sec (summed over its processes).
    var requestsPerSecond: Double
    /// wrk's --latency percentiles; with two wrk processes the larger of the two (they cannot be merged exactly).
    var p50Milliseconds: Double
    var p99Milliseconds: Double
    /// CPU of the process answering (the bench's own for our servers, the child's for the C
    /// ceiling) during the run, in % of one core; wrk's own CPU is not in it.
    var serverCPUPercent: Double?
    /// The check-ins' pool of passes ran out before wrk stopped (later requests repeated passes).
    var passesRanOut: Bool
    var firstError: String?
    /// CPU of the bench's own PostgreSQL cluster over the run, in % of one core.
    var databaseServerCPUPercent: Double?

    /// One measurement from the wrk processes of one run.
    /// - Parameter refused: answers the check-in script counted as not admitting (nil for other routes).
    init(name: String, route: String, summaries: [WrkSummary], refused: Int? = nil, passesRanOut: Bool = false,
         firstError: String? = nil, serverCPUPercent: Double?) {
        self.name = name
        self.route = route
        requests = summaries.reduce(0) { $0 + $1.requests }
        socketErrors = summaries.reduce(0) { $0 + $1.socketErrors.total }
        non2xxOr3xxResponses = summaries.reduce(0) { $0 + $1.non2xxOr3xxResponses }
        // A refused check-in with a status of 400 or more is in both counts: count it once.
        errors = socketErrors + (refused ?? non2xxOr3xxResponses)
        seconds = summaries.map(\.seconds).max() ?? 0
        requestsPerSecond = summaries.reduce(0) { $0 + $1.requestsPerSecond }
        p50Milliseconds = summaries.map(\.p50Milliseconds).max() ?? 0
        p99Milliseconds = summaries.map(\.p99Milliseconds).max() ?? 0
        self.serverCPUPercent = serverCPUPercent
        self.passesRanOut = passesRanOut
        self.firstError = firstError ?? (errors > 0 ? "\(socketErrors) socket errors, \(non2xxOr3xxResponses) answers >= 400" : nil)
    }
}

// MARK: - The check-in script

/// The wrk Lua script of the check-ins: every request POSTs `{"shortId":…}` for a different
/// EXPECTED pass, read from `passFile` (one short id a line), and every answer that is not a 200
/// admitting the pass ("result":"CHECKED_IN") is counted as refused. wrk gives each of its
/// threads its own Lua state, so thread i of n takes lines i, i+n, i+2n, … and no two requests
/// of the run name one pass while the file lasts; past its end a thread repeats its last pass
/// (refused: ALREADY_CHECKED_IN) and counts it as exhausted. `done` prints the counters as one
/// `gatepass-script:` line, which `WrkSummary` reads. Every request carries a fresh random
/// `Idempotency-Key` in the form of a version-4 UUID, as the kiosk's outbox sends (api.md
/// "Idempotency"), so each check-in also stores its answer under its key, as at a real gate.
func checkinScript(path: String, token: String, passFile: String, threads: Int) -> String {
    // Lua long brackets: nothing in a token, a path or a file name needs escaping.
    """
    local checkin_path = [==[\(path)]==]
    local pass_file = [==[\(passFile)]==]
    local thread_count = \(threads)
    local headers = { ["Authorization"] = [==[Bearer \(token)]==], ["Content-Type"] = "application/json" }
    local threads = {}

    -- In the main Lua state, once per thread before it starts.
    function setup(thread)
      thread:set("thread_index", #threads)
      table.insert(threads, thread)
    end

    -- In each thread's own state.
    function init(args)
      passes = {}
      local line_number = 0
      for line in io.lines(pass_file) do
        if line_number % thread_count == thread_index and #line > 0 then passes[#passes + 1] = line end
        line_number = line_number + 1
      end
      next_pass, admitted, refused, exhausted = 1, 0, 0, 0
      first_refusal = nil
      math.randomseed(os.time() * 64 + thread_index)
    end

    -- A version-4 UUID, as the kiosk's outbox makes for every check-in it sends.
    function idempotency_key()
      return (string.gsub("xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx", "[xy]", function (c)
        local v = (c == "x") and math.random(0, 15) or math.random(8, 11)
        return string.format("%x", v)
      end))
    end

    function request()
      local pass = passes[next_pass]
      if pass == nil then
        exhausted = exhausted + 1
        pass = passes[#passes] or "NONE"
      else
        next_pass = next_pass + 1
      end
      headers["Idempotency-Key"] = idempotency_key()
      return wrk.format("POST", checkin_path, headers, '{"shortId":"' .. pass .. '"}')
    end

    function response(status, headers, body)
      if status == 200 and body:find('"result":"CHECKED_IN"', 1, true) then
        admitted = admitted + 1
      else
        if first_refusal == nil then first_refusal = status .. " " .. body:sub(1, 200):gsub("%s", " ") end
        refused = refused + 1
      end
    end

    -- In the main state after the run: the threads' counters, read through thread:get.
    function done(summary, latency, requests)
      local admitted, refused, exhausted, used, note = 0, 0, 0, 0, nil
      for _, thread in ipairs(threads) do
        admitted = admitted + thread:get("admitted")
        refused = refused + thread:get("refused")
        exhausted = exhausted + thread:get("exhausted")
        used = used + thread:get("next_pass") - 1
        note = note or thread:get("first_refusal")
      end
      io.write(string.format("gatepass-script: admitted=%d refused=%d exhausted=%d used=%d\\n", admitted, refused, exhausted, used))
      if note then io.write("gatepass-script-note: first refusal: " .. note .. "\\n") end
    end
    """
}
