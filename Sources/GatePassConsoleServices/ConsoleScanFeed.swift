import Foundation
import GatePassCore
import GatePassScanner

/// The console's frame reader: a thread that reads frames from a camera, image files, a
/// folder or a Y4M recording, decodes QR codes with zbar and reports each newly seen code
/// once (the kiosk's held-code and cooldown rules, `CodeDeduplicator`, cooldown 3 s).
///
/// ```swift
/// let feed = ConsoleScanFeed(source: .camera(devicePath: "/dev/video0"),
///                            onCode: { code in ui.post { bell(screen.scanned(code)) } },
///                            onState: { state in ui.post { screen.sourceState(state.text, isProblem: state.isProblem) } })
/// feed.start()
/// …
/// feed.stop()   // on quit: returns once the thread has ended and the source is released
/// ```
///
/// `onCode` and `onState` are called on the feed's thread, never after `stop()` has returned:
/// the driver hands them to its UI thread (screens are single-threaded). Calling `stop()`
/// from inside them ends the feed without waiting for itself.
///
/// Nothing the source does ends the console: an unreadable or damaged image is reported and
/// skipped, a recording that breaks or a folder that cannot be listed ends the feed with a
/// state that says why, and a camera that is unplugged is reopened with backoff (its state
/// changes are reported) until `stop()`.
///
/// Synchronisation: `start()` and `stop()` may be called from any thread; the source, the
/// decoder and the de-duplicator are used by the feed's thread only.
public final class ConsoleScanFeed: @unchecked Sendable {
    // @unchecked: the mutable state is in `control`, behind its lock; the rest is immutable.

    /// Where frames come from.
    public enum Source: Sendable, Equatable, CustomStringConvertible {
        /// A V4L2 camera (`/dev/video0`, or a stable name under `/dev/v4l/by-id/`), with the
        /// frame size and rate to ask for (the driver may pick the nearest it has).
        case camera(devicePath: String, width: Int = 640, height: Int = 480, framesPerSecond: Int = 30)
        /// PNG, JPEG or PGM files, read once in order as one stream of frames.
        case images([String])
        /// A folder's images in name order (hidden files and subfolders skipped).
        case directory(String)
        /// A YUV4MPEG2 recording of a camera.
        case video(String)

        /// What the source is, for the console's source line: "Camera /dev/video0".
        public var description: String {
            switch self {
            case .camera(let path, _, _, _): "Camera \(path)"
            case .images(let paths): paths.count == 1 ? "Image \(paths[0])" : "\(paths.count) image files"
            case .directory(let path): "Folder \(path)"
            case .video(let path): "Recording \(path)"
            }
        }

        /// Files and recordings end; a camera runs until stopped.
        public var isFinite: Bool { if case .camera = self { false } else { true } }
    }

    /// A change of the source's state, in words for the source line.
    public struct State: Sendable, Equatable {
        public var text: String
        /// The source is not delivering as it should (camera lost, a file unreadable).
        public var isProblem: Bool

        public init(text: String, isProblem: Bool = false) {
            self.text = text
            self.isProblem = isProblem
        }
    }

    public let source: Source
    public let cooldown: TimeInterval
    private let clock: any WallClock
    private let videoDevice: any VideoDevice
    private let onCode: @Sendable (String) -> Void
    private let onState: @Sendable (State) -> Void

    private struct Control {
        /// The feed's thread, by identity (`Locked` holds Sendable values; a `Thread` is not one on Linux).
        var thread: ObjectIdentifier?
        var started = false
        var stopping = false
        var finished = false
        /// The open camera, so `stop()` can cut its blocking wait short from another thread.
        var camera: V4L2Camera?
    }
    private let control = Locked(Control())
    private let done = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - source: where frames come from.
    ///   - cooldown: seconds a code must be out of view before it is reported again (3, as
    ///     the kiosk); finite and ≥ 0.
    ///   - clock: frame times for the cooldown.
    ///   - videoDevice: the system calls for a camera (`LibV4L2Device()`; tests pass a fake).
    ///   - onCode: each newly seen code's text, on the feed's thread.
    ///   - onState: each change of the source's state, on the feed's thread.
    public init(source: Source, cooldown: TimeInterval = 3, clock: any WallClock = SystemWallClock(),
                videoDevice: any VideoDevice = LibV4L2Device(),
                onCode: @escaping @Sendable (String) -> Void, onState: @escaping @Sendable (State) -> Void) {
        precondition(cooldown.isFinite && cooldown >= 0, "the cooldown must be a finite number of seconds ≥ 0")
        self.source = source
        self.cooldown = cooldown
        self.clock = clock
        self.videoDevice = videoDevice
        self.onCode = onCode
        self.onState = onState
    }

    deinit {
        // Backstop: a feed dropped without stop() must not leave a thread reading a camera.
        stop()
    }

    /// Starts reading on a thread of its own. A second call does nothing.
    public func start() {
        let thread = Thread { [self] in
            run()
            // Dropping the thread here breaks the cycle feed → thread → this closure → feed.
            control.withLock { control in
                control.finished = true
                control.thread = nil
                control.camera = nil
            }
            done.signal()
        }
        thread.name = "gatepass-console-scan"
        let shouldStart = control.withLock { control -> Bool in
            guard !control.started, !control.stopping else { return false }
            control.started = true
            control.thread = ObjectIdentifier(thread)
            return true
        }
        if shouldStart { thread.start() }
    }

    /// Stops reading and waits until the thread has ended and the source is released: within
    /// one frame's decode for files, at once for a camera (its waits are cut short). Safe to
    /// call more than once, or without `start()`.
    public func stop() {
        let (camera, wait) = control.withLock { control -> (V4L2Camera?, Bool) in
            let first = !control.stopping
            control.stopping = true
            let wait = first && control.started && control.thread != ObjectIdentifier(Thread.current)
            return (control.camera, wait)
        }
        camera?.stop()
        if wait {
            done.wait()
            // Let a later stop() (deinit) find the thread ended too.
            done.signal()
        }
    }

