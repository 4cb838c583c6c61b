import Foundation
import GatePassCore
import GatePassScanner
import Testing
@testable import GatePassCommands
@testable import GatePassConsoleServices

/// The console's frame reader over real files (QR codes drawn with libqrencode, decoded by
/// zbar) and a camera path that does not exist.
@Suite struct ConsoleScanFeedTests {
    /// What a feed reported, from its thread. Each report signals `reported`, which is what a
    /// test waits on: no polling, no sleeps.
    final class Recorder: @unchecked Sendable {
        // @unchecked: every field is read and written with `reported` locked.
        private let reported = NSCondition()
        private var codes: [String] = []
        private var states: [ConsoleScanFeed.State] = []
        private var stopped = false
        private var reportsAfterStop = 0

        /// What was reported so far, as one snapshot.
        struct Reports {
            var codeList: [String]
            var stateList: [ConsoleScanFeed.State]
        }

        private func locked<Value>(_ body: () -> Value) -> Value {
            reported.lock()
            defer { reported.unlock() }
            return body()
        }

        var codeList: [String] { locked { codes } }
        var stateList: [ConsoleScanFeed.State] { locked { states } }
        /// Reports that came after `stopReturned()`: a feed whose `stop()` returned must have none.
        var lateReports: Int { locked { reportsAfterStop } }

        /// Called once the feed's `stop()` has returned.
        func stopReturned() { locked { stopped = true } }

        private func record(code: String? = nil, state: ConsoleScanFeed.State? = nil) {
            locked {
                if stopped { reportsAfterStop += 1 }
                if let code { codes.append(code) }
                if let state { states.append(state) }
                reported.broadcast()
            }
        }

        /// The feed's frame times come from a clock that stands still: how long decoding
        /// takes (minutes under ThreadSanitizer) never decides whether a cooldown has passed.
        func feed(_ source: ConsoleScanFeed.Source, cooldown: TimeInterval = 3) -> ConsoleScanFeed {
            ConsoleScanFeed(source: source, cooldown: cooldown, clock: StoppedClock(),
                            onCode: { code in self.record(code: code) },
                            onState: { state in self.record(state: state) })
        }

        /// Waits until `condition` holds of what was reported, woken by each report. The 20 s
        /// limit only keeps a broken feed from hanging the suite; nothing is timed.
        func wait(until condition: (Reports) -> Bool) -> Bool {
            let limit = Date().addingTimeInterval(20)
            reported.lock()
            defer { reported.unlock() }
            while !condition(Reports(codeList: codes, stateList: states)) {
                guard reported.wait(until: limit) else { return condition(Reports(codeList: codes, stateList: states)) }
            }
            return true
        }
    }

    /// A fresh folder with these files (name → bytes), removed afterwards.
    func withFolder(_ files: [String: [UInt8]], _ body: (String) throws -> Void) throws {
        let folder = temporaryPath("console-scan")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (name, bytes) in files { try Data(bytes).write(to: URL(fileURLWithPath: folder + "/" + name)) }
        try body(folder)
    }

    @Test func imageFilesReportEachCodeOnceAndABadFileIsSaidAndSkipped() throws {
        try withFolder(["a.pgm": try passPicture("GP1:K7Q2M9XD"), "c.pgm": try passPicture("GP1:QW3RTY45"),
                        "d.pgm": try passPicture(nil), "garbage.png": Array("not a picture at all".utf8)]) { folder in
            let recorder = Recorder()
            let paths = ["a.pgm", "a.pgm", "missing.pgm", "c.pgm", "garbage.png", "d.pgm", "a.pgm"].map { folder + "/" + $0 }
            let feed = recorder.feed(.images(paths))
            feed.start()
            #expect(feed.waitUntilFinished(timeout: 60))
            // The pass held over two pictures, and back within the cooldown, counts once.
            #expect(recorder.codeList == ["GP1:K7Q2M9XD", "GP1:QW3RTY45"])
            let states = recorder.stateList
            #expect(states.first == .init(text: "7 image files: reading 7 images"))
            #expect(states.contains { $0.isProblem && $0.text.contains("skipped one — cannot read \(folder)/missing.pgm") })
            #expect(states.contains { $0.isProblem && $0.text.contains("\(folder)/garbage.png is not a readable image") })
            #expect(states.last == .init(text: "7 image files: finished reading 7 images (2 could not be read)", isProblem: true))
            feed.stop()
            feed.stop()
        }
    }

