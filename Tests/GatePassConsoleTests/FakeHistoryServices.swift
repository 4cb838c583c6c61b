import Foundation
import GatePassCore
@testable import GatePassConsole

/// History services scripted by a test. It answers like a server over `scans`: it applies
/// the filter it is given (so the screen's filters have visible effects) and records every call.
final class FakeHistoryServices: HistoryServices {
    /// Every scan "on the server", in any order; answers come newest first.
    var scans: [Scan] = []
    /// When set, `scanHistory` fails with it.
    var historyError: ConsoleError?
    /// Answer as the cache would: `fromCache` and this age.
    var fromCache = false
    var updatedAt = Fixtures.now
    var checkpointNames: [String: String] = [:]
    var visitorNames: [String: String] = [:]
    /// The organization as the server (or, offline, the cache) gives it; nil: it cannot be read.
    var organization: Organization?
    /// Paths that "exist" for the export.
    var existingPaths: Set<String> = []
    /// When set, the export fails with it.
    var exportError: ConsoleError?

    private(set) var historyCalls: [(filter: ScanHistoryFilter, limit: Int)] = []
    private(set) var exports: [(filter: ScanHistoryFilter, path: String, overwrite: Bool)] = []
    private(set) var visitorNameRequests: [Set<String>] = []
    private(set) var checkpointNameRequests = 0

    var lastFilter: ScanHistoryFilter? { historyCalls.last?.filter }

    func site() throws(ConsoleError) -> ConsoleRead<Organization> {
        guard let organization else { throw ConsoleError.offline("no site known") }
        return ConsoleRead(value: organization, updatedAt: updatedAt, fromCache: fromCache)
    }

    func matching(_ filter: ScanHistoryFilter) -> [Scan] {
        scans.filter { scan in
            (filter.from.map { scan.scannedAt.date >= $0 } ?? true) && (filter.to.map { scan.scannedAt.date <= $0 } ?? true)
                && (filter.result.map { scan.result == $0 } ?? true)
                && (filter.checkpointId.map { scan.checkpointId == $0 } ?? true)
        }.sorted { $0.scannedAt.date > $1.scannedAt.date }
    }

    func scanHistory(filter: ScanHistoryFilter, limit: Int) throws(ConsoleError) -> ConsoleRead<ScanLog> {
        historyCalls.append((filter, limit))
        if let historyError { throw historyError }
        let found = matching(filter)
        return ConsoleRead(value: ScanLog(scans: Array(found.prefix(limit)), isCapped: found.count > limit),
                           updatedAt: updatedAt, fromCache: fromCache)
    }

    func scanHistoryCSV(filter: ScanHistoryFilter) throws(ConsoleError) -> String {
        "id,result\r\n" + matching(filter).map { "\($0.id),\($0.result.rawValue)\r\n" }.joined()
    }

    func exportScanHistoryCSV(filter: ScanHistoryFilter, toPath path: String, overwrite: Bool) throws(ConsoleError) -> CSVExportOutcome {
        exports.append((filter, path, overwrite))
        if let exportError { throw exportError }
        if existingPaths.contains(path) && !overwrite { return .fileExists(path: path) }
        existingPaths.insert(path)
        return .saved(rows: matching(filter).count, path: path)
    }

    func historyCheckpointNames() -> [String: String] {
        checkpointNameRequests += 1
        return checkpointNames
    }

    func historyVisitorNames(ids: Set<String>) -> [String: String] {
        visitorNameRequests.append(ids)
        return visitorNames.filter { ids.contains($0.key) }
    }
}

extension Fixtures {
    /// A scan at `date` (UTC instant), with a visitor unless `visitorId` is nil.
    static func scan(_ id: String, at date: Date, result: ScanResult = .checkedIn, visitorId: String? = "v1",
                     shortId: String? = "K7Q2M9XD", raw: String = "GP1:K7Q2M9XD", checkpoint: String = "c1",
                     offline: Bool = false) -> Scan {
        Scan(id: id, shortId: shortId, raw: raw, result: result, visitorId: visitorId, checkpointId: checkpoint,
             scannedBy: "u1", scannedAt: Timestamp(date), receivedAt: Timestamp(date), offline: offline)
    }

    /// An instant from its RFC 3339 text ("2026-11-30T09:00:00Z").
    static func instant(_ text: String) -> Date { Timestamp(rfc3339: text)!.date }
}
