import CursesTerminal
import GatePassConsole
import Testing

/// Key codes as `<ncursesw/curses.h>` defines them (octal there), pinned here on purpose.
private enum CursesKeyCode {
    static let down: UInt32 = 0o402, up: UInt32 = 0o403, left: UInt32 = 0o404, right: UInt32 = 0o405
    static let home: UInt32 = 0o406, backspace: UInt32 = 0o407, delete: UInt32 = 0o512
    static let pageDown: UInt32 = 0o522, pageUp: UInt32 = 0o523, enter: UInt32 = 0o527
    static let backTab: UInt32 = 0o541, end: UInt32 = 0o550, resize: UInt32 = 0o632
    static let function1: UInt32 = 0o411
}

@Suite struct KeyTranslationTests {
    @Test(arguments: [
        (CursesKeyCode.up, Key.up), (CursesKeyCode.down, .down), (CursesKeyCode.left, .left),
        (CursesKeyCode.right, .right), (CursesKeyCode.home, .home), (CursesKeyCode.end, .end),
        (CursesKeyCode.pageUp, .pageUp), (CursesKeyCode.pageDown, .pageDown),
        (CursesKeyCode.backspace, .backspace), (CursesKeyCode.delete, .delete),
        (CursesKeyCode.backTab, .backTab), (CursesKeyCode.enter, .enter), (CursesKeyCode.resize, .resize),
    ])
    func functionKeys(code: UInt32, expected: Key) {
        #expect(KeyTranslation.key(isKeyCode: true, value: code) == expected)
    }

    @Test func unknownFunctionKeysAreIgnored() {
        #expect(KeyTranslation.key(isKeyCode: true, value: CursesKeyCode.function1) == nil)
    }

    @Test(arguments: [
        (UInt32(10), Key.enter), (13, .enter), (27, .escape), (9, .tab), (127, .backspace), (8, .backspace),
    ])
    func controlCharactersWithNames(value: UInt32, expected: Key) {
        #expect(KeyTranslation.key(isKeyCode: false, value: value) == expected)
    }

    @Test func controlLetters() {
        #expect(KeyTranslation.key(isKeyCode: false, value: 3) == .control("c"))
        #expect(KeyTranslation.key(isKeyCode: false, value: 1) == .control("a"))
        #expect(KeyTranslation.key(isKeyCode: false, value: 26) == .control("z"))
        #expect(KeyTranslation.key(isKeyCode: false, value: 12) == .control("l"))
    }

    @Test func otherControlCharactersAreIgnored() {
        for value: UInt32 in [0, 28, 29, 30, 31, 0x80, 0x9F] {
            #expect(KeyTranslation.key(isKeyCode: false, value: value) == nil)
        }
    }

    @Test func printableCharacters() {
        #expect(KeyTranslation.key(isKeyCode: false, value: 0x61) == .character("a"))
        #expect(KeyTranslation.key(isKeyCode: false, value: 0x20) == .character(" "))
        #expect(KeyTranslation.key(isKeyCode: false, value: 0x3F) == .character("?"))
        #expect(KeyTranslation.key(isKeyCode: false, value: 0xE9) == .character("é"))
        #expect(KeyTranslation.key(isKeyCode: false, value: 0x5C71) == .character("山"))
        #expect(KeyTranslation.key(isKeyCode: false, value: 0x1F600) == .character("😀"))
    }

    @Test func invalidScalarsAreIgnored() {
        #expect(KeyTranslation.key(isKeyCode: false, value: 0xD800) == nil)
        #expect(KeyTranslation.key(isKeyCode: false, value: 0x110000) == nil)
    }

    /// A key code and a character can share a value: the flag decides.
    @Test func keyCodeFlagDecides() {
        #expect(KeyTranslation.key(isKeyCode: false, value: CursesKeyCode.up) == .character(Character(Unicode.Scalar(CursesKeyCode.up)!)))
    }
}
