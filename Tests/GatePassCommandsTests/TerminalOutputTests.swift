import Foundation
import GatePassClient
import GatePassCore
import GatePassScanner
import LoopbackHTTP
import QRCode
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// Records exactly the bytes `StandardStreams` would write: each call's text and a newline.
final class ByteRecordingTerminal: Terminal, @unchecked Sendable {
    private let lock = NSLock()
    private var outBytes: [UInt8] = []
    func out(_ text: String) { lock.withLock { outBytes += Array((text + "\n").utf8) } }
    func err(_ text: String) {}
    func readLine(prompt: String) -> String? { nil }
    var stdout: [UInt8] { lock.withLock { outBytes } }
}

/// What the CLI, the scanner and the kiosk print when the text came from outside (issue 9, item 3).
@Suite(.serialized) struct TerminalOutputTests {
    /// A scanned text built to pass a DENIED line off as ADMITTED: a carriage return and an
    /// erase-line sequence to wipe what came before, a right-to-left override, and the word.
    static let hostileCode = "x\r\u{1B}[2KADMITTED  Ana\u{202E}DEINED\u{200B}"

    static func noInterpretableCharacters(_ text: String) -> Bool {
        // Line breaks between lines are the terminal's own; inside a line nothing may act.
        !text.unicodeScalars.contains { $0 != "\n" && TerminalText.needsSpelling($0) }
    }

    @Test func theKioskShowsAHostileCodeAsADenialItCannotDisguise() throws {
        let gate = try KioskTests.Gate()
        try gate.loginKiosk("owner@demo.gatepass")
        let folder = try gate.folder("hostile", [Self.hostileCode])
        let core = try gate.core()
        _ = try core.ensureScannerToken(now: Date())
        let decoder = try QRDecoder()
        let read = Locked<[String]>([])
        let kiosk = KioskRunner(core: core, terminal: gate.terminal, clock: SystemWallClock(), options: .init(cooldown: 3, json: false),
                                notifier: SystemdNotifier(environment: [:])) { frame in
            let codes = try decoder.decode(frame).codes.map(\.text)
            read.withLock { $0 += codes }
            return codes
        }
        try kiosk.start()
        defer { kiosk.stop() }
        #expect(try kiosk.scan(ImageFileSource(directory: folder)) == 1)
        kiosk.settle(timeout: 0.5)
        #expect(read.withLock { $0 } == [Self.hostileCode], "zbar reads the hostile bytes back as they were written")
        #expect(gate.waitForLine("DENIED  x\\r\\x1b[2KADMITTED  Ana<U+202E>DEINED<U+200B> — not a Gate Pass code"))
        let lines = gate.terminal.stdout.components(separatedBy: "\n").filter { $0.contains("ADMITTED") }
        #expect(lines.count == 1 && lines.allSatisfy { $0.hasPrefix("DENIED  ") })
        #expect(Self.noInterpretableCharacters(gate.terminal.stdout))
    }

    @Test func scanPrintsAHostileCodeVisiblyAndItsJSONExactly() throws {
        try ScanFixtures.withFolder { folder in
            try ScanFixtures.write(ScanFixtures.pgm([Self.hostileCode]), "\(folder)/a.pgm")
            let text = RecordingTerminal()
            #expect(GatePassCLI.main(["gatepass", "scan", "--image", "\(folder)/a.pgm"], terminal: text) == 0)
            #expect(text.stdout == "x\\r\\x1b[2KADMITTED  Ana<U+202E>DEINED<U+200B>")
            // --json is data for programs: JSON's own escapes, the text exact once decoded.
            let json = RecordingTerminal()
            #expect(GatePassCLI.main(["gatepass", "scan", "--json", "--image", "\(folder)/a.pgm"], terminal: json) == 0)
            let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            #expect(object?["text"] as? String == Self.hostileCode)
        }
    }

    @Test func usageErrorsShowTheArgumentVisibly() {
        let (status, terminal) = run("history", "--bogus\u{1B}[2K\u{202E}")
        #expect(status == 2)
        #expect(terminal.stderr.hasPrefix("error: unknown option --bogus\\x1b[2K<U+202E>\n"))
        let unknown = run("sub\u{1B}]0;title\u{07}command")
        #expect(unknown.terminal.stderr.hasPrefix("error: unknown subcommand sub\\x1b]0;title\\x07command\n"))
    }

