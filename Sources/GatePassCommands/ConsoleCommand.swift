import CurlHTTP
import CursesTerminal
import Foundation
import GatePassClient
import GatePassConsole
import GatePassCore

/// `gatepass console`: the full-screen terminal UI. The shell view model (`ConsoleApp`) and
/// the screens hold no curses calls; this command wires them to the curses driver, the client
/// core, the outbox service and the live event stream, on one UI thread.
enum ConsoleCommand {
    static let help = HelpText(
        overview: "The full-screen console: log in with a one-time code, clear the approvals queue (live), open a visitor and approve or reject. Needs a terminal; scripts use the other commands.",
        usage: "gatepass console [--server URL]",
        options: [("--server URL", "The server to log in to (default: the last one used, else $GATEPASS_SERVER).")])

    static func run(_ arguments: [String], terminal: any Terminal, environment: [String: String],
                    clock: any Clock) throws -> Int32 {
        var reader = ArgumentReader(arguments)
        if reader.wantsHelp { terminal.out(help.rendered); return 0 }
        let server = try reader.option("--server")
        try reader.finish()
        return try runConsole(Options(server: server), terminal: terminal, environment: environment, clock: clock)
    }

    /// What a console run is started with: by `gatepass console`'s flags, or by `gatepass demo`.
    struct Options {
        /// The server to offer at login (saved for the state folder).
        var server: String?
        /// The demo's login hints (demo logins, the development server's code).
        var demo: LoginScreen.DemoHints?
    }

    /// Opens the terminal and runs the console until the person quits; the terminal is given
    /// back on every way out.
    static func runConsole(_ options: Options, terminal: any Terminal, environment: [String: String],
                           clock: any Clock) throws -> Int32 {
        let server = options.server
        let context = ClientCommands.Context(terminal: terminal, environment: environment, clock: clock)
        let (core, transport) = try context.coreAndTransport(platform: "console")
        let services = ClientCoreServices(core: core, transport: transport,
                                          defaultServer: server ?? environment["GATEPASS_SERVER"], clock: clock)
        if let server { try? services.setServerURL(server) }
        let screen: CursesTerminal
        do {
            screen = try CursesTerminal.open(environment: environment)
        } catch {
            throw CommandFailure(error.description)
        }
        defer { screen.close() }
        let session = ConsoleSession(core: core, services: services, clock: clock, demo: options.demo)
        session.run(on: screen)
        return 0
    }
}

/// One run of the console: the shell, the background services, and the UI loop.
final class ConsoleSession: @unchecked Sendable {
    private let core: ClientCore
    private let services: ClientCoreServices
    private let clock: any Clock
    private var app: ConsoleApp!
    private var approvals: ApprovalsScreen?

    // Filled by background threads, emptied by the UI loop.
    private let inbox = Locked<[ServerEvent]>([])
    private let online = Locked<Bool>(true)
    private let live = Locked<Bool>(false)
    private var outbox: OutboxService?
    private var events: EventStreamConsumer?
    private let demo: LoginScreen.DemoHints?

    init(core: ClientCore, services: ClientCoreServices, clock: any Clock, demo: LoginScreen.DemoHints? = nil) {
        self.core = core
        self.services = services
        self.clock = clock
        self.demo = demo
        app = ConsoleApp(factory: .init(tabs: { [unowned self] in tabs() }, visitorDetail: { [unowned self] id in detail(id) }))
    }

    private func tabs() -> [any ConsoleScreen] {
        stopBackground()
        guard services.currentUser() != nil else {
            approvals = nil
            return [LoginScreen(services: services, demo: demo)]
        }
        let list = ApprovalsScreen(services: services, clock: { [clock] in clock.now() })
        approvals = list
        startBackground()
        return [list]
    }

    private func detail(_ id: String) -> any ConsoleScreen {
        let known = approvals?.visitors.first { $0.id == id } ?? approvals?.selectedVisitor
        return VisitorDetailScreen(visitor: known!, services: services, clock: { [clock] in clock.now() },
                                   onDecision: { [weak self] visitorId, outcome in
                                       self?.approvals?.noteDecision(visitorId: visitorId, outcome: outcome)
                                   })
    }

    /// The outbox drain (every 30 s, and when the server comes back) and the event stream.
    private func startBackground() {
        let outbox = OutboxService(core: core) { [online] _, isOnline in online.withLock { $0 = isOnline } }
        outbox.start()
        self.outbox = outbox
        events = try? core.eventConsumer(credential: .login, onStatus: { [live] status in
            live.withLock { $0 = status == .connected }
        }, onEvent: { [inbox] event in inbox.withLock { $0.append(event) } })
        events?.start()
    }

    private func stopBackground() {
        events?.stop()
        events = nil
        outbox?.stop()
        outbox = nil
        live.withLock { $0 = false }
    }

    private func refreshStatus() {
        let user = services.currentUser()
        app.status = .init(who: user.map { "\($0.name) <\($0.email)>" } ?? "not logged in", role: user?.role.rawValue ?? "",
                           server: user?.server ?? services.serverURL(), online: online.withLock { $0 },
                           queued: (try? core.store.outboxCount()) ?? 0, live: live.withLock { $0 })
    }

    /// The UI loop: events from the stream, keys (with a 100 ms timeout so live changes show
    /// without a key press), a paint after anything changed.
    func run(on screen: CursesTerminal) {
        var dirty = true
        var lastStatus = ContinuousClock.now - .seconds(10)
        while !app.wantsQuit {
            let pending = inbox.withLock { events -> [ServerEvent] in
                defer { events.removeAll() }
                return events
            }
            for event in pending {
                if app.receive(event) { screen.bell() }
                dirty = true
            }
            // Highlights fade and ages tick without a key press.
            if let next = approvals?.nextChangeAt, next <= clock.now() { dirty = true }
            if ContinuousClock.now - lastStatus > .seconds(1) {
                refreshStatus()
                lastStatus = .now
                dirty = true
            }
            if dirty {
                let size = screen.size()
                screen.draw(app.render(width: size.width, height: size.height))
                dirty = false
            }
            if let key = screen.readKey() {
                if key != .resize, app.handle(key) { screen.bell() }
                dirty = true
            }
        }
        stopBackground()
    }
}
