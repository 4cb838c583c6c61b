import Foundation
import GatePassClient
import GatePassCore
import GatePassScanner

/// `gatepass kiosk`: the unattended gate (see `KioskRunner`), with its frame source, the
/// systemd notifications and the signals wired in.
struct KioskCommand: GatePassCommand {
    static let server = ServerOptions.server("The server the kiosk is logged in to or enrolled on (checked against it; default: that one).")
    static let cooldown = Option<Double>("--cooldown", value: "S", seconds: 0...3600,
                                         help: "A pass counts again only after this many seconds out of view (default 3).")
    static let offlinePolicy = Option<OfflinePolicy>(
        "--offline-policy", value: "POLICY",
        help: "What the kiosk decides by itself while the server does not answer: deny (nothing), cached-only (passes in its cache, by the server's rules), signed (those, and signed GP2 passes by their signature; default).") { text throws(UsageError) in
        guard let policy = OfflinePolicy(rawValue: text) else {
            throw UsageError("--offline-policy must be one of \(OfflinePolicy.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return policy
    }
    static let offlineAfter = Option<Int>("--offline-after-ms", value: "MS", in: 100...60_000,
                                          help: "Decide offline when the server has not answered a scan within this many milliseconds (default 1500).")
    static let config = Option<String>("--config", value: "FILE",
                                       help: "A JSON configuration file (see Config/kiosk.json: cooldown, offlinePolicy, offlineAfterMs); flags override it.")
    static let configuration = CommandConfiguration(
        name: "gatepass kiosk",
        overview: "Run the unattended gate: read passes from a camera (or images, a folder, a Y4M recording), check each new one in, and print one decision line per pass. Runs until SIGTERM or Ctrl-C; losing the camera or the server never ends it.",
        usage: "gatepass kiosk [--server URL] (--device DEV [--size WxH] [--fps N] | --image FILE… | --dir DIR | --video FILE.y4m) [--config FILE] [--cooldown S] [--offline-policy deny|cached-only|signed] [--offline-after-ms MS] [--json]",
        options: [server] + FrameSourceOptions.all
            + [config, cooldown, offlinePolicy, offlineAfter, OutputOptions.flag("Print one JSON object per decision instead of the line.")],
        subcommands: [("enrol", "Enrol this device as a gate's kiosk with a one-time code (then no login is needed)."),
                      ("enrol-code", "Make a one-time enrolment code for a kiosk (OWNER/ADMIN)."),
                      ("roll", "Print the evacuation roll from this kiosk's pass cache (works offline).")],
        discussion: "An enrolled kiosk (gatepass kiosk enrol CODE --server URL) runs with its own credential, bound to the gate; otherwise the kiosk runs as the logged-in user. A kiosk whose token an admin revokes, or whose checkpoint is retired, says so, stops using the network and waits for a new enrolment. The kiosk keeps today's passes, the pass keys and the on-site list in its state file (refreshed every 30 s); when the server does not answer a scan in time it decides by itself as --offline-policy allows, says \"offline\" and the cache's age on the decision line, and sends the scan with its decision when the server is back.")

    var server: String?
    var configFile: String?
    /// What the flags set; the rest comes from `--config` or the defaults (`settings(_:)`).
    var cooldownFlag: Double?
    var policyFlag: OfflinePolicy?
    var offlineAfterFlag: Int?
    var asJSON: Bool
    var sourceChoice: FrameSourceOptions.Choice

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        server = try arguments.value(Self.server)
        configFile = try arguments.value(Self.config)
        cooldownFlag = try arguments.value(Self.cooldown)
        policyFlag = try arguments.value(Self.offlinePolicy)
        offlineAfterFlag = try arguments.value(Self.offlineAfter)
        asJSON = arguments.has(OutputOptions.json)
        sourceChoice = try FrameSourceOptions.requiredChoice(arguments)
    }

    /// The settings the kiosk runs with: each flag, else the file's value, else the default.
    func settings() throws -> KioskConfiguration {
        var settings = try configFile.map(KioskConfiguration.load(path:)) ?? KioskConfiguration()
        if let cooldownFlag { settings.cooldown = cooldownFlag }
        if let policyFlag { settings.offlinePolicy = policyFlag }
        if let offlineAfterFlag { settings.offlineAfterMs = offlineAfterFlag }
        return settings
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let (terminal, environment, clock) = (context.terminal, context.environment, context.clock)
        let settings = try settings()
        let (cooldown, policy, offlineAfterMilliseconds) = (settings.cooldown, settings.offlinePolicy, settings.offlineAfterMs)
        let core: ClientCore
        do {
            core = try context.core(platform: "kiosk")
            if let enrolment = try core.store.kioskEnrolment() {
                if let server, core.normalized(server) != enrolment.server {
                    throw CommandFailure("this kiosk is enrolled on \(enrolment.server), not \(core.normalized(server)); enrol it again with --server \(core.normalized(server))")
                }
                terminal.err(visible: "kiosk of \(enrolment.scanner.checkpoint.name) on \(enrolment.server) (enrolled)")
            } else {
                let session = try core.session(on: server)
                terminal.err(visible: "kiosk of \(session.user.email) on \(session.server)")
            }
            // A revoked kiosk still starts: it says why and waits for a new enrolment.
            if try core.scannerRevocation() == nil { _ = try core.ensureScannerToken(now: clock.now()) }
        } catch let error as ClientError {
            throw CommandFailure(ClientCommands.sentence(for: error))
        }
        let notifier = SystemdNotifier(environment: environment)
        // zbar, then light-on-dark and zxing-cpp within a quarter of zbar's CPU (README, "At the gate").
        let pipeline: ReadingPipeline
        do {
            pipeline = try ReadingPipeline(clock: .threadCPUTime)
        } catch {
            throw CommandFailure("\(error)")
        }
        let checkInTransport = try context.transport(for: core, timeout: .milliseconds(offlineAfterMilliseconds))
        let runner = KioskRunner(core: core, terminal: terminal, clock: clock,
                                 options: .init(cooldown: cooldown, json: asJSON, decorate: isatty(STDOUT_FILENO) == 1,
                                                offlinePolicy: policy),
                                 notifier: notifier, checkInTransport: checkInTransport) { frame in
            try pipeline.decode(frame).codes.map(\.text)
        }
        let source = try sourceChoice.open(clock: clock) { transition in
            terminal.err("camera: \(transition)")
            notifier.status("camera: \(transition.to)")
        }
        do {
            try runner.start()
        } catch {
            throw CommandFailure(ClientCommands.sentence(for: error))
        }
        notifier.ready(status: "scanning")
        let termination = TerminationSignals()
        let camera = source as? V4L2Camera
        let watchdog = notifier.watchdogInterval.map { interval in
            Watchdog(interval: interval) {
                // A camera waiting to come back blocks the frame loop on purpose.
                let cameraBusy = camera.map { $0.state != .streaming } ?? false
                return cameraBusy || runner.isResponsive(within: interval * 4)
            } ping: { notifier.watchdog() }
        }
        // The source is read by the scanning thread only, from here on.
        let handOver = UncheckedBox(source)
        // A source that fails for good (not a camera, an unreadable recording) ends the kiosk
        // with status 1, so that systemd restarts it and the journal says why; a camera that
        // is merely lost never throws, it waits and reopens.
        let failure = Locked<String?>(nil)
        let scanning = Thread {
            do {
                try runner.scan(handOver.value)
                if sourceChoice.isFinite { terminal.err("no more frames; waiting for decisions until Ctrl-C") }
            } catch {
                if !runner.isStopping {
                    failure.withLock { $0 = "\(error)" }
                    termination.interrupt()
                }
            }
        }
        scanning.start()
        termination.wait()
        notifier.stopping()
        camera?.stop()
        runner.stop()
        watchdog?.stop()
        if let reason = failure.withLock({ $0 }) { throw CommandFailure(reason) }
        return 0
    }
}

extension FrameSourceOptions.Choice {
    /// The kiosk's frame source; a camera reports its state changes through `onTransition`.
    func open(clock: any WallClock, onTransition: @escaping @Sendable (CameraTransition) -> Void) throws -> any FrameSource {
        switch self {
        case .camera(let configuration):
            return V4L2Camera(configuration: configuration, device: LibV4L2Device(), clock: clock, onTransition: onTransition)
        case .images(let paths):
            return ImageFileSource(paths: paths)
        case .directory(let path):
            do {
                return try ImageFileSource(directory: path)
            } catch {
                throw CommandFailure("\(error)")
            }
        case .video(let path):
            do {
                return try Y4MSource(path: path)
            } catch {
                throw CommandFailure("\(error)")
            }
        }
    }
}

/// `gatepass kiosk roll`: who is on site, as this device knows it: the server's last roll (the
/// running kiosk refreshes it with its pass cache every 30 s) with what this kiosk admitted and
/// checked out since, so the roll can be read with the network down. Reads the state file only;
/// never asks the server.
struct KioskRollCommand: GatePassCommand {
    static let configuration = CommandConfiguration(
        name: "gatepass kiosk roll",
        overview: "Print the evacuation roll (who is checked in) without asking the server: the server's last roll, kept with this kiosk's pass cache, with the people this kiosk admitted (online or offline) and checked out since. The first line says how many and how old the server's part is, then one person a line, with the time in (in this device's time zone, named). " + ServerOptions.stateNote,
        options: [OutputOptions.flag("Print {syncedAt, server, admittedHere, checkedOutHere, visitors: [{shortId, name, inSince, admittedHere, visitor}]} instead (visitor absent for a pass admitted here by its signature alone).")])

