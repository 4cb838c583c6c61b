import Foundation
import GatePassCore

/// Prometheus counters and histograms, kept in memory (api.md "Operations": requests by
/// route and status, latency histogram, check-ins by result, idempotent replays).
final class Metrics: Sendable {
    static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    private struct RouteLatency {
        var buckets = [UInt64](repeating: 0, count: Metrics.latencyBuckets.count)
        var count: UInt64 = 0
        var sum: Double = 0
    }

    private struct State {
        var requests: [String: [Int: UInt64]] = [:]
        var latency: [String: RouteLatency] = [:]
        var checkIns: [String: UInt64] = [:]
        var idempotentReplays: UInt64 = 0
    }

    private let state = Locked(State())

    func recordRequest(route: String, status: Int, seconds: Double) {
        state.withLock { state in
            state.requests[route, default: [:]][status, default: 0] += 1
            var latency = state.latency[route] ?? RouteLatency()
            latency.count += 1
            latency.sum += seconds
            for (index, bound) in Metrics.latencyBuckets.enumerated() where seconds <= bound {
                latency.buckets[index] += 1
            }
            state.latency[route] = latency
        }
    }

    func recordCheckIn(result: String) { state.withLock { $0.checkIns[result, default: 0] += 1 } }
    func recordIdempotentReplay() { state.withLock { $0.idempotentReplays += 1 } }

    /// The Prometheus text exposition format, version 0.0.4.
    func render() -> String {
        let snapshot = state.withLock { $0 }
        func label(_ value: String) -> String {
            value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        }
        var out = "# HELP gatepass_http_requests_total HTTP requests by route and status.\n"
        out += "# TYPE gatepass_http_requests_total counter\n"
        for (route, statuses) in snapshot.requests.sorted(by: { $0.key < $1.key }) {
            for (status, count) in statuses.sorted(by: { $0.key < $1.key }) {
                out += "gatepass_http_requests_total{route=\"\(label(route))\",status=\"\(status)\"} \(count)\n"
            }
        }
        out += "# HELP gatepass_http_request_duration_seconds Time from request to response, by route.\n"
        out += "# TYPE gatepass_http_request_duration_seconds histogram\n"
        for (route, latency) in snapshot.latency.sorted(by: { $0.key < $1.key }) {
            for (index, bound) in Metrics.latencyBuckets.enumerated() {
                out += "gatepass_http_request_duration_seconds_bucket{route=\"\(label(route))\",le=\"\(bound)\"} \(latency.buckets[index])\n"
            }
            out += "gatepass_http_request_duration_seconds_bucket{route=\"\(label(route))\",le=\"+Inf\"} \(latency.count)\n"
            out += "gatepass_http_request_duration_seconds_sum{route=\"\(label(route))\"} \(latency.sum)\n"
            out += "gatepass_http_request_duration_seconds_count{route=\"\(label(route))\"} \(latency.count)\n"
        }
        out += "# HELP gatepass_checkins_total Check-in scans by result.\n"
        out += "# TYPE gatepass_checkins_total counter\n"
        for (result, count) in snapshot.checkIns.sorted(by: { $0.key < $1.key }) {
            out += "gatepass_checkins_total{result=\"\(label(result))\"} \(count)\n"
        }
        out += "# HELP gatepass_idempotent_replays_total POSTs answered from a stored response (Idempotency-Key replays).\n"
        out += "# TYPE gatepass_idempotent_replays_total counter\n"
        out += "gatepass_idempotent_replays_total \(snapshot.idempotentReplays)\n"
        return out
    }
}
