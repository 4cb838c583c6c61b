import CV4L2
import Foundation
import GatePassCore
@testable import GatePassScanner

/// A scripted UVC camera seen through libv4l2, at the level of the system calls the camera
/// makes (open, ioctl, mmap, munmap, poll, close).
///
/// It reads and writes the kernel's own structs, and checks what uvcvideo and videobuf2 check:
/// the buffer type and memory type of every buffer ioctl, buffer indices, a buffer queued twice,
/// S_FMT or REQBUFS while streaming (EBUSY), STREAMON without buffers, DQBUF that would block
/// (EAGAIN, the device is non-blocking), poll with nothing queued or not streaming (POLLERR).
/// S_FMT picks the nearest size it has and, for a pixel format it lacks, answers with its first
/// one, as uvcvideo does. Unplugging removes the node (open: ENOENT) and kills every open
/// descriptor: ioctls answer ENODEV, poll POLLERR; mappings stay valid until unmapped, as they
/// do in the kernel, so a camera that forgets to unmap shows up in `liveMappings`.
///
/// libv4l2's conversion cannot be faked (it decodes MJPEG): it is modelled by what libv4l2 does
/// to the calls. When the camera sends a format libv4lconvert decodes (MJPEG, JPEG), ENUM_FMT
/// also lists its targets RGB3, BGR3, YU12 and YV12 flagged EMULATED, S_FMT accepts them with
/// libv4l2's unpadded stride, and DQBUF hands over frames already in that format.
///
/// Thread-safe (one lock around everything), since tests stop cameras from other threads.
final class FakeVideoDevice: VideoDevice, @unchecked Sendable {
    struct FrameSize: Equatable, Sendable {
        var width: Int
        var height: Int
        init(_ width: Int, _ height: Int) {
            self.width = width
            self.height = height
        }
    }

    /// What the camera hardware and its driver offer.
    struct Hardware: Sendable {
        /// Native formats, in the driver's order (the first is its default).
        var formats: [PixelFormat] = [.yuyv, .mjpeg]
        var sizes: [FrameSize] = [FrameSize(64, 48)]
        /// Extra bytes at the end of every row of an uncompressed native format.
        var rowPadding = 0
        var maxBuffers = 32
        /// Frame rates S_PARM can set; empty: S_PARM answers ENOTTY.
        var frameRates: [Int] = [30, 15, 5]
        var capabilities = UInt32(V4L2_CAP_VIDEO_CAPTURE) | UInt32(V4L2_CAP_STREAMING)
        var driver = "uvcvideo"
        var card = "Fake UVC Camera"
        /// libv4l2's format conversion (off models `V4L2_DISABLE_CONVERSION`).
        var libv4l2Conversion = true
        /// False for a node that is no V4L2 device: `v4l2_open` queries the capabilities
        /// itself and fails with ENOTTY.
        var isVideoDevice = true
    }

    /// What happens next, consumed in order by poll (timeouts, POLLERR) and DQBUF (the rest).
    /// When the script is empty, frames flow.
    enum Step: Equatable, Sendable {
        /// DQBUF delivers a frame.
        case frame
        /// poll says readable, DQBUF answers EAGAIN.
        case spuriousWakeup
        /// poll times out (and moves the clock by its timeout).
        case pollTimeout
        /// DQBUF delivers a buffer flagged V4L2_BUF_FLAG_ERROR.
        case damagedFrame
        /// The camera is unplugged; poll answers POLLERR.
        case unplugOnPoll
        /// The camera is unplugged; DQBUF answers ENODEV.
        case unplugOnDequeue
        /// DQBUF answers EIO; the camera stays plugged in.
        case ioErrorOnDequeue
    }

    /// What the camera did to the device, for assertions.
    struct Record: Sendable {
        var openAttempts = 0
        var openedPaths: [String] = []
        var closes = 0
        var maps: [(offset: Int, length: Int)] = []
        var unmaps = 0
        var formatRequests: [PixelFormat] = []
        var frameRateRequests: [Int] = []
        var bufferRequests: [Int] = []
        var queries = 0
        var queues = 0
        var dequeueAttempts = 0
        var framesProduced = 0
        var streamOns = 0
        var streamOffs = 0
        /// Successful opens.
        var opens: Int { openedPaths.count }
    }

    private struct FakeBuffer {
        var offset: Int
        var length: Int
        var memory: UnsafeMutableRawPointer?
        var isQueued = false
    }