    @Test func clientCommandsShowNamesCodesAndServerMessagesVisibly() throws {
        try withClientSetup { setup in
            let owner = try setup.token("owner@demo.gatepass")
            let http = LoopbackHTTPClient(port: setup.server.port)
            let created = try http.send("POST", "/api/visitors", token: owner,
                                        json: ["name": "Eve\u{202E}nimdA", "company": "Evil\u{200B}Corp", "requiresApproval": true])
            #expect(created.status == 201)
            let shortId = try #require(created.json?["shortId"] as? String)
            #expect(setup.gatepass("login", "--server", setup.url, "--email", "owner@demo.gatepass",
                                   "--otp", try setup.code("owner@demo.gatepass")).status == 0)
            #expect(setup.gatepass("checkin", "GP1:\(shortId)", "--confirm-approval").status == 0)
            let approvals = setup.gatepass("approvals")
            #expect(approvals.out.contains("Eve<U+202E>nimdA  Evil<U+200B>Corp"), "\(approvals.out)")
            #expect(Self.noInterpretableCharacters(approvals.out))
            _ = setup.gatepass("checkin", Self.hostileCode)
            let history = setup.gatepass("history")
            // The history names the visitor (made visible) and never prints the scanned text.
            #expect(history.out.contains("Eve<U+202E>nimdA") && history.out.contains("INVALID  unknown pass"), "\(history.out)")
            #expect(!history.out.contains("ADMITTED"), "\(history.out)")
            #expect(Self.noInterpretableCharacters(history.out) && Self.noInterpretableCharacters(history.err))
            let lookup = setup.gatepass("lookup", "nobody\u{202E}")
            #expect(lookup.out == "no visitor matches nobody<U+202E>")
            // The server's 400 quotes nothing here, but it reaches the terminal as a sentence.
            let refused = setup.gatepass("lookup", "nobody\u{1B}[31m")
            #expect(refused.status == 1 && refused.err.contains("query must not contain control characters"), "\(refused.err)")
        }
    }

    /// The CLI's CSV is the API's, byte for byte, hostile cells included.
    @Test func historyCSVIsByteIdenticalToTheAPI() throws {
        try withClientSetup { setup in
            #expect(setup.gatepass("login", "--server", setup.url, "--email", "owner@demo.gatepass",
                                   "--otp", try setup.code("owner@demo.gatepass")).status == 0)
            for text in [Self.hostileCode, "=cmd|'/C calc'!A0", "line\r\nbreak", "a\u{2028}b", "\u{85}nel", "@x,\"y\""] {
                _ = setup.gatepass("checkin", text)
            }
            let terminal = ByteRecordingTerminal()
            #expect(GatePassCLI.main(["gatepass", "history", "--csv"], terminal: terminal, environment: setup.environment) == 0)
            let owner = try setup.token("owner@demo.gatepass")
            let api = try LoopbackHTTPClient(port: setup.server.port).get("/api/admin/scan-history.csv", token: owner)
            #expect(api.status == 200)
            #expect(String(decoding: api.body, as: UTF8.self).hasPrefix(ScanHistoryCSV.header)
                    && ScanHistoryCSV.header.hasSuffix(",visitorName,company,gateName,guardName,scannedAtLocal\r\n"))
            let firstDifference = zip(terminal.stdout, api.body).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(terminal.stdout.count, api.body.count)
            #expect(terminal.stdout == api.body, """
                \(terminal.stdout.count) vs \(api.body.count) bytes, first difference at \(firstDifference): \
                \(String(decoding: terminal.stdout.dropFirst(max(0, firstDifference - 40)).prefix(80), as: UTF8.self).debugDescription) vs \
                \(String(decoding: api.body.dropFirst(max(0, firstDifference - 40)).prefix(80), as: UTF8.self).debugDescription)
                """)
            #expect(String(decoding: api.body, as: UTF8.self).contains("\"'\u{85}nel\"") == false, "NEL is not a formula start")
            #expect(String(decoding: api.body, as: UTF8.self).contains(",\"\u{85}nel\","))
        }
    }

    // MARK: - Fixture

    struct ClientSetup {
        var server: GatePassServer
        var environment: [String: String]
        var url: String { "http://127.0.0.1:\(server.port)" }

        func gatepass(_ arguments: String...) -> (status: Int32, out: String, err: String) {
            let terminal = RecordingTerminal()
            let status = GatePassCLI.main(["gatepass"] + arguments, terminal: terminal, environment: environment)
            return (status, terminal.stdout, terminal.stderr)
        }

        func code(_ email: String) throws -> String {
            _ = try LoopbackHTTPClient(port: server.port).send("POST", "/api/auth/send-otp", json: ["email": email])
            return try #require(try LoopbackHTTPClient(port: server.port).get("/api/auth/dev-peek-otp?email=\(email)")
                .json?["otp"] as? String)
        }

        func token(_ email: String) throws -> String {
            let otp = try code(email)
            return try #require(try LoopbackHTTPClient(port: server.port).send("POST", "/api/auth/verify-otp",
                                                                                json: ["email": email, "otp": otp])
                .json?["token"] as? String)
        }
    }

    final class Log: LogSink { func log(_ line: String) {} }

    func withClientSetup(_ body: (ClientSetup) throws -> Void) throws {
        let directory = temporaryPath("terminal-output")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ServerConfiguration()
        configuration.database = directory + "/server.db"
        configuration.port = 0
        configuration.threads = 4
        configuration.otpResendIntervalSeconds = 0
        let server = try GatePassServer(configuration: configuration, devMode: true, logSink: Log())
        defer { server.stop() }
        try DemoData.seed(store: server.store, now: Date(), timeZone: .current)
        try body(ClientSetup(server: server, environment: ["GATEPASS_STATE_DIR": directory + "/state",
                                                           "GATEPASS_CONNECT_TIMEOUT": "1"]))
    }
}
