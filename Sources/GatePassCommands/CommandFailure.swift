/// A failure while running a command: printed as one sentence, exit status 1.
public struct CommandFailure: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
