import GatePassCore
import Testing
@testable import GatePassConsole

@Suite struct CanvasTests {
    @Test func textIsClippedAndControlCharactersAreSpelledOut() {
        var canvas = Canvas(width: 10, height: 2)
        #expect(canvas.put("hello\u{1B}[31mworld", x: 1, y: 0) == 10)
        #expect(canvas.line(0) == " hello\\x1b")
        canvas.put("ab", x: 8, y: 1, style: .selected)
        #expect(canvas.line(1) == "        ab" && canvas[8, 1].style == .selected)
        canvas.put("never", x: 0, y: 5)
        #expect(canvas.text == " hello\\x1b\n        ab")
    }

    /// Whatever a screen draws, no cell holds a character a terminal would act on or hide.
    @Test func noCellHoldsAControlOrInvisibleCharacter() {
        var canvas = Canvas(width: 80, height: 1)
        canvas.put("x\r\u{1B}[2KADMITTED \u{9B}1m\u{202E}DEINED\u{2066}\u{200B}\u{FEFF}\u{2028}\u{7F}", x: 0, y: 0)
        #expect(canvas.line(0) == "x\\r\\x1b[2KADMITTED <U+009B>1m<U+202E>DEINED<U+2066><U+200B><U+FEFF><U+2028>\\x7f")
        #expect(!canvas.cells.contains { $0.character.unicodeScalars.contains(where: TerminalText.needsSpelling) })
    }
}
