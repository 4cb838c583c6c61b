import Foundation

/// Where a client keeps its state: `$GATEPASS_STATE_DIR`, else `$XDG_STATE_HOME/gatepass`,
/// else `~/.local/state/gatepass`. Created with mode 0700; files inside are 0600.
public struct StateDirectory: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    public static func resolve(environment: [String: String]) -> StateDirectory {
        if let explicit = environment["GATEPASS_STATE_DIR"], !explicit.isEmpty { return StateDirectory(path: explicit) }
        if let xdg = environment["XDG_STATE_HOME"], !xdg.isEmpty { return StateDirectory(path: xdg + "/gatepass") }
        return StateDirectory(path: home(environment: environment) + "/.local/state/gatepass")
    }

    /// `$HOME`, else the account's home directory.
    public static func home(environment: [String: String]) -> String {
        environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
    }

    /// Creates the folder if needed and makes sure only its owner can enter it.
    public func prepare() throws(ClientError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw .local("cannot create the state folder \(path): \(error.localizedDescription)")
        }
        guard chmod(path, 0o700) == 0 else { throw .local("cannot make \(path) private (chmod 0700)") }
    }

    public var databasePath: String { path + "/state.db" }
}
