import Foundation
import GatePassClient
import GatePassCore
import Testing
@testable import GatePassConsole
@testable import GatePassConsoleServices

@Suite struct LoginScreenTests {
    static let ana = ConsoleUser(name: "Ana Pop", email: "ana@example.com", role: .approver, server: "http://gate.test")

    /// A login screen with the e-mail typed and the code asked for.
    func withCodeStep(_ body: (LoginScreen, FakeConsoleServices) throws -> Void) rethrows {
        let services = FakeConsoleServices()
        let screen = LoginScreen(services: services)
        Fixtures.type("Ana@Example.com", into: screen)
        #expect(screen.handle(.enter) == .redraw)
        #expect(screen.step == .code)
        try body(screen, services)
    }

    @Test func startsOnTheEmailWithTheSavedServerAndCapturesEveryKey() {
        let services = FakeConsoleServices()
        let screen = LoginScreen(services: services)
        #expect(screen.isCapturingText)
        #expect(screen.focus == .email)
        Fixtures.type("q?1", into: screen)
        #expect(screen.emailText == "q?1")
        let canvas = Fixtures.render(screen)
        #expect(canvas.line(0) == "Gate Pass — log in")
        #expect(canvas.line(2) == "  Server   http://gate.test")
        #expect(canvas.line(3) == "> Email    q?1_")
        #expect(canvas[11, 3].style.underline && !canvas[11, 2].style.underline)
    }

    @Test func withoutAKnownServerTheServerFieldHasTheFocus() {
        let services = FakeConsoleServices()
        services.server = ""
        #expect(LoginScreen(services: services).focus == .server)
    }

    @Test func tabAndArrowsMoveBetweenFieldsAndEditTheFocusedOne() {
        let services = FakeConsoleServices()
        let screen = LoginScreen(services: services)
        #expect(screen.handle(.tab) == .redraw && screen.focus == .server)
        #expect(screen.handle(.control("u")) == .redraw && screen.serverText.isEmpty)
        #expect(screen.handle(.control("u")) == .none)
        Fixtures.type("http://other:9/", into: screen)
        #expect(screen.handle(.down) == .redraw && screen.focus == .email)
        #expect(screen.handle(.up) == .redraw && screen.focus == .server)
        #expect(screen.handle(.backTab) == .redraw && screen.focus == .email)
        Fixtures.type("ab", into: screen)
        #expect(screen.handle(.backspace) == .redraw && screen.emailText == "a")
        #expect(screen.handle(.delete) == .redraw && screen.emailText.isEmpty)
        #expect(screen.handle(.backspace) == .none)
        #expect(screen.handle(.left) == .none && screen.handle(.pageDown) == .none)
        #expect(screen.handle(.resize) == .redraw)
        #expect(screen.serverText == "http://other:9/")
    }

    @Test func enterSavesTheServerAndSendsTheCode() {
        let services = FakeConsoleServices()
        let screen = LoginScreen(services: services)
        _ = screen.handle(.tab)
        _ = screen.handle(.control("u"))
        Fixtures.type("http://gate.example:8080", into: screen)
        _ = screen.handle(.tab)
        Fixtures.type(" Ana@Example.com ", into: screen)
        #expect(screen.handle(.enter) == .redraw)
        #expect(services.calls == ["setServerURL http://gate.example:8080", "sendCode"])
        #expect(services.sentCodes.first?.email == "ana@example.com")
        #expect(services.sentCodes.first?.server == "http://gate.example:8080")
        #expect(screen.step == .code && screen.focus == .code)
        let text = Fixtures.render(screen).text
        #expect(text.contains("A 6-digit code was sent to ana@example.com. Type it and press Enter."))
        #expect(text.contains("> Code     _"))
        #expect(text.contains("  Email     Ana@Example.com"))
    }

