import CV4L2
import Foundation

// The capture code talks to a camera through `VideoDevice`, a protocol at the level of the
// system calls (open, ioctl, mmap, munmap, poll, close) — the swift-system model. The typed
// V4L2 requests (`queryCapabilities`, `setFormat`, `dequeueBuffer`, …) are written once, in
// the extension below, on top of the raw `ioctl`; they fill and read the kernel's own structs
// (`v4l2_format`, `v4l2_buffer`, …). Both the real device (`LibV4L2Device`) and the tests'
// scripted fake sit under that one extension, so the fake checks what a driver checks (buffer
// type, memory type, indices, streaming state) against the structs the camera actually sends:
// a typed-level fake would never see a forgotten `memory = V4L2_MEMORY_MMAP`.

// MARK: - Raw device calls

/// An open video device: the file descriptor `v4l2_open` returned.
public struct VideoDeviceHandle: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public var description: String { "fd \(rawValue)" }
}

/// A V4L2 ioctl request number with the name it has in `linux/videodev2.h`.
///
/// The numbers come from the CV4L2 shim: `VIDIOC_*` are function-like macros, which Swift
/// does not import.
public struct VideoRequest: Hashable, Sendable, CustomStringConvertible {
    public let number: UInt
    public let name: String

    public init(number: UInt, name: String) {
        self.number = number
        self.name = name
    }

    public var description: String { name }

    public static let queryCapabilities = VideoRequest(number: gatepass_vidioc_querycap(), name: "VIDIOC_QUERYCAP")
    public static let enumerateFormats = VideoRequest(number: gatepass_vidioc_enum_fmt(), name: "VIDIOC_ENUM_FMT")
    public static let getFormat = VideoRequest(number: gatepass_vidioc_g_fmt(), name: "VIDIOC_G_FMT")
    public static let setFormat = VideoRequest(number: gatepass_vidioc_s_fmt(), name: "VIDIOC_S_FMT")
    public static let getParameters = VideoRequest(number: gatepass_vidioc_g_parm(), name: "VIDIOC_G_PARM")
    public static let setParameters = VideoRequest(number: gatepass_vidioc_s_parm(), name: "VIDIOC_S_PARM")
    public static let requestBuffers = VideoRequest(number: gatepass_vidioc_reqbufs(), name: "VIDIOC_REQBUFS")
    public static let queryBuffer = VideoRequest(number: gatepass_vidioc_querybuf(), name: "VIDIOC_QUERYBUF")
    public static let queueBuffer = VideoRequest(number: gatepass_vidioc_qbuf(), name: "VIDIOC_QBUF")
    public static let dequeueBuffer = VideoRequest(number: gatepass_vidioc_dqbuf(), name: "VIDIOC_DQBUF")
    public static let streamOn = VideoRequest(number: gatepass_vidioc_streamon(), name: "VIDIOC_STREAMON")
    public static let streamOff = VideoRequest(number: gatepass_vidioc_streamoff(), name: "VIDIOC_STREAMOFF")
}

/// What `poll(2)` reported for a device (`revents`); empty when it timed out.
public struct PollEvents: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `POLLIN`: a filled buffer can be dequeued.
    public static let readable = PollEvents(rawValue: 1 << 0)
    /// `POLLERR`: the queue failed; for a UVC camera, it was unplugged.
    public static let error = PollEvents(rawValue: 1 << 1)
    /// `POLLHUP`: the device hung up.
    public static let hangUp = PollEvents(rawValue: 1 << 2)
    /// `POLLNVAL`: the descriptor is not open.
    public static let invalid = PollEvents(rawValue: 1 << 3)

    public var description: String {
        let names = [(PollEvents.readable, "POLLIN"), (.error, "POLLERR"), (.hangUp, "POLLHUP"), (.invalid, "POLLNVAL")]
            .filter { contains($0.0) }.map(\.1)
        return names.isEmpty ? "timeout" : names.joined(separator: "|")
    }
}

