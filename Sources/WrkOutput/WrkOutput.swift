// What `wrk --latency` prints, read back into numbers for `gatepass-bench server` (issue 15).
// A target of its own, with nothing but the standard library, so its test needs neither the
// bench (an executable) nor a server.

/// The figures of one wrk run, parsed from its standard output.
///
/// ```
/// let summary = try WrkSummary(parsing: output)   // output of: wrk -t2 -c32 -d5s --latency URL
/// print(summary.requestsPerSecond, summary.p99Milliseconds)
/// ```
public struct WrkSummary: Sendable, Equatable, Codable {
    /// Responses completed ("N requests in D, … read").
    public var requests: Int
    /// The run's length as wrk measured it ("requests in 5.10s").
    public var seconds: Double
    /// "Requests/sec:", every completed response counted, whatever its status.
    public var requestsPerSecond: Double
    /// The "Latency Distribution" lines of `--latency`, in milliseconds.
    public var p50Milliseconds: Double
    public var p75Milliseconds: Double
    public var p90Milliseconds: Double
    public var p99Milliseconds: Double
    /// "Socket errors: connect C, read R, write W, timeout T" (the line is absent when all are 0).
    public var socketErrors: WrkSocketErrors
    /// "Non-2xx or 3xx responses: N" (absent when 0); wrk counts status 400 and above.
    public var non2xxOr3xxResponses: Int
    /// Counters a wrk Lua script's `done` printed as one line `gatepass-script: key=N key=N …`.
    public var scriptCounters: [String: Int]
    /// The text after `gatepass-script-note: ` (a script's first unexpected answer), if printed.
    public var scriptNote: String?

    public init(requests: Int, seconds: Double, requestsPerSecond: Double, p50Milliseconds: Double,
                p75Milliseconds: Double, p90Milliseconds: Double, p99Milliseconds: Double,
                socketErrors: WrkSocketErrors = WrkSocketErrors(), non2xxOr3xxResponses: Int = 0,
                scriptCounters: [String: Int] = [:], scriptNote: String? = nil) {
        self.requests = requests
        self.seconds = seconds
        self.requestsPerSecond = requestsPerSecond
        self.p50Milliseconds = p50Milliseconds
        self.p75Milliseconds = p75Milliseconds
        self.p90Milliseconds = p90Milliseconds
        self.p99Milliseconds = p99Milliseconds
        self.socketErrors = socketErrors
        self.non2xxOr3xxResponses = non2xxOr3xxResponses
        self.scriptCounters = scriptCounters
        self.scriptNote = scriptNote
    }
}

/// wrk's socket error counters.
public struct WrkSocketErrors: Sendable, Equatable, Codable {
    public var connect = 0
    public var read = 0
    public var write = 0
    public var timeout = 0
    public init(connect: Int = 0, read: Int = 0, write: Int = 0, timeout: Int = 0) {
        (self.connect, self.read, self.write, self.timeout) = (connect, read, write, timeout)
    }
    public var total: Int { connect + read + write + timeout }
}

/// wrk printed something the parser does not understand (another wrk, or a run that failed).
public struct WrkOutputError: Error, Sendable, CustomStringConvertible {
    /// What was missing or unreadable, e.g. `no "Requests/sec:" line`.
    public var problem: String
    public var description: String { "wrk's output could not be read: \(problem)" }
}

