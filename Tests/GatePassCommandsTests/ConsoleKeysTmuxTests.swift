import Foundation
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// The console reads keys as a terminal sends them: the real binary in tmux with
/// `TERM=xterm-256color` (whose terminfo entry names other sequences than tmux sends), bytes
/// written to the pane exactly as given.
@Suite(.serialized) struct ConsoleKeysTmuxTests {
    typealias Run = ConsoleTabsTmuxTests.Run

    /// Writes `bytes` to the console's terminal as they are (`send-keys -H`), with no key names
    /// for tmux to translate.
    static func send(_ run: Run, _ bytes: String) throws {
        try run.tmux.run(["send-keys", "-t", "console", "-H"] + bytes.utf8.map { String(format: "%02x", $0) })
    }

    /// The demo's visitors awaiting approval, newest request first (the list's order).
    static let newest = "Victor Stan", oldest = "Elena Radu"

    /// Which visitor the list has selected: Enter opens it, its title names it, Esc goes back.
    static func selectedVisitor(_ run: Run) throws -> String? {
        try run.tmux.keys("Enter")
        guard try run.waitFor("— awaiting approval") else { return nil }
        let title = try run.lines().first { $0.contains("— awaiting approval") } ?? ""
        try run.tmux.keys("Escape")
        #expect(try run.waitForAbsence("— awaiting approval"), "Esc goes back to the list")
        #expect(try run.waitFor("Awaiting approval"))
        return [newest, oldest].first { title.contains($0) }
    }

    static func awaitingCount(_ run: Run) throws -> Int {
        try run.count("SELECT COUNT(*) FROM visitors WHERE status = ?", "AWAITING_APPROVAL")
    }

    /// Sequences no key of the console uses, with letters and digits in them that would
    /// switch tabs (`2`, `3`), answer a prompt (`a`, Enter) or quit, were they read as keys.
    static let unknownSequences = [
        "\u{1B}[1;2a", "\u{1B}[99;97~", "\u{1B}[200~", "\u{1B}[?1;2c", "\u{1B}]0;3\u{07}", "\u{1B}[3;2a",
        "\u{1B}[201~", "\u{1B}O2q", "\u{1B}[<0;2;3M", "\u{1B}P2$q\u{1B}\\",
    ]

    /// Unknown sequences on the approvals list and in a visitor's detail are consumed whole:
    /// no tab switches, no prompt opens, nothing is approved; then Home, End, PgUp, PgDn and
    /// the arrows work in each encoding terminals send.
    @Test func unknownSequencesDoNothingAndNavigationKeysWorkInEveryEncoding() throws {
        try ConsoleTabsTmuxTests().withConsole(environment: "TERM=xterm-256color") { run in
            try run.logIn("owner@demo.gatepass")
            #expect(try run.waitUntil { $0.contains(Self.newest) && $0.contains(Self.oldest) })
            #expect(try Self.awaitingCount(run) == 2)

            // On the list. `?` after the sequences: when its help shows, all of them were read.
            for sequence in Self.unknownSequences { try Self.send(run, sequence) }
            // One sequence in two writes, as a slow link delivers it.
            try Self.send(run, "\u{1B}[1;")
            try Self.send(run, "3a")
            try run.tmux.keys("?")
            #expect(try run.waitFor("Keys of "))
            let screen = try run.tmux.screen()
            #expect(screen.contains("Keys of Approvals"), "still on Approvals: \(screen)")
            try run.tmux.keys("x")
            #expect(try run.waitForAbsence("Keys of "))
            #expect(try Self.selectedVisitor(run) == Self.newest, "the selection did not move")

            // In the detail, where `a` opens the approval and Enter sends it: an 8-bit CSI
            // (U+009B) sequence ending in `a`, then Enter, then the 7-bit sequences.
            try run.tmux.keys("Enter")
            #expect(try run.waitFor("\(Self.newest) — awaiting approval"))
            try Self.send(run, "\u{9B}1;2a\r")
            for sequence in Self.unknownSequences { try Self.send(run, sequence) }
            try run.tmux.keys("?")
            #expect(try run.waitFor("Keys of "))
            let help = try run.tmux.screen()
            #expect(help.contains("Keys of Visitor") && help.contains("approve, with an optional note"),
                    "still in the detail with no prompt open: \(help)")
            try run.tmux.keys("x")
            #expect(try run.waitForAbsence("Keys of "))
            #expect(!(try run.tmux.screen().contains("Note (optional)")), "no approve or reject prompt")
            #expect(try Self.awaitingCount(run) == 2, "nothing was approved or rejected")
            try run.tmux.keys("Escape")
            #expect(try run.waitForAbsence("— awaiting approval"))

            // Home and End, PgUp and PgDn, the arrows: each encoding terminals send.
            let moves: [(sequence: String, selects: String)] = [
                ("\u{1B}[4~", Self.oldest), ("\u{1B}[1~", Self.newest),   // VT220 / tmux
                ("\u{1B}[F", Self.oldest), ("\u{1B}[H", Self.newest),     // xterm, normal cursor mode
                ("\u{1B}OF", Self.oldest), ("\u{1B}OH", Self.newest),     // xterm, application cursor mode
                ("\u{1B}[8~", Self.oldest), ("\u{1B}[7~", Self.newest),   // rxvt
                ("\u{1B}[6~", Self.oldest), ("\u{1B}[5~", Self.newest),   // PgDn, PgUp
                ("\u{1B}[B", Self.oldest), ("\u{1B}OA", Self.newest),     // Down, Up
                ("\u{1B}OB", Self.oldest), ("\u{1B}[1;5A", Self.newest),  // Down, Ctrl-Up
            ]
            for move in moves {
                try Self.send(run, move.sequence)
                #expect(try Self.selectedVisitor(run) == move.selects, "\(move.sequence.debugDescription)")
            }
            #expect(try Self.awaitingCount(run) == 2)
            try run.tmux.keys("C-c")
            #expect(run.exitStatus() == "EXIT=0\n")
        }
    }
}
