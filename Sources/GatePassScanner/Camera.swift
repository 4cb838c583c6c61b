import Foundation
import GatePassCore

// MARK: - Camera

/// A V4L2 camera as a frame source: MMAP streaming through libv4l2, luma frames out, and a
/// state machine that rides out unplugs.
///
/// ```swift
/// let camera = V4L2Camera(configuration: .init(devicePath: "/dev/v4l/by-id/usb-…-video-index0"),
///                         device: LibV4L2Device(),
///                         onTransition: { log("camera \($0)") })
/// while try camera.withNextFrame({ frame in decoder.decode(frame) }) {}
/// // elsewhere: camera.stop()
/// ```
///
/// Negotiation takes GREY, else YUYV (or UYVY), at the configured size; a camera that offers
/// neither (an MJPEG-only webcam) is asked for YU12, which libv4l2 converts to in software.
/// libv4lconvert's targets are RGB3, BGR3, YU12 and YV12 only — it cannot produce YUYV or
/// GREY — so YU12 is the luma-carrying format to ask for. Whatever size and stride the driver
/// sets is used. GREY and YU12 frames without row padding are handed over straight from the
/// mapped buffer; others have their Y bytes copied into one buffer reused for every frame.
///
/// When the device fails (`ENODEV`, `EIO`, `POLLERR`, no frame for `frameTimeout`) everything
/// is released — stream off, every buffer unmapped, the descriptor closed — and the camera
/// reopens it after 1, 2, 4, 8 … seconds (capped at 60), for as long as it takes. Meanwhile
/// `withNextFrame` blocks; it returns false only once `stop()` was called.
///
/// Synchronisation: the device, its buffers and the counters are touched only while
/// `captureLock` is held — by `withNextFrame`, or by `stop()` when no capture is in progress.
/// `state` and `format` can be read from any thread, and `stop()` called from any thread.
/// `onTransition` is called on whichever thread made the transition.
public final class V4L2Camera: FrameSource, @unchecked Sendable {
    /// What to open and how.
    public struct Configuration: Sendable, Equatable {
        /// A device node, or a stable name such as `/dev/v4l/by-id/usb-…-video-index0`.
        public var devicePath: String
        public var width: Int
        public var height: Int
        public var framesPerSecond: Int
        /// Memory-mapped buffers to ask for; the driver may grant fewer.
        public var bufferCount: Int
        /// The first wait before reopening; each failure doubles it, up to `reconnectCap`.
        public var reconnectBase: TimeInterval
        public var reconnectCap: TimeInterval
        /// A stream that delivers nothing for this long counts as lost.
        public var frameTimeout: TimeInterval
        /// The longest single `poll`: how late a `stop()` can be noticed while no frame comes.
        public var pollInterval: TimeInterval

        public init(devicePath: String, width: Int = 640, height: Int = 480, framesPerSecond: Int = 30,
                    bufferCount: Int = 4, reconnectBase: TimeInterval = 1, reconnectCap: TimeInterval = 60,
                    frameTimeout: TimeInterval = 5, pollInterval: TimeInterval = 0.1) {
            self.devicePath = devicePath
            self.width = width
            self.height = height
            self.framesPerSecond = framesPerSecond
            self.bufferCount = bufferCount
            self.reconnectBase = reconnectBase
            self.reconnectCap = reconnectCap
            self.frameTimeout = frameTimeout
            self.pollInterval = pollInterval
        }

        /// The wait before the next attempt after `failures` failures in a row (≥ 1):
        /// base · 2^(failures − 1), at most the cap.
        public func reconnectDelay(afterFailures failures: Int) -> TimeInterval {
            let exponent = min(max(failures - 1, 0), 30)
            return min(reconnectCap, reconnectBase * Double(1 << exponent))
        }
    }

    public let configuration: Configuration
    private let device: any VideoDevice
    private let clock: any WallClock
    private let sleeper: any ReconnectSleeper
    private let onTransition: (@Sendable (CameraTransition) -> Void)?

    private let stopSignal = StopSignal()
    private let published = Locked<(state: CameraState, format: CameraFormat?)>((.absent, nil))

    // MARK: Capture (only while `captureLock` is held)
    private let captureLock = NSLock()
    private var session: CaptureSession?
    /// Failed opens and losses since the last delivered frame: the backoff exponent.
    private var consecutiveFailures = 0
    private var reconnectPending = false
    private var nextFrameIndex = 0
    private var lastFrameAt = Date.distantPast