extension WrkSummary {
    /// Parses the standard output of `wrk --latency` (wrk 4.x; the format of `wrk.c`'s `main`).
    /// - Throws: `WrkOutputError` when a line every run prints is missing or unreadable.
    public init(parsing output: String) throws(WrkOutputError) {
        var requests: Int?
        var seconds: Double?
        var requestsPerSecond: Double?
        var percentiles: [String: Double] = [:]
        var socketErrors = WrkSocketErrors()
        var non2xx = 0
        var counters: [String: Int] = [:]
        var note: String?
        for rawLine in output.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = rawLine.drop(while: { $0 == " " || $0 == "\t" })
            let words = line.split(separator: " ")
            if let value = line.value(after: "Requests/sec:") {
                guard let rate = Double(value) else { throw WrkOutputError(problem: "Requests/sec \(value) is not a number") }
                requestsPerSecond = rate
            } else if words.count >= 4, words[1] == "requests", words[2] == "in" {
                // "312649 requests in 2.10s, 56.65MB read"
                guard let count = Int(words[0]), let time = Self.seconds(words[3].trimmingSuffix(",")) else {
                    throw WrkOutputError(problem: "unreadable line \"\(line)\"")
                }
                (requests, seconds) = (count, time)
            } else if words.count == 2, ["50%", "75%", "90%", "99%"].contains(String(words[0])) {
                // "99%    1.82ms" under "Latency Distribution"
                guard let time = Self.seconds(words[1]) else { throw WrkOutputError(problem: "unreadable latency \"\(line)\"") }
                percentiles[String(words[0])] = time * 1000
            } else if let value = line.value(after: "Socket errors:") {
                // "connect 0, read 12, write 0, timeout 3"
                let fields = value.split(separator: ",").map { $0.split(separator: " ") }
                for field in fields {
                    guard field.count == 2, let count = Int(field[1]) else {
                        throw WrkOutputError(problem: "unreadable socket errors \"\(value)\"")
                    }
                    switch field[0] {
                    case "connect": socketErrors.connect = count
                    case "read": socketErrors.read = count
                    case "write": socketErrors.write = count
                    case "timeout": socketErrors.timeout = count
                    default: throw WrkOutputError(problem: "unknown socket error kind \(field[0])")
                    }
                }
            } else if let value = line.value(after: "Non-2xx or 3xx responses:") {
                guard let count = Int(value) else { throw WrkOutputError(problem: "Non-2xx count \(value) is not a number") }
                non2xx = count
            } else if let value = line.value(after: "gatepass-script:") {
                for pair in value.split(separator: " ") {
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    guard parts.count == 2, let count = Int(parts[1]) else {
                        throw WrkOutputError(problem: "unreadable script counter \"\(pair)\"")
                    }
                    counters[String(parts[0])] = count
                }
            } else if let value = line.value(after: "gatepass-script-note:") {
                note = String(value)
            }
        }
        guard let requests, let seconds else { throw WrkOutputError(problem: "no \"N requests in D\" line") }
        guard let requestsPerSecond else { throw WrkOutputError(problem: "no \"Requests/sec:\" line") }
        guard let p50 = percentiles["50%"], let p75 = percentiles["75%"], let p90 = percentiles["90%"],
              let p99 = percentiles["99%"] else {
            throw WrkOutputError(problem: "no latency distribution (was wrk run with --latency?)")
        }
        self.init(requests: requests, seconds: seconds, requestsPerSecond: requestsPerSecond, p50Milliseconds: p50,
                  p75Milliseconds: p75, p90Milliseconds: p90, p99Milliseconds: p99, socketErrors: socketErrors,
                  non2xxOr3xxResponses: non2xx, scriptCounters: counters, scriptNote: note)
    }

    /// A wrk duration ("152.00us", "1.82ms", "2.10s", "1.00m", "1.00h", as `format_time_us`
    /// and `format_time_s` print them) in seconds.
    public static func seconds(_ text: Substring) -> Double? {
        let units: [(suffix: String, seconds: Double)] = [("us", 1e-6), ("ms", 1e-3), ("s", 1), ("m", 60), ("h", 3600)]
        for unit in units where text.hasSuffix(unit.suffix) {
            guard let number = Double(text.dropLast(unit.suffix.count)) else { return nil }
            return number * unit.seconds
        }
        return nil
    }
}

private extension Substring {
    /// The rest of the line after `label`, without surrounding blanks; nil when it starts otherwise.
    func value(after label: String) -> Substring? {
        guard hasPrefix(label) else { return nil }
        var rest = dropFirst(label.count)
        while rest.first == " " { rest = rest.dropFirst() }
        while rest.last == " " || rest.last == "\r" { rest = rest.dropLast() }
        return rest
    }

    func trimmingSuffix(_ suffix: String) -> Substring { hasSuffix(suffix) ? dropLast(suffix.count) : self }
}
