import Foundation
import Testing
@testable import GatePassCommands

/// The parser on its own, against a small declaration; then the shared option groups and how
/// usage errors reach the exit status.
@Suite struct CommandParserTests {
    static let note = Option<String>("--note", value: "TEXT", help: "A note.")
    static let count = Option<Int>("--count", value: "N", in: 1...10, help: "How many.")
    static let name = Option<String>("--name", value: "N", required: true, help: "A name.")
    static let json = Flag("--json", help: "JSON.")
    static let files = ListOption("--file", value: "FILE", help: "Files.")
    static let id = Argument<String>("ID", help: "The id.")
    static let extra = Argument<String>("EXTRA", optional: true, help: "More.")
    static let configuration = CommandConfiguration(
        name: "tool do", overview: "Does it.", arguments: [id.spec, extra.spec],
        options: [note, count, name, json, files])

    func parse(_ arguments: String...) throws(UsageError) -> ParsedArguments? {
        switch try CommandParser.parse(arguments, for: Self.configuration) {
        case .help: nil
        case .parsed(let parsed): parsed
        }
    }

    /// The usage error of parsing `arguments` and reading every value (a value is checked when read).
    func mistake(_ arguments: String...) -> String? {
        do {
            if case .parsed(let parsed) = try CommandParser.parse(arguments, for: Self.configuration) {
                _ = try parsed.value(Self.count)
            }
            return nil
        } catch {
            return error.message
        }
    }

    @Test func readsOptionsFlagsAndPositionalsInAnyOrder() throws {
        let parsed = try #require(try parse("--json", "A1", "--name", "Ana", "--note=hello", "B2", "--count", "3"))
        #expect(try parsed.value(Self.id) == "A1")
        #expect(try parsed.value(Self.extra) == "B2")
        #expect(try parsed.value(Self.name) == "Ana")
        #expect(try parsed.value(Self.note) == "hello")
        #expect(try parsed.value(Self.count) == 3)
        #expect(parsed.has(Self.json))
        #expect(!parsed.has(Self.files))
    }

    @Test func doubleDashEndsOptions() throws {
        let parsed = try #require(try parse("--name", "N", "--", "--json", "-h"))
        #expect(try parsed.value(Self.id) == "--json")
        #expect(try parsed.value(Self.extra) == "-h")
        #expect(!parsed.has(Self.json))
    }

    @Test func aValueMayStartWithADash() throws {
        let parsed = try #require(try parse("X", "--name", "--json", "--note", "-x", "--json"))
        #expect(try parsed.value(Self.name) == "--json")
        #expect(try parsed.value(Self.note) == "-x")
        #expect(parsed.has(Self.json))
        #expect(mistake("X", "--name", "N", "--count", "-1") == "--count must be a whole number from 1 to 10")
    }

    @Test func minusHAsAValueIsTheValue() throws {
        let parsed = try #require(try parse("X", "--name", "N", "--note", "-h"))
        #expect(try parsed.value(Self.note) == "-h")
        #expect(try parse("X", "--name", "N", "--note=--help")?.value(Self.note) == "--help")
    }

    @Test func minusHAsAnOptionIsHelpAndWinsOverMistakes() throws {
        #expect(try parse("-h") == nil)
        #expect(try parse("X", "--help") == nil)
        // Help is asked for even on a line with mistakes: the help says how to fix them.
        #expect(try parse("--bogus", "--count", "99", "-h") == nil)
        // A positional that is a lone dash or a negative number is not an option.
        #expect(try parse("-", "-5", "--name", "N")?.value(Self.extra) == "-5")
    }

    @Test func unknownOption() {
        #expect(mistake("X", "--name", "N", "--bogus") == "unknown option --bogus")
        #expect(mistake("X", "--name", "N", "--bogus=1") == "unknown option --bogus")
    }

    @Test func missingValue() {
        #expect(mistake("X", "--name") == "--name needs a value")
        #expect(mistake("X", "--name", "N", "--file") == "--file needs at least one FILE")
        #expect(mistake("X", "--name", "N", "--file", "--json") == "--file needs at least one FILE")
    }

    @Test func anAliasIsTheSameOption() throws {
        let database = Option<String>("--db", aliases: ["--database"], value: "PATH", help: "The database.")
        let configuration = CommandConfiguration(name: "tool db", overview: "Uses a database.", options: [database])
        for arguments in [["--db", "a.db"], ["--database", "a.db"], ["--database=a.db"]] {
            guard case .parsed(let parsed) = try CommandParser.parse(arguments, for: configuration) else {
                Issue.record("\(arguments) asked for help"); continue
            }
            #expect(try parsed.value(database) == "a.db", "\(arguments)")
        }
        #expect(throws: UsageError.self) { try CommandParser.parse(["--db", "a", "--database", "b"], for: configuration) }
        #expect(configuration.help.contains("--db, --database PATH  The database."), "\(configuration.help)")
        #expect(configuration.usage == "tool db [--db PATH]")
    }

    @Test func repeatedOptionIsAMistakeButAListAddsUp() throws {
        #expect(mistake("X", "--name", "N", "--note", "a", "--note", "b") == "--note was given more than once; give it once")
        #expect(mistake("X", "--name", "N", "--json", "--json") == "--json was given more than once; give it once")
        let parsed = try #require(try parse("X", "--name", "N", "--file", "a", "b", "--file=c", "--json", "--file", "d"))
        #expect(parsed.values(Self.files) == ["a", "b", "c", "d"])
        #expect(parsed.has(Self.json))
    }

    @Test func flagTakesNoValue() {
        #expect(mistake("X", "--name", "N", "--json=yes") == "--json takes no value")
    }

