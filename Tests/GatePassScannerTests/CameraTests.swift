import CV4L2
import Foundation
import GatePassCore
import Testing
@testable import GatePassScanner

/// The camera state machine and format negotiation, against `FakeVideoDevice` (no camera or
/// V4L2 driver exists on these machines).
@Suite struct CameraTests {
    // MARK: - Negotiation

    @Test func negotiationPicksGreyWhenOffered() throws {
        try withFakeCamera(FakeVideoDevice.Hardware(formats: [.yuyv, .mjpeg, .grey])) { fixture in
            let frame = try #require(try fixture.nextFrame())
            #expect(fixture.device.recorded.formatRequests == [.grey])
            #expect(fixture.camera.format?.pixelFormat == .grey)
            #expect(fixture.camera.format?.isEmulated == false)
            #expect(frame.luma == expectedLuma(width: 64, height: 48, frame: fixture.device.lastFrameNumber))
            // Unpadded GREY is handed over straight from the mapped buffer.
            #expect(frame.wasInsideMapping)
        }
    }

    @Test func negotiationTakesYUYVOtherwiseAndExtractsLumaAcrossTheStride() throws {
        var hardware = FakeVideoDevice.Hardware(formats: [.mjpeg, .yuyv])
        hardware.rowPadding = 24
        try withFakeCamera(hardware) { fixture in
            let first = try #require(try fixture.nextFrame())
            let firstNumber = fixture.device.lastFrameNumber
            let second = try #require(try fixture.nextFrame())
            #expect(fixture.device.recorded.formatRequests == [.yuyv])
            #expect(fixture.camera.format?.pixelFormat == .yuyv)
            #expect(fixture.camera.format?.bytesPerLine == 2 * 64 + 24)
            #expect(first.luma == expectedLuma(width: 64, height: 48, frame: firstNumber))
            #expect(second.luma == expectedLuma(width: 64, height: 48, frame: fixture.device.lastFrameNumber))
            #expect(first.luma != second.luma)
            // Copied out of the mapped buffer, into one buffer reused frame after frame.
            #expect(!first.wasInsideMapping)
            #expect(first.address == second.address)
            #expect(first.index == 0)
            #expect(second.index == 1)
        }
    }

    @Test(arguments: [
        (PixelFormat.grey, 0), (.grey, 8), (.yuyv, 0), (.uyvy, 4), (.yuv420, 0), (.yvu420, 16),
    ])
    func lumaIsReadFromEveryFormat(format: PixelFormat, padding: Int) throws {
        var hardware = FakeVideoDevice.Hardware(formats: [format])
        hardware.rowPadding = padding
        hardware.libv4l2Conversion = false
        try withFakeCamera(hardware) { fixture in
            let frame = try #require(try fixture.nextFrame())
            #expect(fixture.camera.format?.pixelFormat == format)
            #expect(frame.luma == expectedLuma(width: 64, height: 48, frame: fixture.device.lastFrameNumber))
        }
    }

    @Test func mjpegOnlyCameraIsAskedForTheFormatLibv4l2Emulates() throws {
        try withFakeCamera(FakeVideoDevice.Hardware(formats: [.mjpeg])) { fixture in
            let frame = try #require(try fixture.nextFrame())
            // libv4l2 converts MJPEG to RGB3, BGR3, YU12 or YV12 (not to YUYV or GREY): YU12 is asked for.
            #expect(fixture.device.recorded.formatRequests == [.yuv420])
            let format = try #require(fixture.camera.format)
            #expect(format.pixelFormat == .yuv420)
            #expect(format.isEmulated)
            #expect(format.description.contains("converted by libv4l2"))
            #expect(frame.luma == expectedLuma(width: 64, height: 48, frame: fixture.device.lastFrameNumber))
            #expect(fixture.log.transitions.last?.reason.contains("YU12") == true)
        }
    }