    /// - Parameters:
    ///   - configuration: the device and the format to ask for.
    ///   - device: the system calls; `LibV4L2Device()` for a real camera.
    ///   - clock: for frame timeouts and the `waiting(until:)` time.
    ///   - sleeper: how to wait between reconnect attempts.
    ///   - onTransition: told of every state change, on the thread that made it.
    public init(configuration: Configuration, device: any VideoDevice, clock: any WallClock = SystemWallClock(),
                sleeper: any ReconnectSleeper = SystemSleeper(),
                onTransition: (@Sendable (CameraTransition) -> Void)? = nil) {
        precondition(configuration.width > 0 && configuration.height > 0, "a camera needs a frame size")
        precondition(configuration.framesPerSecond > 0, "a camera needs a frame rate")
        precondition(configuration.bufferCount > 0, "a camera needs at least one buffer")
        precondition(configuration.reconnectBase > 0 && configuration.reconnectCap >= configuration.reconnectBase,
                     "the reconnect backoff needs a positive base and a cap no smaller")
        self.configuration = configuration
        self.device = device
        self.clock = clock
        self.sleeper = sleeper
        self.onTransition = onTransition
    }

    deinit {
        // Backstop only: `stop()` releases the device when the owner is done with it.
        if let session { release(session) }
    }

    /// The current state; readable from any thread.
    public var state: CameraState { published.withLock { $0.state } }

    /// The format being streamed, nil when not streaming.
    public var format: CameraFormat? { published.withLock { $0.format } }

    /// Stops the camera from any thread: a reconnect wait ends at once, a capture in progress
    /// returns (false, or true for a frame already being handed over), and the device is
    /// released. Every later `withNextFrame` returns false.
    public func stop() {
        stopSignal.raise()
        // Whoever holds the capture lock releases the device when it lets go of the lock
        // (see `withNextFrame`); if nobody does, it is done here.
        if captureLock.try() {
            shutDown()
            captureLock.unlock()
        }
    }

    /// Calls `body` with the next frame's luma plane and returns true; returns false once the
    /// camera was stopped. While the device is absent or lost this blocks, reopening it with
    /// backoff, until it streams again or `stop()` is called.
    ///
    /// - Throws: `ScannerError.device(lost: false)` when the device can never be used (not a
    ///   V4L2 capture device, no streaming, no format with a luma plane); whatever `body` throws.
    public func withNextFrame(_ body: (FrameView) throws -> Void) throws -> Bool {
        captureLock.lock()
        defer {
            captureLock.unlock()
            // A stop() that came while the lock was held left the release to us; it raised the
            // signal before trying the lock, so it is visible here.
            if stopSignal.isRaised, captureLock.try() {
                shutDown()
                captureLock.unlock()
            }
        }
        while true {
            if stopSignal.isRaised {
                shutDown()
                return false
            }
            guard let session else {
                if reconnectPending {
                    waitBeforeReopening()
                } else {
                    try openSession()
                }
                continue
            }
            switch awaitBuffer(in: session) {
            case .stopRequested:
                continue
            case .lost(let reason):
                lose(session, reason: reason)
            case .buffer(let buffer):
                if try deliver(buffer, from: session, to: body) { return true }
            }
        }
    }

    // MARK: - Transitions

    private func transition(to newState: CameraState, _ reason: String, format: CameraFormat? = nil) {
        let oldState = published.withLock { published in
            let old = published.state
            published = (newState, format)
            return old
        }
        onTransition?(CameraTransition(from: oldState, to: newState, reason: reason, time: clock.now()))
    }

    /// Releases the device (if open) and ends in `stopped`. Capture lock held.
    private func shutDown() {
        if let session {
            release(session)
            self.session = nil
        }
        if state != .stopped { transition(to: .stopped, "stop requested") }
    }

    /// Tears down a failed stream and schedules a reconnect. Capture lock held.
    private func lose(_ failed: CaptureSession, reason: String) {
        release(failed)
        session = nil
        consecutiveFailures += 1
        reconnectPending = true
        transition(to: .lost, reason)
    }

