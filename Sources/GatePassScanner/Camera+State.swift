import Foundation
import GatePassCore

// MARK: - State

/// Where a camera is in its life. A camera moves
/// absent → opening → streaming → lost → waiting → opening → … and ends in stopped.
public enum CameraState: Sendable, Equatable, CustomStringConvertible {
    /// Not open: not opened yet, or the device node is not there (`ENOENT`, `ENODEV`).
    case absent
    /// Opening the device and negotiating format, rate and buffers.
    case opening
    /// Frames are flowing.
    case streaming
    /// The device failed (unplugged: `ENODEV`, `EIO`, `POLLERR`; or it could not be set up);
    /// everything was released, and the camera will try again.
    case lost
    /// Waiting until the given time before the next attempt to open.
    case waiting(until: Date)
    /// Stopped on request (or because the device can never be used); `withNextFrame` returns false.
    case stopped

    public var description: String {
        switch self {
        case .absent: "absent"
        case .opening: "opening"
        case .streaming: "streaming"
        case .lost: "lost"
        case .waiting: "waiting"
        case .stopped: "stopped"
        }
    }
}

/// One change of `CameraState`, with why it happened; the kiosk shows and logs these.
public struct CameraTransition: Sendable, Equatable, CustomStringConvertible {
    public var from: CameraState
    public var to: CameraState
    public var reason: String
    public var time: Date

    public init(from: CameraState, to: CameraState, reason: String, time: Date) {
        self.from = from
        self.to = to
        self.reason = reason
        self.time = time
    }

    /// `streaming → lost: VIDIOC_DQBUF failed: No such device (ENODEV)`.
    public var description: String { "\(from) → \(to): \(reason)" }
}

/// The capture format a camera is streaming with.
public struct CameraFormat: Sendable, Equatable, CustomStringConvertible {
    public var pixelFormat: PixelFormat
    /// The size the driver set, which may differ from the configured one.
    public var width: Int
    public var height: Int
    public var bytesPerLine: Int
    /// The rate the driver chose, nil when it does not say.
    public var framesPerSecond: Double?
    public var bufferCount: Int
    /// True when libv4l2 converts to this format in software (the camera sends, say, MJPEG).
    public var isEmulated: Bool

    /// `YUYV 640×480 (1280 bytes per line) at 30 fps, 4 buffers`.
    public var description: String {
        var text = "\(pixelFormat) \(width)×\(height) (\(bytesPerLine) bytes per line)"
        if let framesPerSecond { text += " at \(formatted(framesPerSecond)) fps" }
        text += ", \(bufferCount) buffer\(bufferCount == 1 ? "" : "s")"
        if isEmulated { text += ", converted by libv4l2" }
        return text
    }
}

// MARK: - Stopping and waiting

/// A one-way flag that another thread raises to stop a camera, and that waits can be cut
/// short by. Synchronised by its own condition lock.
public final class StopSignal: @unchecked Sendable {
    // @unchecked: `raised` is only touched while `condition` is locked.
    private let condition = NSCondition()
    private var raised = false

    public init() {}

    /// Raises the flag and wakes every `wait`.
    public func raise() {
        condition.lock()
        raised = true
        condition.broadcast()
        condition.unlock()
    }

    public var isRaised: Bool {
        condition.lock()
        defer { condition.unlock() }
        return raised
    }

    /// Waits up to `seconds` for the flag; returns whether it is raised.
    @discardableResult
    public func wait(seconds: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: max(seconds, 0))
        condition.lock()
        defer { condition.unlock() }
        while !raised {
            if !condition.wait(until: deadline) { break }
        }
        return raised
    }
}

/// How a camera waits between attempts to reopen its device. Passed in, so tests record the
/// backoff instead of sleeping through it.
public protocol ReconnectSleeper: Sendable {
    /// Waits `seconds`, or less when `stop` is raised meanwhile.
    func sleep(seconds: TimeInterval, unless stop: StopSignal)
}

/// Really waits, on the stop signal's condition, so `stop()` cuts the wait short at once.
public struct SystemSleeper: ReconnectSleeper {
    public init() {}
    public func sleep(seconds: TimeInterval, unless stop: StopSignal) { stop.wait(seconds: seconds) }
}

private func formatted(_ rate: Double) -> String {
    rate == rate.rounded() ? "\(Int(rate))" : String(format: "%.2f", rate)
}
