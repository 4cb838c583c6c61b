import Foundation
import GatePassCore
import Testing
@testable import GatePassClient
@testable import GatePassConsole
@testable import GatePassConsoleServices

@Suite struct MoreScreenTests {
    func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }

    /// A More screen, loaded, over a fake with one queued entry and one dead letter unless
    /// `configure` says otherwise.
    func withScreen(connection: ConsoleConnection = ConsoleConnection(start: Fixtures.now),
                    configure: (FakeMoreServices) -> Void = { _ in },
                    _ body: (MoreScreen, FakeMoreServices, TestClock) throws -> Void) rethrows {
        let services = FakeMoreServices()
        services.outbox = OutboxState(queued: [Fixtures.queued(12)], deadLetters: [Fixtures.dead(9)])
        configure(services)
        let clock = TestClock()
        let screen = MoreScreen(services: services, clock: clock.function, connection: connection)
        #expect(screen.appear() == .redraw)
        try body(screen, services, clock)
    }

    func field(_ label: String, _ value: String) -> String { pad("  " + label, 16) + value }

    @Test func showsProfileServerDeviceAndOutboxAt80x24() {
        withScreen { screen, services, _ in
            #expect(services.calls == ["profile", "site", "device", "outboxState"])
            let canvas = Fixtures.render(screen, width: 80, height: 24)
            let lines = (0..<24).map(canvas.line)
            #expect(lines[0] == "More" && canvas[0, 0].style == .title)
            #expect(lines[1] == "Profile" && canvas[0, 1].style == Canvas.Style(.muted, bold: true))
            #expect(lines[2] == field("Name", "Ana Pop"))
            #expect(lines[3] == field("Email", "ana@example.com"))
            #expect(lines[4] == field("Role", "OWNER"))
            #expect(lines[5] == field("Organization", "Gate Site"))
            #expect(lines[6] == field("May scan", "yes"))
            #expect(lines[7] == "Server")
            #expect(lines[8] == field("URL", "http://gate.test"))
            #expect(lines[9] == field("State", "online") && canvas[16, 9].style.role == .ok)
            #expect(lines[10] == "Device")
            #expect(lines[11] == field("Push token", "gpd_x7Hq2a…"))
            #expect(lines[12] == field("Registered", "yes, with http://gate.test (console)"))
            #expect(lines[13] == "Outbox: 1 queued, 1 dead letter")
            #expect(lines[14] == ConsoleFormat.fit("  #12 approve · POST /api/visitors/v12/approve-scan · 3 tries · next try in 40 s · last error: server unreachable", width: 80))
            #expect(lines[15] == "  Refused by the server (r puts one back in the queue):")
            #expect(lines[16] == ConsoleFormat.fit("  #9 checkin · POST /api/visitor-scanner/checkin · refused: 409 CONFLICT: the visitor is already checked in", width: 80))
            #expect(canvas[2, 16].style.role == .danger)
            #expect(lines[23] == "r retry · s send now · L log out · g reload · i ids")
            #expect(!canvas.text.contains("B9secret"), "the push token is never shown whole")
            #expect(canvas[0, 14].style.reverse && canvas[79, 14].style.reverse, "the first entry is selected")
        }
    }

    /// The organization by its name; its id only when asked for (`i`), or when the name
    /// cannot be read.
    @Test func theOrganizationShowsByNameAndIShowsItsId() {
        withScreen { screen, _, _ in
            #expect(screen.keyHelp.contains { $0.key == "i" })
            #expect(screen.handle(.character("i")) == .redraw)
            #expect(Fixtures.render(screen, width: 80, height: 24).line(5) == field("Organization", "Gate Site (id org-1)"))
            #expect(screen.handle(.character("i")) == .redraw)
            #expect(Fixtures.render(screen, width: 80, height: 24).line(5) == field("Organization", "Gate Site"))
        }
        withScreen(configure: { $0.siteResult = .failure(.offline("connection refused")) }) { screen, _, _ in
            #expect(Fixtures.render(screen, width: 80, height: 24).line(5) == field("Organization", "org-1 (its name cannot be read now)"))
        }
    }

    @Test func thePushTokenIsShortenedToItsFirstSixCharacters() {
        #expect(MoreScreen.abbreviated(token: FakeMoreServices.token) == "gpd_x7Hq2a…")
        #expect(MoreScreen.abbreviated(token: "abcdefghijklmnop") == "abcdef…")
        #expect(MoreScreen.abbreviated(token: "gpd_abc") == "gpd_a…", "a short token shows less, never all")
        #expect(MoreScreen.abbreviated(token: "") == "…")
    }

    /// A connection whose last answer was `secondsAgo` before `Fixtures.now` and whose next request failed.
    func offline(lastAnswer secondsAgo: TimeInterval) -> ConsoleConnection {
        let connection = ConsoleConnection(start: Fixtures.now.addingTimeInterval(-secondsAgo))
        connection.serverAnswered(at: Fixtures.now.addingTimeInterval(-secondsAgo))
        connection.serverUnreachable(at: Fixtures.now)
        return connection
    }

    @Test func offlineTheProfileComesFromTheCacheAndSaysHowOld() {
        withScreen(connection: offline(lastAnswer: 300), configure: {
            $0.profileResult = .success(ConsoleRead(value: FakeMoreServices.ana, updatedAt: Fixtures.now.addingTimeInterval(-300),
                                                    fromCache: true))
        }) { screen, _, clock in
            var canvas = Fixtures.render(screen, width: 120, height: 24)
            #expect(canvas.line(2) == "  Offline: the profile as it was 5 min ago.")
            #expect(canvas[2, 2].style.role == .warning)
            #expect(canvas.line(3) == field("Name", "Ana Pop"))
            #expect(canvas.text.contains(field("State", "offline · no answer for 5 min: changes queue and are sent when it is back")))
            clock.advance(3600)
            canvas = Fixtures.render(screen, width: 120, height: 24)
            #expect(canvas.line(2) == "  Offline: the profile as it was 1 h ago.")
        }
    }

    @Test func aProfileThatCannotBeReadIsSaidAndTheRestStillShows() {
        withScreen(connection: offline(lastAnswer: 20), configure: {
            $0.profileResult = .failure(.offline("connection refused"))
            $0.deviceResult = .success(ConsoleDevice(token: FakeMoreServices.token, platform: "console", registeredWith: nil))
        }) { screen, _, _ in
            let canvas = Fixtures.render(screen, width: 120, height: 24)
            #expect(canvas.line(2) == "  Could not load the profile. The server cannot be reached (connection refused); try again when it is back.")
            #expect(canvas[2, 2].style.role == .danger)
            #expect(canvas.text.contains(field("State", "offline · no answer for 20 s: changes queue and are sent when it is back")))
            #expect(canvas.text.contains(field("Registered", "no: events are not pushed to this device until the next login")))
        }
        withScreen(configure: {
            $0.profileResult = .failure(.unauthorized("the session has ended"))
            $0.deviceResult = .failure(.failed("state file error: disk I/O error"))
            $0.outboxError = .failed("state file error: disk I/O error")
            $0.server = nil
        }) { screen, _, _ in
            let text = Fixtures.render(screen, width: 120, height: 24).text
            #expect(text.contains(field("URL", "not logged in")))
            #expect(text.contains("  Could not read this device's push token. Failed: state file error: disk I/O error."))
            #expect(text.contains("Outbox\n  Could not read the outbox. Failed: state file error: disk I/O error."))
        }
    }

    @Test func anEmptyOrPausedOutboxSaysSo() {
        withScreen(configure: { $0.outbox = OutboxState() }) { screen, _, _ in
            let text = Fixtures.render(screen, width: 80, height: 24).text
            #expect(text.contains("Outbox: 0 queued, 0 dead letters\n  Nothing is waiting to be sent."))
            #expect(screen.handle(.character("r")) == .redraw)
            #expect(screen.notice?.text == "Nothing to retry: the outbox is empty.")
        }
        withScreen(configure: { $0.outbox.pausedForLogin = "the session has ended" }) { screen, _, _ in
            let canvas = Fixtures.render(screen, width: 80, height: 24)
            #expect(canvas.line(14) == "  Sending is paused until you log in again (the session has ended).")
            #expect(canvas[2, 14].style.role == .danger)
        }
    }

    // MARK: - Outbox

    @Test func selectADeadLetterAndRPutsItBackInTheQueue() {
        withScreen { screen, services, _ in
            #expect(screen.selectedEntry == .queued(id: 12))
            #expect(screen.handle(.down) == .redraw && screen.selectedEntry == .dead(id: 9))
            var canvas = Fixtures.render(screen, width: 80, height: 24)
            #expect(canvas[0, 16].style.reverse && !canvas[0, 14].style.reverse)
            #expect(screen.handle(.character("r")) == .redraw)
            #expect(services.calls.suffix(2) == ["retry 9", "outboxState"])
            #expect(screen.notice == MoreScreen.Notice(kind: .ok, text: "Entry #9 is back in the queue and due now: s sends it now, or the next drain does."))
            #expect(screen.selectedEntry == .queued(id: 9), "the selection follows the entry into the queue")
            canvas = Fixtures.render(screen, width: 100, height: 24)
            #expect(canvas.line(13) == "Outbox: 2 queued, 0 dead letters")
            #expect(canvas.line(14) == ConsoleFormat.fit("  #9 checkin · POST /api/visitor-scanner/checkin · 1 try · due now · last error: CONFLICT: the visitor is already checked in", width: 100))
            #expect(canvas[0, 14].style.reverse)
            #expect(!canvas.text.contains("Refused by the server"))
            #expect(canvas.line(22) == "Entry #9 is back in the queue and due now: s sends it now, or the next drain does.")
            #expect(canvas[0, 22].style.role == .ok)
            #expect(screen.handle(.escape) == .redraw && screen.notice == nil)
            #expect(screen.handle(.escape) == .none)
        }
    }

    @Test func rOnAWaitingEntryMakesItDueAndAVanishedEntryIsSaid() {
        withScreen { screen, services, _ in
            _ = screen.handle(.character("r"))
            #expect(screen.notice?.text == "Entry #12 is due now: s sends it now, or the next drain does.")
            services.outbox = OutboxState(queued: [], deadLetters: [Fixtures.dead(9)])
            _ = screen.handle(.character("g"))
            services.outbox = OutboxState()
            _ = screen.handle(.character("r"))
            #expect(screen.notice == MoreScreen.Notice(kind: .warning, text: "Entry #9 is no longer in the outbox: it was sent or retried meanwhile."))
            #expect(screen.entries.isEmpty)
            services.outbox = OutboxState(deadLetters: [Fixtures.dead(9)])
            services.retryError = .failed("state file error: database is locked")
            _ = screen.handle(.character("g"))
            _ = screen.handle(.character("r"))
            #expect(screen.notice == MoreScreen.Notice(kind: .error, text: "Could not retry entry #9. Failed: state file error: database is locked."))
        }
    }

    @Test func sSendsTheQueueNowAndSaysHowItWent() {
        let cases: [(DrainSummary, MoreScreen.Notice)] = [
            (DrainSummary(sent: 2, remaining: 0), .init(kind: .ok, text: "Sent 2, 0 left.")),
            (DrainSummary(sent: 1, deadLettered: 1, remaining: 0),
             .init(kind: .warning, text: "Sent 1, 1 refused (see the dead letters), 0 left.")),
            (DrainSummary(sent: 0, remaining: 2, offline: true),
             .init(kind: .warning, text: "The server cannot be reached: sent 0, 2 still queued.")),
            (DrainSummary(remaining: 2, pausedForLogin: "the session has ended"),
             .init(kind: .error, text: "The server refused the session (the session has ended): log in again, then send.")),
            (DrainSummary(remaining: 2, busy: true),
             .init(kind: .warning, text: "Another program is sending this outbox right now; try again in a moment.")),
            (DrainSummary(failure: "state file error: disk full"),
             .init(kind: .error, text: "Sending stopped: state file error: disk full.")),
        ]
        for (summary, notice) in cases {
            withScreen(configure: { $0.drainSummary = summary }) { screen, services, _ in
                #expect(screen.handle(.character("s")) == .redraw)
                #expect(services.calls.suffix(2) == ["drain", "outboxState"])
                #expect(screen.notice == notice)
            }
        }
    }

    @Test func arrowsJKHomeEndAndPagesMoveThroughALongOutbox() {
        withScreen(configure: {
            $0.outbox = OutboxState(queued: (1...5).map { Fixtures.queued($0) }, deadLetters: (6...30).map { Fixtures.dead($0) })
        }) { screen, _, _ in
            _ = Fixtures.render(screen, width: 80, height: 24)
            #expect(screen.handle(.up) == .none && screen.handle(.character("k")) == .none)
            #expect(screen.handle(.character("j")) == .redraw && screen.selectedEntry == .queued(id: 2))
            #expect(screen.handle(.character("k")) == .redraw && screen.selectedEntry == .queued(id: 1))
            #expect(screen.handle(.pageDown) == .redraw && screen.selection == 22)
            #expect(screen.handle(.pageUp) == .redraw && screen.selection == 0)
            #expect(screen.handle(.end) == .redraw && screen.selectedEntry == .dead(id: 30))
            #expect(screen.handle(.down) == .none)
            var canvas = Fixtures.render(screen, width: 80, height: 24)
            #expect(canvas.line(22).hasPrefix("  #30 checkin") && canvas[0, 22].style.reverse, "the selection scrolls into view")
            #expect(screen.handle(.home) == .redraw && screen.selectedEntry == .queued(id: 1))
            canvas = Fixtures.render(screen, width: 80, height: 24)
            #expect(canvas.line(1) == "Profile", "back at the top")
            #expect(screen.handle(.character("x")) == .none && screen.handle(.resize) == .redraw)
        }
    }

    @Test func withoutEntriesTheArrowsScrollTheScreen() {
        withScreen(configure: { $0.outbox = OutboxState() }) { screen, _, _ in
            _ = Fixtures.render(screen, width: 60, height: 8)
            #expect(screen.handle(.down) == .redraw && screen.scroll == 1)
            #expect(Fixtures.render(screen, width: 60, height: 8).line(1) == field("Name", "Ana Pop"))
            #expect(screen.handle(.end) == .redraw)
            #expect(Fixtures.render(screen, width: 60, height: 8).line(6) == "  Nothing is waiting to be sent.")
            #expect(screen.handle(.down) == .none)
            #expect(screen.handle(.home) == .redraw && screen.scroll == 0)
        }
    }

    @Test func theOutboxIsReadAgainEveryTwoSeconds() {
        withScreen(configure: { $0.outbox = OutboxState(deadLetters: [Fixtures.dead(9)]) }) { screen, services, clock in
            clock.advance(1)
            #expect(screen.tick(now: clock.now) == .none && services.calls.count == 4)
            clock.advance(1)
            #expect(screen.tick(now: clock.now) == .none && services.calls.last == "outboxState", "read, but nothing changed")
            services.outbox.queued = [Fixtures.queued(13, dueIn: 60)]
            clock.advance(1)
            #expect(screen.tick(now: clock.now) == .none, "not yet two seconds since the last read")
            clock.advance(1)
            #expect(screen.tick(now: clock.now) == .redraw)
            #expect(Fixtures.render(screen, width: 100, height: 24).text.contains("#13 approve · POST /api/visitors/v13/approve-scan · 3 tries · next try in 56 s"))
            clock.advance(2)
            #expect(screen.tick(now: clock.now) == .redraw, "a countdown is running")
            #expect(services.calls.filter { $0 == "profile" }.count == 1, "only the outbox is read on ticks")
        }
    }

    // MARK: - Logout

    @Test func capitalLAsksFirstAndNOrEscKeepsTheSession() {
        withScreen { screen, services, _ in
            #expect(screen.handle(.character("L")) == .redraw)
            #expect(screen.confirmingLogout && screen.isCapturingText)
            #expect(screen.keyHelp.map(\.key) == ["y", "n, Esc"])
            let canvas = Fixtures.render(screen, width: 80, height: 24)
            #expect(canvas.line(22) == "Log out? y/n")
            #expect(canvas.line(23) == "The push token is unregistered first; queued entries stay for the next login.")
            #expect(screen.handle(.character("q")) == .none && screen.handle(.enter) == .none, "only y or n answer")
            #expect(screen.handle(.character("n")) == .redraw)
            #expect(!screen.confirmingLogout && screen.notice?.text == "Still logged in.")
            _ = screen.handle(.character("L"))
            #expect(screen.notice == nil)
            #expect(screen.handle(.escape) == .redraw && !screen.confirmingLogout)
            #expect(!services.calls.contains("logOut"))
        }
    }

    @Test func yesLogsOutAndTheShellRebuildsItsTabs() {
        withScreen { screen, services, _ in
            _ = screen.handle(.character("L"))
            #expect(screen.handle(.character("y")) == .sessionChanged)
            #expect(services.calls.last == "logOut")
        }
    }

    @Test func problemsMetOnLogoutAreShownBeforeTheLoginScreen() {
        withScreen(configure: {
            $0.logOutResult = .success(["push token not unregistered: the server cannot be reached (connection refused)",
                                        "server session not ended: the server cannot be reached (connection refused)"])
        }) { screen, _, _ in
            _ = screen.handle(.character("L"))
            #expect(screen.handle(.character("Y")) == .redraw)
            #expect(screen.isCapturingText && screen.keyHelp.map(\.key) == ["any key"])
            let canvas = Fixtures.render(screen, width: 100, height: 24)
            #expect(canvas.line(20) == "Logged out, with problems:")
            #expect(canvas.line(21) == "  push token not unregistered: the server cannot be reached (connection refused)")
            #expect(canvas.line(22) == "  server session not ended: the server cannot be reached (connection refused)")
            #expect(canvas.line(23) == "Press any key to go to the login screen.")
            #expect(screen.handle(.resize) == .redraw)
            #expect(screen.handle(.character("q")) == .sessionChanged)
        }
    }

    @Test func aLogoutThatFailsKeepsTheScreenAndSaysWhy() {
        withScreen(configure: { $0.logOutResult = .failure(.failed("state file error: readonly database")) }) { screen, _, _ in
            _ = screen.handle(.character("L"))
            #expect(screen.handle(.character("y")) == .redraw)
            #expect(screen.notice == MoreScreen.Notice(kind: .error, text: "Could not log out. Failed: state file error: readonly database."))
            #expect(!screen.isCapturingText && screen.logoutProblems == nil)
        }
    }

    // MARK: - Help and sizes

    @Test func keyHelpListsEveryKey() {
        withScreen { screen, _, _ in
            #expect(screen.keyHelp.map(\.key) == ["Up, k", "Down, j", "PgUp, PgDn", "Home, End", "r", "s", "L", "i", "g", "Esc"])
            #expect(screen.title == "More" && !screen.isCapturingText)
        }
    }

    @Test func rendersAt20x5AndTinyAreasWithoutSpillingOver() {
        withScreen { screen, services, _ in
            let small = Fixtures.render(screen, width: 20, height: 5)
            #expect(small.line(0) == "More")
            #expect(small.line(4) == "r retry · s send no…")
            services.logOutResult = .success([String(repeating: "a long problem ", count: 20)])
            for step in 0..<3 {
                if step == 1 { _ = screen.handle(.character("L")) }
                if step == 2 { _ = screen.handle(.character("y")) }
                for width in 0...24 {
                    for height in 0...12 {
                        var canvas = Canvas(width: 26, height: 14)
                        screen.render(into: &canvas, area: Area(x: 1, y: 1, width: width, height: height))
                        for y in 0..<14 {
                            let line = canvas.line(y)
                            #expect(line.count <= 1 + width, "row \(y) spills out of a \(width)×\(height) area")
                            if y == 0 || y > height { #expect(line.isEmpty) }
                        }
                    }
                }
            }
            let small2 = Fixtures.render(screen, width: 20, height: 5)
            #expect(small2.line(2) == "Logged out, with pr…" && small2.line(4) == "Press any key to go…", "the problems win over the rest")
        }
    }

    // MARK: - Through the client core

    static let profileJSON = #"{"id":"u1","email":"ana@example.com","name":"Ana Pop","role":"OWNER","organizationId":"org-1","canScanCheckpoint":false}"#

    func withCoreServices(_ answer: @escaping @Sendable (HTTPRequest) throws(HTTPTransportError) -> HTTPResponse,
                          _ body: (ClientCoreServices, ClientCore) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("console-more-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let transport = HistoryScreenTests.RoutedTransport(answer: answer)
        let core = try ClientCore(directory: StateDirectory(path: folder), transport: transport)
        try body(ClientCoreServices(core: core, transport: transport, defaultServer: nil), core)
    }

    func logIn(_ core: ClientCore) throws {
        try core.store.saveSession(Session(server: "http://gate.test", token: "login-token",
                                           expiresAt: Timestamp(Date().addingTimeInterval(3600)), user: HistoryScreenTests.owner,
                                           scanner: nil))
    }

    /// Through the client core, every request tells the one connection whether the server
    /// answered: the More tab's own read going unanswered is what its State line (and the status
    /// line) then say, with how long ago the server last answered.
    @Test func throughTheClientCoreEveryRequestTellsTheConnection() throws {
        let offline = Locked(false)
        let clock = ApprovalsCacheTests.MovableClock()
        let connection = ConsoleConnection(start: clock.now())
        let reporting = ConnectionReportingTransport(base: HistoryScreenTests.RoutedTransport { request throws(HTTPTransportError) in
            if offline.withLock({ $0 }) { throw .cannotConnect(url: request.url, detail: "connection refused") }
            return HTTPResponse(status: 200, headers: [:], body: Array(Self.profileJSON.utf8))
        }, connection: connection, clock: clock)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("console-link-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let core = try ClientCore(directory: StateDirectory(path: folder), transport: reporting, clock: clock)
        try logIn(core)
        let services = ClientCoreServices(core: core, transport: reporting, defaultServer: nil, clock: clock)
        let screen = MoreScreen(services: services, clock: { clock.now() }, connection: connection)
        _ = screen.appear()
        #expect(connection.state.link == .online && connection.state.lastAnswer == clock.now())
        #expect(Fixtures.render(screen, width: 120, height: 24).text.contains(field("State", "online")))
        clock.advance(30)
        offline.withLock { $0 = true }
        _ = screen.handle(.character("g"))
        clock.advance(20)
        #expect(connection.state.link == .offline)
        #expect(Fixtures.render(screen, width: 120, height: 24).text
                    .contains(field("State", "offline · no answer for 50 s: changes queue and are sent when it is back")))
        offline.withLock { $0 = false }
        _ = screen.handle(.character("g"))
        #expect(connection.state.link == .online)
    }

    @Test func throughTheClientCoreTheDeviceIsRegisteredOnlyForTheSessionsServerAndUser() throws {
        try withCoreServices({ request throws(HTTPTransportError) in throw .cannotConnect(url: request.url, detail: "connection refused") }) { services, core in
            #expect(try services.device().registeredWith == nil, "nobody logged in")
            try logIn(core)
            let token = try core.store.deviceToken()
            #expect(try services.device() == ConsoleDevice(token: token, platform: "console", registeredWith: nil))
            try core.store.setMeta("device_registration", "http://gate.test u1")
            #expect(try services.device().registeredWith == "http://gate.test")
            try core.store.setMeta("device_registration", "http://other.test u1")
            #expect(try services.device().registeredWith == nil)
            #expect(services.sessionServer() == "http://gate.test")
            #expect(throws: ConsoleError.offline("connection refused")) { try services.profile() }
        }
    }

    @Test func throughTheClientCoreDeadLettersAreListedWithTheServersErrorAndRetryMovesThemBack() throws {
        try withCoreServices({ _ in HTTPResponse(status: 200, headers: [:], body: Array(Self.profileJSON.utf8)) }) { services, core in
            try logIn(core)
            let now = Date(timeIntervalSince1970: 1_750_000_000)
            let first = try core.store.enqueue(kind: "approve", method: "POST", url: "http://gate.test/api/visitors/v1/approve-scan",
                                               body: #"{"note":"personal"}"#, credential: .login, scannedAt: nil, now: now)
            let second = try core.store.enqueue(kind: "checkin", method: "POST", url: "http://gate.test/api/visitor-scanner/checkin",
                                                body: nil, credential: .scanner, scannedAt: now, now: now)
            try core.store.killEntry(second, status: 409, code: "CONFLICT", message: "already checked in", now: now)
            var state = try services.outboxState()
            #expect(state.queued == [QueuedEntry(id: first.id, kind: "approve", request: "POST /api/visitors/v1/approve-scan",
                                                 attempts: 0, lastError: nil, nextAttemptAt: now, createdAt: now)])
            #expect(state.deadLetters.map(\.id) == [second.id])
            #expect(state.deadLetters[0].request == "POST /api/visitor-scanner/checkin")
            #expect(state.deadLetters[0].status == 409 && state.deadLetters[0].code == "CONFLICT")
            #expect(state.deadLetters[0].message == "already checked in" && state.pausedForLogin == nil)
            #expect(try services.retryOutboxEntry(id: second.id))
            state = try services.outboxState()
            #expect(state.queued.map(\.id) == [first.id, second.id] && state.deadLetters.isEmpty)
            #expect(try !services.retryOutboxEntry(id: 999))
            let read = try services.profile()
            #expect(read.value == HistoryScreenTests.owner && !read.fromCache)
        }
    }

    @Test func throughTheClientCoreLogoutDropsTheSessionAndReportsWhatFailed() throws {
        try withCoreServices({ request throws(HTTPTransportError) in throw .cannotConnect(url: request.url, detail: "connection refused") }) { services, core in
            #expect(try services.logOut() == [], "nobody logged in: nothing to do")
            try logIn(core)
            try core.store.setMeta("device_registration", "http://gate.test u1")
            let problems = try services.logOut()
            #expect(problems.count == 2)
            #expect(problems.first?.hasPrefix("push token not unregistered") == true)
            #expect(services.sessionServer() == nil)
            #expect(try services.device().registeredWith == nil)
        }
    }
}
