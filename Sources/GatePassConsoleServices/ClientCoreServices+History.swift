import Foundation
import GatePassClient
import GatePassConsole
import GatePassCore

// The History tab's calls (`HistoryServices`, declared in GatePassConsole) over the client core.


extension ClientCoreServices: HistoryServices {
    /// How long a visitor-name lookup is trusted before names are fetched again for ids it
    /// did not know (so an old day's unknown ids do not cost a request on every reload).
    static let visitorNamesRefresh: TimeInterval = 60
    /// Most names kept in the cache.
    static let visitorNamesKept = 5_000

    /// What the cache keeps of one history read (ScanLog itself is not Codable).
    private struct CachedScanLog: Codable {
        var scans: [Scan]
        var isCapped: Bool
    }

    public func scanHistory(filter: ScanHistoryFilter, limit: Int) throws(ConsoleError) -> ConsoleRead<ScanLog> {
        let limit = max(1, limit)
        let cacheKey = Self.historyCacheKey(filter)
        do throws(ClientError) {
            let session = try core.session(on: nil)
            let api = APIClient(baseURL: session.server, transport: transport)
            // Same choice as ClientCore.history: organization readers use their login token.
            let token = session.user.role.managesOrganization || session.user.role == .platformAdmin
                ? session.token : session.scanner?.scannerToken ?? session.token
            do throws(ClientError) {
                var scans: [Scan] = []
                var cursor: String?
                // api.md's scan-history takes no checkpoint: every gate's scans are read and
                // the checkpoint chosen is kept here.
                var everyGate = filter.apiFilter
                everyGate.checkpointId = nil
                repeat {
                    let page = try api.scanHistory(token: token, filter: everyGate,
                                                   limit: min(ListBounds.maximumLimit, limit - scans.count), cursor: cursor)
                    scans += page.items.filter { filter.checkpointId == nil || $0.checkpointId == filter.checkpointId }
                    cursor = page.nextCursor
                    // An empty page with a cursor would loop forever on a confused server.
                    if page.items.isEmpty { cursor = nil }
                } while cursor != nil && scans.count < limit
                let log = CachedScanLog(scans: Array(scans.prefix(limit)), isCapped: cursor != nil || scans.count > limit)
                let now = clock.now()
                try? core.store.cache(cacheKey, value: CanonicalJSON.encode(log), at: now)
                return ConsoleRead(value: ScanLog(scans: log.scans, isCapped: log.isCapped), updatedAt: now, fromCache: false)
            } catch {
                guard error.isRetryable, let cached = try core.store.cached(cacheKey),
                      let log = try? JSONDecoder().decode(CachedScanLog.self, from: Data(cached.value))
                else { throw error }
                return ConsoleRead(value: ScanLog(scans: log.scans, isCapped: log.isCapped), updatedAt: cached.updatedAt,
                                   fromCache: true)
            }
        } catch {
            throw Self.consoleError(error, retryAfter: nil)
        }
    }

    /// One cache entry per filter, so each day looked at online can be looked at again offline.
    static func historyCacheKey(_ filter: ScanHistoryFilter) -> String {
        let parts = [filter.from.map { Timestamp($0).description } ?? "", filter.to.map { Timestamp($0).description } ?? "",
                     filter.result?.rawValue ?? "", filter.checkpointId ?? ""]
        return "console_history:" + parts.joined(separator: "|")
    }

    public func scanHistoryCSV(filter: ScanHistoryFilter) throws(ConsoleError) -> String {
        do {
            return try core.historyCSV(filter: filter.apiFilter)
        } catch {
            throw Self.consoleError(error, retryAfter: nil)
        }
    }

    public func exportScanHistoryCSV(filter: ScanHistoryFilter, toPath path: String,
                                     overwrite: Bool) throws(ConsoleError) -> CSVExportOutcome {
        // Checked before the download: a refusal should not cost a 100,000-row export.
        if try PrivateFile.check(path) == .exists, !overwrite { return .fileExists(path: path) }
        let csv = try scanHistoryCSV(filter: filter)
        guard try PrivateFile.write(Array(csv.utf8), to: path, overwrite: overwrite) else { return .fileExists(path: path) }
        return .saved(rows: PrivateFile.csvRowCount(csv), path: path)
    }

    public func historyCheckpointNames() -> [String: String] {
        let cacheKey = "console_checkpoints"
        var checkpoints: [Checkpoint] = []
        if let session = try? core.session(on: nil),
           let page = try? APIClient(baseURL: session.server, transport: transport).checkpoints(token: session.token) {
            checkpoints = page.items
            try? core.store.cache(cacheKey, value: CanonicalJSON.encode(checkpoints), at: clock.now())
        } else if let cached = try? core.store.cached(cacheKey),
                  let decoded = try? JSONDecoder().decode([Checkpoint].self, from: Data(cached.value)) {
            checkpoints = decoded
        }
        return Dictionary(checkpoints.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    public func historyVisitorNames(ids: Set<String>) -> [String: String] {
        guard !ids.isEmpty else { return [:] }
        let cacheKey = "console_visitor_names"
        let cached = try? core.store.cached(cacheKey)
        var names = cached.flatMap { try? JSONDecoder().decode([String: String].self, from: Data($0.value)) } ?? [:]
        let missing = ids.subtracting(names.keys)
        let stale = cached.map { clock.now().timeIntervalSince($0.updatedAt) >= Self.visitorNamesRefresh } ?? true
        // One page of the newest visitors names most of a recent scan log in one request;
        // older visitors stay unnamed rather than costing a request each.
        if !missing.isEmpty, stale, let session = try? core.session(on: nil), session.user.role.managesOrganization {
            let api = APIClient(baseURL: session.server, transport: transport)
            if let page = try? api.visitors(token: session.token, limit: ListBounds.maximumLimit) {
                var fetched: [String: String] = [:]
                for visitor in page.items { fetched[visitor.id] = visitor.name }
                names.merge(fetched) { _, new in new }
                if names.count > Self.visitorNamesKept {
                    names = fetched.merging(names.filter { ids.contains($0.key) }) { new, _ in new }
                }
            }
            // Stamped even when the request failed, so an unreachable server is not asked on every reload.
            try? core.store.cache(cacheKey, value: CanonicalJSON.encode(names), at: clock.now())
        }
        return names.filter { ids.contains($0.key) }
    }
}

extension ScanHistoryFilter {
    var apiFilter: APIClient.HistoryFilter {
        APIClient.HistoryFilter(from: from, to: to, result: result, checkpointId: checkpointId)
    }
}

