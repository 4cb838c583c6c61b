import GatePassScanner

/// Where frames come from: `--device/--image/--dir/--video`, with `--size/--fps` for a
/// camera. One declaration, one set of limits, shared by `scan`, `kiosk` and `console`.
///
/// Limits: `--size` from 16x16 to 4096x4096, `--fps` from 1 to 120 (the strictest of what the
/// three commands accepted before: `scan` took up to 8192x8192 at 240 fps, `console` took
/// neither and always asked for 640x480 at 30 fps).
enum FrameSourceOptions {
    static let sizeRange = 16...4096
    static let framesPerSecondRange = 1...120

    static let device = Option<String>(
        "--device", value: "DEV",
        help: "A V4L2 camera (/dev/video0, or a stable name under /dev/v4l/by-id/), read until stopped; it is reopened with backoff when unplugged and plugged back in.")
    static let image = ListOption(
        "--image", value: "FILE",
        help: "One or more PGM, PNG or JPEG files, read once in order (--image A B and --image A --image B both work).")
    static let directory = Option<String>(
        "--dir", value: "DIR",
        help: "A folder's images in name order, read once (hidden files and subfolders are skipped).")
    static let video = Option<String>(
        "--video", value: "FILE.y4m",
        help: "A YUV4MPEG2 recording of a camera, read once; only the luma plane is used.")
    static let size = Option<FrameSize>(
        "--size", value: "WxH",
        help: "With --device: the frame size to ask for, from 16x16 to 4096x4096 (default 640x480); the driver may pick the nearest it has.") {
        (text: String) throws(UsageError) in
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]),
              sizeRange.contains(width), sizeRange.contains(height)
        else { throw UsageError("--size must be WIDTHxHEIGHT from 16x16 to 4096x4096, such as 640x480") }
        return FrameSize(width: width, height: height)
    }
    static let framesPerSecond = Option<Int>(
        "--fps", value: "N", in: framesPerSecondRange,
        help: "With --device: the frame rate to ask for, from 1 to 120 (default 30).")

    struct FrameSize: Sendable {
        var width: Int
        var height: Int
    }

    static let all: [any OptionDeclaration] = [device, image, directory, video, size, framesPerSecond]

    /// One frame source, as chosen on the command line.
    enum Choice: Equatable {
        case camera(V4L2Camera.Configuration)
        case images([String])
        case directory(String)
        case video(String)

        /// Files, folders and recordings end; a camera is read until stopped.
        var isFinite: Bool { if case .camera = self { false } else { true } }

        /// Image files and folders: pictures with no frame rate to keep, so a reader may give
        /// each one every try it has.
        var isStillPictures: Bool {
            switch self {
            case .images, .directory: true
            case .camera, .video: false
            }
        }
    }

    static let choices = "--device DEV, --image FILE…, --dir DIR and --video FILE.y4m"

    /// The one source `scan` and `kiosk` need.
    static func requiredChoice(_ arguments: ParsedArguments) throws(UsageError) -> Choice {
        guard let choice = try choice(arguments, required: true) else { throw UsageError("give one of \(choices)") }
        return choice
    }

    /// The source chosen, nil when none was given and `required` is false.
    static func choice(_ arguments: ParsedArguments, required: Bool) throws(UsageError) -> Choice? {
        let device = try arguments.value(device)
        let images = arguments.values(image)
        let directory = try arguments.value(directory)
        let video = try arguments.value(video)
        let size = try arguments.value(size)
        let framesPerSecond = try arguments.value(framesPerSecond)
        var chosen: [Choice] = []
        if let device {
            var configuration = V4L2Camera.Configuration(devicePath: device)
            if let size { (configuration.width, configuration.height) = (size.width, size.height) }
            if let framesPerSecond { configuration.framesPerSecond = framesPerSecond }
            chosen.append(.camera(configuration))
        } else if size != nil || framesPerSecond != nil {
            throw UsageError("--size and --fps go with --device DEV; drop them or add --device")
        }
        if arguments.has(image) { chosen.append(.images(images)) }
        if let directory { chosen.append(.directory(directory)) }
        if let video { chosen.append(.video(video)) }
        guard chosen.count <= 1 else { throw UsageError("give only one of \(choices)") }
        if required, chosen.isEmpty { throw UsageError("give one of \(choices)") }
        return chosen.first
    }
}