    /// Whether the feed has read everything (files, a recording) or gave up on its source.
    public var isFinished: Bool { control.withLock { $0.finished } }

    /// Waits until the feed is finished or `timeout` passes; true when it is finished.
    /// For finite sources (tests, a folder of captures); a camera finishes only after `stop()`.
    public func waitUntilFinished(timeout: TimeInterval) -> Bool {
        guard control.withLock({ $0.started }) else { return false }
        guard done.wait(timeout: .now() + timeout) == .success else { return false }
        done.signal()
        return true
    }

    private var isStopping: Bool { control.withLock { $0.stopping } }

    // MARK: - The feed's thread

    private func run() {
        // zbar, then light-on-dark and zxing-cpp within a quarter of zbar's CPU (README, "At the gate").
        let decoder: ReadingPipeline
        do {
            decoder = try ReadingPipeline(clock: .threadCPUTime)
        } catch {
            onState(State(text: "\(source): the QR decoder could not start (\(error)); type short ids instead", isProblem: true))
            return
        }
        let opened: any FrameSource
        do {
            opened = try open()
        } catch {
            onState(State(text: "\(source) cannot be used: \(error)", isProblem: true))
            return
        }
        var close: () -> Void = {}
        if let recording = opened as? Y4MSource { close = recording.close }
        if let camera = opened as? V4L2Camera {
            close = camera.stop
            // A stop() that came while the camera was being made would not have seen it.
            let stopped = control.withLock { control -> Bool in
                control.camera = camera
                return control.stopping
            }
            if stopped { camera.stop() }
        }
        defer { close() }

        switch source {
        case .camera: break
        case .images(let paths): onState(State(text: "\(source): reading \(Self.count(paths.count, "image"))"))
        case .directory: onState(State(text: "\(source): reading"))
        case .video: onState(State(text: "\(source): reading"))
        }
        var deduplicator = CodeDeduplicator(cooldown: cooldown)
        var frames = 0
        var unreadable = 0
        var ended: String?
        while !isStopping {
            do {
                let more = try opened.withNextFrame { frame in
                    frames += 1
                    let decoded = try decoder.decode(frame)
                    for code in deduplicator.observe(decoded.texts, at: clock.now()) { onCode(code) }
                }
                if !more { break }
            } catch let error as ScannerError {
                switch (error, source) {
                case (.unreadable, .images), (.undecodable, .images), (.unreadable, .directory), (.undecodable, .directory):
                    // One bad picture among many: say so and go on with the next.
                    unreadable += 1
                    frames += 1
                    onState(State(text: "\(source): skipped one — \(error)", isProblem: true))
                default:
                    ended = "\(error)"
                }
            } catch {
                ended = "\(error)"
            }
            if ended != nil { break }
        }
        if let ended {
            onState(State(text: "\(source) stopped: \(ended); type short ids instead", isProblem: true))
        } else if !isStopping {
            onState(finishedState(frames: frames, unreadable: unreadable))
        }
    }

    private func finishedState(frames: Int, unreadable: Int) -> State {
        switch source {
        case .camera:
            return State(text: "\(source): stopped", isProblem: true)
        case .images, .directory:
            let problems = unreadable == 0 ? "" : " (\(unreadable) could not be read)"
            return State(text: "\(source): finished reading \(Self.count(frames, "image"))\(problems)", isProblem: unreadable > 0)
        case .video:
            return State(text: "\(source): finished (\(Self.count(frames, "frame")))")
        }
    }

    /// The source opened, as `gatepass scan` and `gatepass kiosk` open theirs.
    private func open() throws -> any FrameSource {
        switch source {
        case .camera(let path, let width, let height, let framesPerSecond):
            // The camera traps on these (programmer errors there); here they are settings.
            guard width > 0, height > 0, framesPerSecond > 0 else {
                throw ScannerError.device(path: path, reason: "the frame size and rate must be positive (\(width)×\(height) at \(framesPerSecond) fps)", lost: false)
            }
            let description = source.description
            let report = onState
            return V4L2Camera(configuration: .init(devicePath: path, width: width, height: height,
                                                   framesPerSecond: framesPerSecond),
                              device: videoDevice, clock: clock,
                              onTransition: { report(Self.state(of: $0, camera: description)) })
        case .images(let paths):
            return ImageFileSource(paths: paths)
        case .directory(let path):
            return try ImageFileSource(directory: path)
        case .video(let path):
            return try Y4MSource(path: path)
        }
    }

    /// A camera transition as the source line says it.
    static func state(of transition: CameraTransition, camera: String) -> State {
        switch transition.to {
        case .absent: State(text: "\(camera): not connected (\(transition.reason)); type short ids meanwhile", isProblem: true)
        case .opening: State(text: "\(camera): opening")
        case .streaming: State(text: "\(camera): streaming")
        case .lost: State(text: "\(camera): lost (\(transition.reason)); type short ids meanwhile", isProblem: true)
        case .waiting(let until):
            // How long, not a clock time: the feed does not know the site's zone, and a wait
            // of seconds reads the same in any.
            State(text: "\(camera): trying again in \(max(1, Int(until.timeIntervalSince(transition.time).rounded(.up)))) s; type short ids meanwhile",
                  isProblem: true)
        case .stopped:
            transition.reason == "stop requested"
                ? State(text: "\(camera): stopped")
                : State(text: "\(camera): stopped (\(transition.reason))", isProblem: true)
        }
    }

    private static func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
}
