import Foundation

/// JSON text written straight into bytes, for the values every check-in encodes on the
/// writer's thread (the event's visitor snapshot and the answer): Foundation's JSONEncoder
/// was a sixth of that thread's time (issue 15's profile).
///
/// The output is byte for byte what the server's generic encoder gives (`JSONEncoder` with
/// `.sortedKeys` and `.withoutEscapingSlashes`, `JSONBody.encode`): keys in the order of
/// their UTF-8 bytes, `"`, `\` and the C0 controls escaped as JSONEncoder escapes them
/// (`\b \f \n \r \t`, else `\u00xx` in lower case), everything else as UTF-8. The tests
/// compare the two on generated values, hostile text included.
public struct JSONTextWriter {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 1_024) { bytes.reserveCapacity(capacity) }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x08: raw("\\b")
            case 0x0C: raw("\\f")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0..<0x20:
                raw("\\u00")
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func optionalString(_ text: String?) {
        if let text { string(text) } else { raw("null") }
    }

    mutating func bool(_ value: Bool) { value ? raw("true") : raw("false") }

    mutating func time(_ date: Date?) { optionalString(date.map(Timestamp.format)) }
}

extension Visitor {
    /// The visitor as `Visitor.encode(to:)` writes it (every key, null for absent values),
    /// keys sorted.
    public func writeJSON(into writer: inout JSONTextWriter) {
        writer.raw("{\"approvalRequestedAt\":"); writer.time(approvalRequestedAt)
        writer.raw(",\"approverId\":"); writer.optionalString(approverId)
        writer.raw(",\"checkedInAt\":"); writer.time(checkedInAt)
        writer.raw(",\"checkedOutAt\":"); writer.time(checkedOutAt)
        writer.raw(",\"checkpointId\":"); writer.optionalString(checkpointId)
        writer.raw(",\"company\":"); writer.optionalString(company)
        writer.raw(",\"createdAt\":"); writer.time(createdAt)
        writer.raw(",\"decidedAt\":"); writer.time(decidedAt)
        writer.raw(",\"decidedBy\":"); writer.optionalString(decidedBy)
        writer.raw(",\"decisionNote\":"); writer.optionalString(decisionNote)
        writer.raw(",\"email\":"); writer.optionalString(email)
        writer.raw(",\"hostEmail\":"); writer.optionalString(hostEmail)
        writer.raw(",\"hostName\":"); writer.optionalString(hostName)
        writer.raw(",\"id\":"); writer.string(id)
        writer.raw(",\"name\":"); writer.string(name)
        writer.raw(",\"phone\":"); writer.optionalString(phone)
        writer.raw(",\"purpose\":"); writer.optionalString(purpose)
        writer.raw(",\"requiresApproval\":"); writer.bool(requiresApproval)
        writer.raw(",\"shortId\":"); writer.string(shortId.rawValue)
        writer.raw(",\"status\":"); writer.string(status.rawValue)
        writer.raw(",\"validFrom\":"); writer.time(validity.from)
        writer.raw(",\"validUntil\":"); writer.time(validity.until)
        writer.raw(",\"walkIn\":"); writer.bool(walkIn)
        writer.raw("}")
    }
}

extension VisitorEventData {
    /// The event's data as `encode(to:)` writes it (absent keys left out), keys sorted.
    public var jsonText: [UInt8] {
        var writer = JSONTextWriter()
        writer.raw("{")
        if let checkpointId { writer.raw("\"checkpointId\":"); writer.string(checkpointId); writer.raw(",") }
        if offlineDecision != nil { writer.raw("\"conflict\":true,") }
        if let decision { writer.raw("\"decision\":"); writer.string(decision.rawValue); writer.raw(",") }
        if let entryId { writer.raw("\"entryId\":"); writer.string(entryId); writer.raw(",") }
        if let failedCondition { writer.raw("\"failedCondition\":"); writer.string(failedCondition.rawValue); writer.raw(",") }
        if let offlineDecision { writer.raw("\"offlineDecision\":"); writer.string(offlineDecision.rawValue); writer.raw(",") }
        if let scanId { writer.raw("\"scanId\":"); writer.string(scanId); writer.raw(",") }
        writer.raw("\"visitor\":")
        visitor.writeJSON(into: &writer)
        writer.raw("}")
        return writer.bytes
    }
}

extension NotificationEventData {
    /// The data of a `notification.new` as `encode(to:)` writes it (every key, absent values
    /// as null), keys sorted: written with every check-in that admits, so not by JSONEncoder.
    public var jsonText: [UInt8] {
        var writer = JSONTextWriter()
        writer.raw("{\"notification\":{\"createdAt\":"); writer.time(notification.createdAt.date)
        writer.raw(",\"id\":"); writer.string(notification.id)
        writer.raw(",\"kind\":"); writer.string(notification.kind.rawValue)
        writer.raw(",\"readAt\":"); writer.time(notification.readAt?.date)
        writer.raw(",\"title\":"); writer.string(notification.title)
        writer.raw(",\"visitorId\":"); writer.optionalString(notification.visitorId)
        writer.raw("}}")
        return writer.bytes
    }
}

extension CheckInAnswer {
    /// The answer as its synthesized `encode(to:)` writes it (`conflict` only when set), keys sorted.
    public var jsonText: [UInt8] {
        var writer = JSONTextWriter()
        writer.raw("{")
        if let conflict { writer.raw("\"conflict\":"); writer.bool(conflict); writer.raw(",") }
        writer.raw("\"result\":"); writer.string(result.rawValue)
        writer.raw(",\"scanId\":"); writer.string(scanId)
        writer.raw(",\"visitor\":")
        visitor.writeJSON(into: &writer)
        writer.raw("}")
        return writer.bytes
    }
}

/// How the server writes every JSON answer and event (`JSONBody.encode`): JSONEncoder with
/// sorted keys — a fixed order, so the hand-written encoders above can equal it byte for byte
/// (JSONEncoder keeps no order of its own across nested objects) — and slashes unescaped.
public enum ServerJSON {
    public static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding our own value types cannot fail; a failure is a bug.
        return Array(try! encoder.encode(value))
    }
}