    struct Roll: Encodable {
        struct Person: Encodable {
            var shortId: String
            var name: String
            var inSince: Timestamp?
            var admittedHere: Bool
            var visitor: Visitor?
        }
        var syncedAt: Timestamp?
        var server: String?
        var admittedHere: Int
        var checkedOutHere: Int
        var visitors: [Person]
    }

    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) { json = arguments.has(OutputOptions.json) }

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core(platform: "kiosk")
        let roll = try core.onSiteRoll()
        let server = try core.passCacheStatus()?.server
        guard roll.serverRollAt != nil || !roll.entries.isEmpty else {
            throw CommandFailure("this kiosk has no pass cache yet: run gatepass kiosk while the server is reachable")
        }
        if json {
            context.terminal.out(ClientCommands.json(Roll(
                syncedAt: roll.serverRollAt.map(Timestamp.init), server: server, admittedHere: roll.admittedHere,
                checkedOutHere: roll.checkedOutHere,
                visitors: roll.entries.map { Roll.Person(shortId: $0.shortId.rawValue, name: $0.name, inSince: $0.inSince.map(Timestamp.init),
                                                         admittedHere: $0.admittedHere, visitor: $0.visitor) })))
            return 0
        }
        let now = context.clock.now()
        let site = SiteClock(timeZone: .current)
        var heading = roll.entries.count == 1 ? "1 on site" : "\(roll.entries.count) on site"
        if let fetched = roll.serverRollAt {
            heading += " (server's roll \(ClientCommands.age(fetched, now: now)) old, taken \(site.stamped(fetched))"
            if let server { heading += ", from \(server)" }
            heading += ")"
        } else {
            heading += " (no roll from the server yet)"
        }
        var here: [String] = []
        if roll.admittedHere > 0 { here.append("\(roll.admittedHere) admitted") }
        if roll.checkedOutHere > 0 { here.append("\(roll.checkedOutHere) checked out") }
        if !here.isEmpty { heading += "; " + here.joined(separator: " and ") + " here since" }
        context.terminal.out(visible: heading)
        for entry in roll.entries {
            let company = entry.visitor?.company.map { " (\($0))" } ?? ""
            let name = entry.visitor == nil ? "(name not known here)" : entry.name
            let since = entry.inSince.map { " — in since \(site.stamped($0))" } ?? ""
            let mark = entry.admittedHere ? " — admitted here" + (entry.visitor == nil ? " by signature" : "") : ""
            context.terminal.out(visible: "\(entry.shortId.rawValue)  \(name)\(company)\(since)\(mark)")
        }
        return 0
    }
}