/// A device call that failed: which call, and the `errno` it set.
///
/// The wrapper's error; the camera turns it into `ScannerError.device` with the device path.
public struct VideoDeviceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call, named as in C: `open`, `mmap`, `poll`, or the ioctl (`VIDIOC_DQBUF`).
    public var call: String
    /// The `errno` value.
    public var code: Int32

    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    /// The errno's symbolic name when it is one a camera produces (`ENODEV`), else its number.
    public var codeName: String { Self.names[code] ?? "errno \(code)" }

    /// True when the device node is not there at all (`ENOENT`, `ENODEV`, `ENXIO` from `open`).
    public var meansDeviceAbsent: Bool { code == ENOENT || code == ENODEV || code == ENXIO }

    public var description: String { "\(call) failed: \(String(cString: strerror(code))) (\(codeName))" }

    private static let names: [Int32: String] = [
        EPERM: "EPERM", ENOENT: "ENOENT", EINTR: "EINTR", EIO: "EIO", ENXIO: "ENXIO", EBADF: "EBADF",
        EAGAIN: "EAGAIN", ENOMEM: "ENOMEM", EACCES: "EACCES", EFAULT: "EFAULT", EBUSY: "EBUSY",
        ENODEV: "ENODEV", EINVAL: "EINVAL", ENOTTY: "ENOTTY", EPIPE: "EPIPE", ENOSPC: "ENOSPC",
    ]
}

/// The system calls the capture code makes on a video device.
///
/// `LibV4L2Device` makes them through libv4l2; tests plug in a scripted fake. Every call that
/// can fail throws `VideoDeviceError` with the call's `errno`; `EINTR` is retried inside.
public protocol VideoDevice: Sendable {
    /// Where `path` leads once symbolic links are followed (`/dev/v4l/by-id/usb-…-video-index0`
    /// → `/dev/video2`), or nil when it leads nowhere. Used for the log only: the camera opens
    /// the path it was given, so a stable name keeps working after the device is renumbered.
    /// The corresponding C function is `realpath`.
    func canonicalPath(_ path: String) -> String?

    /// Opens the device read-write and non-blocking. The corresponding C function is `v4l2_open`.
    func open(_ path: String) throws(VideoDeviceError) -> VideoDeviceHandle

    /// Sends `request` with `argument` pointing at the request's struct.
    /// The corresponding C function is `v4l2_ioctl`.
    func ioctl(_ handle: VideoDeviceHandle, _ request: VideoRequest, _ argument: UnsafeMutableRawPointer) throws(VideoDeviceError)

    /// Maps `length` bytes of the buffer at `offset` (from `VIDIOC_QUERYBUF`) shared, read-write.
    /// The corresponding C function is `v4l2_mmap`.
    func mmap(_ handle: VideoDeviceHandle, length: Int, offset: Int) throws(VideoDeviceError) -> UnsafeMutableRawPointer

    /// Unmaps a buffer mapped by `mmap`. The corresponding C function is `v4l2_munmap`.
    func munmap(_ address: UnsafeMutableRawPointer, length: Int) throws(VideoDeviceError)

    /// Waits up to `timeout` seconds for a filled buffer (`POLLIN`) or an error.
    /// The corresponding C function is `poll`.
    func poll(_ handle: VideoDeviceHandle, timeout: TimeInterval) throws(VideoDeviceError) -> PollEvents

    /// Closes the device; errors are not reported, there is nothing to do about them.
    /// The corresponding C function is `v4l2_close`.
    func close(_ handle: VideoDeviceHandle)
}

// MARK: - Typed requests

/// A V4L2 pixel format code (a fourcc such as `YUYV`).
public struct PixelFormat: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The format named by four ASCII characters, as `v4l2_fourcc` builds it.
    public init(_ fourCC: StaticString) {
        precondition(fourCC.utf8CodeUnitCount == 4, "a fourcc has four characters")
        let bytes = UnsafeBufferPointer(start: fourCC.utf8Start, count: 4)
        rawValue = bytes.enumerated().reduce(0) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
    }

    public var description: String {
        let characters = (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (8 * $0)) }
        return String(decoding: characters, as: UTF8.self).trimmingCharacters(in: .whitespaces)
    }

    /// 8-bit greyscale (Y800): the luma plane alone.
    public static let grey = PixelFormat("GREY")
    /// Packed 4:2:2, Y0 U Y1 V.
    public static let yuyv = PixelFormat("YUYV")
    /// Packed 4:2:2, U Y0 V Y1.
    public static let uyvy = PixelFormat("UYVY")
    /// Planar 4:2:0, the Y plane first (I420). One of libv4l2's conversion targets.
    public static let yuv420 = PixelFormat("YU12")
    /// Planar 4:2:0, the Y plane first (YV12). One of libv4l2's conversion targets.
    public static let yvu420 = PixelFormat("YV12")
    public static let mjpeg = PixelFormat("MJPG")
    public static let jpeg = PixelFormat("JPEG")
    public static let rgb24 = PixelFormat("RGB3")
    public static let bgr24 = PixelFormat("BGR3")
    public static let h264 = PixelFormat("H264")
}