    private func waitBeforeReopening() {
        let delay = configuration.reconnectDelay(afterFailures: consecutiveFailures)
        transition(to: .waiting(until: clock.now().addingTimeInterval(delay)), "reopening in \(seconds(delay))")
        sleeper.sleep(seconds: delay, unless: stopSignal)
        reconnectPending = false
    }

    // MARK: - Opening

    private enum OpenFailure: Error {
        /// The world may fix it (unplugged, busy, not there yet): wait and try again.
        case retry(reason: String, absent: Bool)
        /// It cannot work with this device, however long we wait.
        case unusable(String)
    }

    private func openSession() throws {
        let path = configuration.devicePath
        var reason = "opening \(path)"
        if let resolved = device.canonicalPath(path), resolved != path { reason += " (→ \(resolved))" }
        transition(to: .opening, reason)
        do throws(OpenFailure) {
            let opened = try negotiate()
            session = opened
            lastFrameAt = clock.now()
            transition(to: .streaming, "\(opened.format) from \(opened.card)", format: opened.format)
        } catch {
            switch error {
            case .retry(let reason, let absent):
                consecutiveFailures += 1
                reconnectPending = true
                transition(to: absent ? .absent : .lost, reason)
            case .unusable(let reason):
                // Nothing to wait for: stop for good, and say why.
                stopSignal.raise()
                transition(to: .stopped, reason)
                throw ScannerError.device(path: path, reason: reason, lost: false)
            }
        }
    }

    /// Opens the device and brings it to streaming; on failure releases what it took.
    private func negotiate() throws(OpenFailure) -> CaptureSession {
        let handle: VideoDeviceHandle
        do throws(VideoDeviceError) {
            handle = try device.open(configuration.devicePath)
        } catch {
            // v4l2_open itself asks for the capabilities, so a node that is no V4L2 device
            // (/dev/null, a disk) fails here with ENOTTY.
            if error.code == ENOTTY { throw .unusable("not a V4L2 device (\(error))") }
            throw .retry(reason: error.description, absent: error.meansDeviceAbsent)
        }
        let session = CaptureSession(handle: handle)
        do {
            try setUp(session)
            return session
        } catch {
            release(session)
            switch error {
            case let failure as OpenFailure: throw failure
            case let failure as VideoDeviceError: throw .retry(reason: failure.description, absent: false)
            default: throw .retry(reason: "\(error)", absent: false)
            }
        }
    }

    /// Capabilities, format, rate, buffers, stream on. Throws `OpenFailure` for what it
    /// judges itself and `VideoDeviceError` for a failed call (which a retry may fix).
    private func setUp(_ session: CaptureSession) throws {
        let handle = session.handle
        let capabilities: VideoCapabilities
        do {
            capabilities = try device.queryCapabilities(handle)
        } catch {
            if error.code == ENOTTY { throw OpenFailure.unusable("not a V4L2 device (\(error))") }
            throw error
        }
        session.card = capabilities.card.isEmpty ? capabilities.driver : capabilities.card
        guard capabilities.canCapture else {
            throw OpenFailure.unusable("\(session.card) is not a video capture device")
        }
        guard capabilities.canStream else {
            throw OpenFailure.unusable("\(session.card) does not support streaming I/O")
        }

        let offered = try device.enumerateFormats(handle)
        var chosen: (format: VideoFormat, layout: LumaLayout)?
        for candidate in Self.candidateFormats(offered: offered.map(\.pixelFormat)) {
            let set = try device.setFormat(handle, pixelFormat: candidate,
                                           width: configuration.width, height: configuration.height)
            // The driver may substitute another format (uvcvideo answers with its default when
            // asked for one it lacks); take it if it carries luma we can read.
            if let layout = LumaLayout(set) {
                chosen = (set, layout)
                break
            }
        }
        guard let chosen else {
            let names = offered.map(\.pixelFormat.description).joined(separator: ", ")
            throw OpenFailure.unusable(
                "\(session.card) offers no format with a luma plane (offers \(names.isEmpty ? "none" : names))")
        }

        var framesPerSecond: Double?
        do {
            framesPerSecond = try device.setFrameRate(handle, framesPerSecond: configuration.framesPerSecond)
        } catch {
            // EINVAL, ENOTTY: the driver has one rate and does not let it be set.
            guard error.code == EINVAL || error.code == ENOTTY else { throw error }
            framesPerSecond = nil
        }

        let granted = try device.requestBuffers(handle, count: configuration.bufferCount)
        guard granted > 0 else { throw OpenFailure.retry(reason: "the driver granted no buffers", absent: false) }
        for index in 0..<granted {
            let description = try device.queryBuffer(handle, index: index)
            let address = try device.mmap(handle, length: description.length, offset: description.offset)
            session.buffers.append(MappedBuffer(address: address, length: description.length))
            guard description.length >= chosen.layout.requiredBytes else {
                throw OpenFailure.retry(
                    reason: "buffer \(index) holds \(description.length) bytes, a frame needs \(chosen.layout.requiredBytes)",
                    absent: false)
            }
        }
        for index in 0..<granted { try device.queueBuffer(handle, index: index) }
        try device.streamOn(handle)
        session.isStreaming = true

        let isEmulated = offered.first { $0.pixelFormat == chosen.format.pixelFormat }?.isEmulated ?? false
        session.format = CameraFormat(
            pixelFormat: chosen.format.pixelFormat, width: chosen.layout.width, height: chosen.layout.height,
            bytesPerLine: chosen.layout.bytesPerLine, framesPerSecond: framesPerSecond, bufferCount: granted,
            isEmulated: isEmulated)
        session.layout = chosen.layout
        if !chosen.layout.isContiguousLuma {
            session.scratch = .allocate(byteCount: chosen.layout.width * chosen.layout.height, alignment: 16)
        }
    }

