import Foundation

/// Any JSON value, for the few places that carry JSON whose shape the type system does not
/// know (an audit entry's `before`/`after`). Integers stay integers: `3` never becomes `3.0`.
public enum JSONValue: Codable, Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Int64.self) { self = .integer(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The value of a JSON text, or nil when it is not JSON.
    public init?(text: String) {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) else { return nil }
        self = value
    }

}

extension JSONValue {
    /// The value `value` encodes to, built by a small encoder of our own: Foundation's
    /// JSONEncoder (and parsing its text back) cost more than the rest of a check-in on the
    /// writer's thread, where audit entries are made. Keys a type leaves out (an absent
    /// optional) are absent here too, as JSONEncoder leaves them out.
    public init(encoding value: some Encodable) throws {
        let root = JSONTreeSlot()
        try value.encode(to: JSONTreeEncoder(slot: root, codingPath: []))
        self = root.resolved()
    }

    /// Canonical text: keys sorted by their UTF-8 bytes, no spaces, only `"`, `\` and control
    /// characters escaped.
    public var canonicalText: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .integer(let value): out += String(value)
        case .number(let value): out += value == value.rounded() && abs(value) < 9.0e15 ? String(Int64(value)) : String(value)
        case .string(let value): Self.writeString(value, to: &out)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, key) in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
                if index > 0 { out += "," }
                Self.writeString(key, to: &out)
                out += ":"
                members[key]!.write(to: &out)
            }
            out += "}"
        }
    }

    private static func writeString(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

/// Where one encoded value lands: a leaf, or an object or array still being filled (containers
/// hand out slots and fill them later, as Encoder's protocol requires).
private final class JSONTreeSlot {
    var leaf: JSONValue?
    var members: [String: JSONTreeSlot]?
    var items: [JSONTreeSlot]?

    func resolved() -> JSONValue {
        if let members { return .object(members.mapValues { $0.resolved() }) }
        if let items { return .array(items.map { $0.resolved() }) }
        return leaf ?? .object([:])
    }

    func child(_ key: String) -> JSONTreeSlot {
        if members == nil { members = [:] }
        let slot = JSONTreeSlot()
        members![key] = slot
        return slot
    }

    func appended() -> JSONTreeSlot {
        if items == nil { items = [] }
        let slot = JSONTreeSlot()
        items!.append(slot)
        return slot
    }

    static func leaf<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws -> JSONValue? {
        switch value {
        case let value as String: return .string(value)
        case let value as Bool: return .bool(value)
        case let value as Int: return .integer(Int64(value))
        case let value as Int8: return .integer(Int64(value))
        case let value as Int16: return .integer(Int64(value))
        case let value as Int32: return .integer(Int64(value))
        case let value as Int64: return .integer(value)
        case let value as UInt: return value <= UInt(Int64.max) ? .integer(Int64(value)) : .number(Double(value))
        case let value as UInt8: return .integer(Int64(value))
        case let value as UInt16: return .integer(Int64(value))
        case let value as UInt32: return .integer(Int64(value))
        case let value as UInt64: return value <= UInt64(Int64.max) ? .integer(Int64(value)) : .number(Double(value))
        case let value as Double:
            guard value.isFinite else {
                throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "JSON has no \(value)"))
            }
            // A whole number is written as one (`3`, as JSONEncoder writes 3.0) and read back as one.
            if value == value.rounded(), abs(value) < 9.0e15 { return .integer(Int64(value)) }
            return .number(value)
        case let value as Float: return try leaf(Double(value), codingPath: codingPath)
        default: return nil
        }
    }

    /// Encodes a value into this slot: a primitive as a leaf, anything else through its own `encode`.
    func fill<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws {
        if let leaf = try Self.leaf(value, codingPath: codingPath) {
            self.leaf = leaf
        } else {
            try value.encode(to: JSONTreeEncoder(slot: self, codingPath: codingPath))
        }
    }
}

