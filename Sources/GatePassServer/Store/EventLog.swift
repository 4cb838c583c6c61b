import Foundation
import GatePassCore

/// Who receives an event: the audience columns of the `events` table (see Schema 0002).
struct EventAudience: Sendable, Equatable {
    var organizationId: String
    /// The visitor's assigned approver when the event happened; nil = unassigned.
    var approverId: String?
    /// Scanner tokens bound to this checkpoint receive the event.
    var checkpointId: String?
    /// The event is for this user only.
    var userId: String?
    /// Only a stream that presented this device token receives it.
    var deviceToken: String?
    /// Only the organization's OWNERs and ADMINs receive it (security.alert): no approver,
    /// whoever the visitor's approver is, and no gate.
    var managersOnly: Bool = false
}

/// One stored event.
struct StoredEvent: Sendable {
    var id: Int64
    var kind: EventKind
    var audience: EventAudience
    var data: String
    var createdAt: Date
}

/// The event log's pure helpers; appending and purging are `EventRepository`'s
/// (`tx.events.append…`, `tx.events.purge(olderThan:)`).
enum EventLog {
    /// An event's `data`: the JSON of `value`, as the stream sends it.
    static func encode<T: Encodable>(_ value: T) -> String {
        String(decoding: JSONBody.encode(value), as: UTF8.self)
    }
}