/// What `VIDIOC_QUERYCAP` says about a device.
public struct VideoCapabilities: Sendable, Equatable {
    public var driver: String
    public var card: String
    public var busInfo: String
    /// The device's own capabilities (`device_caps` when the driver sets it, else `capabilities`).
    public var capabilities: UInt32

    public init(driver: String, card: String, busInfo: String, capabilities: UInt32) {
        self.driver = driver
        self.card = card
        self.busInfo = busInfo
        self.capabilities = capabilities
    }

    /// `V4L2_CAP_VIDEO_CAPTURE`.
    public var canCapture: Bool { capabilities & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 }
    /// `V4L2_CAP_STREAMING`: the MMAP streaming ioctls.
    public var canStream: Bool { capabilities & UInt32(V4L2_CAP_STREAMING) != 0 }
}

/// One entry of `VIDIOC_ENUM_FMT`.
public struct FormatDescription: Sendable, Equatable {
    public var pixelFormat: PixelFormat
    public var description: String
    /// `V4L2_FMT_FLAG_COMPRESSED` (MJPEG, H.264).
    public var isCompressed: Bool
    /// `V4L2_FMT_FLAG_EMULATED`: libv4l2 converts to it in software.
    public var isEmulated: Bool

    public init(pixelFormat: PixelFormat, description: String, isCompressed: Bool, isEmulated: Bool) {
        self.pixelFormat = pixelFormat
        self.description = description
        self.isCompressed = isCompressed
        self.isEmulated = isEmulated
    }
}

/// The capture format a driver settled on (`v4l2_pix_format` after `VIDIOC_S_FMT`).
public struct VideoFormat: Sendable, Equatable {
    public var pixelFormat: PixelFormat
    public var width: Int
    public var height: Int
    /// Bytes from one row to the next (the stride); at least a row's worth of pixels.
    public var bytesPerLine: Int
    public var imageSize: Int

    public init(pixelFormat: PixelFormat, width: Int, height: Int, bytesPerLine: Int, imageSize: Int) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        self.bytesPerLine = bytesPerLine
        self.imageSize = imageSize
    }
}

/// A buffer's place in the device memory (`VIDIOC_QUERYBUF`): what to pass to `mmap`.
public struct BufferDescription: Sendable, Equatable {
    public var index: Int
    public var offset: Int
    public var length: Int
}

/// A filled buffer taken from the driver (`VIDIOC_DQBUF`).
public struct DequeuedBuffer: Sendable, Equatable {
    public var index: Int
    public var bytesUsed: Int
    public var sequence: Int
    /// `V4L2_BUF_FLAG_ERROR`: the frame is damaged; give the buffer back and take the next.
    public var isDamaged: Bool
}

private let captureType = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
private let mmapMemory = V4L2_MEMORY_MMAP.rawValue

extension VideoDevice {
    /// `VIDIOC_QUERYCAP`: what the device is and what it can do.
    public func queryCapabilities(_ handle: VideoDeviceHandle) throws(VideoDeviceError) -> VideoCapabilities {
        var capability = v4l2_capability()
        try ioctl(handle, .queryCapabilities, &capability)
        let hasDeviceCaps = capability.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0
        return VideoCapabilities(
            driver: cString(capability.driver), card: cString(capability.card), busInfo: cString(capability.bus_info),
            capabilities: hasDeviceCaps ? capability.device_caps : capability.capabilities)
    }

    /// `VIDIOC_ENUM_FMT` from index 0 until the driver answers `EINVAL`: the capture formats,
    /// including those libv4l2 emulates.
    public func enumerateFormats(_ handle: VideoDeviceHandle) throws(VideoDeviceError) -> [FormatDescription] {
        var formats: [FormatDescription] = []
        // A bound, so a driver that never says EINVAL cannot keep us here.
        for index in 0..<64 {
            var description = v4l2_fmtdesc()
            description.index = UInt32(index)
            description.type = captureType
            do throws(VideoDeviceError) {
                try ioctl(handle, .enumerateFormats, &description)
            } catch where error.code == EINVAL {
                break
            }
            formats.append(FormatDescription(
                pixelFormat: PixelFormat(rawValue: description.pixelformat),
                description: cString(description.description),
                isCompressed: description.flags & UInt32(V4L2_FMT_FLAG_COMPRESSED) != 0,
                isEmulated: description.flags & UInt32(V4L2_FMT_FLAG_EMULATED) != 0))
        }
        return formats
    }

