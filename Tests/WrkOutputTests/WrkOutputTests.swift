import Testing
import WrkOutput

// Outputs captured from /usr/bin/wrk (Debian 12's wrk 4.1.0) on loopback, 2026-12-02.
enum CapturedWrkOutput {
    /// wrk -t2 -c32 -d2s --latency against gatepass-ceiling: every answer a 200.
    static let ceiling = """
        Running 2s test @ http://127.0.0.1:43559/
          2 threads and 32 connections
          Thread Stats   Avg      Stdev     Max   +/- Stdev
            Latency   212.51us  305.67us   5.49ms   97.15%
            Req/Sec    76.71k    20.20k  124.57k    75.61%
          Latency Distribution
             50%  152.00us
             75%  205.00us
             90%  310.00us
             99%    1.82ms
          312649 requests in 2.10s, 56.65MB read
        Requests/sec: 148951.05
        Transfer/sec:     26.99MB
        """

    /// wrk -t1 -c40 -d3s --timeout 1s --latency against python3 -m http.server on a missing path:
    /// every answer a 404, two requests timed out.
    static let notFoundWithTimeouts = """
        Running 3s test @ http://127.0.0.1:43112/missing
          1 threads and 40 connections
          Thread Stats   Avg      Stdev     Max   +/- Stdev
            Latency    24.94ms   66.72ms 847.94ms   97.96%
            Req/Sec   354.10    196.46     0.93k    80.00%
          Latency Distribution
             50%   16.15ms
             75%   27.89ms
             90%   33.17ms
             99%  384.52ms
          1061 requests in 3.01s, 538.97KB read
          Socket errors: connect 0, read 0, write 0, timeout 2
          Non-2xx or 3xx responses: 1061
        Requests/sec:    352.23
        Transfer/sec:    178.93KB
        """

    /// wrk -t1 -c4 -d2s --latency -s done.lua against the same server, the script's `done`
    /// printing the lines the bench's check-in script prints.
    static let withScriptLines = """
        Running 2s test @ http://127.0.0.1:43037/missing
          1 threads and 4 connections
          Thread Stats   Avg      Stdev     Max   +/- Stdev
            Latency    10.41ms    5.86ms  44.70ms   68.98%
            Req/Sec   389.10    146.84     0.96k    95.00%
          Latency Distribution
             50%   11.18ms
             75%   14.20ms
             90%   16.49ms
             99%   24.32ms
          775 requests in 2.00s, 393.55KB read
          Non-2xx or 3xx responses: 775
        Requests/sec:    386.71
        Transfer/sec:    196.37KB
        gatepass-script: admitted=0 refused=775 exhausted=0
        gatepass-script-note: first refusal: 404
        """
}

@Test func parsesAWrkRunWhereEveryAnswerSucceeded() throws {
    let summary = try WrkSummary(parsing: CapturedWrkOutput.ceiling)
    #expect(summary.requests == 312_649)
    #expect(abs(summary.seconds - 2.10) < 1e-9)
    #expect(abs(summary.requestsPerSecond - 148_951.05) < 1e-6)
    #expect(abs(summary.p50Milliseconds - 0.152) < 1e-9)
    #expect(abs(summary.p75Milliseconds - 0.205) < 1e-9)
    #expect(abs(summary.p90Milliseconds - 0.310) < 1e-9)
    #expect(abs(summary.p99Milliseconds - 1.82) < 1e-9)
    #expect(summary.socketErrors == WrkSocketErrors())
    #expect(summary.non2xxOr3xxResponses == 0)
    #expect(summary.scriptCounters.isEmpty)
    #expect(summary.scriptNote == nil)
}

@Test func readsSocketErrorsAndNon2xxResponses() throws {
    let summary = try WrkSummary(parsing: CapturedWrkOutput.notFoundWithTimeouts)
    #expect(summary.requests == 1061)
    #expect(abs(summary.requestsPerSecond - 352.23) < 1e-6)
    #expect(summary.socketErrors == WrkSocketErrors(connect: 0, read: 0, write: 0, timeout: 2))
    #expect(summary.socketErrors.total == 2)
    #expect(summary.non2xxOr3xxResponses == 1061)
    #expect(abs(summary.p50Milliseconds - 16.15) < 1e-9)
    #expect(abs(summary.p99Milliseconds - 384.52) < 1e-9)
}

@Test func readsTheLinesTheBenchsLuaScriptPrints() throws {
    let summary = try WrkSummary(parsing: CapturedWrkOutput.withScriptLines)
    #expect(summary.scriptCounters == ["admitted": 0, "refused": 775, "exhausted": 0])
    #expect(summary.scriptNote == "first refusal: 404")
    #expect(summary.non2xxOr3xxResponses == 775)
}

@Test(arguments: [("152.00us", 152e-6), ("1.82ms", 1.82e-3), ("2.10s", 2.10), ("1.50m", 90.0), ("1.00h", 3600.0)])
func readsEveryUnitWrkPrintsDurationsIn(text: String, seconds: Double) {
    #expect(abs((WrkSummary.seconds(Substring(text)) ?? -1) - seconds) < 1e-12)
}

@Test func refusesOutputWithoutTheLatencyDistribution() {
    // What wrk prints without --latency: the bench always asks for it, so this is a bench bug.
    let withoutLatency = CapturedWrkOutput.ceiling.split(separator: "\n")
        .filter { !$0.contains("%  ") && !$0.contains("Latency Distribution") }
        .joined(separator: "\n")
    #expect(throws: WrkOutputError.self) { try WrkSummary(parsing: withoutLatency) }
}

@Test func refusesWhatIsNotWrkOutput() {
    #expect(throws: WrkOutputError.self) { try WrkSummary(parsing: "unable to connect to 127.0.0.1:43111 Connection refused") }
}
