import Foundation
import GatePassCore
import SQLite

struct SQLiteEventRepository: EventRepository {
    let db: Connection

    func appendVisitorEvent(_ kind: EventKind, visitor: Visitor, organizationId: String, checkpointId: String?,
                            scanId: String?, now: Date) throws {
        try EventLog.appendVisitorEvent(kind, visitor: visitor, organizationId: organizationId, checkpointId: checkpointId,
                                        scanId: scanId, now: now, db)
    }

    func purge(olderThan cutoff: Date) throws { try EventLog.purge(olderThan: cutoff, db) }
}
