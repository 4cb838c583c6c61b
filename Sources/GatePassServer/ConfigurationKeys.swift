import Foundation
import GatePassCore

/// The name of a key in a configuration file (any name, so that unknown ones can be found).
struct ConfigurationKeyName: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// One key of a configuration file, declared once: its name, what it means, how it is read
/// and which values it takes. Its default is the property's initial value. A file's keys are
/// a table of these (`ServerConfiguration.keys`); the table is what reads the file, refuses
/// keys it does not list and checks every value, so a key is never spelt in four places.
public struct ConfigurationKey<Root>: Sendable {
    /// The key as the file spells it.
    public let name: String
    /// One sentence for the reader of the table (the README's Configuration section says the same).
    public let meaning: String
    /// Sets the root's value from the file; only called when the file has the key.
    let read: @Sendable (inout Root, KeyedDecodingContainer<ConfigurationKeyName>) throws -> Void
    /// The problem with the root's value, in a sentence beginning with the key; nil when fine.
    let problem: @Sendable (Root) -> String?
    /// The values an integer key takes (nil for other keys).
    public internal(set) var acceptedRange: ClosedRange<Int>? = nil

    /// A key whose value is decoded as `Value` (an optional one takes `null`), then judged by
    /// `check` (which answers what is wrong, after the key's name, or nil).
    static func value<Value: Decodable & Sendable>(
        _ name: String, _ keyPath: WritableKeyPath<Root, Value> & Sendable, _ meaning: String,
        check: @escaping @Sendable (Value) -> String? = { _ in nil }
    ) -> Self {
        ConfigurationKey(
            name: name, meaning: meaning,
            read: { root, container in
                root[keyPath: keyPath] = try container.decode(Value.self, forKey: ConfigurationKeyName(name))
            },
            problem: { root in check(root[keyPath: keyPath]).map { "\(name) \($0)" } })
    }

    /// A whole number within `range`; `why` (such as "(api.md)") follows the message.
    static func integer(_ name: String, _ keyPath: WritableKeyPath<Root, Int> & Sendable, _ range: ClosedRange<Int>,
                        _ meaning: String, why: String = "") -> Self {
        let message: String
        switch (range.lowerBound, range.upperBound) {
        case (1, Int.max): message = "must be positive"
        case (0, Int.max): message = "must not be negative"
        case (let low, Int.max): message = "must be at least \(low)"
        case (let low, let high): message = "must be between \(low) and \(high)"
        }
        var key = value(name, keyPath, meaning) { range.contains($0) ? nil : message + (why.isEmpty ? "" : " \(why)") }
        key.acceptedRange = range
        return key
    }

    /// A block of keys of its own (`"limits": {…}`), read and checked by its own table; its
    /// problems are named with the block's name in front (`limits.enabled`).
    static func block<Block>(_ name: String, _ keyPath: WritableKeyPath<Root, Block> & Sendable, _ meaning: String,
                             keys: [ConfigurationKey<Block>]) -> Self {
        ConfigurationKey(
            name: name, meaning: meaning,
            read: { root, container in
                let nested = try container.nestedContainer(keyedBy: ConfigurationKeyName.self, forKey: ConfigurationKeyName(name))
                try ConfigurationKeys.read(&root[keyPath: keyPath], from: nested, keys: keys)
            },
            problem: { root in ConfigurationKeys.problem(of: root[keyPath: keyPath], keys: keys).map { "\(name).\($0)" } })
    }
}

/// Reading and checking a value through its table of keys.
enum ConfigurationKeys {
    /// Sets every key the container has; a key the table does not list is an error naming it
    /// and the nearest one the table does list (a misspelt key must never be ignored: the
    /// operator would believe a setting that is not in force).
    static func read<Root>(_ root: inout Root, from container: KeyedDecodingContainer<ConfigurationKeyName>,
                           keys: [ConfigurationKey<Root>]) throws {
        let prefix = container.codingPath.map { $0.stringValue + "." }.joined()
        let known = Set(keys.map(\.name))
        if let unknown = container.allKeys.map(\.stringValue).sorted().first(where: { !known.contains($0) }) {
            throw ConfigurationError(message: NearestName.unknownKey(prefix + unknown, among: keys.map { prefix + $0.name }))
        }
        for key in keys where container.contains(ConfigurationKeyName(key.name)) {
            try key.read(&root, container)
        }
    }

    /// The first problem of a value, in the table's order, or nil.
    static func problem<Root>(of root: Root, keys: [ConfigurationKey<Root>]) -> String? {
        for key in keys {
            if let problem = key.problem(root) { return problem }
        }
        return nil
    }
}
