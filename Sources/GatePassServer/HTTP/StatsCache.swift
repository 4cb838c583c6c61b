import Foundation
import GatePassCore
import HTTPServer

/// Stats answers, valid while no write has committed since they were computed.
///
/// Correctness: the generation is read *before* the request's transaction begins (not merely
/// before the counting queries: a transaction's snapshot dates from its first statement, the
/// session check), and a writer bumps it only after its commit; so an entry is reused only if
/// no commit finished after the generation it was computed at — and every commit counted in
/// that generation is visible to the snapshot the queries read.
final class StatsCache: Sendable {
    struct Key: Hashable, Sendable {
        var organization: String
        var checkpoint: String?
    }

    /// An answer with the day it counts: "today" in the site's zone as it was in that
    /// generation (a change of the zone is a committed write, so it moves the generation).
    private struct Entry: Sendable {
        var day: ValidityWindow
        var response: HTTPResponse
    }

    /// Live keys are an organization's gates and "all gates"; more than this are a client
    /// inventing `checkpointId`s (see `GenerationCache`).
    static let capacity = 1_000

    /// The encoded answer is kept, so a hit costs neither a query nor JSON encoding.
    private let entries = GenerationCache<Key, Entry>(capacity: StatsCache.capacity)

    /// The answer for `key` if no write committed since it was computed and `now` still falls
    /// on the day it counts. A hit needs no query, not even for the site's zone.
    func lookup(_ key: Key, generation: UInt64, now: Date) -> HTTPResponse? {
        entries.lookup(key, generation: generation) { $0.day.from <= now && now <= $0.day.until }?.response
    }

    func store(_ response: HTTPResponse, for key: Key, generation: UInt64, day: ValidityWindow) {
        entries.store(Entry(day: day, response: response), for: key, generation: generation)
    }

    var count: Int { entries.count }
}