private struct JSONTreeEncoder: Encoder {
    let slot: JSONTreeSlot
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if slot.members == nil { slot.members = [:] }
        return KeyedEncodingContainer(JSONTreeKeyed<Key>(slot: slot, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if slot.items == nil { slot.items = [] }
        return JSONTreeUnkeyed(slot: slot, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { JSONTreeSingle(slot: slot, codingPath: codingPath) }
}

private struct JSONTreeKeyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let slot: JSONTreeSlot
    var codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { slot.child(key.stringValue).leaf = .null }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try slot.child(key.stringValue).fill(value, codingPath: codingPath + [key])
    }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try encode(value as any Encodable, key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try encode(value as any Encodable, key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try encode(value as any Encodable, key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try encode(value as any Encodable, key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try encode(value as any Encodable, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try encode(value as any Encodable, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try encode(value as any Encodable, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try encode(value as any Encodable, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try encode(value as any Encodable, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try encode(value as any Encodable, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try encode(value as any Encodable, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try encode(value as any Encodable, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try encode(value as any Encodable, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try encode(value as any Encodable, key) }

    /// Every primitive lands through `JSONTreeSlot.fill`, which checks ranges and finiteness once.
    private func encode(_ value: any Encodable, _ key: Key) throws {
        try slot.child(key.stringValue).fill(value, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        JSONTreeEncoder(slot: slot.child(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        JSONTreeEncoder(slot: slot.child(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { JSONTreeEncoder(slot: slot.child("super"), codingPath: codingPath) }
    mutating func superEncoder(forKey key: Key) -> any Encoder {
        JSONTreeEncoder(slot: slot.child(key.stringValue), codingPath: codingPath + [key])
    }
}

private struct JSONTreeUnkeyed: UnkeyedEncodingContainer {
    let slot: JSONTreeSlot
    var codingPath: [any CodingKey]
    var count: Int { slot.items?.count ?? 0 }

    mutating func encodeNil() throws { slot.appended().leaf = .null }
    mutating func encode<T: Encodable>(_ value: T) throws { try slot.appended().fill(value, codingPath: codingPath) }
    mutating func encode(_ value: Bool) throws { try slot.appended().fill(value, codingPath: codingPath) }
    mutating func encode(_ value: String) throws { try slot.appended().fill(value, codingPath: codingPath) }
    mutating func encode(_ value: Double) throws { try slot.appended().fill(value, codingPath: codingPath) }
    mutating func encode(_ value: Float) throws { try slot.appended().fill(value, codingPath: codingPath) }
    mutating func encode(_ value: Int) throws { try slot.appended().fill(value, codingPath: codingPath) }
    mutating func encode(_ value: Int8) throws { try slot.appended().fill(value, codingPath: codingPath) }
    mutating func encode(_ value: Int16) throws { try slot.appended().fill(value, codingPath: codingPath) }
    mutating func encode(_ value: Int32) throws { try slot.appended().fill(value, codingPath: codingPath) }
    mutating func encode(_ value: Int64) throws { try slot.appended().fill(value, codingPath: codingPath) }
    mutating func encode(_ value: UInt) throws { try slot.appended().fill(value, codingPath: codingPath) }
    mutating func encode(_ value: UInt8) throws { try slot.appended().fill(value, codingPath: codingPath) }
    mutating func encode(_ value: UInt16) throws { try slot.appended().fill(value, codingPath: codingPath) }
    mutating func encode(_ value: UInt32) throws { try slot.appended().fill(value, codingPath: codingPath) }
    mutating func encode(_ value: UInt64) throws { try slot.appended().fill(value, codingPath: codingPath) }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        JSONTreeEncoder(slot: slot.appended(), codingPath: codingPath).container(keyedBy: keyType)
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        JSONTreeEncoder(slot: slot.appended(), codingPath: codingPath).unkeyedContainer()
    }
    mutating func superEncoder() -> any Encoder { JSONTreeEncoder(slot: slot.appended(), codingPath: codingPath) }
}

private struct JSONTreeSingle: SingleValueEncodingContainer {
    let slot: JSONTreeSlot
    var codingPath: [any CodingKey]

    mutating func encodeNil() throws { slot.leaf = .null }
    mutating func encode<T: Encodable>(_ value: T) throws { try slot.fill(value, codingPath: codingPath) }
    mutating func encode(_ value: Bool) throws { try slot.fill(value, codingPath: codingPath) }
    mutating func encode(_ value: String) throws { try slot.fill(value, codingPath: codingPath) }
    mutating func encode(_ value: Double) throws { try slot.fill(value, codingPath: codingPath) }
    mutating func encode(_ value: Float) throws { try slot.fill(value, codingPath: codingPath) }
    mutating func encode(_ value: Int) throws { try slot.fill(value, codingPath: codingPath) }
    mutating func encode(_ value: Int8) throws { try slot.fill(value, codingPath: codingPath) }
    mutating func encode(_ value: Int16) throws { try slot.fill(value, codingPath: codingPath) }
    mutating func encode(_ value: Int32) throws { try slot.fill(value, codingPath: codingPath) }
    mutating func encode(_ value: Int64) throws { try slot.fill(value, codingPath: codingPath) }
    mutating func encode(_ value: UInt) throws { try slot.fill(value, codingPath: codingPath) }
    mutating func encode(_ value: UInt8) throws { try slot.fill(value, codingPath: codingPath) }
    mutating func encode(_ value: UInt16) throws { try slot.fill(value, codingPath: codingPath) }
    mutating func encode(_ value: UInt32) throws { try slot.fill(value, codingPath: codingPath) }
    mutating func encode(_ value: UInt64) throws { try slot.fill(value, codingPath: codingPath) }
}
