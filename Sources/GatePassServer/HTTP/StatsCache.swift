import GatePassCore
import HTTPServer

/// Stats answers, valid while no write has committed since they were computed.
///
/// Correctness: the generation is read *before* the counting queries run, and a writer bumps
/// it only after its commit; so an entry is reused only if no commit finished after the
/// generation it was computed at — and every commit counted in that generation is visible to
/// the queries that followed.
final class StatsCache: Sendable {
    struct Key: Hashable, Sendable {
        var organization: String
        var checkpoint: String?
        var day: Int64
    }

    /// The encoded answer is kept, so a hit costs neither a query nor JSON encoding.
    private let entries = Locked<[Key: (generation: UInt64, response: HTTPResponse)]>([:])

    func lookup(_ key: Key, generation: UInt64) -> HTTPResponse? {
        entries.withLock { entries in
            guard let entry = entries[key], entry.generation == generation else { return nil }
            return entry.response
        }
    }

    func store(_ response: HTTPResponse, for key: Key, generation: UInt64) {
        entries.withLock { entries in
            // Stale generations are useless; dropping them bounds the cache to the live keys.
            if entries.count > 1_000 { entries = entries.filter { $0.value.generation == generation } }
            entries[key] = (generation, response)
        }
    }
}
