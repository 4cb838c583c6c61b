import Foundation
import GatePassCore
@testable import GatePassServer
import Testing

/// The mail queue's payload is written by hand (`MailContent.payloadJSON`, issue 15): it must
/// read back as the same value through the synthesized `Codable` the worker decodes with, and
/// mean what JSONEncoder's text means, for hostile text in every field.
@Suite struct MailPayloadTests {
    @Test func theHandWrittenPayloadReadsBackAsTheSameValue() throws {
        // Every class of character the escaping treats differently, in every position.
        let pieces = ["a", "Z", "0", " ", "\"", "\\", "/", "\u{7F}", "é", "\u{202E}", "\u{200B}", "🙂", "\u{FEFF}", "<", "&",
                      "'", "\u{2028}", "{", "}", ":", ","] + (0..<0x20).map { String(UnicodeScalar(UInt8($0))) }
        var random = SplitMix64(seed: 11) // seeded, so a failure repeats
        func text() -> String { (0..<Int.random(in: 0...24, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined() }
        for index in 0..<500 {
            let (first, second) = (text(), text())
            let content: MailContent = switch index % 5 {
            case 0: .otp(code: first)
            case 1: .invitation(visitorId: first, passToken: second)
            case 2: .arrival(visitorId: first)
            case 3: .approval(visitorId: first)
            default: .test
            }
            let written = content.payloadJSON
            #expect(try JSONDecoder().decode(MailContent.self, from: Data(written)) == content,
                    "\(String(decoding: written, as: UTF8.self).debugDescription)")
            // The same JSON value as JSONEncoder writes (which differs only in escaping "/").
            let generic = try JSONEncoder().encode(content)
            #expect(try JSONDecoder().decode(JSONValue.self, from: Data(written)) == (try JSONDecoder().decode(JSONValue.self, from: generic)))
        }
    }
}
