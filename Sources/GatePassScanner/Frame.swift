/// One grey frame, borrowed: the luma (Y) plane as `width × height` contiguous bytes
/// (zbar's Y800). Valid only inside the `withNextFrame` call that produced it, so a camera
/// can hand over its mapped buffer without copying.
public struct FrameView {
    public let width: Int
    public let height: Int
    public let luma: UnsafeRawBufferPointer
    /// The source's frame number, from 0.
    public let index: Int
    /// What the frame came from when that means something to a person (a file name).
    public let label: String?

    public init(width: Int, height: Int, luma: UnsafeRawBufferPointer, index: Int, label: String? = nil) {
        precondition(luma.count >= width * height, "a frame needs width × height luma bytes")
        self.width = width
        self.height = height
        self.luma = luma
        self.index = index
        self.label = label
    }
}

/// Where frames come from: a camera, image files, a folder, a Y4M recording.
public protocol FrameSource: AnyObject {
    /// Calls `body` with the next frame and returns true; returns false when the source is
    /// exhausted (files and recordings; a camera never is, it throws or waits instead).
    func withNextFrame(_ body: (FrameView) throws -> Void) throws -> Bool
}

/// The scanner layer's one error type.
public enum ScannerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A file that does not exist or cannot be read.
    case unreadable(path: String, reason: String)
    /// A file that is not an image (or a recording) this build can decode.
    case undecodable(path: String, reason: String)
    /// The camera device failed; `lost` when it went away (unplugged) and may come back.
    case device(path: String, reason: String, lost: Bool)
    /// zbar could not be set up or failed.
    case decoder(String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read \(path): \(reason)"
        case .undecodable(let path, let reason): "\(path) is not a readable image: \(reason)"
        case .device(let path, let reason, let lost): "camera \(path)\(lost ? " lost" : ""): \(reason)"
        case .decoder(let reason): "QR decoder: \(reason)"
        }
    }
}