    private struct ActiveFormat {
        var pixelFormat: PixelFormat
        var width: Int
        var height: Int
        var bytesPerLine: Int
        var imageSize: Int
    }

    private struct OpenFile {
        var generation: Int
        var format: ActiveFormat?
        var buffers: [FakeBuffer] = []
        var queue: [Int] = []
        var isStreaming = false
    }

    private let lock = NSLock()
    private var hardware: Hardware
    private var script: [Step]
    private var present: Bool
    /// Bumped by every unplug: descriptors from an earlier generation are dead.
    private var generation = 0
    private var files: [Int32: OpenFile] = [:]
    private var nextDescriptor: Int32 = 3
    private var mappings: [UnsafeMutableRawPointer: (descriptor: Int32, index: Int, length: Int)] = [:]
    private var record = Record()
    private var links: [String: String]
    private let nodePath: String
    private let clock: TestClock?

    /// - Parameters:
    ///   - path: the device node.
    ///   - links: stable names that lead to it (`/dev/v4l/by-id/…`).
    init(_ hardware: Hardware = Hardware(), script: [Step] = [], present: Bool = true,
         path: String = "/dev/video0", links: [String] = [], clock: TestClock? = nil) {
        self.hardware = hardware
        self.script = script
        self.present = present
        self.nodePath = path
        self.links = Dictionary(uniqueKeysWithValues: links.map { ($0, path) })
        self.clock = clock
    }

    deinit {
        for address in mappings.keys { address.deallocate() }
    }

    // MARK: Test controls and inspection

    private func locked<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Pulls the cable: the node goes away and every open descriptor dies.
    func unplug() { locked { unplugLocked() } }

    /// Plugs the camera back in: the node is there again (old descriptors stay dead).
    func plugIn() { locked { present = true } }

    func append(_ steps: [Step]) { locked { script += steps } }

    var recorded: Record { locked { record } }
    var liveMappings: Int { locked { mappings.count } }
    var openDescriptors: Int { locked { files.count } }
    /// Buffers the driver holds (queued, waiting to be filled) on the open descriptors.
    var queuedBuffers: Int { locked { files.values.reduce(0) { $0 + $1.queue.count } } }
    /// The number of the frame the last DQBUF delivered (see `FakeVideoDevice.luma`).
    var lastFrameNumber: Int { locked { record.framesProduced - 1 } }

    /// Whether `address` lies inside a buffer mapped right now.
    func isInsideMapping(_ address: UnsafeRawPointer?) -> Bool {
        guard let address else { return false }
        return locked {
            mappings.contains { start, mapping in
                address >= UnsafeRawPointer(start) && address < UnsafeRawPointer(start) + mapping.length
            }
        }
    }

