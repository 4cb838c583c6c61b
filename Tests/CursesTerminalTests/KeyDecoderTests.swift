import CursesTerminal
import GatePassConsole
import GatePassCore
import Testing

/// `KEY_RESIZE` as `<ncursesw/curses.h>` defines it (0632), pinned here on purpose.
private let resizeKeyCode: UInt32 = 0o632

/// What a terminal sends for each key, in every encoding the decoder must know.
private let knownSequences: [(sent: String, key: Key)] = [
    ("\u{1B}[A", .up), ("\u{1B}OA", .up), ("\u{1B}[B", .down), ("\u{1B}OB", .down),
    ("\u{1B}[C", .right), ("\u{1B}OC", .right), ("\u{1B}[D", .left), ("\u{1B}OD", .left),
    ("\u{1B}[1~", .home), ("\u{1B}[H", .home), ("\u{1B}OH", .home), ("\u{1B}[7~", .home),
    ("\u{1B}[4~", .end), ("\u{1B}[F", .end), ("\u{1B}OF", .end), ("\u{1B}[8~", .end),
    ("\u{1B}[3~", .delete), ("\u{1B}[5~", .pageUp), ("\u{1B}[6~", .pageDown),
    ("\u{1B}[Z", .backTab),
    // With xterm's modifier parameter (2 Shift … 8 Ctrl-Alt-Shift), which screens do not tell apart.
    ("\u{1B}[1;5A", .up), ("\u{1B}[1;2B", .down), ("\u{1B}[1;3C", .right), ("\u{1B}[1;8D", .left),
    ("\u{1B}[1;5H", .home), ("\u{1B}[1;2F", .end), ("\u{1B}[3;5~", .delete), ("\u{1B}[5;3~", .pageUp),
    ("\u{1B}[6;2~", .pageDown), ("\u{1B}[1;2Z", .backTab), ("\u{1B}O5A", .up), ("\u{1B}O1;5B", .down),
    // The 8-bit introducers (C1 CSI and SS3).
    ("\u{9B}A", .up), ("\u{9B}1;5D", .left), ("\u{9B}3~", .delete), ("\u{8F}H", .home),
]

/// Sequences that are no key the console uses; each must be consumed whole.
private let unknownSequences: [String] = [
    "\u{1B}[200~", "\u{1B}[201~",                       // bracketed paste start and end
    "\u{1B}[999z", "\u{1B}[?1;2c", "\u{1B}[>0;276;0c",   // unknown final, device attributes
    "\u{1B}[1;2a", "\u{1B}[99;97~", "\u{1B}[2~", "\u{1B}[2;5~", "\u{1B}[15~", "\u{1B}[24;2~",
    "\u{1B}[1;2P", "\u{1B}OP", "\u{1B}OS", "\u{1B}Op", "\u{1B}OM",   // function keys, keypad in application mode
    "\u{1B}[97;5u", "\u{1B}[27;5;13~", "\u{1B}[1:2;5A",   // CSI u, modifyOtherKeys, sub-parameters
    "\u{1B}[2A", "\u{1B}[12;40R", "\u{1B}[E", "\u{1B}[I", "\u{1B}[O",   // counts, cursor report, keypad 5, focus
    "\u{1B}[<0;12;5M", "\u{1B}[<0;12;5m", "\u{1B}[M !!", "\u{1B}[M1a2",  // SGR and X10 mouse reports
    "\u{1B}[[A", "\u{1B}[[E",                            // the Linux console's F1, F5
    "\u{1B}]0;title\u{07}", "\u{1B}]0;title\u{1B}\\", "\u{1B}]11;rgb:0000/0000/0000\u{07}",
    "\u{1B}P1$r0m\u{1B}\\", "\u{1B}_apc 1 q\u{1B}\\", "\u{1B}^pm a\u{1B}\\", "\u{1B}Xsos 2\u{1B}\\",
    "\u{1B}a", "\u{1B}1", "\u{1B}q", "\u{1B}\r", "\u{1B}\u{7F}", "\u{1B}é", "\u{1B}(B", "\u{1B} F", "\u{1B}#8",
    "\u{1B}[1$A", "\u{1B}[1!2A", "\u{1B}[1é2A", "\u{1B}[1;2\r3a",   // malformed, with a control inside
    "\u{1B}[" + String(repeating: "1;", count: 40) + "5A",     // longer than any key
    "\u{9B}1;2a", "\u{9B}200~", "\u{9D}0;title\u{9C}", "\u{90}q\u{1B}\\", "\u{8F}P",
]

