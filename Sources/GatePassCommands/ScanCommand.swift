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
enum ScanCommand {
    static let help = HelpText(
        overview: "Read QR codes from image files, a folder of images or a Y4M recording, and print each newly seen code. Files that cannot be read are reported and make the exit status 1; a picture without a code prints nothing.",
        usage: "gatepass scan (--image FILE… | --dir DIR | --video FILE.y4m | --device DEV [--size WxH] [--fps N]) [--json]",
        options: [
            ("--image FILE…", "One or more PGM, PNG or JPEG files, each scanned on its own; frame n is the nth file."),
            ("--dir DIR", "The folder's files in name order as one stream of frames (hidden files and subfolders are skipped)."),
            ("--video FILE.y4m", "A YUV4MPEG2 recording of a camera; only the luma plane is read."),
            ("--device DEV", "A V4L2 camera (/dev/video0, or a stable name under /dev/v4l/by-id/), read until interrupted; it is reopened when unplugged and plugged back in, and its state changes are reported on stderr."),
            ("--size WxH", "The frame size to ask the camera for (default 640x480); the driver may pick the nearest it has."),
            ("--fps N", "The frame rate to ask the camera for (default 30)."),
            ("--json", "Print one JSON object per code: {\"format\", \"frame\", \"ms\", \"text\"}, ms being that frame's decode time."),
        ])

    /// One `--json` line. Keys come out sorted (`CanonicalJSON`), like every `--json` output.
    struct Line: Encodable {
        var text: String
        var format: String
        var frame: Int
        /// The frame's decode time in milliseconds, to the microsecond.
        var ms: Double
    }

    private enum Input {
        case images([String])
        case directory(String)
        case video(String)
        case camera(V4L2Camera.Configuration)
    }

    static func run(_ arguments: [String], terminal: any Terminal) throws -> Int32 {
        if ArgumentReader(arguments).wantsHelp { terminal.out(help.rendered); return 0 }
        let (images, sawImage, rest) = try imageArguments(arguments)
        var reader = ArgumentReader(rest)
        let directory = try reader.option("--dir")
        let video = try reader.option("--video")
        let camera = try cameraConfiguration(&reader)
        let asJSON = reader.flag("--json")
        try reader.finish()
        let inputs = [sawImage ? Input.images(images) : nil, directory.map(Input.directory), video.map(Input.video),
                      camera.map(Input.camera)]
            .compactMap { $0 }
        guard inputs.count == 1, let input = inputs.first else {
            throw UsageError("give exactly one of --image FILE…, --dir DIR, --video FILE.y4m or --device DEV")
        }
        if case .images(let files) = input, files.isEmpty { throw UsageError("--image needs at least one file") }

        let decoder: QRDecoder
        do {
            decoder = try QRDecoder()
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
                let camera = openCamera(configuration, terminal: terminal)
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
                    let decoded = try decoder.decode(frame)
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
                if endsScan(error, input: input) { break }
            }
        }
        return failed ? 1 : 0
    }

    /// A bad file among files is skipped; a broken recording or decoder cannot go on.
    private static func endsScan(_ error: ScannerError, input: Input) -> Bool {
        switch (error, input) {
        case (.decoder, _), (_, .video), (_, .camera): true
        default: false
        }
    }

    /// Takes `--image A B …` (every following argument up to the next `--option`) and
    /// `--image=A`, in the order given, out of the arguments.
    private static func imageArguments(_ arguments: [String]) throws(UsageError) -> (files: [String], given: Bool, rest: [String]) {
        var files: [String] = []
        var given = false
        var rest: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--image" {
                given = true
                let start = files.count
                while index < arguments.count, !arguments[index].hasPrefix("--") {
                    files.append(arguments[index])
                    index += 1
                }
                if files.count == start { throw UsageError("--image needs at least one file") }
            } else if argument.hasPrefix("--image=") {
                given = true
                files.append(String(argument.dropFirst("--image=".count)))
            } else {
                rest.append(argument)
            }
        }
        return (files, given, rest)
    }
}

// MARK: - --device: a V4L2 camera (issue 5, the camera state machine)

extension ScanCommand {
    /// `--device DEV [--size WxH] [--fps N]`, or nil without `--device`.
    fileprivate static func cameraConfiguration(_ reader: inout ArgumentReader) throws(UsageError)
        -> V4L2Camera.Configuration?
    {
        let device = try reader.option("--device")
        let size = try reader.option("--size")
        let framesPerSecond = try reader.integerOption("--fps", in: 1...240)
        guard let device else {
            if size != nil || framesPerSecond != nil { throw UsageError("--size and --fps go with --device DEV") }
            return nil
        }
        var configuration = V4L2Camera.Configuration(devicePath: device)
        if let size {
            let parts = size.lowercased().split(separator: "x", omittingEmptySubsequences: false)
            guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]),
                  (16...8192).contains(width), (16...8192).contains(height)
            else { throw UsageError("--size must be WIDTHxHEIGHT, such as 640x480") }
            (configuration.width, configuration.height) = (width, height)
        }
        if let framesPerSecond { configuration.framesPerSecond = framesPerSecond }
        return configuration
    }

    /// The camera for `--device`, reporting each state change on stderr.
    fileprivate static func openCamera(_ configuration: V4L2Camera.Configuration, terminal: any Terminal) -> V4L2Camera {
        let path = configuration.devicePath
        return V4L2Camera(configuration: configuration, device: LibV4L2Device(),
                          onTransition: { terminal.err("camera \(path): \($0)") })
    }
}