    @Test func aFolderIsReadInNameOrderAndAMissingOneIsSaid() throws {
        try withFolder(["1.pgm": try passPicture("GP1:QW3RTY45"), "2.pgm": try passPicture(nil),
                        "3.pgm": try passPicture("GP1:K7Q2M9XD")]) { folder in
            let recorder = Recorder()
            let feed = recorder.feed(.directory(folder))
            feed.start()
            #expect(feed.waitUntilFinished(timeout: 60))
            #expect(recorder.codeList == ["GP1:QW3RTY45", "GP1:K7Q2M9XD"])
            #expect(recorder.stateList.last == .init(text: "Folder \(folder): finished reading 3 images"))
        }
        let recorder = Recorder()
        let missing = temporaryPath("no-such-folder")
        let feed = recorder.feed(.directory(missing))
        feed.start()
        #expect(feed.waitUntilFinished(timeout: 20))
        #expect(recorder.codeList.isEmpty)
        #expect(recorder.stateList == [.init(text: "Folder \(missing) cannot be used: cannot read \(missing): No such file or directory",
                                             isProblem: true)])
    }

    @Test func aBrokenRecordingEndsTheFeedWithAStateInsteadOfACrash() throws {
        let grey = [UInt8](repeating: 200, count: 16 * 16 + 2 * 8 * 8)
        let truncated = Array("YUV4MPEG2 W16 H16 F30:1 C420jpeg\nFRAME\n".utf8) + grey + Array("FRAME\n".utf8) + [1, 2, 3]
        try withFolder(["broken.y4m": truncated, "header.y4m": Array("not a recording\n".utf8)]) { folder in
            let recorder = Recorder()
            let feed = recorder.feed(.video(folder + "/broken.y4m"))
            feed.start()
            #expect(feed.waitUntilFinished(timeout: 20))
            let last = try #require(recorder.stateList.last)
            #expect(last.isProblem && last.text.hasPrefix("Recording \(folder)/broken.y4m stopped: "))
            #expect(last.text.hasSuffix("; type short ids instead"))

            let second = Recorder()
            let bad = second.feed(.video(folder + "/header.y4m"))
            bad.start()
            #expect(bad.waitUntilFinished(timeout: 20))
            #expect(second.stateList.count == 1 && second.stateList[0].isProblem)
            #expect(second.stateList[0].text.hasPrefix("Recording \(folder)/header.y4m cannot be used: "))
        }
    }

    @Test func stopEndsALongReadAtOnceAndJoinsTheThread() throws {
        try withFolder(["a.pgm": try passPicture("GP1:K7Q2M9XD"), "b.pgm": try passPicture("GP1:QW3RTY45")]) { folder in
            let recorder = Recorder()
            // 4,000 pictures alternating two passes: with no cooldown every picture reports one
            // code, so the codes count the frames read.
            let paths = (0..<4000).map { folder + ($0.isMultiple(of: 2) ? "/a.pgm" : "/b.pgm") }
            let feed = recorder.feed(.images(paths), cooldown: 0)
            feed.start()
            #expect(recorder.wait { $0.codeList.count >= 3 })
            feed.stop()
            recorder.stopReturned()
            // stop() returns once the thread has ended, so no report can come any more: a
            // late one would have been counted (no sleeping in the hope of seeing it).
            #expect(feed.isFinished)
            #expect(recorder.codeList.count < 4000, "stopped long before the end")
            #expect(recorder.lateReports == 0, "nothing is reported after stop() returned")
            #expect(!recorder.stateList.contains { $0.text.contains("finished") })
        }
    }

    @Test func aCameraThatIsNotThereIsSaidAndStopCutsTheWaitShort() {
        let recorder = Recorder()
        let path = temporaryPath("video-none")
        let feed = recorder.feed(.camera(devicePath: path))
        feed.start()
        #expect(recorder.wait { $0.stateList.contains { $0.text.hasPrefix("Camera \(path): not connected (") } })
        #expect(recorder.wait { $0.stateList.contains { $0.text.hasPrefix("Camera \(path): trying again in ") } })
        feed.stop()
        #expect(feed.isFinished)
        let states = recorder.stateList
        #expect(states.first == .init(text: "Camera \(path): opening"))
        #expect(states.contains { $0.isProblem && $0.text.contains("ENOENT") && $0.text.hasSuffix("type short ids meanwhile") })
        #expect(states.last == .init(text: "Camera \(path): stopped"))
        #expect(recorder.codeList.isEmpty)
    }

    @Test func cameraSettingsThatCannotWorkAreSaidNotTrapped() {
        let recorder = Recorder()
        let feed = recorder.feed(.camera(devicePath: "/dev/video0", width: 0, height: 480, framesPerSecond: 30))
        feed.start()
        #expect(feed.waitUntilFinished(timeout: 20))
        #expect(recorder.stateList == [.init(text: "Camera /dev/video0 cannot be used: camera /dev/video0: the frame size and rate must be positive (0×480 at 30 fps)",
                                             isProblem: true)])
    }

    @Test func stopWithoutStartAndStartAfterStopDoNothing() {
        let recorder = Recorder()
        let feed = recorder.feed(.images([]))
        feed.stop()
        feed.start()
        // A feed that never started answers false at once; one that wrongly started would
        // finish its empty list well within the limit and answer true.
        #expect(!feed.waitUntilFinished(timeout: 20))
        #expect(recorder.stateList.isEmpty)
    }

    @Test func cameraTransitionsAreSaidForTheSourceLine() {
        let camera = "Camera /dev/video0"
        let now = Date(timeIntervalSince1970: 0)
        func said(_ to: CameraState, _ reason: String = "why") -> ConsoleScanFeed.State {
            ConsoleScanFeed.state(of: CameraTransition(from: .absent, to: to, reason: reason, time: now), camera: camera)
        }
        #expect(said(.streaming) == .init(text: "Camera /dev/video0: streaming"))
        #expect(said(.opening) == .init(text: "Camera /dev/video0: opening"))
        #expect(said(.lost, "VIDIOC_DQBUF failed (ENODEV)")
                == .init(text: "Camera /dev/video0: lost (VIDIOC_DQBUF failed (ENODEV)); type short ids meanwhile", isProblem: true))
        #expect(said(.absent).isProblem && said(.waiting(until: now)).isProblem)
        #expect(said(.stopped, "stop requested") == .init(text: "Camera /dev/video0: stopped"))
        #expect(said(.stopped, "not a V4L2 device") == .init(text: "Camera /dev/video0: stopped (not a V4L2 device)", isProblem: true))
        #expect(ConsoleScanFeed.Source.images(["a.png"]).description == "Image a.png")
        #expect(ConsoleScanFeed.Source.video("gate.y4m").description == "Recording gate.y4m")
        #expect(!ConsoleScanFeed.Source.camera(devicePath: "/dev/video0").isFinite && ConsoleScanFeed.Source.directory("d").isFinite)
    }
}

/// A wall clock that always says the same time.
private struct StoppedClock: WallClock {
    let date = Date(timeIntervalSince1970: 1_800_000_000)
    func now() -> Date { date }
}
