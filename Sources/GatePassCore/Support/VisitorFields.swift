import Foundation

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
