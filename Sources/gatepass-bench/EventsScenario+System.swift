import Foundation
import GatePassCore
import GatePassServer
import LoopbackHTTP
import Synchronization

// MARK: - File descriptors

/// Raises the soft RLIMIT_NOFILE to the hard limit; returns the soft limit now in force.
func raiseOpenFileLimit() -> Int {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
    let before = limit.rlim_cur
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max
        if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            progress("open-file limit raised from \(before) to \(limit.rlim_cur)")
        } else {
            limit.rlim_cur = before
        }
    }
    return Int(clamping: limit.rlim_cur)
}

/// Runs `body` with file descriptor 2 sent to `path`, and returns the lines written there.
func capturingStandardError(path: String, _ body: () throws -> Void) throws -> [String] {
    let file = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard file >= 0 else {
        try body()
        return []
    }
    let saved = dup(2)
    dup2(file, 2)
    close(file)
    defer {
        dup2(saved, 2)
        close(saved)
    }
    try body()
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").map(String.init)
}

/// Open sockets of this process (client and server sides alike); SQLite's pool of read
/// connections and libmicrohttpd's eventfds come and go for their own reasons.
func openSocketCount() -> Int {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return -1 }
    return entries.reduce(0) { count, entry in
        let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + entry)) ?? ""
        return count + (target.hasPrefix("socket:") ? 1 : 0)
    }
}

// MARK: - CPU per thread (/proc/self/task)

/// Each thread's group and its user+system CPU in clock ticks. `labels` names threads by tid;
/// the others are grouped by what their name says.
func eventsThreadTicks(labels: [Int: String]) -> [Int: (group: String, ticks: Int)] {
    let pid = Int(getpid())
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return [:] }
    var out: [Int: (group: String, ticks: Int)] = [:]
    for entry in entries {
        guard let tid = Int(entry), let stat = eventsThreadStat(tid) else { continue }
        let group: String
        if let label = labels[tid] {
            group = label
        } else if tid == pid {
            group = "driver"
        } else if stat.comm == "MHD-worker" {
            group = "MHD workers"
        } else if stat.comm == "events-reader" {
            group = "bench reader"
        } else {
            group = "other"
        }
        out[tid] = (group, stat.ticks)
    }
    return out
}

/// Name, CPU ticks (utime + stime) and start time of one thread of this process.
func eventsThreadStat(_ tid: Int) -> (comm: String, ticks: Int, start: Int)? {
    guard let stat = try? String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8),
          let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")"),
          stat.index(close, offsetBy: 2) <= stat.endIndex
    else { return nil }
    let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
    guard fields.count > 19, let user = Int(fields[11]), let system = Int(fields[12]), let start = Int(fields[19]) else { return nil }
    return (String(stat[stat.index(after: open)..<close]), user + system, start)
}

/// The server's own unnamed threads: Linux shows the process name for the SQLite writer and
/// the event hub (Foundation does not pass Thread.name on), so they are told apart by
/// creation order (the store's writer starts before the hub). Call once the server has
/// answered requests (libmicrohttpd's workers name themselves when they first run).
func eventsServerThreadLabels() -> [Int: String] {
    let pid = Int(getpid())
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return [:] }
    var unnamed: [(tid: Int, start: Int)] = []
    for tid in entries.compactMap({ Int($0) }) where tid != pid {
        if let stat = eventsThreadStat(tid), stat.comm == "gatepass-bench" { unnamed.append((tid, stat.start)) }
    }
    unnamed.sort { ($0.start, $0.tid) < ($1.start, $1.tid) }
    guard unnamed.count == 2 else {
        var labels: [Int: String] = [:]
        for thread in unnamed { labels[thread.tid] = "hub+writer" }
        return labels
    }
    return [unnamed[0].tid: "sqlite writer", unnamed[1].tid: "event hub"]
}

func eventsThreadCPU(from before: [Int: (group: String, ticks: Int)], to after: [Int: (group: String, ticks: Int)],
                     seconds: Double) -> [String: Double] {
    let tick = Double(max(1, sysconf(Int32(_SC_CLK_TCK))))
    var out: [String: Double] = [:]
    for (tid, now) in after {
        let used = now.ticks - (before[tid]?.ticks ?? 0)
        out[now.group, default: 0] += Double(used) / tick / max(seconds, 0.001) * 100
    }
    return out
}