    @Test func mjpegCameraWithoutListedEmulationIsStillAskedForYU12() throws {
        // A libv4l2 that does not list its emulated formats: MJPEG alone in ENUM_FMT.
        var hardware = FakeVideoDevice.Hardware(formats: [.mjpeg])
        hardware.libv4l2Conversion = false
        try withFakeCamera(hardware) { fixture throws in
            // Without conversion the driver answers YU12 with MJPEG: nothing readable.
            #expect(throws: ScannerError.self) { try fixture.nextFrame() }
            #expect(fixture.device.recorded.formatRequests == [.yuv420])
        }
    }

    @Test func deviceWithNoReadableFormatStopsWithAnError() throws {
        try withFakeCamera(FakeVideoDevice.Hardware(formats: [.h264])) { fixture in
            do {
                _ = try fixture.nextFrame()
                Issue.record("an H.264-only camera cannot be read")
            } catch let error as ScannerError {
                guard case .device(let path, let reason, let lost) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(path == "/dev/video0")
                #expect(!lost)
                #expect(reason.contains("H264"))
            }
            // libv4l2 lists its targets YU12 and YV12 whatever the camera sends; asked for either,
            // the driver substituted its default (H264), which has no luma plane to read.
            #expect(fixture.device.recorded.formatRequests == [.yuv420, .yvu420])
            #expect(fixture.camera.state == .stopped)
            #expect(fixture.device.openDescriptors == 0)
            #expect(fixture.sleeper.recorded.isEmpty)
            #expect(try fixture.nextFrame() == nil)
        }
    }

