import Foundation
@testable import GatePassScanner

extension FuzzTarget {
    /// A YUV4MPEG2 recording: its stream header as `Y4MSource.Header.parse` reads it from
    /// memory, then the whole input as a recording file read frame by frame.
    static let y4m = FuzzTarget(name: "y4m", summary: "Y4MSource: the stream header from memory, then the frames") { input in
        let line = Array(input.prefix(while: { $0 != UInt8(ascii: "\n") }).prefix(Y4MSource.maximumHeaderLength))
        if let header = try? Y4MSource.Header.parse(line) {
            // What the header makes the source allocate and skip per frame stays bounded.
            let maximum = Y4MSource.maximumDimension
            FuzzCheck.require((1...maximum).contains(header.width) && (1...maximum).contains(header.height),
                              "a \(header.width)×\(header.height) frame passed the size check")
            FuzzCheck.require((0...3 * header.width * header.height).contains(header.trailingBytes),
                              "\(header.trailingBytes) trailing bytes for a \(header.width)×\(header.height) frame")
            if let rate = header.framesPerSecond { FuzzCheck.require(rate.isFinite && rate > 0, "a frame rate of \(rate)") }
        }
        // The source reads files only; one file in /dev/shm (memory) is rewritten for each input.
        let path = RecordingFile.shared.replaceContents(with: input)
        guard let source = try? Y4MSource(path: path) else { return }
        defer { source.close() }
        var frames = 0
        do {
            while try source.withNextFrame({ frame in
                FuzzCheck.require(frame.width == source.width && frame.height == source.height && frame.index == frames
                                      && frame.luma.count == source.width * source.height,
                                  "frame \(frames) does not match the header")
            }) {
                frames += 1
            }
        } catch {
            FuzzCheck.require(error is ScannerError, "withNextFrame threw \(error)")
        }
        // Every frame is at least its Y plane and a FRAME line: no more frames than bytes allow.
        FuzzCheck.require(frames * (source.width * source.height + 6) <= input.count, "\(frames) frames from \(input.count) bytes")
    }
}

/// The scratch file the y4m target hands to `Y4MSource(path:)`.
final class RecordingFile: Sendable {
    static let shared = RecordingFile()
    let path: String
    private let descriptor: Int32

    private init() {
        let folder = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        path = "\(folder)/gatepass-fuzz-\(getpid()).y4m"
        descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        precondition(descriptor >= 0, "cannot create \(path): \(String(cString: strerror(errno)))")
        atexit { unlink("\(FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory())/gatepass-fuzz-\(getpid()).y4m") }
    }

    func replaceContents(with bytes: UnsafeRawBufferPointer) -> String {
        precondition(ftruncate(descriptor, 0) == 0 && (bytes.isEmpty || pwrite(descriptor, bytes.baseAddress, bytes.count, 0) == bytes.count),
                     "cannot write \(path)")
        return path
    }
}
