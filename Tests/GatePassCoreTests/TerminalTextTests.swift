import Testing
@testable import GatePassCore

@Suite("Terminal text")
struct TerminalTextTests {
    @Test(arguments: [
        ("\u{1B}[2K", "\\x1b[2K"), ("a\rb", "a\\rb"), ("a\nb", "a\\nb"), ("a\tb", "a\\tb"), ("\u{0}", "\\x00"),
        ("\u{7}", "\\x07"), ("\u{7F}", "\\x7f"), ("\u{9B}31m", "<U+009B>31m"), ("\u{85}", "<U+0085>"),
        ("\u{202A}\u{202B}\u{202C}\u{202D}\u{202E}", "<U+202A><U+202B><U+202C><U+202D><U+202E>"),
        ("\u{2066}\u{2067}\u{2068}\u{2069}", "<U+2066><U+2067><U+2068><U+2069>"),
        ("\u{200E}\u{200F}\u{061C}", "<U+200E><U+200F><U+061C>"),
        ("a\u{200B}b\u{200C}c\u{200D}d\u{2060}e", "a<U+200B>b<U+200C>c<U+200D>d<U+2060>e"),
        ("\u{FEFF}x", "<U+FEFF>x"), ("a\u{2028}b\u{2029}", "a<U+2028>b<U+2029>"),
        ("\r\n", "\\r\\n"),
    ])
    func controlsAndInvisiblesAreSpelledOut(_ input: String, _ expected: String) {
        #expect(TerminalText.visible(input) == expected)
    }

    @Test(arguments: ["Ana Pop", "李小龙", "Zoë Ørsted", "e\u{301}", "🙂 ok", "a\\x1b", "Müller-Lüdenscheidt"])
    func ordinaryTextIsKept(_ text: String) {
        #expect(TerminalText.visible(text) == text)
    }

    @Test func theResultHasNothingLeftToSpellAndIsStable() {
        var everything = ""
        for value in UInt32(0)...0x2100 { if let scalar = Unicode.Scalar(value) { everything.unicodeScalars.append(scalar) } }
        everything += "\u{FEFF}\u{E0001}\u{FFF9}"
        let visible = TerminalText.visible(everything)
        #expect(!visible.unicodeScalars.contains(where: TerminalText.needsSpelling))
        #expect(TerminalText.visible(visible) == visible)
    }

    /// No scanned text may make a DENIED line look like ADMITTED: a carriage return, an
    /// erase-line sequence and a right-to-left override are shown, not obeyed.
    @Test func aHostileCodeCannotDisguiseADenial() {
        let hostile = "x\r\u{1B}[2KADMITTED  Ana\u{202E}DEINED"
        let line = GateDecision.refused(.notFound, code: hostile).line
        #expect(line == "DENIED  x\\r\\x1b[2KADMITTED  Ana<U+202E>DEINED — unknown pass")
        #expect(line.hasPrefix("DENIED  "))
        #expect(!line.unicodeScalars.contains(where: TerminalText.needsSpelling))
    }

    @Test func namesAndNotesInADecisionAreShownVisibly() {
        var decision = GateDecision(outcome: .denied, code: "GP1:ABCDEFGH", visitorName: "Eve\u{1B}[32m",
                                    shortId: "ABCDEFGH", reason: "an approver rejected the visit: no\u{2066}")
        #expect(decision.line == "DENIED  Eve\\x1b[32m (ABCDEFGH) — an approver rejected the visit: no<U+2066>")
        decision.outcome = .admitted
        #expect(decision.line.hasPrefix("ADMITTED  Eve\\x1b[32m"))
    }
}