    @Test func aServerThatIsNoURLOrAMissingAddressIsSaidBeforeAnythingIsSent() {
        let services = FakeConsoleServices()
        let screen = LoginScreen(services: services)
        _ = screen.handle(.tab)
        _ = screen.handle(.control("u"))
        Fixtures.type("gate.test", into: screen)
        _ = screen.handle(.enter)
        #expect(screen.notice?.text == "The server must be an http:// or https:// URL, like http://localhost:8080.")
        #expect(screen.focus == .server)
        _ = screen.handle(.control("u"))
        Fixtures.type("https://gate.test", into: screen)
        _ = screen.handle(.enter)
        #expect(screen.notice?.text == "Type your e-mail address, like ana@example.com.")
        #expect(screen.focus == .email)
        #expect(services.calls.isEmpty)
        let canvas = Fixtures.render(screen)
        let row = Fixtures.row(canvas, containing: "Type your e-mail")
        #expect(row.map { canvas[0, $0].style.role } == .danger)
    }

    @Test func aServerURLTheStoreRefusesIsSaid() {
        let services = FakeConsoleServices()
        services.setServerError = .failed("the state file is read-only")
        let screen = LoginScreen(services: services)
        Fixtures.type("a@b.c", into: screen)
        _ = screen.handle(.enter)
        #expect(screen.notice?.text == "Failed: the state file is read-only.")
        #expect(screen.step == .address && services.sentCodes.isEmpty)
    }

    @Test func throttledSendsSayHowLongToWait() {
        let services = FakeConsoleServices()
        services.sendCodeError = .throttled(retryAfterSeconds: 30, message: "a code was sent less than 30 seconds ago")
        let screen = LoginScreen(services: services)
        Fixtures.type("ana@example.com", into: screen)
        #expect(screen.handle(.enter) == .redraw)
        #expect(screen.step == .address)
        #expect(Fixtures.render(screen).text.contains("Too many codes were asked for: wait 30 s, then try again."))
        services.sendCodeError = .throttled(retryAfterSeconds: nil, message: "slow down")
        _ = screen.handle(.enter)
        #expect(screen.notice?.text == "Too many codes were asked for: wait a little, then try again.")
        services.sendCodeError = .throttled(retryAfterSeconds: 1_800, message: "hourly limit")
        _ = screen.handle(.enter)
        #expect(screen.notice?.text == "Too many codes were asked for: wait 30 min, then try again.")
    }

