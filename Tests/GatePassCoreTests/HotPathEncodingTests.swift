import Foundation
import Testing
@testable import GatePassCore

/// The check-in's own fast paths (`Visitor.jsonFields` for the audit diff, the ASCII folding of
/// the blocklist keys) must give exactly what the generic paths give, for any value: an audit
/// entry or a block never depends on which path made it. Values are generated from a seeded
/// generator, so a failure repeats.
@Suite struct HotPathEncodingTests {
    /// Values drawn from a seeded generator (SplitMix64), so a failure repeats.
    struct Generator {
        var seeded: SplitMix64
        init(state: UInt64) { seeded = SplitMix64(seed: state) }
        mutating func next() -> UInt64 { seeded.next() }
        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
        mutating func bool() -> Bool { next() & 1 == 1 }

        /// Text from every class the escaping rules treat differently: ASCII letters, `"`, `\`,
        /// `/`, each control character, DEL, Latin-1, bidi and zero-width marks, emoji.
        mutating func text(maxLength: Int = 24) -> String {
            let pieces: [String] = ["a", "Z", "0", " ", "\"", "\\", "/", "\u{7F}", "é", "ß", "\u{202E}", "\u{200B}",
                                    "🙂", "\u{FEFF}", "ﬁ", "Ａ", "<", "&", "'", "\u{2028}"]
                + (0..<0x20).map { String(UnicodeScalar(UInt8($0))) }
            return (0..<below(maxLength + 1)).map { _ in pieces[below(pieces.count)] }.joined()
        }
        mutating func optionalText() -> String? { bool() ? text() : nil }
        mutating func date() -> Date { Date(timeIntervalSince1970: TimeInterval(below(4_000_000_000)) - 1_000_000_000) }
        mutating func optionalDate() -> Date? { bool() ? date() : nil }

        mutating func visitor() -> Visitor {
            let symbols = ShortID.alphabet
            let shortId = ShortID(String((0..<ShortID.length).map { _ in symbols[below(symbols.count)] }))!
            return Visitor(id: text(), shortId: shortId, name: text(), email: optionalText(), phone: optionalText(),
                           company: optionalText(), purpose: optionalText(), hostName: optionalText(),
                           hostEmail: optionalText(), approverId: optionalText(), requiresApproval: bool(), walkIn: bool(),
                           status: VisitorStatus.allCases[below(VisitorStatus.allCases.count)],
                           validity: ValidityWindow(from: date(), until: date()), createdAt: date(),
                           approvalRequestedAt: optionalDate(), decidedAt: optionalDate(), decidedBy: optionalText(),
                           decisionNote: optionalText(), checkedInAt: optionalDate(), checkedOutAt: optionalDate(),
                           checkpointId: optionalText())
        }
    }

    @Test func visitorFieldsAreTheGenericTree() throws {
        var generator = Generator(state: 4)
        for _ in 0..<400 {
            let visitor = generator.visitor()
            #expect(GatePassCore.JSONValue.object(visitor.jsonFields) == (try GatePassCore.JSONValue(encoding: visitor)))
        }
    }

    @Test func asciiBlocklistKeysFoldAsTheGeneralPathDoes() {
        var generator = Generator(state: 5)
        let ascii = (0..<0x80).map { String(UnicodeScalar(UInt8($0))) }
        for _ in 0..<2_000 {
            let text = (0..<generator.below(20)).map { _ in ascii[generator.below(ascii.count)] }.joined()
            #expect(BlocklistKeys.folded(text) == BlocklistKeys.unicodeFolded(text), "\(text.debugDescription)")
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            #expect(BlocklistKeys.email(text) == (trimmed.isEmpty ? nil : trimmed), "\(text.debugDescription)")
        }
        // Beyond ASCII the general path runs, as before.
        #expect(BlocklistKeys.folded("Ｊosé  Ｍaría\u{200B}") == "josemaria")
        #expect(BlocklistKeys.email("\u{00A0}Ana@Example.com\u{2003}") == "ana@example.com")
    }
}

/// The hand-written JSON of the check-in's answer and event data is byte for byte what the
/// server's generic encoder (`ServerJSON`, which `JSONBody.encode` is) writes, for generated
/// values with hostile text in every field.
@Suite struct HotPathJSONTests {
    @Test func visitorEventDataIsTheGenericJSON() {
        var generator = HotPathEncodingTests.Generator(state: 6)
        let results = [ScanResult.checkedIn, .blocked, .awaitingApproval, .invalid]
        for _ in 0..<400 {
            let data = VisitorEventData(visitor: generator.visitor(), scanId: generator.optionalText(),
                                        checkpointId: generator.optionalText(), entryId: generator.optionalText(),
                                        offlineDecision: generator.bool() ? results[generator.below(results.count)] : nil,
                                        decision: generator.bool() ? results[generator.below(results.count)] : nil,
                                        failedCondition: generator.bool()
                                            ? OfflineClaimFailure.allCases[generator.below(OfflineClaimFailure.allCases.count)] : nil)
            let generic = ServerJSON.encode(data)
            #expect(data.jsonText == generic, "\(String(decoding: generic, as: UTF8.self).debugDescription)")
        }
    }

    @Test func checkInAnswerIsTheGenericJSON() {
        var generator = HotPathEncodingTests.Generator(state: 7)
        for index in 0..<400 {
            let answer = CheckInAnswer(result: ScanResult.allCases[index % ScanResult.allCases.count], visitor: generator.visitor(),
                                       scanId: generator.text(), conflict: generator.bool() ? generator.bool() : nil)
            let generic = ServerJSON.encode(answer)
            #expect(answer.jsonText == generic, "\(String(decoding: generic, as: UTF8.self).debugDescription)")
        }
    }

    @Test func notificationEventDataIsTheGenericJSON() {
        var generator = HotPathEncodingTests.Generator(state: 9)
        for index in 0..<400 {
            let item = NotificationItem(id: generator.text(), kind: EventKind.allCases[index % EventKind.allCases.count],
                                        title: generator.text(), visitorId: generator.optionalText(),
                                        createdAt: Timestamp(generator.date()), readAt: generator.optionalDate().map(Timestamp.init))
            let data = NotificationEventData(notification: item)
            let generic = ServerJSON.encode(data)
            #expect(data.jsonText == generic, "\(String(decoding: generic, as: UTF8.self).debugDescription)")
        }
    }

    /// Every escape, one at a time, so a difference names its character.
    @Test func eachCharacterEscapesAsTheGenericEncoderDoes() {
        var generator = HotPathEncodingTests.Generator(state: 8)
        let base = generator.visitor()
        let scalars = (0..<0x80).map { UnicodeScalar(UInt8($0)) } + ["\u{7F}", "é", "\u{2028}", "\u{FEFF}", "🙂"].flatMap(\.unicodeScalars)
        for scalar in scalars {
            var visitor = base
            visitor.name = "a\(scalar)b"
            let answer = CheckInAnswer(result: .checkedIn, visitor: visitor, scanId: "s")
            #expect(answer.jsonText == ServerJSON.encode(answer), "U+\(String(scalar.value, radix: 16))")
        }
    }
}