    /// The formats to ask for, best first: the luma-carrying formats the device lists (GREY,
    /// then the packed 4:2:2 ones, then planar 4:2:0 — which libv4l2 lists as emulated for
    /// an MJPEG camera), and YU12 last in any case, since libv4l2 converts to it even when the
    /// device lists nothing we can read.
    static func candidateFormats(offered: [PixelFormat]) -> [PixelFormat] {
        var candidates = LumaLayout.preference.filter { offered.contains($0) }
        if !candidates.contains(.yuv420) { candidates.append(.yuv420) }
        return candidates
    }

    // MARK: - Capture

    private enum Awaited {
        case buffer(DequeuedBuffer)
        case lost(String)
        case stopRequested
    }

    private func awaitBuffer(in session: CaptureSession) -> Awaited {
        while !stopSignal.isRaised {
            let quiet = clock.now().timeIntervalSince(lastFrameAt)
            if quiet >= configuration.frameTimeout {
                return .lost("no frame for \(seconds(quiet))")
            }
            let events: PollEvents
            do {
                events = try device.poll(session.handle, timeout: configuration.pollInterval)
            } catch {
                return .lost("\(error)")
            }
            if !events.isDisjoint(with: [.error, .hangUp, .invalid]) {
                return .lost("poll reported \(events)")
            }
            guard events.contains(.readable) else { continue }
            do throws(VideoDeviceError) {
                return .buffer(try device.dequeueBuffer(session.handle))
            } catch where error.code == EAGAIN {
                continue  // Woken without a filled buffer: poll again.
            } catch {
                return .lost(error.description)
            }
        }
        return .stopRequested
    }

    /// Hands a dequeued buffer to `body` and gives it back to the driver; returns false when
    /// the frame was skipped (damaged, short, or the device failed meanwhile).
    private func deliver(_ buffer: DequeuedBuffer, from session: CaptureSession,
                         to body: (FrameView) throws -> Void) throws -> Bool {
        guard session.buffers.indices.contains(buffer.index) else {
            lose(session, reason: "VIDIOC_DQBUF returned buffer \(buffer.index) of \(session.buffers.count)")
            return false
        }
        let mapped = session.buffers[buffer.index]
        let filled = buffer.bytesUsed > 0 ? min(buffer.bytesUsed, mapped.length) : mapped.length
        guard !buffer.isDamaged, filled >= session.layout.requiredBytes else {
            requeue(buffer.index, in: session)
            return false
        }
        let frame = FrameView(width: session.layout.width, height: session.layout.height,
                              luma: session.luma(in: mapped), index: nextFrameIndex)
        nextFrameIndex += 1
        consecutiveFailures = 0
        lastFrameAt = clock.now()
        let outcome = Result { try body(frame) }
        requeue(buffer.index, in: session)
        try outcome.get()
        return true
    }

