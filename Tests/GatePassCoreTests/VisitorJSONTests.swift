import Foundation
import Testing
@testable import GatePassCore

/// api.md "Visitor": the full shape, every key present (null when absent), camelCase keys,
/// times as RFC 3339 UTC strings.
@Suite("Visitor JSON")
struct VisitorJSONTests {
    static let allKeys: Set<String> = [
        "id", "shortId", "name", "email", "phone", "company", "purpose", "hostName", "hostEmail", "approverId",
        "requiresApproval", "walkIn", "status", "validFrom", "validUntil", "createdAt",
        "approvalRequestedAt", "decidedAt", "decidedBy", "decisionNote", "checkedInAt",
        "checkedOutAt", "checkpointId",
    ]

    static func object(_ visitor: Visitor) throws -> [String: JSONValue] {
        let data = try JSONEncoder().encode(visitor)
        guard case .object(let object) = try JSONDecoder().decode(JSONValue.self, from: data) else {
            Issue.record("a visitor must encode as a JSON object")
            return [:]
        }
        return object
    }

    static let minimal = Visitor(id: "id-1", shortId: ShortID("K7Q2M9XD")!, name: "Ana Pop",
                                 validity: Fixture.window, createdAt: Fixture.createdAt)

    static let full: Visitor = {
        var v = Fixture.visitor(status: .checkedOut, requiresApproval: true)
        v.walkIn = true
        v.approvalRequestedAt = Fixture.date(1_795_935_600)     // 2026-11-29T07:00:00Z
        v.decidedAt = Fixture.date(1_795_935_660)               // 2026-11-29T07:01:00Z
        v.decidedBy = "approver-1"
        v.decisionNote = "Ok — \"escorted\" 🚪"
        return v
    }()

    @Test func minimalVisitorWritesEveryKeyWithNullForAbsentValues() throws {
        let object = try Self.object(Self.minimal)
        #expect(Set(object.keys) == Self.allKeys)
        for key in ["email", "phone", "company", "purpose", "hostName", "approverId", "approvalRequestedAt",
                    "decidedAt", "decidedBy", "decisionNote", "checkedInAt", "checkedOutAt", "checkpointId"] {
            #expect(object[key] == .null, "\(key) must be null")
        }
        #expect(object["id"] == .string("id-1"))
        #expect(object["shortId"] == .string("K7Q2M9XD"))
        #expect(object["name"] == .string("Ana Pop"))
        #expect(object["requiresApproval"] == .bool(false))
        #expect(object["walkIn"] == .bool(false))
        #expect(object["status"] == .string("EXPECTED"))
        #expect(object["validFrom"] == .string("2026-11-29T08:00:00Z"))
        #expect(object["validUntil"] == .string("2026-11-29T18:00:00Z"))
        #expect(object["createdAt"] == .string("2026-11-28T10:00:00Z"))
    }

    @Test func fullVisitorWritesDatesAsRFC3339Strings() throws {
        let object = try Self.object(Self.full)
        #expect(Set(object.keys) == Self.allKeys)
        #expect(object["status"] == .string("CHECKED_OUT"))
        #expect(object["requiresApproval"] == .bool(true))
        #expect(object["walkIn"] == .bool(true))
        #expect(object["approvalRequestedAt"] == .string("2026-11-29T07:00:00Z"))
        #expect(object["decidedAt"] == .string("2026-11-29T07:01:00Z"))
        #expect(object["checkedInAt"] == .string("2026-11-29T08:01:00Z"))
        #expect(object["checkedOutAt"] == .string("2026-11-29T08:30:00Z"))
        #expect(object["checkpointId"] == .string("checkpoint-side-door"))
        #expect(object["decisionNote"] == .string("Ok — \"escorted\" 🚪"))
        #expect(object["email"] == .string("ana@example.com"))
    }

    @Test(arguments: VisitorStatus.allCases)
    func statusIsWrittenAsItsApiName(status: VisitorStatus) throws {
        var v = Self.minimal
        v.status = status
        let names: [VisitorStatus: String] = [
            .expected: "EXPECTED", .awaitingApproval: "AWAITING_APPROVAL", .approved: "APPROVED",
            .rejected: "REJECTED", .checkedIn: "CHECKED_IN", .checkedOut: "CHECKED_OUT", .cancelled: "CANCELLED",
        ]
        #expect(try Self.object(v)["status"] == .string(names[status]!))
    }

    @Test(arguments: [false, true], VisitorStatus.allCases)
    func decodeOfEncodeIsIdentity(requiresApproval: Bool, status: VisitorStatus) throws {
        for visitor in [Fixture.visitor(status: status, requiresApproval: requiresApproval), Self.full, Self.minimal] {
            let data = try JSONEncoder().encode(visitor)
            #expect(try JSONDecoder().decode(Visitor.self, from: data) == visitor)
        }
    }

    @Test func decodesApiMdShapeWithNulls() throws {
        let json = """
        {"id": "v-1", "shortId": "k7q2-m9xd", "name": "Ana Pop", "email": "ana@example.com",
         "phone": "+40712345678", "company": "Acme", "purpose": "Delivery", "hostName": "Ion",
         "approverId": null, "requiresApproval": true, "walkIn": false,
         "status": "EXPECTED", "validFrom": "2026-11-29T08:00:00Z", "validUntil": "2026-11-29T20:00:00+02:00",
         "createdAt": "2026-11-28T10:00:00Z", "approvalRequestedAt": null, "decidedAt": null,
         "decidedBy": null, "decisionNote": null, "checkedInAt": null, "checkedOutAt": null,
         "checkpointId": null, "someFutureKey": 42}
        """
        let v = try JSONDecoder().decode(Visitor.self, from: Data(json.utf8))
        #expect(v.shortId.rawValue == "K7Q2M9XD")
        #expect(v.validity == Fixture.window)
        #expect(v.createdAt == Fixture.createdAt)
        #expect(v.approverId == nil)
        #expect(v.checkedInAt == nil)
        #expect(v.requiresApproval)
        #expect(v.status == .expected)
    }

    @Test(arguments: [
        (#""shortId": "K7Q2M9XD""#, #""shortId": "K7Q2M9XU""#),
        (#""status": "EXPECTED""#, #""status": "EXPIRED""#),
        (#""validFrom": "2026-11-29T08:00:00Z""#, #""validFrom": "2026-11-29""#),
        (#""createdAt": "2026-11-28T10:00:00Z""#, #""createdAt": 1795910400"#),
        (#""name": "Ana Pop""#, #""name": null"#),
    ])
    func decodingRejectsInvalidFields(valid: String, invalid: String) throws {
        let good = """
        {"id": "v-1", "shortId": "K7Q2M9XD", "name": "Ana Pop", "requiresApproval": false, "walkIn": false,
         "status": "EXPECTED", "validFrom": "2026-11-29T08:00:00Z", "validUntil": "2026-11-29T18:00:00Z",
         "createdAt": "2026-11-28T10:00:00Z"}
        """
        _ = try JSONDecoder().decode(Visitor.self, from: Data(good.utf8))
        let bad = good.replacingOccurrences(of: valid, with: invalid)
        #expect(bad != good)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Visitor.self, from: Data(bad.utf8)) }
    }
}
