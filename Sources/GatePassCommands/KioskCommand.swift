import Foundation
import GatePassClient
import GatePassCore
import GatePassScanner

/// `gatepass kiosk`: the unattended gate (see `KioskRunner`), with its frame source, the
/// systemd notifications and the signals wired in.
enum KioskCommand {
    static let help = HelpText(
        overview: "Run the unattended gate: read passes from a camera (or images, a folder, a Y4M recording), check each new one in, and print one decision line per pass. Runs until SIGTERM or Ctrl-C; losing the camera or the server never ends it.",
        usage: "gatepass kiosk [--server URL] (--device DEV [--size WxH] [--fps N] | --image FILE... | --dir DIR | --video FILE.y4m) [--cooldown S] [--json]",
        options: [
            ("--server URL", "The server the kiosk is logged in to (checked against the session; default: that one)."),
            ("--device DEV", "A V4L2 camera, e.g. /dev/gate-camera or /dev/v4l/by-id/…; reopened with backoff when lost."),
            ("--size WxH", "With --device: the frame size to ask for (default 640x480)."),
            ("--fps N", "With --device: the frame rate to ask for (default 30)."),
            ("--image FILE...", "PGM, PNG or JPEG files, read once in order."),
            ("--dir DIR", "Every image in a folder, in name order."),
            ("--video FILE.y4m", "A Y4M recording of a camera."),
            ("--cooldown S", "A pass counts again only after this many seconds out of view (default 3)."),
            ("--json", "Print one JSON object per decision instead of the line."),
        ])

    static func run(_ arguments: [String], terminal: any Terminal, environment: [String: String],
                    clock: any WallClock) throws -> Int32 {
        var reader = ArgumentReader(arguments)
        if reader.wantsHelp { terminal.out(help.rendered); return 0 }
        let server = try reader.option("--server")
        let cooldownText = try reader.option("--cooldown")
        let asJSON = reader.flag("--json")
        let sourceChoice = try SourceChoice.read(&reader)
        try reader.finish()
        let cooldown = try cooldownText.map { text throws(UsageError) -> Double in
            guard let value = Double(text), value.isFinite, (0...3600).contains(value) else {
                throw UsageError("--cooldown must be a number of seconds from 0 to 3600")
            }
            return value
        } ?? 3

        let context = ClientCommands.Context(terminal: terminal, environment: environment, clock: clock)
        let core: ClientCore
        do {
            core = try context.core(platform: "kiosk")
            let session = try core.session(on: server)
            _ = try core.ensureScannerToken(now: clock.now())
            terminal.err(visible: "kiosk of \(session.user.email) on \(session.server)")
        } catch let error as ClientError {
            throw CommandFailure(ClientCommands.sentence(for: error))
        }
        let notifier = SystemdNotifier(environment: environment)
        let decoder: QRDecoder
        do {
            decoder = try QRDecoder()
        } catch {
            throw CommandFailure("\(error)")
        }
        let runner = KioskRunner(core: core, terminal: terminal, clock: clock,
                                 options: .init(cooldown: cooldown, json: asJSON, decorate: isatty(STDOUT_FILENO) == 1),
                                 notifier: notifier) { frame in
            try decoder.decode(frame).codes.map(\.text)
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

    /// Where frames come from, as chosen on the command line.
    enum SourceChoice {
        case device(path: String, width: Int, height: Int, fps: Int)
        case images([String])
        case folder(String)
        case video(String)

        var isFinite: Bool { if case .device = self { false } else { true } }

        static func read(_ reader: inout ArgumentReader) throws(UsageError) -> SourceChoice {
            let device = try reader.option("--device")
            let size = try reader.option("--size")
            let fps = try reader.integerOption("--fps", in: 1...120)
            // `--image a.png b.png` and `--image a.png --image b.png` both work.
            var images: [String] = []
            while let image = try reader.option("--image") { images.append(image) }
            if !images.isEmpty { while let more = reader.positional() { images.append(more) } }
            let folder = try reader.option("--dir")
            let video = try reader.option("--video")
            let chosen = [device != nil, !images.isEmpty, folder != nil, video != nil].filter { $0 }.count
            guard chosen == 1 else { throw UsageError("choose exactly one of --device, --image, --dir and --video") }
            if device == nil, size != nil || fps != nil { throw UsageError("--size and --fps go with --device") }
            if let device {
                var width = 640, height = 480
                if let size {
                    let parts = size.lowercased().split(separator: "x")
                    guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), (16...4096).contains(w),
                          (16...4096).contains(h) else { throw UsageError("--size must be WIDTHxHEIGHT, e.g. 640x480") }
                    width = w
                    height = h
                }
                return .device(path: device, width: width, height: height, fps: fps ?? 30)
            }
            if !images.isEmpty { return .images(images) }
            if let folder { return .folder(folder) }
            return .video(video!)
        }

        func open(clock: any WallClock, onTransition: @escaping @Sendable (CameraTransition) -> Void) throws -> any FrameSource {
            switch self {
            case .device(let path, let width, let height, let fps):
                return V4L2Camera(configuration: .init(devicePath: path, width: width, height: height, framesPerSecond: fps),
                                  device: LibV4L2Device(), clock: clock, onTransition: onTransition)
            case .images(let paths):
                return ImageFileSource(paths: paths)
            case .folder(let path):
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
}

/// Pings systemd's watchdog while `healthy` says the kiosk works, on its own thread.
final class Watchdog: @unchecked Sendable {
    private let stopped = DispatchSemaphore(value: 0)

    init(interval: Duration, healthy: @escaping @Sendable () -> Bool, ping: @escaping @Sendable () -> Void) {
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        let thread = Thread { [stopped] in
            while stopped.wait(timeout: .now() + seconds) == .timedOut {
                if healthy() { ping() }
            }
        }
        thread.name = "gatepass-watchdog"
        thread.start()
    }

    func stop() { stopped.signal() }
}

/// Moves a value that is not `Sendable` to another thread that becomes its only user.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