    @Test func deviceThatCannotCaptureStopsWithAnError() throws {
        var hardware = FakeVideoDevice.Hardware()
        hardware.capabilities = UInt32(V4L2_CAP_VIDEO_OUTPUT) | UInt32(V4L2_CAP_STREAMING)
        try withFakeCamera(hardware) { fixture throws in
            #expect(throws: ScannerError.device(path: "/dev/video0", reason: "Fake UVC Camera is not a video capture device",
                                                lost: false)) { try fixture.nextFrame() }
            #expect(fixture.camera.state == .stopped)
            #expect(fixture.device.recorded.closes == 1)
        }
    }

    @Test func aNodeThatIsNoVideoDeviceStopsWithAnError() throws {
        var hardware = FakeVideoDevice.Hardware()
        hardware.isVideoDevice = false
        try withFakeCamera(hardware, path: "/dev/null") { fixture throws in
            #expect(throws: ScannerError.device(
                path: "/dev/null", reason: "not a V4L2 device (open failed: Inappropriate ioctl for device (ENOTTY))",
                lost: false)) { try fixture.nextFrame() }
            #expect(fixture.camera.state == .stopped)
            #expect(fixture.sleeper.recorded.isEmpty)
            #expect(fixture.log.states == ["opening", "stopped"])
        }
    }

    @Test func theDriversSizeIsTheFramesSize() throws {
        var hardware = FakeVideoDevice.Hardware(formats: [.yuyv])
        hardware.sizes = [FakeVideoDevice.FrameSize(32, 24), FakeVideoDevice.FrameSize(80, 60)]
        try withFakeCamera(hardware, configure: { $0.width = 640; $0.height = 480 }) { fixture in
            let frame = try #require(try fixture.nextFrame())
            #expect(frame.width == 80)
            #expect(frame.height == 60)
            #expect(fixture.camera.format?.width == 80)
            #expect(fixture.camera.format?.height == 60)
            #expect(frame.luma == expectedLuma(width: 80, height: 60, frame: fixture.device.lastFrameNumber))
        }
    }

    @Test func frameRateIsRequestedAndTheDriversRateReported() throws {
        try withFakeCamera(configure: { $0.framesPerSecond = 15 }) { fixture in
            _ = try #require(try fixture.nextFrame())
            #expect(fixture.device.recorded.frameRateRequests == [15])
            #expect(fixture.camera.format?.framesPerSecond == 15)
        }
        var fixedRate = FakeVideoDevice.Hardware()
        fixedRate.frameRates = [30]
        try withFakeCamera(fixedRate, configure: { $0.framesPerSecond = 10 }) { fixture in
            _ = try #require(try fixture.nextFrame())
            #expect(fixture.camera.format?.framesPerSecond == 30)
        }
        var noRateControl = FakeVideoDevice.Hardware()
        noRateControl.frameRates = []
        try withFakeCamera(noRateControl) { fixture in
            _ = try #require(try fixture.nextFrame())
            #expect(fixture.camera.state == .streaming)
            #expect(fixture.camera.format?.framesPerSecond == nil)
        }
    }

    @Test func buffersAreRequestedMappedQueuedAndGivenBack() throws {
        try withFakeCamera { fixture in
            for _ in 0..<10 { _ = try #require(try fixture.nextFrame()) }
            let record = fixture.device.recorded
            #expect(record.bufferRequests == [4])
            #expect(record.queries == 4)
            // YUYV 64×48 is 6144 bytes a buffer; the driver places buffers on page boundaries.
            #expect(record.maps.map(\.offset) == [0, 8192, 16384, 24576])
            #expect(record.maps.allSatisfy { $0.length == 64 * 2 * 48 })
            #expect(record.streamOns == 1)
            // 4 queued at the start, and each of the 10 frames' buffers given back after use.
            #expect(record.queues == 4 + 10)
            #expect(fixture.device.queuedBuffers == 4)
            #expect(fixture.camera.format?.bufferCount == 4)
        }
        var fewer = FakeVideoDevice.Hardware()
        fewer.maxBuffers = 2
        try withFakeCamera(fewer, configure: { $0.bufferCount = 6 }) { fixture in
            for _ in 0..<5 { _ = try #require(try fixture.nextFrame()) }
            #expect(fixture.device.recorded.bufferRequests == [6])
            #expect(fixture.device.recorded.maps.count == 2)
            #expect(fixture.camera.format?.bufferCount == 2)
        }
    }

    @Test func stableNamesAreOpenedAsGivenAndLoggedWithTheirTarget() throws {
        let stableName = "/dev/v4l/by-id/usb-Fake_UVC_Camera-video-index0"
        try withFakeCamera(path: stableName, node: "/dev/video2") { fixture in
            _ = try #require(try fixture.nextFrame())
            #expect(fixture.device.recorded.openedPaths == [stableName])
            let opening = try #require(fixture.log.transitions.first { $0.to == .opening })
            #expect(opening.reason == "opening \(stableName) (→ /dev/video2)")
        }
    }

    // MARK: - Capture

    @Test func eagainFromDequeueIsRetried() throws {
        try withFakeCamera(script: [.spuriousWakeup, .spuriousWakeup, .frame]) { fixture in
            let frame = try #require(try fixture.nextFrame())
            #expect(frame.index == 0)
            #expect(fixture.device.recorded.dequeueAttempts == 3)
            #expect(fixture.log.states == ["opening", "streaming"])
        }
    }

    @Test func damagedFramesAreSkippedAndTheirBuffersGivenBack() throws {
        try withFakeCamera(script: [.damagedFrame, .damagedFrame, .frame]) { fixture in
            let frame = try #require(try fixture.nextFrame())
            #expect(frame.index == 0)
            #expect(fixture.device.lastFrameNumber == 2)
            #expect(frame.luma == expectedLuma(width: 64, height: 48, frame: 2))
            #expect(fixture.device.recorded.queues == 4 + 3)
            #expect(fixture.device.queuedBuffers == 4)
        }
    }

    @Test func aStreamThatStallsCountsAsLost() throws {
        // Eight quarter-second poll timeouts: two seconds without a frame.
        let stall = [FakeVideoDevice.Step](repeating: .pollTimeout, count: 8)
        try withFakeCamera(script: [.frame] + stall, configure: { $0.frameTimeout = 2; $0.pollInterval = 0.25 }) { fixture in
            _ = try #require(try fixture.nextFrame())
            let frame = try #require(try fixture.nextFrame())
            #expect(frame.index == 1)
            let lost = try #require(fixture.log.transitions.first { $0.to == .lost })
            #expect(lost.reason == "no frame for 2 s")
            #expect(fixture.sleeper.recorded == [1])
            #expect(fixture.device.recorded.opens == 2)
        }
    }

    // MARK: - Losing the camera and getting it back

    @Test(arguments: [FakeVideoDevice.Step.unplugOnDequeue, .unplugOnPoll])
    func unplugIsLostThenWaitsWithBackoffUntilTheCameraIsBack(unplug: FakeVideoDevice.Step) throws {
        try withFakeCamera(script: [.frame, .frame, unplug]) { fixture in
            let device = fixture.device
            let released = Locked<(mappings: Int, descriptors: Int)?>(nil)
            fixture.sleeper.onWait { wait in
                if wait == 1 { released.withLock { $0 = (device.liveMappings, device.openDescriptors) } }
                if wait == 9 { device.plugIn() }
            }
            for _ in 0..<2 { _ = try #require(try fixture.nextFrame()) }

            // Blocks through the unplug and the reconnect attempts, then delivers.
            let frame = try #require(try fixture.nextFrame())
            #expect(frame.index == 2)
            #expect(frame.luma == expectedLuma(width: 64, height: 48, frame: device.lastFrameNumber))
            #expect(fixture.sleeper.recorded == [1, 2, 4, 8, 16, 32, 60, 60, 60])

            // Everything was released before the first wait: every buffer unmapped, the fd closed.
            let afterLoss = try #require(released.withLock { $0 })
            #expect(afterLoss.mappings == 0)
            #expect(afterLoss.descriptors == 0)
            let record = device.recorded
            #expect(record.opens == 2)
            #expect(record.openAttempts == 10)
            #expect(record.closes == 1)
            #expect(record.unmaps == 4)
            #expect(device.liveMappings == 4)

            let lost = try #require(fixture.log.transitions.first { $0.to == .lost })
            #expect(lost.from == .streaming)
            #expect(lost.reason == (unplug == .unplugOnPoll ? "poll reported POLLERR"
                                                             : "VIDIOC_DQBUF failed: No such device (ENODEV)"))
            let failedAttempt = ["waiting", "opening", "absent"]
            #expect(fixture.log.states
                    == ["opening", "streaming", "lost"] + Array([[String]](repeating: failedAttempt, count: 8).joined())
                    + ["waiting", "opening", "streaming"])
            #expect(fixture.camera.state == .streaming)

            // Frames keep flowing on the new stream.
            let next = try #require(try fixture.nextFrame())
            #expect(next.index == 3)
        }
    }

    @Test func waitingSaysUntilWhen() throws {
        try withFakeCamera(present: false) { fixture in
            let start = fixture.clock.now()
            fixture.sleeper.onWait { wait in if wait == 2 { fixture.device.plugIn() } }
            _ = try #require(try fixture.nextFrame())
            let waits = fixture.log.transitions.compactMap { transition -> Date? in
                if case .waiting(let until) = transition.to { return until }
                return nil
            }
            #expect(waits == [start.addingTimeInterval(1), start.addingTimeInterval(1 + 2)])
            #expect(fixture.log.transitions.first { $0.to == .absent }?.reason
                    == "open failed: No such file or directory (ENOENT)")
        }
    }

    @Test func aCameraAbsentAtStartIsRetriedWithBackoff() throws {
        try withFakeCamera(present: false) { fixture in
            fixture.sleeper.onWait { wait in if wait == 4 { fixture.device.plugIn() } }
            let frame = try #require(try fixture.nextFrame())
            #expect(frame.index == 0)
            #expect(fixture.sleeper.recorded == [1, 2, 4, 8])
            #expect(fixture.device.recorded.openAttempts == 5)
            #expect(fixture.log.states.prefix(3) == ["opening", "absent", "waiting"])
            #expect(fixture.log.states.suffix(3) == ["waiting", "opening", "streaming"])
        }
    }

    @Test func anIOErrorReopensAfterOneSecondAndBackoffStartsOverAfterFrames() throws {
        try withFakeCamera(script: [.frame, .ioErrorOnDequeue, .frame, .frame, .ioErrorOnDequeue]) { fixture in
            for expected in 0..<5 {
                let frame = try #require(try fixture.nextFrame())
                #expect(frame.index == expected)
            }
            #expect(fixture.sleeper.recorded == [1, 1])
            let record = fixture.device.recorded
            #expect(record.opens == 3)
            #expect(record.closes == 2)
            #expect(record.streamOffs == 2)
            #expect(record.maps.count == record.unmaps + fixture.device.liveMappings)
            #expect(fixture.device.liveMappings == 4)
            #expect(fixture.log.transitions.filter { $0.to == .lost }.map(\.reason)
                    == Array(repeating: "VIDIOC_DQBUF failed: Input/output error (EIO)", count: 2))
        }
    }

    @Test func reconnectDelaysDoubleUpToTheCap() {
        let configuration = V4L2Camera.Configuration(devicePath: "/dev/video0")
        #expect((1...9).map(configuration.reconnectDelay(afterFailures:)) == [1, 2, 4, 8, 16, 32, 60, 60, 60])
        let quick = V4L2Camera.Configuration(devicePath: "/dev/video0", reconnectBase: 0.5, reconnectCap: 3)
        #expect((1...5).map(quick.reconnectDelay(afterFailures:)) == [0.5, 1, 2, 3, 3])
        #expect(configuration.reconnectDelay(afterFailures: 10_000) == 60)
    }

    // MARK: - Stopping

    @Test func stopDuringTheWaitEndsAtOnce() throws {
        try withFakeCamera(present: false) { fixture throws in
            fixture.sleeper.onWait { wait in if wait == 3 { fixture.camera.stop() } }
            #expect(try fixture.nextFrame() == nil)
            #expect(fixture.sleeper.recorded == [1, 2, 4])
            #expect(fixture.device.recorded.openAttempts == 3)
            #expect(fixture.camera.state == .stopped)
            #expect(fixture.log.transitions.last?.from.description == "waiting")
            #expect(try fixture.nextFrame() == nil)
            #expect(fixture.device.recorded.openAttempts == 3)
        }
    }

    @Test func stopFromAnotherThreadInterruptsARealWait() throws {
        // The real sleeper, and a first wait of a minute: only stop() can end it early.
        let device = FakeVideoDevice(present: false)
        // stop() comes once the camera is in its wait (the signal: its transition to waiting).
        let waiting = DispatchSemaphore(value: 0)
        let camera = V4L2Camera(
            configuration: .init(devicePath: "/dev/video0", reconnectBase: 60, reconnectCap: 60), device: device,
            onTransition: { transition in if case .waiting = transition.to { waiting.signal() } })
        defer { camera.stop() }
        let returned = DispatchSemaphore(value: 0)
        let gotFrame = Locked<Bool?>(nil)
        Thread {
            let got = try? camera.withNextFrame { _ in Issue.record("no frame can come") }
            gotFrame.withLock { $0 = got }
            returned.signal()
        }.start()
        #expect(waiting.wait(timeout: .now() + 30) == .success, "the camera waits to reconnect")
        camera.stop()
        // Returning within 30 s of a 60 s wait shows stop() cut it short (30 s only catches a hang).
        #expect(returned.wait(timeout: .now() + 30) == .success)
        #expect(gotFrame.withLock { $0 } == false)
        #expect(camera.state == .stopped)
        #expect(device.recorded.openAttempts == 1)
    }

    @Test func stopWhileStreamingReleasesTheDeviceAtOnce() throws {
        try withFakeCamera { fixture in
            _ = try #require(try fixture.nextFrame())
            fixture.camera.stop()
            #expect(fixture.camera.state == .stopped)
            #expect(fixture.camera.format == nil)
            #expect(fixture.device.liveMappings == 0)
            #expect(fixture.device.openDescriptors == 0)
            #expect(fixture.device.recorded.streamOffs == 1)
            #expect(try fixture.nextFrame() == nil)
            #expect(fixture.log.states == ["opening", "streaming", "stopped"])
        }
    }

    @Test func stopInsideTheFrameHandlerReleasesTheDeviceAfterIt() throws {
        try withFakeCamera { fixture in
            let delivered = try fixture.camera.withNextFrame { frame in
                fixture.camera.stop()
                // The buffer is still ours while the handler runs.
                #expect(fixture.device.liveMappings == 4)
                #expect(frame.luma.count == 64 * 48)
            }
            #expect(delivered)
            #expect(fixture.camera.state == .stopped)
            #expect(fixture.device.liveMappings == 0)
            #expect(fixture.device.openDescriptors == 0)
            #expect(try fixture.nextFrame() == nil)
        }
    }

    @Test func anErrorThrownByTheHandlerStillGivesTheBufferBack() throws {
        struct HandlerFailed: Error {}
        try withFakeCamera { fixture throws in
            #expect(throws: HandlerFailed.self) { try fixture.camera.withNextFrame { _ in throw HandlerFailed() } }
            #expect(fixture.device.queuedBuffers == 4)
            #expect(fixture.camera.state == .streaming)
            #expect(try fixture.nextFrame()?.index == 1)
        }
    }
}

