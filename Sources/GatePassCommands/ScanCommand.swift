import Foundation
import GatePassClient
import GatePassCore
import GatePassScanner

/// `gatepass scan`: decodes QR codes from image files, a folder of images or a Y4M recording
/// and prints each newly seen code — no server, no session.
///
/// "Newly seen": each `--image` file is a picture of its own, so every code in it is printed
/// (a code in two files is printed for both). A folder (`--dir`) and a recording (`--video`)
/// are one stream of frames: a code is printed in the first frame it appears in and not again
/// while it stays in view; once it has left for a frame it is printed on its return (the
/// kiosk's `CodeDeduplicator` with a cooldown of 0).
struct ScanCommand: GatePassCommand {
    static let configuration = CommandConfiguration(
        name: "gatepass scan",
        overview: "Read QR codes from image files, a folder of images or a Y4M recording, and print each newly seen code. Files that cannot be read are reported and make the exit status 1; a picture without a code prints nothing. Each --image file is scanned on its own (frame n is the nth file); a folder, a recording and a camera are one stream of frames. A camera's state changes are reported on stderr.",
        usage: "gatepass scan (--image FILE… | --dir DIR | --video FILE.y4m | --device DEV [--size WxH] [--fps N]) [--json]",
        options: FrameSourceOptions.all + [OutputOptions.flag(
            "Print one JSON object per code: {\"format\", \"frame\", \"ms\", \"text\"}, ms being that frame's decode time.")])

    var input: FrameSourceOptions.Choice
    var asJSON: Bool

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        input = try FrameSourceOptions.requiredChoice(arguments)
        asJSON = arguments.has(OutputOptions.json)
    }

    /// One `--json` line. Keys come out sorted (`CanonicalJSON`), like every `--json` output.
    struct Line: Encodable {
        var text: String
        var format: String
        var frame: Int
        /// The frame's decode time in milliseconds, to the microsecond.
        var ms: Double
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let terminal = context.terminal
        let input = self.input
        // zbar, then light-on-dark and zxing-cpp within a quarter of zbar's CPU (README, "At the gate").
        let pipeline: ReadingPipeline
        do {
            pipeline = try ReadingPipeline(clock: .threadCPUTime)
        } catch {
            throw CommandFailure("\(error)")
        }
        let source: any FrameSource
        var deduplicator: CodeDeduplicator?
        var closeSource: () -> Void = {}
        do throws(ScannerError) {
            switch input {
            case .images(let files):
                source = ImageFileSource(paths: files)
            case .directory(let path):
                source = try ImageFileSource(directory: path)
                deduplicator = CodeDeduplicator(cooldown: 0)
            case .video(let path):
                let recording = try Y4MSource(path: path)
                closeSource = recording.close
                source = recording
                deduplicator = CodeDeduplicator(cooldown: 0)
            case .camera(let configuration):
                let camera = Self.openCamera(configuration, terminal: terminal)
                closeSource = camera.stop
                source = camera
                deduplicator = CodeDeduplicator(cooldown: 0)
            }
        } catch {
            throw CommandFailure(error.description)
        }
        defer { closeSource() }

        var failed = false
        while true {
            do {
                let more = try source.withNextFrame { frame in
                    // Still pictures are each seen once: every try, no budget. A stream keeps the budget.
                    let decoded = try input.isStillPictures ? pipeline.decodeWithEveryTry(frame) : pipeline.decode(frame)
                    // With a cooldown of 0 the frame's time does not matter; the index keeps it monotonic.
                    let newCodes = deduplicator?.observe(decoded.texts, at: Date(timeIntervalSinceReferenceDate: Double(frame.index)))
                        ?? decoded.codes.map(\.text)
                    for text in newCodes {
                        if asJSON {
                            let milliseconds = (decoded.milliseconds * 1000).rounded() / 1000
                            terminal.out(CanonicalJSON.string(Line(text: text, format: QRDecoder.format, frame: frame.index,
                                                                   ms: milliseconds)))
                        } else {
                            terminal.out(visible: text)
                        }
                    }
                }
                guard more else { break }
            } catch let error as ScannerError {
                terminal.err(visible: "error: \(error)")
                failed = true
                if Self.endsScan(error, input: input) { break }
            }
        }
        return failed ? 1 : 0
    }

    /// A bad file among files is skipped; a broken recording or decoder cannot go on.
    private static func endsScan(_ error: ScannerError, input: FrameSourceOptions.Choice) -> Bool {
        switch (error, input) {
        case (.decoder, _), (_, .video), (_, .camera): true
        default: false
        }
    }
}

// MARK: - --device: a V4L2 camera (issue 5, the camera state machine)

extension ScanCommand {
    /// The camera for `--device`, reporting each state change on stderr.
    fileprivate static func openCamera(_ configuration: V4L2Camera.Configuration, terminal: any Terminal) -> V4L2Camera {
        let path = configuration.devicePath
        return V4L2Camera(configuration: configuration, device: LibV4L2Device(),
                          onTransition: { terminal.err("camera \(path): \($0)") })
    }
}