private func feedAll(_ decoder: inout KeyDecoder, _ pieces: [String]) -> [Key] {
    pieces.flatMap { decoder.feed($0) }
}

@Suite struct KeyDecoderTests {
    @Test(arguments: knownSequences.indices)
    func knownSequencesAreTheirKey(index: Int) {
        let (sent, key) = knownSequences[index]
        var decoder = KeyDecoder()
        #expect(decoder.feed(sent) == [key], "\(sent.debugDescription)")
        #expect(decoder.pending == .nothing)
    }

    // By index: the sequences themselves would act on the terminal showing the test log.
    @Test(arguments: unknownSequences.indices)
    func unknownSequencesAreConsumedWhole(index: Int) {
        let sent = unknownSequences[index]
        var decoder = KeyDecoder()
        #expect(decoder.feed(sent) == [], "\(sent.debugDescription) gave keys")
        #expect(decoder.pending == .nothing, "\(sent.debugDescription) left the decoder waiting")
        // Nothing of it is left over: the next key is read as itself.
        #expect(decoder.feed("x") == [.character("x")], "\(sent.debugDescription)")
    }

    /// A sequence split across reads, at every point and one character at a time, decodes as
    /// if it came at once (the driver's wait did not run out between the pieces).
    @Test func sequencesSplitAcrossReadsDecodeTheSame() {
        let all = knownSequences.map { ($0.sent, [$0.key]) } + unknownSequences.map { ($0, [Key]()) }
        for (sent, expected) in all {
            let characters = sent.map(String.init)
            for split in 1..<characters.count {
                var decoder = KeyDecoder()
                let first = decoder.feed(characters[..<split].joined())
                #expect(first == [], "\(sent.debugDescription) split at \(split) gave \(first) early")
                #expect(decoder.pending != .nothing, "\(sent.debugDescription) split at \(split)")
                #expect(first + decoder.feed(characters[split...].joined()) == expected, "\(sent.debugDescription) split at \(split)")
            }
            var decoder = KeyDecoder()
            #expect(feedAll(&decoder, characters) == expected, "\(sent.debugDescription) one character at a time")
        }
    }

    /// Back to back, with typed text between: each sequence is its key or nothing, and the
    /// text is the text.
    @Test func sequencesAndTextInOneRead() {
        var decoder = KeyDecoder()
        let sent = "a\u{1B}[1;2a\u{1B}[Bb\u{1B}[99;97~\u{1B}]0;x\u{07}\u{1B}OH1\u{1B}[200~c"
        #expect(decoder.feed(sent) == [.character("a"), .down, .character("b"), .home, .character("1"), .character("c")])
    }

    @Test func aLoneEscapeIsTheEscKeyOnceNothingFollows() {
        var decoder = KeyDecoder()
        #expect(decoder.feed("\u{1B}") == [])
        #expect(decoder.pending == .escape)
        #expect(decoder.inputPaused() == [.escape])
        #expect(decoder.pending == .nothing)
        #expect(decoder.inputPaused() == [], "a second pause is nothing")
        #expect(decoder.feed("q") == [.character("q")])
    }

    @Test func twoEscapesAreTwoEscKeys() {
        var decoder = KeyDecoder()
        #expect(decoder.feed("\u{1B}\u{1B}") == [.escape])
        #expect(decoder.inputPaused() == [.escape])
    }

    /// A pause inside a sequence drops what came of it: nothing becomes a key.
    @Test func aPauseInsideASequenceDropsIt() {
        for partial in ["\u{1B}[", "\u{1B}[1;2", "\u{1B}O", "\u{1B}]0;title", "\u{1B}]0;title\u{1B}", "\u{1B}(", "\u{1B}[M!"] {
            var decoder = KeyDecoder()
            #expect(decoder.feed(partial) == [])
            #expect(decoder.pending == .sequence, "\(partial.debugDescription)")
            #expect(decoder.inputPaused() == [], "\(partial.debugDescription)")
            #expect(decoder.pending == .nothing)
            #expect(decoder.feed("x") == [.character("x")])
        }
    }

