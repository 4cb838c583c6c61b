import Foundation

/// Where an `EventStreamConsumer` keeps the id of the last event it delivered, so a new
/// process resumes the stream (with `Last-Event-ID`) instead of starting at "now".
///
/// Kept per server: ids are one sequence per server (api.md "Precise rules", Events), and an
/// id from another server would make the consumer drop that server's events as repeats.
public protocol LastEventIDStore: Sendable {
    func lastEventID(server: String) throws(ClientError) -> Int64?
    func setLastEventID(_ id: Int64, server: String) throws(ClientError)
}

extension ClientDatabase: LastEventIDStore {
    static let lastEventIDKeyPrefix = "last_event_id "

    public func lastEventID(server: String) throws(ClientError) -> Int64? {
        guard let text = try meta(Self.lastEventIDKeyPrefix + server) else { return nil }
        // Not a number: the state file was damaged; resuming from a guess could skip events.
        guard let id = Int64(text), id >= 0 else {
            throw .local("the state file's last event id for \(server) is unreadable (\(text.debugDescription)); "
                         + "delete the key or the state folder")
        }
        return id
    }

    /// Written lazily (crash-consistent, not fsynced per event): a stream delivers many
    /// events, and losing the newest id to a power cut only means a few events are shown again.
    public func setLastEventID(_ id: Int64, server: String) throws(ClientError) {
        try lazily { connection in
            _ = try connection.execute("""
                INSERT INTO meta (key, value) VALUES (?, ?)
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """, [Self.lastEventIDKeyPrefix + server, String(id)])
        }
    }
}
