import CursesTerminal
import Foundation
import GatePassClient
import GatePassConsole
import GatePassConsoleServices
import GatePassCore

/// `gatepass console`: the full-screen terminal UI. The shell view model (`ConsoleApp`) and
/// the screens hold no curses calls; this command wires them to the curses driver, the client
/// core, the outbox service, the live event stream and the scan feed, on one UI thread.
struct ConsoleCommand: GatePassCommand {
    static let server = ServerOptions.server("The server to log in to (default: the last one used, else $GATEPASS_SERVER).")
    static let configuration = CommandConfiguration(
        name: "gatepass console",
        overview: "The full-screen console: log in with a one-time code; Approvals (live queue, approve or reject with a note), Scan (camera or typed short id, lookup, walk-in, live gate counters), Visitors (today's and upcoming, register, cancel, check out, invitation, the pass on screen; owners and admins, and hosts for their own visitors), On site (the evacuation roll, live, export; owners and admins), History (scan log with filters and per-gate counts, hourly chart, CSV export; owners and admins), More (profile, device, outbox, logout), Blocklist (add with expiry, remove, recent matches), Users (add, change, disable) and Audit (filters, open the visitor) for owners and admins; a security alert pops up over any tab with a bell. Needs a terminal; scripts use the other commands. The Scan tab reads passes from the frame source given, if any.",
        usage: "gatepass console [--server URL] [--device DEV [--size WxH] [--fps N] | --image FILE… | --dir DIR | --video FILE.y4m]",
        options: [server] + FrameSourceOptions.all)

    var options: Options

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        let source: ConsoleScanFeed.Source? = switch try FrameSourceOptions.choice(arguments, required: false) {
        case .camera(let camera)?: .camera(devicePath: camera.devicePath, width: camera.width, height: camera.height,
                                           framesPerSecond: camera.framesPerSecond)
        case .images(let files)?: .images(files)
        case .directory(let path)?: .directory(path)
        case .video(let path)?: .video(path)
        case nil: nil
        }
        options = Options(server: try arguments.value(Self.server), scanSource: source)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        try Self.runConsole(options, terminal: context.terminal, environment: context.environment, clock: context.clock)
    }

    /// What a console run is started with: by `gatepass console`'s flags, or by `gatepass demo`.
    struct Options {
        /// The server to offer at login (saved for the state folder).
        var server: String?
        /// The demo's login hints (demo logins, the development server's code).
        var demo: LoginScreen.DemoHints?
        /// Where the Scan tab reads passes from; nil: typed short ids only.
        var scanSource: ConsoleScanFeed.Source?
    }

    /// Opens the terminal and runs the console until the person quits; the terminal is given
    /// back on every way out.
    static func runConsole(_ options: Options, terminal: any Terminal, environment: [String: String],
                           clock: any WallClock) throws -> Int32 {
        let server = options.server
        let context = ClientCommands.Context(terminal: terminal, environment: environment, clock: clock)
        // Every request says whether the server answered: the status line and the More tab read that.
        let connection = ConsoleConnection(start: clock.now())
        let (core, transport) = try context.coreAndTransport(platform: "console") { base in
            ConnectionReportingTransport(base: base, connection: connection, clock: clock)
        }
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
        let session = ConsoleSession(core: core, services: services, clock: clock, connection: connection, demo: options.demo,
                                     scanSource: options.scanSource,
                                     homeDirectory: StateDirectory.home(environment: environment))
        session.run(on: screen)
        return 0
    }
}

/// One run of the console: the shell, the background services, and the UI loop.
final class ConsoleSession: @unchecked Sendable {
    private let core: ClientCore
    private let services: ClientCoreServices
    private let clock: any WallClock
    private let demo: LoginScreen.DemoHints?
    private let scanSource: ConsoleScanFeed.Source?
    private let homeDirectory: String
    private var app: ConsoleApp!
    private var approvals: ApprovalsScreen?
    private var scan: ScanScreen?
    /// The organization's clock, read once per login (not on every frame; GET /api/organization
    /// answers every user, the cache offline), for every screen's times and a security alert's;
    /// this computer's zone only when neither can answer.
    private var siteClock = SiteClock(timeZone: .current)

    // Filled by background threads, emptied by the UI loop.
    private let inbox = Locked<[ServerEvent]>([])
    private let scannedCodes = Locked<[String]>([])
    private let sourceStates = Locked<[ConsoleScanFeed.State]>([])
    /// The link to the server, shown by the status line and the More tab.
    private let connection: ConsoleConnection
    /// The session token the event stream was started with, and whether the stream has ended
    /// for good (the server ended that session): a new token (a login elsewhere on this state
    /// folder) starts it again.
    private var streamToken: String?
    private let streamEnded = Locked<Bool>(false)
    private var outbox: OutboxService?
    /// The pass cache of a console that scans (its age is on the Scan tab).
    private var passCache: PassCacheService?
    private var events: EventStreamConsumer?
    private var feed: ConsoleScanFeed?
    /// Set once a file, folder or recording has been read: a later login must not read it
    /// again (it would check the same passes in twice, maybe under another user's name).
    private var oneShotSourceRead = false