    /// The luma the fake camera puts at (x, y) of frame `frame`: varied enough that reading a
    /// chroma or padding byte, or the wrong row, shows.
    static func luma(x: Int, y: Int, frame: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: x &* 7 &+ y &* 13 &+ frame &* 29 &+ 1)
    }

    private func unplugLocked() {
        present = false
        generation += 1
    }

    // MARK: VideoDevice

    func canonicalPath(_ path: String) -> String? {
        locked {
            guard present else { return nil }
            if path == nodePath { return path }
            return links[path]
        }
    }

    func open(_ path: String) throws(VideoDeviceError) -> VideoDeviceHandle {
        lock.lock()
        defer { lock.unlock() }
        record.openAttempts += 1
        guard present, path == nodePath || links[path] != nil else {
            throw VideoDeviceError(call: "open", code: ENOENT)
        }
        guard hardware.isVideoDevice else { throw VideoDeviceError(call: "open", code: ENOTTY) }
        let descriptor = nextDescriptor
        nextDescriptor += 1
        files[descriptor] = OpenFile(generation: generation)
        record.openedPaths.append(path)
        return VideoDeviceHandle(rawValue: descriptor)
    }

    func close(_ handle: VideoDeviceHandle) {
        locked {
            guard files.removeValue(forKey: handle.rawValue) != nil else { return }
            record.closes += 1
        }
    }

    func mmap(_ handle: VideoDeviceHandle, length: Int, offset: Int) throws(VideoDeviceError) -> UnsafeMutableRawPointer {
        lock.lock()
        defer { lock.unlock() }
        let descriptor = handle.rawValue
        guard var file = files[descriptor] else { throw VideoDeviceError(call: "mmap", code: EBADF) }
        guard file.generation == generation else { throw VideoDeviceError(call: "mmap", code: ENODEV) }
        guard let index = file.buffers.firstIndex(where: { $0.offset == offset }),
              length > 0, length <= file.buffers[index].length
        else { throw VideoDeviceError(call: "mmap", code: EINVAL) }
        let address = UnsafeMutableRawPointer.allocate(byteCount: length, alignment: 64)
        address.initializeMemory(as: UInt8.self, repeating: 0xEE, count: length)
        file.buffers[index].memory = address
        files[descriptor] = file
        mappings[address] = (descriptor, index, length)
        record.maps.append((offset, length))
        return address
    }

    func munmap(_ address: UnsafeMutableRawPointer, length: Int) throws(VideoDeviceError) {
        lock.lock()
        defer { lock.unlock() }
        guard let mapping = mappings[address], mapping.length == length else {
            throw VideoDeviceError(call: "munmap", code: EINVAL)
        }
        mappings[address] = nil
        if var file = files[mapping.descriptor], file.buffers.indices.contains(mapping.index),
           file.buffers[mapping.index].memory == address {
            file.buffers[mapping.index].memory = nil
            files[mapping.descriptor] = file
        }
        address.deallocate()
        record.unmaps += 1
    }

    func poll(_ handle: VideoDeviceHandle, timeout: TimeInterval) throws(VideoDeviceError) -> PollEvents {
        lock.lock()
        defer { lock.unlock() }
        guard let file = files[handle.rawValue] else { return [.invalid] }
        guard file.generation == generation else { return [.error] }
        switch script.first {
        case .pollTimeout:
            script.removeFirst()
            clock?.advance(by: timeout)
            return []
        case .unplugOnPoll:
            script.removeFirst()
            unplugLocked()
            return [.error]
        default:
            // videobuf2: POLLERR when not streaming or when no buffer is queued.
            guard file.isStreaming, !file.queue.isEmpty else { return [.error] }
            return [.readable]
        }
    }

    func ioctl(_ handle: VideoDeviceHandle, _ request: VideoRequest, _ argument: UnsafeMutableRawPointer)
        throws(VideoDeviceError)
    {
        lock.lock()
        defer { lock.unlock() }
        let descriptor = handle.rawValue
        guard var file = files[descriptor] else { throw VideoDeviceError(call: request.name, code: EBADF) }
        guard file.generation == generation else { throw VideoDeviceError(call: request.name, code: ENODEV) }
        let code = perform(request, argument, on: &file)
        files[descriptor] = file
        if code != 0 { throw VideoDeviceError(call: request.name, code: code) }
    }

    // MARK: The driver

    private static let captureType = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    private static let mmapMemory = V4L2_MEMORY_MMAP.rawValue
    private static let libv4l2Targets: [PixelFormat] = [.rgb24, .bgr24, .yuv420, .yvu420]
    private static let compressed: Set<PixelFormat> = [.mjpeg, .jpeg, .h264]

    /// The formats ENUM_FMT lists, with whether libv4l2 emulates each: the native ones, then
    /// libv4l2's targets the camera lacks (`v4lconvert_enum_fmt` lists them whatever the camera
    /// sends; whether S_FMT can honour them is `canConvert`).
    private var listedFormats: [(format: PixelFormat, emulated: Bool)] {
        var listed = hardware.formats.map { ($0, false) }
        if hardware.libv4l2Conversion {
            listed += Self.libv4l2Targets.filter { !hardware.formats.contains($0) }.map { ($0, true) }
        }
        return listed
    }

    /// Whether libv4lconvert can decode something the camera sends (not H.264, say).
    private var canConvert: Bool {
        let sources: Set<PixelFormat> = [.mjpeg, .jpeg, .yuyv, .uyvy, .grey, .yuv420, .yvu420, .rgb24, .bgr24]
        return hardware.libv4l2Conversion && hardware.formats.contains { sources.contains($0) }
    }

    /// Performs one ioctl; returns 0 or the errno.
    private func perform(_ request: VideoRequest, _ argument: UnsafeMutableRawPointer, on file: inout OpenFile) -> Int32 {
        switch request {
        case .queryCapabilities:
            let capability = argument.assumingMemoryBound(to: v4l2_capability.self)
            capability.pointee = v4l2_capability()
            write(hardware.driver, into: &capability.pointee.driver)
            write(hardware.card, into: &capability.pointee.card)
            write("usb-0000:00:14.0-1", into: &capability.pointee.bus_info)
            capability.pointee.device_caps = hardware.capabilities
            capability.pointee.capabilities = hardware.capabilities | UInt32(V4L2_CAP_DEVICE_CAPS)
            return 0

        case .enumerateFormats:
            let description = argument.assumingMemoryBound(to: v4l2_fmtdesc.self)
            guard description.pointee.type == Self.captureType else { return EINVAL }
            let listed = listedFormats
            let index = Int(description.pointee.index)
            guard listed.indices.contains(index) else { return EINVAL }
            let (format, emulated) = listed[index]
            description.pointee.pixelformat = format.rawValue
            description.pointee.flags = (Self.compressed.contains(format) ? UInt32(V4L2_FMT_FLAG_COMPRESSED) : 0)
                | (emulated ? UInt32(V4L2_FMT_FLAG_EMULATED) : 0)
            write(format.description, into: &description.pointee.description)
            return 0

        case .setFormat:
            let format = argument.assumingMemoryBound(to: v4l2_format.self)
            guard format.pointee.type == Self.captureType else { return EINVAL }
            guard !file.isStreaming, file.buffers.isEmpty else { return EBUSY }
            let asked = PixelFormat(rawValue: format.pointee.fmt.pix.pixelformat)
            record.formatRequests.append(asked)
            // libv4l2 honours an emulated format when it can convert to it; otherwise the request
            // reaches uvcvideo, which answers with its default format.
            let emulated = canConvert && listedFormats.contains { $0.format == asked && $0.emulated }
            let pixelFormat = hardware.formats.contains(asked) || emulated ? asked : hardware.formats[0]
            let size = nearestSize(width: Int(format.pointee.fmt.pix.width), height: Int(format.pointee.fmt.pix.height))
            let active = layout(pixelFormat, size, padded: !emulated)
            file.format = active
            format.pointee.fmt.pix.pixelformat = active.pixelFormat.rawValue
            format.pointee.fmt.pix.width = UInt32(active.width)
            format.pointee.fmt.pix.height = UInt32(active.height)
            format.pointee.fmt.pix.bytesperline = UInt32(active.bytesPerLine)
            format.pointee.fmt.pix.sizeimage = UInt32(active.imageSize)
            format.pointee.fmt.pix.field = V4L2_FIELD_NONE.rawValue
            return 0

        case .setParameters:
            let parameters = argument.assumingMemoryBound(to: v4l2_streamparm.self)
            guard parameters.pointee.type == Self.captureType else { return EINVAL }
            guard !hardware.frameRates.isEmpty else { return ENOTTY }
            let timePerFrame = parameters.pointee.parm.capture.timeperframe
            let asked = timePerFrame.numerator == 0 ? 0 : Int(timePerFrame.denominator / timePerFrame.numerator)
            record.frameRateRequests.append(asked)
            let rate = hardware.frameRates.min { abs($0 - asked) < abs($1 - asked) }!
            parameters.pointee.parm.capture.capability = UInt32(V4L2_CAP_TIMEPERFRAME)
            parameters.pointee.parm.capture.timeperframe = v4l2_fract(numerator: 1, denominator: UInt32(rate))
            return 0

        case .requestBuffers:
            let request = argument.assumingMemoryBound(to: v4l2_requestbuffers.self)
            guard request.pointee.type == Self.captureType, request.pointee.memory == Self.mmapMemory else { return EINVAL }
            guard !file.isStreaming else { return EBUSY }
            guard let format = file.format else { return EINVAL }
            record.bufferRequests.append(Int(request.pointee.count))
            if request.pointee.count == 0 {
                guard !file.buffers.contains(where: { $0.memory != nil }) else { return EBUSY }
                file.buffers = []
                return 0
            }
            let count = min(Int(request.pointee.count), hardware.maxBuffers)
            let pageAligned = (format.imageSize + 4095) / 4096 * 4096
            file.buffers = (0..<count).map { FakeBuffer(offset: $0 * pageAligned, length: format.imageSize) }
            file.queue = []
            request.pointee.count = UInt32(count)
            return 0

        case .queryBuffer:
            let buffer = argument.assumingMemoryBound(to: v4l2_buffer.self)
            guard buffer.pointee.type == Self.captureType, buffer.pointee.memory == Self.mmapMemory,
                  file.buffers.indices.contains(Int(buffer.pointee.index)) else { return EINVAL }
            record.queries += 1
            let fake = file.buffers[Int(buffer.pointee.index)]
            buffer.pointee.m.offset = UInt32(fake.offset)
            buffer.pointee.length = UInt32(fake.length)
            buffer.pointee.flags = (fake.memory != nil ? UInt32(V4L2_BUF_FLAG_MAPPED) : 0)
                | (fake.isQueued ? UInt32(V4L2_BUF_FLAG_QUEUED) : 0)
            return 0

        case .queueBuffer:
            let buffer = argument.assumingMemoryBound(to: v4l2_buffer.self)
            let index = Int(buffer.pointee.index)
            guard buffer.pointee.type == Self.captureType, buffer.pointee.memory == Self.mmapMemory,
                  file.buffers.indices.contains(index), !file.buffers[index].isQueued else { return EINVAL }
            file.buffers[index].isQueued = true
            file.queue.append(index)
            record.queues += 1
            return 0

        case .dequeueBuffer:
            let buffer = argument.assumingMemoryBound(to: v4l2_buffer.self)
            guard buffer.pointee.type == Self.captureType, buffer.pointee.memory == Self.mmapMemory else { return EINVAL }
            guard file.isStreaming else { return EINVAL }
            record.dequeueAttempts += 1
            var damaged = false
            switch script.first {
            case .spuriousWakeup:
                script.removeFirst()
                return EAGAIN
            case .unplugOnDequeue:
                script.removeFirst()
                unplugLocked()
                return ENODEV
            case .ioErrorOnDequeue:
                script.removeFirst()
                return EIO
            case .damagedFrame:
                guard !file.queue.isEmpty else { return EAGAIN }
                script.removeFirst()
                damaged = true
            case .frame:
                guard !file.queue.isEmpty else { return EAGAIN }
                script.removeFirst()
            case .pollTimeout, .unplugOnPoll, nil:
                guard !file.queue.isEmpty else { return EAGAIN }
            }
            let index = file.queue.removeFirst()
            file.buffers[index].isQueued = false
            let frameNumber = record.framesProduced
            record.framesProduced += 1
            if let memory = file.buffers[index].memory, let format = file.format {
                fill(memory, format: format, frame: frameNumber)
            }
            buffer.pointee.index = UInt32(index)
            buffer.pointee.bytesused = UInt32(file.format?.imageSize ?? 0)
            buffer.pointee.sequence = UInt32(frameNumber)
            buffer.pointee.flags = UInt32(V4L2_BUF_FLAG_MAPPED) | (damaged ? UInt32(V4L2_BUF_FLAG_ERROR) : 0)
            buffer.pointee.field = V4L2_FIELD_NONE.rawValue
            buffer.pointee.length = UInt32(file.buffers[index].length)
            buffer.pointee.m.offset = UInt32(file.buffers[index].offset)
            return 0

        case .streamOn:
            guard argument.load(as: Int32.self) == Int32(Self.captureType) else { return EINVAL }
            guard !file.buffers.isEmpty else { return EINVAL }
            file.isStreaming = true
            record.streamOns += 1
            return 0

        case .streamOff:
            guard argument.load(as: Int32.self) == Int32(Self.captureType) else { return EINVAL }
            file.isStreaming = false
            file.queue = []
            for index in file.buffers.indices { file.buffers[index].isQueued = false }
            record.streamOffs += 1
            return 0

        default:
            return ENOTTY
        }
    }

    private func nearestSize(width: Int, height: Int) -> FrameSize {
        hardware.sizes.min {
            let first = ($0.width - width) * ($0.width - width) + ($0.height - height) * ($0.height - height)
            let second = ($1.width - width) * ($1.width - width) + ($1.height - height) * ($1.height - height)
            return first < second
        }!
    }

    /// bytesperline and sizeimage as the driver (or, for emulated formats, libv4l2) sets them.
    private func layout(_ pixelFormat: PixelFormat, _ size: FrameSize, padded: Bool) -> ActiveFormat {
        let padding = padded ? hardware.rowPadding : 0
        let (width, height) = (size.width, size.height)
        switch pixelFormat {
        case .grey:
            return ActiveFormat(pixelFormat: pixelFormat, width: width, height: height,
                                bytesPerLine: width + padding, imageSize: (width + padding) * height)
        case .yuyv, .uyvy:
            return ActiveFormat(pixelFormat: pixelFormat, width: width, height: height,
                                bytesPerLine: 2 * width + padding, imageSize: (2 * width + padding) * height)
        case .yuv420, .yvu420:
            let stride = width + padding
            return ActiveFormat(pixelFormat: pixelFormat, width: width, height: height,
                                bytesPerLine: stride, imageSize: stride * height * 3 / 2)
        case .rgb24, .bgr24:
            return ActiveFormat(pixelFormat: pixelFormat, width: width, height: height,
                                bytesPerLine: 3 * width, imageSize: 3 * width * height)
        default:  // compressed: no stride, a generous size
            return ActiveFormat(pixelFormat: pixelFormat, width: width, height: height,
                                bytesPerLine: 0, imageSize: width * height * 2)
        }
    }

    /// Writes frame `frame` into a buffer: luma from `luma(x:y:frame:)`, chroma 0x80, and the
    /// stride's padding left at 0xEE.
    private func fill(_ memory: UnsafeMutableRawPointer, format: ActiveFormat, frame: Int) {
        let bytes = memory.assumingMemoryBound(to: UInt8.self)
        bytes.update(repeating: 0xEE, count: format.imageSize)
        let stride = format.bytesPerLine
        for y in 0..<format.height {
            let row = bytes + y * stride
            for x in 0..<format.width {
                let value = Self.luma(x: x, y: y, frame: frame)
                switch format.pixelFormat {
                case .grey, .yuv420, .yvu420:
                    row[x] = value
                case .yuyv:
                    row[2 * x] = value
                    row[2 * x + 1] = 0x80
                case .uyvy:
                    row[2 * x] = 0x80
                    row[2 * x + 1] = value
                default:
                    break  // compressed or RGB: never streamed by the camera
                }
            }
        }
        if format.pixelFormat == .yuv420 || format.pixelFormat == .yvu420 {
            let chroma = stride * format.height
            (bytes + chroma).update(repeating: 0x80, count: format.imageSize - chroma)
        }
    }

    private func write<Tuple>(_ text: String, into field: inout Tuple) {
        withUnsafeMutableBytes(of: &field) { bytes in
            bytes.initializeMemory(as: UInt8.self, repeating: 0)
            for (offset, byte) in text.utf8.prefix(bytes.count - 1).enumerated() { bytes[offset] = byte }
        }
    }
}