    @Test func anUnreachableServerIsSaidPlainly() {
        let services = FakeConsoleServices()
        services.sendCodeError = .offline("connection refused")
        let screen = LoginScreen(services: services)
        Fixtures.type("ana@example.com", into: screen)
        _ = screen.handle(.enter)
        #expect(Fixtures.render(screen, width: 120).text.contains(
            "The server cannot be reached (connection refused). Check the server URL, or try again when it is back."))
    }

    @Test func theCodeTakesSixDigitsOnly() {
        withCodeStep { screen, services in
            Fixtures.type("12a3 4-5678", into: screen)
            #expect(screen.codeText == "123456")
            #expect(screen.handle(.character("9")) == .none)
            #expect(screen.handle(.tab) == .none)
            _ = screen.handle(.backspace)
            #expect(screen.handle(.enter) == .redraw)
            #expect(screen.notice?.text == "The code has 6 digits; you typed 5.")
            #expect(services.logIns.isEmpty)
        }
    }

    @Test func aGoodCodeLogsInAndChangesTheSession() {
        withCodeStep { screen, services in
            services.logInResults = [.success(Self.ana)]
            Fixtures.type("123456", into: screen)
            #expect(screen.handle(.enter) == .sessionChanged)
            #expect(services.logIns.count == 1)
            #expect(services.logIns.first?.code == "123456" && services.logIns.first?.email == "ana@example.com")
            #expect(services.logIns.first?.allowPurge == false)
        }
    }

    @Test func aWrongCodeIsSaidAndAfterFiveTriesTheScreenAsksForANewCode() {
        withCodeStep { screen, services in
            services.logInResults = [.failure(.unauthorized("the code is wrong, expired or used up; ask for a new one"))]
            Fixtures.type("000000", into: screen)
            #expect(screen.handle(.enter) == .redraw)
            #expect(screen.codeText.isEmpty && screen.wrongTries == 1)
            #expect(Fixtures.render(screen, width: 100).text.contains(
                "That code is wrong or has expired. Type it again, or press Ctrl-R for a new code."))
            for _ in 2...5 {
                Fixtures.type("000000", into: screen)
                _ = screen.handle(.enter)
            }
            #expect(services.logIns.count == 5)
            #expect(Fixtures.render(screen, width: 100).text.contains(
                "Too many wrong tries: this code no longer works. Press Ctrl-R for a new code."))
            Fixtures.type("123456", into: screen)
            _ = screen.handle(.enter)
            #expect(services.logIns.count == 5, "a dead code is not sent again")
            #expect(screen.handle(.control("r")) == .redraw)
            #expect(services.sentCodes.count == 2 && screen.wrongTries == 0)
            services.logInResults = [.success(Self.ana)]
            Fixtures.type("123456", into: screen)
            #expect(screen.handle(.enter) == .sessionChanged)
        }
    }

    @Test func otherLoginFailuresAreSaid() {
        withCodeStep { screen, services in
            services.logInResults = [.failure(.offline("timed out"))]
            Fixtures.type("123456", into: screen)
            _ = screen.handle(.enter)
            #expect(screen.notice?.text.hasPrefix("The server cannot be reached (timed out).") == true)
            services.logInResults = [.failure(.refused("the account is disabled"))]
            _ = screen.handle(.enter)
            #expect(screen.notice?.text == "Refused: the account is disabled.")
            #expect(screen.wrongTries == 0)
        }
    }

    @Test func aLoginThatWouldDeleteQueuedEntriesAsksForASecondEnter() {
        withCodeStep { screen, services in
            services.logInResults = [.failure(.identityChange(entriesAtRisk: 2, previousEmail: "dan@example.com",
                                                              previousServer: "http://old.test")),
                                     .success(Self.ana)]
            Fixtures.type("123456", into: screen)
            #expect(screen.handle(.enter) == .redraw)
            #expect(screen.confirmingPurge)
            #expect(screen.notice?.text == "Logging in would delete 2 queued entries of dan@example.com on http://old.test. Press Enter again to log in anyway, or Esc to stop.")
            #expect(screen.handle(.enter) == .sessionChanged)
            #expect(services.logIns.map(\.allowPurge) == [false, true])
        }
    }

    @Test func escGoesBackToTheAddressAndCtrlROnlyWorksForTheCode() {
        let services = FakeConsoleServices()
        let screen = LoginScreen(services: services)
        #expect(screen.handle(.escape) == .none)
        #expect(screen.handle(.control("r")) == .none)
        #expect(services.sentCodes.isEmpty)
        Fixtures.type("ana@example.com", into: screen)
        _ = screen.handle(.enter)
        Fixtures.type("12", into: screen)
        #expect(screen.handle(.escape) == .redraw)
        #expect(screen.step == .address && screen.focus == .email && screen.codeText.isEmpty && screen.notice == nil)
        #expect(screen.emailText == "ana@example.com")
    }

    @Test func controlCharactersAreNotTypedAndLongInputShowsItsEnd() {
        let services = FakeConsoleServices()
        let screen = LoginScreen(services: services)
        for character: Character in ["\u{1B}", "\u{7}", "\u{7F}", "\u{85}", "\t"] {
            #expect(screen.handle(.character(character)) == .none)
        }
        Fixtures.type(String(repeating: "x", count: 300) + "@example.com", into: screen)
        #expect(screen.emailText.count == 254, "the field stops at 254 characters")
        let canvas = Fixtures.render(screen, width: 40)
        #expect(canvas.line(3) == "> Email    …" + String(repeating: "x", count: 27) + "_")
        #expect(canvas.line(3).count == 40)
    }

    @Test func keyHelpListsEveryKey() {
        let keys = LoginScreen(services: FakeConsoleServices()).keyHelp.map(\.key)
        #expect(keys == ["Enter", "Tab, Down", "Shift-Tab, Up", "Backspace", "Ctrl-U", "Ctrl-R", "Esc", "Ctrl-C"])
    }

    @Test func tinyAreasNeverCrashAndNeverSpillOver() {
        let services = FakeConsoleServices()
        let screen = LoginScreen(services: services)
        services.sendCodeError = .offline(String(repeating: "long ", count: 50))
        Fixtures.type("ana@example.com", into: screen)
        _ = screen.handle(.enter)
        for width in 0...10 {
            for height in 0...10 {
                var canvas = Canvas(width: 12, height: 12)
                screen.render(into: &canvas, area: Area(x: 1, y: 1, width: width, height: height))
                for y in 0..<12 {
                    let line = canvas.line(y)
                    #expect(line.count <= 1 + width, "row \(y) spills out of a \(width)×\(height) area")
                    if y == 0 || y > height { #expect(line.isEmpty) }
                }
                if width >= 1, height >= 1 { #expect(canvas.line(1).hasSuffix("…"), "the title is cut with an ellipsis") }
            }
        }
    }

    // MARK: - Through the client core

    /// Answers every request with `status`, `headers` and `body`, or fails to connect.
    struct ScriptedTransport: HTTPTransport {
        var status = 202
        var headers: [String: String] = [:]
        var body = #"{"sent":true}"#
        var unreachable = false
        func perform(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
            if unreachable { throw .cannotConnect(url: request.url, detail: "connection refused") }
            return HTTPResponse(status: status, headers: headers, body: Array(body.utf8))
        }
        func separateHandle() -> any HTTPTransport { self }
    }

    func withCoreServices(_ transport: ScriptedTransport, defaultServer: String? = "http://env.test",
                          _ body: (ClientCoreServices, ClientCore) throws -> Void) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("console-login-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let core = try ClientCore(directory: StateDirectory(path: path), transport: transport)
        try body(ClientCoreServices(core: core, transport: transport, defaultServer: defaultServer), core)
    }

    @Test func throughTheClientCoreA429SaysTheServersRetryAfter() throws {
        let transport = ScriptedTransport(status: 429, headers: ["retry-after": "30"],
                                          body: #"{"error":{"code":"RATE_LIMITED","message":"a code was sent less than 30 seconds ago"}}"#)
        try withCoreServices(transport) { services, _ in
            let screen = LoginScreen(services: services)
            Fixtures.type("ana@example.com", into: screen)
            _ = screen.handle(.enter)
            #expect(screen.step == .address)
            #expect(screen.notice?.text == "Too many codes were asked for: wait 30 s, then try again.")
        }
    }

    @Test func throughTheClientCoreTheServerIsSavedPerStateFolderAndOfflineIsSaid() throws {
        try withCoreServices(ScriptedTransport(unreachable: true)) { services, core in
            #expect(services.serverURL() == "http://env.test")
            #expect(services.currentUser() == nil)
            #expect(throws: ConsoleError.refused("the server must be an http:// or https:// URL")) {
                try services.setServerURL("gate.test")
            }
            let screen = LoginScreen(services: services)
            _ = screen.handle(.tab)
            _ = screen.handle(.control("u"))
            Fixtures.type("http://saved.test/", into: screen)
            _ = screen.handle(.tab)
            Fixtures.type("ana@example.com", into: screen)
            _ = screen.handle(.enter)
            #expect(screen.notice?.text.hasPrefix("The server cannot be reached (connection refused).") == true)
            let saved = try core.store.meta(ClientCoreServices.serverKey)
            #expect(saved == "http://saved.test")
            let again = ClientCoreServices(core: core, transport: ScriptedTransport(), defaultServer: nil)
            #expect(again.serverURL() == "http://saved.test")
            #expect(throws: ConsoleError.self) { try again.pendingApprovals() }
            #expect(again.decide(.approve, visitorId: "v1", note: nil) != .queued, "nobody is logged in: nothing queues")
        }
    }
}
