import Foundation
import Testing
@testable import GatePassCore

/// `JSONValue(encoding:)` is the audit log's encoder: it must give the value Foundation's
/// JSONEncoder gives (what the API answers), for every kind of field, and its canonical text
/// must read back as the same value.
@Suite struct JSONValueTests {
    static func viaFoundation(_ value: some Encodable) throws -> GatePassCore.JSONValue {
        try JSONDecoder().decode(GatePassCore.JSONValue.self, from: JSONEncoder().encode(value))
    }

    struct Everything: Encodable {
        var text = "a \"quoted\" \\ back/slash \u{1}\u{1F} tab\t line\n ‮ é 😀"
        var absent: String? = nil
        var present: String? = "here"
        var flag = true
        var small: Int8 = -8
        var big = Int64.max
        var unsigned = UInt64.max
        var fraction = 0.25
        var whole = 3.0
        var list = [1, 2, 3]
        var nested = ["b": [1.5], "a": []]
        var optionals: [Int?] = [1, nil]
        var time = Timestamp(Date(timeIntervalSince1970: 1_795_910_400.123))
        var status = VisitorStatus.checkedIn
        var empty: [String: Int] = [:]

        // Explicit nulls and nested containers, as some of our models write them.
        enum CodingKeys: String, CodingKey { case text, absent, present, flag, small, big, unsigned, fraction, whole, list, nested,
                                                     optionals, time, status, empty, explicitNull, inner }
        enum InnerKeys: String, CodingKey { case depth }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(text, forKey: .text)
            try container.encodeIfPresent(absent, forKey: .absent)
            try container.encodeIfPresent(present, forKey: .present)
            try container.encode(flag, forKey: .flag)
            try container.encode(small, forKey: .small)
            try container.encode(big, forKey: .big)
            try container.encode(unsigned, forKey: .unsigned)
            try container.encode(fraction, forKey: .fraction)
            try container.encode(whole, forKey: .whole)
            try container.encode(list, forKey: .list)
            try container.encode(nested, forKey: .nested)
            try container.encode(optionals, forKey: .optionals)
            try container.encode(time, forKey: .time)
            try container.encode(status, forKey: .status)
            try container.encode(empty, forKey: .empty)
            try container.encodeNil(forKey: .explicitNull)
            var inner = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
            try inner.encode(2, forKey: .depth)
        }
    }

    @Test func everyKindOfFieldEncodesAsJSONEncoderEncodesIt() throws {
        let value = Everything()
        #expect(try GatePassCore.JSONValue(encoding: value) == (try Self.viaFoundation(value)))
    }

    @Test func theDomainsModelsEncodeAsTheAPIAnswersThem() throws {
        for status in VisitorStatus.allCases {
            let visitor = Fixture.visitor(status: status, requiresApproval: true)
            #expect(try GatePassCore.JSONValue(encoding: visitor) == (try Self.viaFoundation(visitor)), "\(status)")
        }
        let entry = BlocklistEntry(id: "b1", name: "Ion Ionescu", email: nil, phone: "+40 711", company: nil, reason: "r",
                                   expiresAt: nil, createdAt: Fixture.day, createdBy: "u1")
        #expect(try GatePassCore.JSONValue(encoding: entry) == (try Self.viaFoundation(entry)))
        let facts: [String: String?] = ["email": nil, "to": "x@example.com"]
        #expect(try GatePassCore.JSONValue(encoding: facts) == (try Self.viaFoundation(facts)))
    }

    @Test func canonicalTextReadsBackAsTheSameValueWithSortedKeys() throws {
        let value = try GatePassCore.JSONValue(encoding: Everything())
        let text = value.canonicalText
        #expect(GatePassCore.JSONValue(text: text) == value)
        #expect(!text.contains(" :") && !text.contains("\n") && !text.contains("\u{1}"))
        let keys = ["b": 1, "a": 2, "é": 3, "B": 4]
        #expect(try GatePassCore.JSONValue(encoding: keys).canonicalText == #"{"B":4,"a":2,"b":1,"é":3}"#)
        #expect(try GatePassCore.JSONValue(encoding: ["x": 3.0, "y": 0.5]).canonicalText == #"{"x":3,"y":0.5}"#)
    }

    @Test func nonFiniteNumbersAreRefusedNotWritten() {
        #expect(throws: EncodingError.self) { try GatePassCore.JSONValue(encoding: ["x": Double.nan]) }
        #expect(throws: EncodingError.self) { try GatePassCore.JSONValue(encoding: ["x": Double.infinity]) }
    }
}
