import Foundation

/// A JSON text written straight into bytes, for the answers and event payloads of the hot
/// paths (a check-in's answer, its `visitor.*` event, the notification it makes): Foundation's
/// JSONEncoder builds a tree of boxed values and then serialises it, which was a sixth of a
/// check-in's time on the writer's thread (issue 15's profile).
///
/// The bytes are exactly what `JSONEncoder` with `.withoutEscapingSlashes` writes for the same
/// values (keys in the order the type encodes them, no spaces; in strings `"`, `\` and the
/// control characters below U+0020 escaped, `\b \f \n \r \t` by name and the others as
/// `\u00xx` in lower-case hex; everything else, `/` and non-ASCII included, as is). The tests
/// hold the two to byte-for-byte equality on generated values
/// (`HotPathEncodingTests`), so an answer never depends on which path wrote it.
public struct JSONBytes {
    public private(set) var bytes: [UInt8] = []
    /// Per open object: whether a member was written (the next one needs a comma).
    private var needsComma: [Bool] = []

    public init(capacity: Int = 512) { bytes.reserveCapacity(capacity) }

    /// An object: at the top, or as the value of the member just keyed.
    public mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
    }

    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma.removeLast()
    }

    /// The key of the next member; its value follows with one of the value methods.
    /// Keys are our own ASCII names, never text from outside: they need no escaping.
    public mutating func key(_ name: StaticString) {
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
    }

    public mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
            case 0x08: bytes.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                          Self.hexDigits[Int(byte >> 4)], Self.hexDigits[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    public mutating func bool(_ value: Bool) {
        bytes.append(contentsOf: value ? Self.trueText : Self.falseText)
    }

    public mutating func integer(_ value: Int64) {
        bytes.append(contentsOf: String(value).utf8)
    }

    public mutating func null() {
        bytes.append(contentsOf: Self.nullText)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
    private static let trueText: [UInt8] = Array("true".utf8)
    private static let falseText: [UInt8] = Array("false".utf8)
    private static let nullText: [UInt8] = Array("null".utf8)
}

// MARK: - The hot answers and payloads

extension Visitor {
    /// The visitor as `encode(to:)` writes it: every key, `null` for absent values.
    public func writeJSON(to json: inout JSONBytes) {
        json.beginObject()
        json.key("id"); json.string(id)
        json.key("shortId"); json.string(shortId.rawValue)
        json.key("name"); json.string(name)
        json.key("email"); json.string(email)
        json.key("phone"); json.string(phone)
        json.key("company"); json.string(company)
        json.key("purpose"); json.string(purpose)
        json.key("hostName"); json.string(hostName)
        json.key("hostEmail"); json.string(hostEmail)
        json.key("approverId"); json.string(approverId)
        json.key("requiresApproval"); json.bool(requiresApproval)
        json.key("walkIn"); json.bool(walkIn)
        json.key("status"); json.string(status.rawValue)
        json.key("validFrom"); json.string(Timestamp.format(validity.from))
        json.key("validUntil"); json.string(Timestamp.format(validity.until))
        json.key("createdAt"); json.string(Timestamp.format(createdAt))
        json.key("approvalRequestedAt"); json.string(approvalRequestedAt.map(Timestamp.format))
        json.key("decidedAt"); json.string(decidedAt.map(Timestamp.format))
        json.key("decidedBy"); json.string(decidedBy)
        json.key("decisionNote"); json.string(decisionNote)
        json.key("checkedInAt"); json.string(checkedInAt.map(Timestamp.format))
        json.key("checkedOutAt"); json.string(checkedOutAt.map(Timestamp.format))
        json.key("checkpointId"); json.string(checkpointId)
        json.endObject()
    }
}

extension CheckInAnswer {
    /// The answer as JSONEncoder writes it (`conflict` only when set).
    public var jsonBytes: [UInt8] {
        var json = JSONBytes()
        json.beginObject()
        json.key("result"); json.string(result.rawValue)
        json.key("visitor"); visitor.writeJSON(to: &json)
        json.key("scanId"); json.string(scanId)
        if let conflict { json.key("conflict"); json.bool(conflict) }
        json.endObject()
        return json.bytes
    }
}

extension VisitorEventData {
    /// The payload as `encode(to:)` writes it: absent keys left out, `conflict` with an
    /// offline decision.
    public var jsonBytes: [UInt8] {
        var json = JSONBytes()
        json.beginObject()
        json.key("visitor"); visitor.writeJSON(to: &json)
        if let scanId { json.key("scanId"); json.string(scanId) }
        if let checkpointId { json.key("checkpointId"); json.string(checkpointId) }
        if let entryId { json.key("entryId"); json.string(entryId) }
        if let offlineDecision { json.key("offlineDecision"); json.string(offlineDecision.rawValue) }
        if let decision { json.key("decision"); json.string(decision.rawValue) }
        if offlineDecision != nil { json.key("conflict"); json.bool(true) }
        json.endObject()
        return json.bytes
    }
}

extension NotificationEventData {
    /// The payload as JSONEncoder writes it: every key of the item, `null` for absent values.
    public var jsonBytes: [UInt8] {
        var json = JSONBytes(capacity: 256)
        json.beginObject()
        json.key("notification")
        json.beginObject()
        json.key("id"); json.string(notification.id)
        json.key("kind"); json.string(notification.kind.rawValue)
        json.key("title"); json.string(notification.title)
        json.key("visitorId"); json.string(notification.visitorId)
        json.key("createdAt"); json.string(notification.createdAt.description)
        json.key("readAt"); json.string(notification.readAt?.description)
        json.endObject()
        json.endObject()
        return json.bytes
    }
}

extension ScanStats {
    /// The counters as JSONEncoder writes them, in declaration order.
    public var jsonBytes: [UInt8] {
        var json = JSONBytes(capacity: 128)
        json.beginObject()
        json.key("checkedInToday"); json.integer(Int64(checkedInToday))
        json.key("checkedOutToday"); json.integer(Int64(checkedOutToday))
        json.key("awaitingApproval"); json.integer(Int64(awaitingApproval))
        json.key("expectedToday"); json.integer(Int64(expectedToday))
        json.key("onSite"); json.integer(Int64(onSite))
        json.endObject()
        return json.bytes
    }
}

extension Visitor {
    /// The visitor's fields as `JSONValue(encoding:)` gives them (every key, `.null` for absent
    /// values), built directly: the audit entry of every check-in diffs two of these on the
    /// writer's thread.
    public var jsonFields: [String: JSONValue] {
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        func time(_ value: Date?) -> JSONValue { value.map { .string(Timestamp.format($0)) } ?? .null }
        return [
            "id": .string(id), "shortId": .string(shortId.rawValue), "name": .string(name),
            "email": text(email), "phone": text(phone), "company": text(company), "purpose": text(purpose),
            "hostName": text(hostName), "hostEmail": text(hostEmail), "approverId": text(approverId),
            "requiresApproval": .bool(requiresApproval), "walkIn": .bool(walkIn), "status": .string(status.rawValue),
            "validFrom": time(validity.from), "validUntil": time(validity.until), "createdAt": time(createdAt),
            "approvalRequestedAt": time(approvalRequestedAt), "decidedAt": time(decidedAt), "decidedBy": text(decidedBy),
            "decisionNote": text(decisionNote), "checkedInAt": time(checkedInAt), "checkedOutAt": time(checkedOutAt),
            "checkpointId": text(checkpointId),
        ]
    }
}
