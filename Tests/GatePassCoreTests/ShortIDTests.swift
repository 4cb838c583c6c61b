import Foundation
import Testing
@testable import GatePassCore

/// api.md: 8 characters of Crockford base32 (`0-9A-Z` without `I L O U`), from a CSPRNG,
/// decoded the Crockford way: case-insensitive, `O`→`0`, `I`/`L`→`1`, hyphens ignored.
@Suite("Short ids")
struct ShortIDTests {
    static let crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

    // MARK: - Decoding

    @Test("Accepted spellings", arguments: [
        ("K7Q2M9XD", "K7Q2M9XD"),
        ("k7q2m9xd", "K7Q2M9XD"),
        ("K7q2M9xD", "K7Q2M9XD"),
        ("ab12cd34", "AB12CD34"),                 // api.md's own example
        ("AB12CD34", "AB12CD34"),
        ("OOOOOOOO", "00000000"),
        ("oO0oO0oO", "00000000"),
        ("IiLl1111", "11111111"),
        ("AB1O-CDL4", "AB10CD14"),
        ("AB12-CD34", "AB12CD34"),
        ("A-B-1-2-C-D-3-4", "AB12CD34"),
        ("--AB12CD34--", "AB12CD34"),
        ("AB12--CD34", "AB12CD34"),
        ("00000000", "00000000"),
        ("ZZZZZZZZ", "ZZZZZZZZ"),
        ("zzzzzzzz", "ZZZZZZZZ"),
    ])
    func accepted(_ text: String, canonical: String) throws {
        let id = try #require(ShortID(text))
        #expect(id.rawValue == canonical)
        #expect(id.description == canonical)
    }

    @Test("Rejected spellings", arguments: [
        "",
        "-",
        "--------",
        "A",
        "K7Q2M9X",                    // 7 symbols
        "K7Q2-M9X",                   // 7 symbols with a hyphen
        "K7Q2M9XDD",                  // 9 symbols
        "K7Q2M9XD0",
        "K7Q2M9XU", "k7q2m9xu", "UUUUUUUU",
        "K7Q2 M9XD", " K7Q2M9XD", "K7Q2M9XD ", "K7Q2M9XD\n",
        "K7Q2_M9XD", "K7Q2.M9XD", "K7Q2M9X*", "K7Q2M9X~", "K7Q2M9X$", "K7Q2M9X=",
        "K7Q2M9X\u{0}", "K7Q2M9XD\u{0}", "\u{0}K7Q2M9XD",
        "K7Q2M9XÉ", "ÀB12CD34", "K7Q2M9XE\u{301}",            // accented, precomposed and combining
        "К7Q2М9ХD",                                           // Cyrillic К, М, Х look-alikes
        "ＡＢ１２ＣＤ３４",                                       // fullwidth
        "٠١٢٣٤٥٦٧",                                           // Arabic-Indic digits
        "K7Q2\u{200B}M9XD",                                   // zero-width space
        "K7Q2M9X😀", "😀😀😀😀😀😀😀😀", "K7Q2M9XD😀", "🇷🇴🇷🇴🇷🇴🇷🇴",
        "GP1:K7Q2M9XD",                                       // the QR form is not a bare id
    ])
    func rejected(_ text: String) {
        #expect(ShortID(text) == nil)
    }

    @Test(arguments: [64, 65, 1_000, 1_000_000])
    func veryLongStringsAreRejected(length: Int) {
        #expect(ShortID(String(repeating: "A", count: length)) == nil)
        #expect(ShortID("K7Q2M9XD" + String(repeating: "Z", count: length)) == nil)
    }

    @Test func everyAlphabetSymbolDecodesToItself() throws {
        for symbol in Self.crockford {
            let text = String(repeating: symbol, count: 8)
            #expect(try #require(ShortID(text)).rawValue == text)
            #expect(try #require(ShortID(text.lowercased())).rawValue == text)
        }
    }

