import CV4L2
import Foundation

/// The real video device: every call goes through libv4l2, which converts formats the camera
/// does not offer (a camera that only sends MJPEG still delivers YU12 or RGB3 frames).
///
/// Stateless: the handles it returns carry all there is, so one value serves any number of
/// cameras on any thread. This is the only file that makes raw V4L2 calls.
public struct LibV4L2Device: VideoDevice {
    public init() {}

    public func canonicalPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    public func open(_ path: String) throws(VideoDeviceError) -> VideoDeviceHandle {
        // O_NONBLOCK: VIDIOC_DQBUF answers EAGAIN instead of blocking, and poll does the waiting,
        // so an unplug (POLLERR) and a stop request are both noticed while no frame comes.
        let descriptor = try retryingOnInterrupt("open") { gatepass_v4l2_open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC) }
        return VideoDeviceHandle(rawValue: descriptor)
    }

    public func ioctl(_ handle: VideoDeviceHandle, _ request: VideoRequest, _ argument: UnsafeMutableRawPointer)
        throws(VideoDeviceError)
    {
        _ = try retryingOnInterrupt(request.name) { gatepass_v4l2_ioctl(handle.rawValue, request.number, argument) }
    }

    public func mmap(_ handle: VideoDeviceHandle, length: Int, offset: Int) throws(VideoDeviceError)
        -> UnsafeMutableRawPointer
    {
        let address = v4l2_mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, handle.rawValue, Int64(offset))
        guard let address, address != gatepass_map_failed() else {
            throw VideoDeviceError(call: "mmap", code: errno)
        }
        return address
    }

    public func munmap(_ address: UnsafeMutableRawPointer, length: Int) throws(VideoDeviceError) {
        if v4l2_munmap(address, length) != 0 { throw VideoDeviceError(call: "munmap", code: errno) }
    }

    public func poll(_ handle: VideoDeviceHandle, timeout: TimeInterval) throws(VideoDeviceError) -> PollEvents {
        var descriptor = pollfd(fd: handle.rawValue, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: Int((max(timeout, 0) * 1000).rounded(.up)))
        let ready = Glibc.poll(&descriptor, 1, milliseconds)
        if ready < 0 {
            // An interrupted wait is a short one: report a timeout and let the caller poll again.
            if errno == EINTR { return [] }
            throw VideoDeviceError(call: "poll", code: errno)
        }
        var events: PollEvents = []
        let returned = Int32(descriptor.revents)
        if returned & Int32(POLLIN) != 0 { events.insert(.readable) }
        if returned & Int32(POLLERR) != 0 { events.insert(.error) }
        if returned & Int32(POLLHUP) != 0 { events.insert(.hangUp) }
        if returned & Int32(POLLNVAL) != 0 { events.insert(.invalid) }
        return events
    }

    public func close(_ handle: VideoDeviceHandle) {
        // Not retried on EINTR: on Linux the descriptor is gone either way.
        _ = v4l2_close(handle.rawValue)
    }

    private func retryingOnInterrupt(_ call: String, _ body: () -> Int32) throws(VideoDeviceError) -> Int32 {
        while true {
            let result = body()
            if result >= 0 { return result }
            if errno != EINTR { throw VideoDeviceError(call: call, code: errno) }
        }
    }
}
