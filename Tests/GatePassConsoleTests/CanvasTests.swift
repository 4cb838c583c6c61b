import Testing
@testable import GatePassConsole

@Suite struct CanvasTests {
    @Test func textIsClippedAndControlCharactersBecomeSpaces() {
        var canvas = Canvas(width: 10, height: 2)
        #expect(canvas.put("hello\u{1B}[31mworld", x: 1, y: 0) == 10)
        #expect(canvas.line(0) == " hello [31")
        canvas.put("ab", x: 8, y: 1, style: .selected)
        #expect(canvas.line(1) == "        ab" && canvas[8, 1].style == .selected)
        canvas.put("never", x: 0, y: 5)
        #expect(canvas.text == " hello [31\n        ab")
    }
}
