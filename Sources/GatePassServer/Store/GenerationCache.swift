import GatePassCore

/// Values derived from the database, each kept with the store generation it was computed in
/// and served only while that generation is current (`ServerDatabase.cacheGeneration`,
/// `sessionCacheGeneration`): the session and stats caches.
///
/// Bounded whatever the keys: some are chosen by the caller (a stats query's `checkpointId`, a
/// presented token's text), so at `capacity` entries a store first drops every entry of an
/// older generation — useless already — and, if the current one alone fills the map, all of
/// them. A flood of distinct keys costs its sender cache misses, never the server's memory.
final class GenerationCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Entry {
        var generation: UInt64
        var value: Value
    }

    let capacity: Int
    private let entries = Locked<[Key: Entry]>([:])

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The value stored for `key` in `generation`, if that is still the generation it was
    /// stored in and `isUsable` accepts it (an age or a day of the caller's).
    func lookup(_ key: Key, generation: UInt64, where isUsable: (Value) -> Bool) -> Value? {
        entries.withLock { entries in
            guard let entry = entries[key], entry.generation == generation, isUsable(entry.value) else { return nil }
            return entry.value
        }
    }

    /// Keeps `value`, computed in `generation`, for `key`.
    func store(_ value: Value, for key: Key, generation: UInt64) {
        entries.withLock { entries in
            if entries.count >= capacity {
                entries = entries.filter { $0.value.generation == generation }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[key] = Entry(generation: generation, value: value)
        }
    }

    var count: Int { entries.withLock { $0.count } }
}