    private func requeue(_ index: Int, in session: CaptureSession) {
        do {
            try device.queueBuffer(session.handle, index: index)
        } catch {
            lose(session, reason: "\(error)")
        }
    }

    /// Stream off, unmap every buffer, close: all of it, whatever fails on the way (an
    /// unplugged device answers ENODEV to most of it).
    private func release(_ session: CaptureSession) {
        if session.isStreaming { try? device.streamOff(session.handle) }
        for buffer in session.buffers { try? device.munmap(buffer.address, length: buffer.length) }
        session.buffers = []
        device.close(session.handle)
        session.scratch?.deallocate()
        session.scratch = nil
    }
}

// MARK: - Session and luma layout

/// Where the Y bytes are in a frame of a negotiated format.
struct LumaLayout: Equatable {
    /// The formats we read luma from, best first.
    static let preference: [PixelFormat] = [.grey, .yuyv, .uyvy, .yuv420, .yvu420]

    var width: Int
    var height: Int
    var bytesPerLine: Int
    /// Offset of the first Y byte in a row (1 for UYVY).
    var firstByte: Int
    /// Bytes from one Y to the next in a row (2 for packed 4:2:2).
    var step: Int

    init(width: Int, height: Int, bytesPerLine: Int, firstByte: Int, step: Int) {
        self.width = width
        self.height = height
        self.bytesPerLine = bytesPerLine
        self.firstByte = firstByte
        self.step = step
    }

    init?(_ format: VideoFormat) {
        switch format.pixelFormat {
        case .grey, .yuv420, .yvu420: (firstByte, step) = (0, 1)
        case .yuyv: (firstByte, step) = (0, 2)
        case .uyvy: (firstByte, step) = (1, 2)
        default: return nil
        }
        guard format.width > 0, format.height > 0 else { return nil }
        width = format.width
        height = format.height
        // Some drivers leave bytesperline 0 for "packed"; never trust it below a row's pixels.
        bytesPerLine = max(format.bytesPerLine, format.width * step)
    }

    /// The bytes a buffer must hold for the last row's last Y to be in it.
    var requiredBytes: Int { bytesPerLine * (height - 1) + width * step }

    /// True when the buffer's start already is a `width × height` luma plane (no copy needed).
    var isContiguousLuma: Bool { step == 1 && bytesPerLine == width }
}

private struct MappedBuffer {
    let address: UnsafeMutableRawPointer
    let length: Int
}

/// An open device and what was set up on it. Owned by the camera; touched under its lock.
private final class CaptureSession {
    let handle: VideoDeviceHandle
    var card = ""
    var buffers: [MappedBuffer] = []
    var isStreaming = false
    var format = CameraFormat(pixelFormat: .grey, width: 0, height: 0, bytesPerLine: 0, framesPerSecond: nil,
                              bufferCount: 0, isEmulated: false)
    var layout = LumaLayout(width: 0, height: 0, bytesPerLine: 0, firstByte: 0, step: 1)
    /// Where the Y bytes of a padded or packed frame are gathered; reused for every frame.
    var scratch: UnsafeMutableRawBufferPointer?

    init(handle: VideoDeviceHandle) { self.handle = handle }

    /// The frame's luma plane: the mapped buffer itself when it is one, else its Y bytes
    /// gathered row by row (skipping the stride's padding and the chroma) into `scratch`.
    func luma(in buffer: MappedBuffer) -> UnsafeRawBufferPointer {
        let planeSize = layout.width * layout.height
        guard let scratch else { return UnsafeRawBufferPointer(start: buffer.address, count: planeSize) }
        let source = UnsafeRawPointer(buffer.address)
        let destination = scratch.baseAddress!
        for row in 0..<layout.height {
            let rowStart = source + row * layout.bytesPerLine + layout.firstByte
            let target = destination + row * layout.width
            if layout.step == 1 {
                target.copyMemory(from: rowStart, byteCount: layout.width)
            } else {
                for column in 0..<layout.width {
                    target.storeBytes(of: rowStart.load(fromByteOffset: column * layout.step, as: UInt8.self),
                                      toByteOffset: column, as: UInt8.self)
                }
            }
        }
        return UnsafeRawBufferPointer(start: destination, count: planeSize)
    }
}

private func seconds(_ interval: TimeInterval) -> String {
    interval == interval.rounded() ? "\(Int(interval)) s" : String(format: "%.1f s", interval)
}