    /// `VIDIOC_S_FMT` for progressive capture; returns what the driver set, which may differ
    /// from the request in size and even in pixel format.
    public func setFormat(_ handle: VideoDeviceHandle, pixelFormat: PixelFormat, width: Int, height: Int)
        throws(VideoDeviceError) -> VideoFormat
    {
        var format = v4l2_format()
        format.type = captureType
        format.fmt.pix.width = UInt32(clamping: width)
        format.fmt.pix.height = UInt32(clamping: height)
        format.fmt.pix.pixelformat = pixelFormat.rawValue
        format.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        try ioctl(handle, .setFormat, &format)
        return VideoFormat(
            pixelFormat: PixelFormat(rawValue: format.fmt.pix.pixelformat),
            width: Int(format.fmt.pix.width), height: Int(format.fmt.pix.height),
            bytesPerLine: Int(format.fmt.pix.bytesperline), imageSize: Int(format.fmt.pix.sizeimage))
    }

    /// `VIDIOC_S_PARM` with a time per frame of 1/`framesPerSecond`; returns the rate the
    /// driver chose, or nil when it does not let the rate be set (`V4L2_CAP_TIMEPERFRAME`).
    public func setFrameRate(_ handle: VideoDeviceHandle, framesPerSecond: Int) throws(VideoDeviceError) -> Double? {
        var parameters = v4l2_streamparm()
        parameters.type = captureType
        parameters.parm.capture.timeperframe = v4l2_fract(numerator: 1, denominator: UInt32(clamping: framesPerSecond))
        try ioctl(handle, .setParameters, &parameters)
        guard parameters.parm.capture.capability & UInt32(V4L2_CAP_TIMEPERFRAME) != 0 else { return nil }
        let timePerFrame = parameters.parm.capture.timeperframe
        guard timePerFrame.numerator > 0, timePerFrame.denominator > 0 else { return nil }
        return Double(timePerFrame.denominator) / Double(timePerFrame.numerator)
    }

    /// `VIDIOC_REQBUFS` for memory-mapped buffers; returns how many the driver allocated
    /// (it may give fewer, or more, than asked). A count of 0 frees them.
    public func requestBuffers(_ handle: VideoDeviceHandle, count: Int) throws(VideoDeviceError) -> Int {
        var request = v4l2_requestbuffers()
        request.count = UInt32(clamping: count)
        request.type = captureType
        request.memory = mmapMemory
        try ioctl(handle, .requestBuffers, &request)
        return Int(request.count)
    }

    /// `VIDIOC_QUERYBUF`: where buffer `index` lives, for `mmap`.
    public func queryBuffer(_ handle: VideoDeviceHandle, index: Int) throws(VideoDeviceError) -> BufferDescription {
        var buffer = mmapBuffer(index: index)
        try ioctl(handle, .queryBuffer, &buffer)
        return BufferDescription(index: Int(buffer.index), offset: Int(buffer.m.offset), length: Int(buffer.length))
    }

    /// `VIDIOC_QBUF`: gives buffer `index` to the driver to fill.
    public func queueBuffer(_ handle: VideoDeviceHandle, index: Int) throws(VideoDeviceError) {
        var buffer = mmapBuffer(index: index)
        try ioctl(handle, .queueBuffer, &buffer)
    }

    /// `VIDIOC_DQBUF` (non-blocking: `EAGAIN` when no buffer is filled yet).
    public func dequeueBuffer(_ handle: VideoDeviceHandle) throws(VideoDeviceError) -> DequeuedBuffer {
        var buffer = mmapBuffer(index: 0)
        try ioctl(handle, .dequeueBuffer, &buffer)
        return DequeuedBuffer(
            index: Int(buffer.index), bytesUsed: Int(buffer.bytesused), sequence: Int(buffer.sequence),
            isDamaged: buffer.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0)
    }

    /// `VIDIOC_STREAMON` for capture.
    public func streamOn(_ handle: VideoDeviceHandle) throws(VideoDeviceError) {
        var type = Int32(bitPattern: captureType)
        try ioctl(handle, .streamOn, &type)
    }

    /// `VIDIOC_STREAMOFF` for capture: stops, and takes back every queued buffer.
    public func streamOff(_ handle: VideoDeviceHandle) throws(VideoDeviceError) {
        var type = Int32(bitPattern: captureType)
        try ioctl(handle, .streamOff, &type)
    }
}

private func mmapBuffer(index: Int) -> v4l2_buffer {
    var buffer = v4l2_buffer()
    buffer.index = UInt32(clamping: index)
    buffer.type = captureType
    buffer.memory = mmapMemory
    return buffer
}

/// A NUL-terminated string in a fixed C array (imported as a tuple).
private func cString<Tuple>(_ tuple: Tuple) -> String {
    withUnsafeBytes(of: tuple) { bytes in
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }
}