    @Test func missingAndUnexpectedArguments() {
        #expect(mistake("--name", "N") == "ID is required")
        #expect(mistake("X") == "--name is required")
        #expect(mistake("X", "Y", "Z", "--name", "N") == "unexpected argument Z")
    }

    @Test func helpIsRenderedFromTheDeclaration() {
        #expect(Self.configuration.help == """
            OVERVIEW: Does it.

            USAGE: tool do ID [EXTRA] [--note TEXT] [--count N] --name N [--json] [--file FILE…]

            ARGUMENTS:
              ID     The id.
              EXTRA  More.

            OPTIONS:
              --note TEXT   A note.
              --count N     How many.
              --name N      A name.
              --json        JSON.
              --file FILE…  Files.
              -h, --help    Show help information.

            """)
    }
}

/// `--device/--image/--dir/--video/--size/--fps`: one set of limits for scan, kiosk and console.
@Suite struct FrameSourceOptionsTests {
    static let configuration = CommandConfiguration(name: "t", overview: "T.", options: FrameSourceOptions.all)

    func choice(_ arguments: [String], required: Bool = true) throws(UsageError) -> FrameSourceOptions.Choice? {
        guard case .parsed(let parsed) = try CommandParser.parse(arguments, for: Self.configuration) else { return nil }
        return try FrameSourceOptions.choice(parsed, required: required)
    }

    func mistake(_ arguments: [String], required: Bool = true) -> String? {
        do {
            _ = try choice(arguments, required: required)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func theLimitsAreInclusive() throws {
        let camera = try choice(["--device", "/dev/video0", "--size", "4096x16", "--fps", "120"])
        guard case .camera(let configuration)? = camera else { Issue.record("not a camera: \(String(describing: camera))"); return }
        #expect(configuration.devicePath == "/dev/video0")
        #expect((configuration.width, configuration.height, configuration.framesPerSecond) == (4096, 16, 120))
        let defaults = try choice(["--device", "/dev/video0"])
        guard case .camera(let plain)? = defaults else { Issue.record("not a camera"); return }
        #expect((plain.width, plain.height, plain.framesPerSecond) == (640, 480, 30))
    }

    @Test(arguments: ["4097x480", "640x15", "640", "640x", "x480", "axb", "640x480x2"])
    func sizeOutsideTheLimitsIsAUsageError(size: String) {
        #expect(mistake(["--device", "/dev/video0", "--size", size])
                == "--size must be WIDTHxHEIGHT from 16x16 to 4096x4096, such as 640x480")
    }

    @Test(arguments: ["0", "121", "30.5", "fast"])
    func framesPerSecondOutsideTheLimitsIsAUsageError(fps: String) {
        #expect(mistake(["--device", "/dev/video0", "--fps", fps]) == "--fps must be a whole number from 1 to 120")
    }

    @Test func exactlyOneSource() throws {
        #expect(mistake([]) == "give one of --device DEV, --image FILE…, --dir DIR and --video FILE.y4m")
        #expect(try choice([], required: false) == nil)
        #expect(mistake(["--dir", "a", "--video", "b.y4m"], required: false)
                == "give only one of --device DEV, --image FILE…, --dir DIR and --video FILE.y4m")
        #expect(mistake(["--dir", "a", "--fps", "10"]) == "--size and --fps go with --device DEV; drop them or add --device")
        #expect(try choice(["--image", "a.png", "b.png", "--image", "c.png"]) == .images(["a.png", "b.png", "c.png"]))
    }
}

/// Usage mistakes found by the declarations and by `validate()` exit 2 before anything runs.
@Suite struct CommandValidationTests {
    @Test(arguments: [
        (["history", "--csv", "--json"], "choose one of --csv and --json"),
        (["history", "--limit", "0"], "--limit must be a whole number from 1 to 500"),
        (["scan", "--device", "/dev/video0", "--fps", "240"], "--fps must be a whole number from 1 to 120"),
        (["scan", "--device", "/dev/video0", "--size", "8192x8192"], "--size must be WIDTHxHEIGHT from 16x16 to 4096x4096, such as 640x480"),
        (["console", "--dir", "a", "--image", "b.png"], "give only one of --device DEV, --image FILE…, --dir DIR and --video FILE.y4m"),
        (["kiosk", "--dir", "a", "--cooldown", "-1"], "--cooldown must be a number of seconds from 0 to 3600"),
        (["outbox", "list", "7"], "unexpected argument 7; only retry takes an ID"),
        (["outbox", "drain", "--interval", "5"], "--interval goes with outbox watch"),
        (["push-test", "--db", "a", "--server", "b"], "choose one of --db and --server"),
        (["approve", "--note", "x"], "ID is required"),
        (["approve", "A", "B"], "unexpected argument B"),
    ])
    func validationErrorsExitTwo(arguments: [String], message: String) {
        let terminal = RecordingTerminal()
        #expect(GatePassCLI.main(["gatepass"] + arguments, terminal: terminal, environment: [:]) == 2)
        #expect(terminal.stdout.isEmpty)
        #expect(terminal.stderr == "error: \(message)\nRun 'gatepass --help' or 'gatepass <subcommand> --help' for usage.")
    }

    /// `-h` after `--` is an argument: here a short id, so the command runs (and, logged out, fails).
    @Test func helpAfterDoubleDashIsAnArgument() {
        let terminal = RecordingTerminal()
        let state = temporaryPath("state")
        defer { try? FileManager.default.removeItem(atPath: state) }
        #expect(GatePassCLI.main(["gatepass", "lookup", "--", "-h"], terminal: terminal,
                                 environment: ["GATEPASS_STATE_DIR": state]) == 1)
        #expect(!terminal.stdout.contains("OVERVIEW"))
    }
}
