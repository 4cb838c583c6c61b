import Foundation
import GatePassAPI
import GatePassCore
import HTTPServer

extension GatePassApplication {
    /// The admin controller: the site's checkpoints, history export, push diagnostics and operations.
    static let adminRoutes: [Route] = [
        .read(.adminHistoryCSV) { app, call, tx in try app.scanHistoryCSV(call, tx) },
        .read(.checkpointsList) { app, call, tx in try app.listCheckpoints(call, tx) },
        .write(.checkpointsCreate) { app, call, tx in try app.createCheckpoint(call, tx) },
        .deferred(.adminPushTest) { app, call, reply in try app.pushTest(call, reply: reply) },
        .read(.adminPushDeliveries) { app, call, tx in try app.pushDeliveries(call, tx) },
        .read(.healthz) { app, _, tx in try app.healthz(tx) },
        .sessionless(.metrics) { app, request in try app.metricsResponse(request) },
    ]

    // MARK: - Scan history export

    /// The most rows one export holds; narrow with from/to for more.
    static let csvRowLimit = 100_000

    func scanHistoryCSV(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let filter = try scanFilter(call)
        return try csvExport(.scanHistory, named: "scan-history.csv", recordedAs: .scanHistoryExport, call, tx) { tx, cursor, limit in
            // Each row's local time is its own organization's (PLATFORM_ADMIN reads several).
            var clocks: [String: SiteClock] = [:]
            return try tx.scans.namedPage(filter, after: cursor, limit: limit).map { row in
                let clock = try clocks[row.organizationId] ?? SiteClock(timeZone: self.site(row.organizationId, tx).timeZone)
                clocks[row.organizationId] = clock
                return ScanExportRow(scan: row, site: clock)
            }
        }
    }

    /// A CSV export streams: the first page is read here (a bad filter or a failing database
    /// is still an error answer), the rest as the client takes the bytes, each page in a read
    /// of its own. Personal data in bulk: the reading is recorded (`action`, with the query)
    /// before any row goes out.
    func csvExport<Row: Sendable>(_ table: CSVTable<Row>, named filename: String, recordedAs action: AuditAction,
                                  _ call: Call, _ tx: any Transaction,
                                  page: @escaping @Sendable (any Transaction, ListCursor?, Int) throws -> [Row]) throws -> HTTPResponse {
        let pageSize = min(CSVExport.pageSize, Self.csvRowLimit)
        let first = try page(tx, nil, pageSize)
        try auditBulkRead(action, id: nil, .facts(call.request.query), call)
        let stream = CSVExportStream(table, firstPage: first, rowLimit: Self.csvRowLimit, pageSize: pageSize,
                                     readPage: { [store] cursor, limit in try store.read { tx in try page(tx, cursor, limit) } },
                                     onError: { [logSink] error in logSink.log("the CSV export \(filename) ended early: \(error)") })
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/csv; charset=utf-8"),
                                                   ("Content-Disposition", "attachment; filename=\"\(filename)\"")],
                            stream: stream)
    }

    // MARK: - Checkpoints and health

    func listCheckpoints(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let checkpoints = try tx.checkpoints.all(organizationId: readScope(call))
        return JSONBody.response(Page(items: checkpoints, nextCursor: nil))
    }

    struct CheckpointBody: Decodable { var name: String }

    func createCheckpoint(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let body = try JSONBody.decode(CheckpointBody.self, from: call.request.body)
        let name = try Field.requiredText(body.name, "name", maxLength: 100)
        let organization = call.caller.organizationId
        if try tx.checkpoints.exists(named: name, organizationId: organization) {
            throw APIError.conflict("a checkpoint named \(name) already exists")
        }
        let checkpoint = try tx.checkpoints.create(organizationId: organization, name: name, now: call.now)
        try audit(.checkpointCreate, id: checkpoint.id, .created(checkpoint), call, tx)
        return JSONBody.response(status: 201, checkpoint)
    }

    /// 200 only while the database answers reads and can be written (see `WriteProbe`), and
    /// never once it was found unable to take writes (`StorageHealth`: until a restart).
    func healthz(_ tx: any Transaction) throws -> HTTPResponse {
        do {
            try tx.ping()
        } catch {
            logSink.log("healthz: the database cannot be read: \(error)")
            throw APIError.unavailable("the database cannot be read")
        }
        if store.health.unwritable != nil || writeProbe.failure() != nil {
            throw APIError.unavailable("the database cannot be written")
        }
        return JSONBody.response(["status": "ok"])
    }
}
