/// What one server tells the others that share its database, after a commit: PostgreSQL's
/// NOTIFY carries it (ids only, well under NOTIFY's 8000 bytes); SQLite has no other servers
/// to tell (another process on the same file, such as `gatepass push-test --db`, is found by
/// the event hub's poll).
enum StoreAnnouncement: Equatable, Sendable {
    /// A write committed: events may be new, cached answers (stats) may be stale.
    case committed
    /// Sessions were revoked (a logout, a disabled user): streams of ended sessions end now.
    case sessionsEnded
    /// These users' rights changed: their open streams end and reconnect under the new ones.
    case rightsChanged(userIds: [String])
    /// A session or a user row changed: sessions cached before it are stale (`SessionCache`).
    case principalsChanged

    /// At most this many bytes of user ids in one payload, so a notification stays far below
    /// PostgreSQL's 8000-byte limit (the instance id and the code come before them).
    static let idBytesPerPayload = 7_000

    /// The payloads that say this: one, or for many users several.
    var payloads: [String] {
        switch self {
        case .committed: return ["c"]
        case .sessionsEnded: return ["s"]
        case .principalsChanged: return ["p"]
        case .rightsChanged(let userIds):
            var payloads: [String] = []
            var current: [String] = []
            var bytes = 0
            for id in userIds {
                if bytes + id.utf8.count + 1 > Self.idBytesPerPayload, !current.isEmpty {
                    payloads.append("u" + current.joined(separator: ","))
                    (current, bytes) = ([], 0)
                }
                current.append(id)
                bytes += id.utf8.count + 1
            }
            if !current.isEmpty { payloads.append("u" + current.joined(separator: ",")) }
            return payloads
        }
    }

    /// A payload another server sent; nil for one this build does not understand (it is
    /// ignored: a newer server's announcement cannot be acted on here).
    init?(payload: String) {
        switch payload.first {
        case "c" where payload.count == 1: self = .committed
        case "s" where payload.count == 1: self = .sessionsEnded
        case "p" where payload.count == 1: self = .principalsChanged
        case "u":
            let ids = payload.dropFirst().split(separator: ",").map(String.init)
            guard !ids.isEmpty else { return nil }
            self = .rightsChanged(userIds: ids)
        default: return nil
        }
    }
}
