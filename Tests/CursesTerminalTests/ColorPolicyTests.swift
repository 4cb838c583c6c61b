import CursesTerminal
import GatePassConsole
import Testing

@Suite struct ColorPolicyTests {
    @Test func colourWhenTheTerminalHasItAndNoColorIsUnset() {
        #expect(ColorPolicy.usesColor(environment: [:], terminalHasColors: true))
        #expect(ColorPolicy.usesColor(environment: ["TERM": "xterm-256color"], terminalHasColors: true))
    }

    @Test func noColourWithoutTerminalSupport() {
        #expect(!ColorPolicy.usesColor(environment: [:], terminalHasColors: false))
    }

    /// https://no-color.org: any non-empty value disables colour; an empty one does not.
    @Test(arguments: ["1", "0", "true", "yes", " "])
    func noColorWithAnyValueDisables(value: String) {
        #expect(!ColorPolicy.usesColor(environment: ["NO_COLOR": value], terminalHasColors: true))
    }

    @Test func emptyNoColorIsIgnored() {
        #expect(ColorPolicy.usesColor(environment: ["NO_COLOR": ""], terminalHasColors: true))
    }
}

@Suite struct CellAppearanceTests {
    @Test func rolesMapToDistinctPairsWithColour() {
        #expect(CellAppearance(.init(.normal), usesColor: true).colorPair == 0)
        let pairs = [Canvas.Style.Role.accent, .ok, .warning, .danger].map { CellAppearance(.init($0), usesColor: true).colorPair }
        #expect(Set(pairs).count == 4)
        #expect(!pairs.contains(0))
        for pair in pairs { #expect(ColorPalette.pairs.contains { $0.pair == pair }) }
    }

    @Test func paletteColours() {
        func foreground(_ role: Canvas.Style.Role) -> ColorPalette.TerminalColor? {
            let pair = ColorPalette.pair(for: role)
            return ColorPalette.pairs.first { $0.pair == pair }?.foreground
        }
        #expect(foreground(.accent) == .cyan)
        #expect(foreground(.ok) == .green)
        #expect(foreground(.warning) == .yellow)
        #expect(foreground(.danger) == .red)
        #expect(foreground(.normal) == nil)
        #expect(foreground(.muted) == nil)
    }

    @Test func withoutColourEveryRoleUsesTheDefaultPair() {
        for role in [Canvas.Style.Role.normal, .accent, .ok, .warning, .danger, .muted] {
            #expect(CellAppearance(.init(role), usesColor: false).colorPair == 0)
        }
    }

    @Test func attributesSurviveWithoutColour() {
        let appearance = CellAppearance(Canvas.Style(.danger, bold: true, reverse: true, underline: true), usesColor: false)
        #expect(appearance == CellAppearance(colorPair: 0, bold: true, dim: false, reverse: true, underline: true))
        #expect(CellAppearance(.selected, usesColor: false).reverse)
        #expect(CellAppearance(.title, usesColor: true) == CellAppearance(colorPair: ColorPalette.pair(for: .accent), bold: true))
    }

    @Test func aCodeIsBlackOnWhiteWithColourAndReversedWithout() {
        let code = Canvas.Style(.code)
        #expect(CellAppearance(code, usesColor: true) == CellAppearance(colorPair: ColorPalette.codePair.pair))
        #expect(ColorPalette.codePair.foreground == 0 && ColorPalette.codePair.background == 7, "COLOR_BLACK on COLOR_WHITE")
        #expect(!ColorPalette.pairs.contains { $0.pair == ColorPalette.codePair.pair })
        #expect(CellAppearance(code, usesColor: false) == CellAppearance(colorPair: 0, reverse: true))
    }

    @Test func mutedIsDimWithOrWithoutColour() {
        #expect(CellAppearance(.dim, usesColor: true).dim)
        #expect(CellAppearance(.dim, usesColor: false).dim)
        #expect(!CellAppearance(.plain, usesColor: true).dim)
    }
}

@Suite struct CellTextTests {
    @Test func plainAndWideCharacters() {
        #expect(CellText.scalars(of: "a") == [0x61])
        #expect(CellText.scalars(of: "山") == [0x5C71])
    }

    @Test func combiningMarksStayWithTheirBase() {
        #expect(CellText.scalars(of: "e\u{301}") == [0x65, 0x301])
    }

    @Test func tooManyCombiningMarksAreDropped() {
        let character = Character("a\u{301}\u{302}\u{303}\u{304}\u{305}\u{306}")
        #expect(CellText.scalars(of: character).count == CellText.maximumScalars)
        #expect(CellText.scalars(of: character).first == 0x61)
    }

    @Test func controlCharactersBecomeSpaces() {
        #expect(CellText.scalars(of: "\u{1B}") == [0x20])
        #expect(CellText.scalars(of: "\u{7F}") == [0x20])
        #expect(CellText.scalars(of: "\u{85}") == [0x20])
    }
}