// MARK: - Clock, sleeper and transition log for camera tests

/// A clock that only moves when told to.
final class TestClock: WallClock {
    private let time = Locked(Date(timeIntervalSince1970: 1_750_000_000))
    func now() -> Date { time.withLock { $0 } }
    func advance(by interval: TimeInterval) { time.withLock { $0 += interval } }
}

/// Records every reconnect wait instead of sleeping, moves the test clock by it, then runs the
/// test's hook (plug the camera back in, stop the camera, …) with the wait's number from 1.
final class RecordingSleeper: ReconnectSleeper {
    private let waits = Locked<[TimeInterval]>([])
    private let hook = Locked<(@Sendable (Int) -> Void)?>(nil)
    private let clock: TestClock
    /// A camera that keeps failing ends the test instead of hanging it.
    private let limit: Int

    init(clock: TestClock, limit: Int = 100) {
        self.clock = clock
        self.limit = limit
    }

    var recorded: [TimeInterval] { waits.withLock { $0 } }

    func onWait(_ body: @escaping @Sendable (Int) -> Void) { hook.withLock { $0 = body } }

    func sleep(seconds: TimeInterval, unless stop: StopSignal) {
        let count = waits.withLock { waits in
            waits.append(seconds)
            return waits.count
        }
        clock.advance(by: seconds)
        hook.withLock { $0 }?(count)
        if count >= limit { stop.raise() }
    }
}

/// Collects a camera's transitions.
final class TransitionLog: Sendable {
    private let entries = Locked<[CameraTransition]>([])

    var handler: @Sendable (CameraTransition) -> Void {
        { [entries] transition in entries.withLock { $0.append(transition) } }
    }

    var transitions: [CameraTransition] { entries.withLock { $0 } }
    /// The states entered, in order.
    var states: [String] { transitions.map(\.to.description) }
}