    @Test func escapeRestartsAndCancelEndsASequence() {
        var decoder = KeyDecoder()
        #expect(decoder.feed("\u{1B}[1;2\u{1B}[A") == [.up], "ESC starts a new sequence")
        #expect(decoder.feed("\u{1B}[1;2\u{18}x") == [.character("x")], "CAN cancels")
        #expect(decoder.feed("\u{1B}[1;2\u{1A}y") == [.character("y")], "SUB cancels")
        #expect(decoder.feed("\u{1B}]0;t\u{1B}[B") == [.down], "ESC other than ST ends a control string")
        #expect(decoder.feed("\u{1B}]0;t\u{18}z") == [.character("z")], "CAN ends a control string")
        #expect(decoder.feed("\u{1B}[1\r;5A") == [.up], "a control inside a sequence is no key and does not end it")
    }

    /// A resize is reported at once, and a sequence in progress goes on after it.
    @Test func aResizeInsideASequenceKeepsTheSequence() {
        var decoder = KeyDecoder()
        #expect(decoder.feed("\u{1B}[1;") == [])
        #expect(decoder.feed(.keyCode(resizeKeyCode)) == [.resize])
        #expect(decoder.pending == .sequence)
        #expect(decoder.feed("5A") == [.up])
        #expect(decoder.feed(.keyCode(0o411)) == [], "F1 as a curses code means nothing to screens")
    }

    @Test func charactersOutsideSequencesAreKeyTranslations() {
        var decoder = KeyDecoder()
        let typed: [Character] = ["a", "1", "?", "é", "山", "😀"]
        #expect(decoder.feed(String(typed)) == typed.map { Key.character($0) })
        #expect(decoder.feed("\r\n\t\u{7F}\u{08}") == [.enter, .enter, .tab, .backspace, .backspace])
        #expect(decoder.feed("\u{03}\u{15}") == [.control("c"), .control("u")])
        #expect(decoder.feed("\u{00}\u{1C}\u{85}\u{9C}") == [], "other C0 and C1 controls mean nothing")
    }

    /// Thousands of random control sequences, strings and escape sequences (a seeded stream,
    /// so a failure replays): none gives a key other than the cursor keys the decoder knows,
    /// and each is consumed whole, so the letter typed after it is that letter.
    @Test func randomSequencesNeverBecomeTypedKeys() {
        var random = SplitMix64(seed: 0x6761_7465)
        let cursorKeys: Set<Key> = [.up, .down, .left, .right, .home, .end, .pageUp, .pageDown, .delete, .backTab]
        for _ in 0..<5000 {
            var sent = "\u{1B}"
            switch random.next() % 4 {
            case 0, 1:
                sent += "["
                for _ in 0..<(random.next() % 8) { sent.unicodeScalars.append(Unicode.Scalar(UInt8(0x30 + random.next() % 16))) }
                for _ in 0..<(random.next() % 3) { sent.unicodeScalars.append(Unicode.Scalar(UInt8(0x20 + random.next() % 16))) }
                sent.unicodeScalars.append(Unicode.Scalar(UInt8(0x40 + random.next() % 63)))
                if sent == "\u{1B}[[" { sent += "A" }   // the Linux console's F-keys take one more
                if sent == "\u{1B}[M" { sent += " !!" }  // the X10 mouse report takes three
            case 2:
                sent += ["]", "P", "X", "^", "_"][Int(random.next() % 5)]
                for _ in 0..<(random.next() % 12) { sent.unicodeScalars.append(Unicode.Scalar(UInt8(0x20 + random.next() % 95))) }
                sent += random.next() % 2 == 0 ? "\u{07}" : "\u{1B}\\"
            default:
                // ESC and one character: an escape sequence (Alt with a key), not an introducer.
                let character = Unicode.Scalar(UInt8(0x30 + random.next() % 79))
                sent.unicodeScalars.append("[O]PX^_".unicodeScalars.contains(character) ? "a" : character)
            }
            var decoder = KeyDecoder()
            let keys = decoder.feed(sent)
            #expect(keys.allSatisfy { cursorKeys.contains($0) } && keys.count <= 1, "\(sent.debugDescription) gave \(keys)")
            #expect(decoder.feed("x") == [.character("x")], "\(sent.debugDescription) was not consumed whole")
        }
    }
}