// MARK: - Fixtures

/// A camera on a fake device, with a test clock, a recording sleeper and a transition log.
struct CameraFixture: Sendable {
    let camera: V4L2Camera
    let device: FakeVideoDevice
    let sleeper: RecordingSleeper
    let clock: TestClock
    let log: TransitionLog

    /// The next frame, copied out, or nil when the camera returned false.
    func nextFrame() throws -> CapturedFrame? {
        var captured: CapturedFrame?
        let delivered = try camera.withNextFrame { frame in
            captured = CapturedFrame(width: frame.width, height: frame.height, luma: Array(frame.luma),
                                     index: frame.index, address: frame.luma.baseAddress,
                                     wasInsideMapping: device.isInsideMapping(frame.luma.baseAddress))
        }
        #expect(delivered == (captured != nil))
        return captured
    }
}

struct CapturedFrame: Equatable {
    var width: Int
    var height: Int
    var luma: [UInt8]
    var index: Int
    var address: UnsafeRawPointer?
    var wasInsideMapping: Bool
}

/// Runs `body` with a camera on a fake device, and stops the camera afterwards.
func withFakeCamera<Result>(
    _ hardware: FakeVideoDevice.Hardware = FakeVideoDevice.Hardware(), script: [FakeVideoDevice.Step] = [],
    present: Bool = true, path: String = "/dev/video0", node: String? = nil,
    configure: (inout V4L2Camera.Configuration) -> Void = { _ in },
    _ body: (CameraFixture) throws -> Result
) rethrows -> Result {
    let clock = TestClock()
    let device = FakeVideoDevice(hardware, script: script, present: present, path: node ?? path,
                                 links: node == nil ? [] : [path], clock: clock)
    var configuration = V4L2Camera.Configuration(devicePath: path, width: 64, height: 48)
    configure(&configuration)
    let sleeper = RecordingSleeper(clock: clock)
    let log = TransitionLog()
    let camera = V4L2Camera(configuration: configuration, device: device, clock: clock, sleeper: sleeper,
                            onTransition: log.handler)
    defer { camera.stop() }
    return try body(CameraFixture(camera: camera, device: device, sleeper: sleeper, clock: clock, log: log))
}

/// The luma plane the fake camera produces for frame `frame`.
func expectedLuma(width: Int, height: Int, frame: Int) -> [UInt8] {
    (0..<height).flatMap { y in (0..<width).map { x in FakeVideoDevice.luma(x: x, y: y, frame: frame) } }
}
