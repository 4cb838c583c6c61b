import Foundation
import GatePassCore

protocol EventRepository {
    func appendVisitorEvent(_ kind: EventKind, visitor: Visitor, organizationId: String, checkpointId: String?,
                            scanId: String?, now: Date) throws
    func purge(olderThan cutoff: Date) throws
}

extension EventRepository {
    func appendVisitorEvent(_ kind: EventKind, visitor: Visitor, organizationId: String, checkpointId: String?,
                            now: Date) throws {
        try appendVisitorEvent(kind, visitor: visitor, organizationId: organizationId, checkpointId: checkpointId,
                               scanId: nil, now: now)
    }
}