    init(core: ClientCore, services: ClientCoreServices, clock: any WallClock, connection: ConsoleConnection,
         demo: LoginScreen.DemoHints? = nil, scanSource: ConsoleScanFeed.Source? = nil, homeDirectory: String) {
        self.core = core
        self.services = services
        self.clock = clock
        self.connection = connection
        self.demo = demo
        self.scanSource = scanSource
        self.homeDirectory = homeDirectory
        services.knownOffline = { [connection] in connection.state.link == .offline }
        app = ConsoleApp(factory: .init(tabs: { [unowned self] in tabs() }, visitorDetail: { [unowned self] id in detail(id) },
                                        gateNames: { [services] in services.gateNames() }, clock: { [clock] in clock.now() },
                                        siteClock: { [unowned self] in siteClock }),
                         connection: connection)
    }

    /// The tabs for who is logged in: Approvals for those who decide, Scan for those who may
    /// scan, Visitors for owners, admins and hosts (a host's list is the server's: its own
    /// visitors), On site and History for owners and admins, More for everyone, then the
    /// governance tabs (Blocklist, Users, Audit) for owners and admins. The first six keep the
    /// numbers they had before the governance tabs came. (A platform admin reads other
    /// organizations' history with `gatepass history`; the console has no organization picker.)
    private func tabs() -> [any ConsoleScreen] {
        stopBackground()
        approvals = nil
        scan = nil
        guard let user = services.currentUser() else {
            return [LoginScreen(services: services, demo: demo)]
        }
        let now: () -> Date = { [clock] in clock.now() }
        let principal = PrincipalKind.user(user.role, canScanCheckpoint: user.mayScan)
        func may(_ action: Action) -> Bool { Permissions.may(principal, action) == .allowed }
        var tabs: [any ConsoleScreen] = []
        siteClock = (try? services.site()).flatMap { SiteClock(zoneNamed: $0.value.timeZone) } ?? SiteClock(timeZone: .current)
        // Those who decide: an approver by its queue, an owner or admin by the visitors' routes.
        if may(.listApprovalQueue) || may(.decideVisitor) {
            let list = ApprovalsScreen(services: services, clock: now)
            approvals = list
            tabs.append(list)
        }
        if user.mayScan {
            let screen = ScanScreen(services: services, clock: now, sourceDescription: scanSource.map { "\($0): starting" },
                                    siteClock: siteClock)
            scan = screen
            tabs.append(screen)
        }
        if may(.registerVisitor) {
            // Choosing an approver reads the users, which only owners and admins may.
            tabs.append(VisitorsScreen(services: services, clock: now, choosesApprover: may(.listUsers)))
        }
        if user.role.managesOrganization {
            tabs.append(OnSiteScreen(services: services, clock: now))
            tabs.append(HistoryScreen(services: services, clock: now, timeZone: siteClock.timeZone, homeDirectory: homeDirectory))
        }
        tabs.append(MoreScreen(services: services, clock: now, connection: connection))
        if may(.listBlocklist) { tabs.append(BlocklistScreen(services: services, clock: now)) }
        if may(.updateUser) { tabs.append(UsersScreen(services: services, me: user, clock: now)) }
        // A platform admin reads audit logs per organization, which the console does not pick.
        if user.role.managesOrganization && may(.readAuditLog) { tabs.append(AuditScreen(services: services, clock: now)) }
        startBackground(scanning: user.mayScan)
        return tabs
    }

    /// A visitor's detail: from the approvals list when it is there, else read from the server
    /// (a visitor opened from the history or the scan screen).
    private func detail(_ id: String) -> any ConsoleScreen {
        let onDecision: (String, DecisionOutcome) -> Void = { [weak self] visitorId, outcome in
            self?.approvals?.noteDecision(visitorId: visitorId, outcome: outcome)
        }
        let now: () -> Date = { [clock] in clock.now() }
        // Owners, admins and hosts manage the visitor there too (cancel, invitation, pass; check
        // out and decisions as their role allows). Everyone reads its times in the site's zone.
        let user = services.currentUser()
        let principal = user.map { PrincipalKind.user($0.role, canScanCheckpoint: $0.mayScan) } ?? .anonymous
        func may(_ action: Action) -> Bool { Permissions.may(principal, action) == .allowed }
        let manages = may(.cancelVisitor)
        let management: (any VisitorsServices)? = manages ? services : nil
        let rights = VisitorDetailScreen.Rights(decides: may(.decideVisitor) || may(.decideQueuedVisitor),
                                                checksOut: may(.checkOutVisitor))
        if let known = approvals?.visitors.first(where: { $0.id == id }) {
            return VisitorDetailScreen(visitor: known, services: services, clock: now, siteClock: siteClock, onDecision: onDecision,
                                       management: management, rights: rights)
        }
        do {
            return VisitorDetailScreen(detail: try services.visitorDetail(id: id), services: services, clock: now,
                                       siteClock: siteClock, onDecision: onDecision, management: management, rights: rights)
        } catch {
            return MessageScreen(title: "Visitor", lines: ["This visitor cannot be opened.", error.sentence])
        }
    }