    @Test func matchingIsCaseInsensitiveAndSpellingInsensitive() {
        let spellings = ["AB10CD14", "ab10cd14", "AB1O-CDL4", "ab1o-cdi4", "A-B-1-0-C-D-1-4"]
        let ids = Set(spellings.compactMap(ShortID.init))
        #expect(ids.count == 1)
        #expect(ids.first?.rawValue == "AB10CD14")
    }

    @Test func alphabetIsCrockfordInValueOrder() {
        #expect(String(ShortID.alphabet) == Self.crockford)
        #expect(Set(ShortID.alphabet).count == 32)
        for excluded in "ILOU" { #expect(!ShortID.alphabet.contains(excluded)) }
        #expect(ShortID.length == 8)
    }

    // MARK: - JSON

    @Test func encodesAsItsCanonicalString() throws {
        let data = try JSONEncoder().encode([try #require(ShortID("k7q2-m9xd"))])
        #expect(String(decoding: data, as: UTF8.self) == #"["K7Q2M9XD"]"#)
    }

    @Test func decodesAnySpelling() throws {
        let ids = try JSONDecoder().decode([ShortID].self, from: Data(#"["k7q2-m9xd", "K7Q2M9XD"]"#.utf8))
        #expect(ids.map(\.rawValue) == ["K7Q2M9XD", "K7Q2M9XD"])
    }

    @Test(arguments: [#"["K7Q2M9XU"]"#, #"["K7Q2M9X"]"#, #"[""]"#, #"[12345678]"#, #"[null]"#])
    func decodingRejectsNonIds(json: String) {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([ShortID].self, from: Data(json.utf8)) }
    }

    // MARK: - Generation

    @Test func randomIdsAreCanonicalAndDecodeToThemselves() {
        var generator = SplitMix64(seed: 1)
        for _ in 0..<500 {
            let id = ShortID.random(using: &generator)
            #expect(id.rawValue.count == 8)
            #expect(id.rawValue.allSatisfy { Self.crockford.contains($0) })
            #expect(ShortID(id.rawValue) == id)
            #expect(ShortID(id.rawValue.lowercased()) == id)
        }
    }

    @Test func generationIsDeterministicForAGivenGenerator() {
        var a = SplitMix64(seed: 0xC0FFEE)
        var b = SplitMix64(seed: 0xC0FFEE)
        var c = SplitMix64(seed: 0xBEEF)
        let first = (0..<100).map { _ in ShortID.random(using: &a) }
        let again = (0..<100).map { _ in ShortID.random(using: &b) }
        let other = (0..<100).map { _ in ShortID.random(using: &c) }
        #expect(first == again)
        #expect(first != other)
        #expect(Set(first).count == 100)
    }

    @Test func extremeGeneratorOutputsMapToTheEndsOfTheAlphabet() {
        var zeros = ConstantGenerator(value: 0)
        var ones = ConstantGenerator(value: .max)
        #expect(ShortID.random(using: &zeros).rawValue == "00000000")
        #expect(ShortID.random(using: &ones).rawValue == "ZZZZZZZZ")
    }

    @Test func systemGeneratedIdsAreDistinctAndUseTheWholeAlphabet() {
        var generator = SystemRandomNumberGenerator()
        let ids = (0..<2_000).map { _ in ShortID.random(using: &generator) }
        #expect(Set(ids).count == ids.count, "2,000 ids out of 32^8 should not collide")

        var counts: [Character: Int] = [:]
        var firstSymbols = Set<Character>()
        var lastSymbols = Set<Character>()
        for id in ids {
            #expect(id.rawValue.count == 8)
            for symbol in id.rawValue { counts[symbol, default: 0] += 1 }
            firstSymbols.insert(id.rawValue.first!)
            lastSymbols.insert(id.rawValue.last!)
        }
        #expect(Set(counts.keys) == Set(Self.crockford), "all 32 symbols appear, nothing else")
        #expect(firstSymbols.count == 32)
        #expect(lastSymbols.count == 32)
        // 16,000 symbols: 500 expected per symbol, standard deviation ≈ 22. Loose sanity bounds.
        for (symbol, count) in counts {
            #expect((300...700).contains(count), "symbol \(symbol) appeared \(count) times")
        }
    }
}
