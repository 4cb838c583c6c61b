/// A usage mistake — an unknown option, a missing or malformed value, a missing argument:
/// printed as one sentence with a pointer to `--help`, exit status 2.
public struct UsageError: Error, Sendable, CustomStringConvertible, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