    /// The outbox drain (every 30 s, and when the server comes back), the event stream, and
    /// the scan feed when a source was given and this user may scan.
    private func startBackground(scanning: Bool) {
        // The outbox's requests go through the reporting transport: the connection hears of them there.
        let outbox = OutboxService(core: core)
        outbox.start()
        self.outbox = outbox
        if scanning {
            let passCache = PassCacheService(core: core, timeZone: .current)
            passCache.start()
            self.passCache = passCache
        }
        startEvents()
        if scanning, let scanSource, oneShotSourceRead {
            sourceStates.withLock { $0.append(.init(text: "Already read in this console (type a short id): \(scanSource)")) }
        } else if scanning, let scanSource {
            oneShotSourceRead = scanSource.isFinite
            let feed = ConsoleScanFeed(source: scanSource, clock: clock,
                                       onCode: { [scannedCodes] code in scannedCodes.withLock { $0.append(code) } },
                                       onState: { [sourceStates] state in sourceStates.withLock { $0.append(state) } })
            feed.start()
            self.feed = feed
        }
    }

    private func stopBackground() {
        feed?.stop()
        feed = nil
        events?.stop()
        events = nil
        outbox?.stop()
        outbox = nil
        passCache?.stop()
        passCache = nil
        connection.restart(at: clock.now())
    }

    /// Follows the event stream with the session's token as it is now.
    private func startEvents() {
        streamToken = (try? core.session())?.token
        streamEnded.withLock { $0 = false }
        events = try? core.eventConsumer(credential: .login, onStatus: { [connection, clock, streamEnded] status in
            connection.streamChanged(connected: status == .connected, at: clock.now())
            // Ended by the server (401: a disabled user, an ended session): only a new session helps.
            if case .stopped(_?) = status { streamEnded.withLock { $0 = true } }
        }, onEvent: { [inbox] event in inbox.withLock { $0.append(event) } })
        events?.start()
    }

    /// The server ended the stream's session; once the state folder holds a new one (the user
    /// logged in again, here or with `gatepass login`), the stream starts again with it, so the
    /// console is live again without a restart.
    private func restartEventsAfterRenewal() {
        guard events != nil, streamEnded.withLock({ $0 }),
              let token = (try? core.session())?.token, token != streamToken else { return }
        events?.stop()
        startEvents()
    }

    private func refreshStatus() {
        let user = services.currentUser()
        app.status = .init(who: user.map { "\($0.name) <\($0.email)>" } ?? "not logged in", role: user?.role.rawValue ?? "",
                           server: user?.server ?? services.serverURL(), queued: (try? core.store.outboxCount()) ?? 0)
    }

    /// Takes everything the background threads left in the inboxes.
    private func drain<Item>(_ box: Locked<[Item]>) -> [Item] {
        box.withLock { items -> [Item] in
            defer { items.removeAll() }
            return items
        }
    }

    /// The UI loop: events, scanned codes and source states from the background threads, keys
    /// (with a 100 ms timeout so live changes show without a key press), the screens' ticks,
    /// and a paint after anything changed.
    func run(on screen: CursesTerminal) {
        var dirty = true
        var lastStatus = ContinuousClock.now - .seconds(10)
        var statusGeneration = app.sessionGeneration
        while !app.wantsQuit {
            for event in drain(inbox) {
                if app.receive(event) { screen.bell() }
                dirty = true
            }
            for state in drain(sourceStates) {
                _ = scan?.sourceState(state.text, isProblem: state.isProblem)
                dirty = true
            }
            for code in drain(scannedCodes) {
                if scan?.scanned(code) == .alert { screen.bell() }
                dirty = true
            }
            let tick = app.tick(now: clock.now())
            if tick.bell { screen.bell() }
            if tick.redraw { dirty = true }
            // Every second, and at once after a login or logout.
            if ContinuousClock.now - lastStatus > .seconds(1) || app.sessionGeneration != statusGeneration {
                statusGeneration = app.sessionGeneration
                restartEventsAfterRenewal()
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
