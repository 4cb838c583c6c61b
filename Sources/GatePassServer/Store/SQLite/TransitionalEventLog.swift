import Foundation
import GatePassCore
import HTTPServer
import SQLite

// TRANSITIONAL (removed before the redesign lands, with TransitionalConnection.swift): the
// old connection-taking entry points of the event log and the push-delivery log, as thin
// forwarders to the repositories, for callers not yet converted (VisitorRoutes,
// ScannerRoutes, the purge in Application, DemoData). Converted code calls
// `tx.events.appendVisitorEvent(…)`, `tx.events.purge(olderThan:)` and
// `app.pushDeliveries(call, tx)`.
extension EventLog {
    // TRANSITIONAL: use `tx.events.appendVisitorEvent(…)`.
    static func appendVisitorEvent(_ kind: EventKind, visitor: Visitor, organizationId: String, checkpointId: String?,
                                   scanId: String? = nil, now: Date, _ db: Connection) throws {
        try SQLiteEventRepository(db: db).appendVisitorEvent(kind, visitor: visitor, organizationId: organizationId,
                                                             checkpointId: checkpointId, scanId: scanId, now: now)
    }

    // TRANSITIONAL: use `tx.events.purge(olderThan:)`.
    static func purge(olderThan cutoff: Date, _ db: Connection) throws {
        try SQLiteEventRepository(db: db).purge(olderThan: cutoff)
    }
}

extension GatePassApplication {
    // TRANSITIONAL: the admin route table (ScannerRoutes) still hands this a connection.
    func pushDeliveries(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        try pushDeliveries(call, SQLiteTransaction(db))
    }
}
