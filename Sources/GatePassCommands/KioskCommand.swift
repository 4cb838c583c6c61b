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

/// `gatepass kiosk roll`: who is on site, as the kiosk's pass cache last heard it from the
/// server (the running kiosk refreshes it every 30 s), so the roll can be read with the
/// network down. Reads the state file only; never asks the server.
struct KioskRollCommand: GatePassCommand {
    static let configuration = CommandConfiguration(
        name: "gatepass kiosk roll",
        overview: "Print the evacuation roll (who is checked in) from this kiosk's pass cache, without asking the server: the first line says how old it is, then one visitor a line. " + ServerOptions.stateNote,
        options: [OutputOptions.flag("Print {syncedAt, server, visitors: [Visitor]} instead.")])

    struct Roll: Encodable {
        var syncedAt: Timestamp
        var server: String
        var visitors: [Visitor]
    }

    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) { json = arguments.has(OutputOptions.json) }

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core(platform: "kiosk")
        guard let status = try core.passCacheStatus() else {
            throw CommandFailure("this kiosk has no pass cache yet: run gatepass kiosk while the server is reachable")
        }
        let visitors = try core.cachedOnSite()
        if json {
            context.terminal.out(ClientCommands.json(Roll(syncedAt: Timestamp(status.lastSyncAt), server: status.server, visitors: visitors)))
            return 0
        }
        let age = GateDecision.ageText(Int(status.age(at: context.clock.now())))
        context.terminal.out(visible: "\(visitors.count) on site (\(age), from \(status.server))")
        for visitor in visitors {
            let company = visitor.company.map { " (\($0))" } ?? ""
            let since = visitor.checkedInAt.map { " — in since \(Timestamp($0))" } ?? ""
            context.terminal.out(visible: "\(visitor.shortId.rawValue)  \(visitor.name)\(company)\(since)")
        }
        return 0
    }
}
