import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Tells systemd how a `Type=notify` service is doing — ready, alive, stopping — the way
/// `sd_notify(3)` does, without linking libsystemd: each message is one datagram of
/// `KEY=value` lines sent to the `AF_UNIX` socket named by `$NOTIFY_SOCKET`.
///
/// ```swift
/// let notifier = SystemdNotifier(environment: ProcessInfo.processInfo.environment)
/// notifier.ready(status: "scanning /dev/gate-camera")
/// if let interval = notifier.watchdogInterval { /* call notifier.watchdog() every `interval` */ }
/// ```
///
/// Outside systemd (no `NOTIFY_SOCKET`), with an address this type cannot use (longer than
/// `sun_path`, relative, `vsock:`), or on a system other than Linux, every call does nothing
/// and ``isEnabled`` is false. Sending is best effort, as in libsystemd: a failed send is
/// ignored — the service keeps running, and if readiness or a ping was lost systemd's own
/// timeouts notice. A send never blocks for more than a second, so a busy systemd cannot
/// stall the caller's loop.
///
/// Upstream: `sd_notify(3)` (the protocol and `NOTIFY_SOCKET`), `sd_watchdog_enabled(3)`
/// (`WATCHDOG_USEC`, `WATCHDOG_PID`), `systemd.service(5)` (`Type=notify`, `WatchdogSec=`,
/// `NotifyAccess=`), `unix(7)` (abstract socket addresses).
public struct SystemdNotifier: Sendable {
    /// The bytes of `sun_path`: a file system path (without its terminating NUL), or for an
    /// abstract address a NUL followed by the name. Nil when disabled.
    private let socketAddress: [UInt8]?

    /// How often to call ``watchdog()``: half of `$WATCHDOG_USEC`, as `sd_watchdog_enabled(3)`
    /// recommends, so one late ping does not get the service killed. Nil when systemd expects
    /// no pings: `WATCHDOG_USEC` unset, zero or unreadable, or `WATCHDOG_PID` naming another
    /// process (the variables were inherited from a parent). Like libsystemd, this does not
    /// depend on `NOTIFY_SOCKET`; without one, the pings go nowhere.
    public let watchdogInterval: Duration?

    /// Whether messages are sent: `$NOTIFY_SOCKET` names a usable socket address.
    public var isEnabled: Bool { socketAddress != nil }

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from `environment`.
    ///
    /// - Parameter environment: usually `ProcessInfo.processInfo.environment`; tests pass
    ///   their own.
    public init(environment: [String: String]) {
        socketAddress = Self.socketAddress(from: environment["NOTIFY_SOCKET"])
        watchdogInterval = Self.watchdogInterval(
            microseconds: environment["WATCHDOG_USEC"], processID: environment["WATCHDOG_PID"])
    }

    // MARK: - Messages

    /// `READY=1`: start-up is complete (systemd holds units ordered after this one until then).
    /// - Parameter status: an optional `STATUS=` line sent in the same datagram.
    public func ready(status: String? = nil) {
        send(["READY=1"] + (status.map { [Self.statusLine($0)] } ?? []))
    }

    /// `WATCHDOG=1`: the service is alive. Call every ``watchdogInterval``, and only from the
    /// loop whose progress the ping vouches for.
    public func watchdog() { send(["WATCHDOG=1"]) }

    /// `STATUS=…`: one line shown by `systemctl status`. Line breaks and other control
    /// characters become spaces (a newline would start a new `KEY=value` assignment, a NUL
    /// makes systemd drop the whole datagram), and the text is cut to 1,024 bytes.
    public func status(_ text: String) { send([Self.statusLine(text)]) }

    /// `STOPPING=1`: the service is shutting down on purpose.
    public func stopping() { send(["STOPPING=1"]) }

    // MARK: - Parsing the environment

    private static let statusLimit = 1_024

    static func statusLine(_ text: String) -> String {
        var line = "STATUS="
        var bytes = 0
        for character in text {
            let safe: Character = character.unicodeScalars.contains { $0.properties.generalCategory == .control }
                ? " " : character
            bytes += safe.utf8.count
            if bytes > statusLimit { break }
            line.append(safe)
        }
        return line
    }

    /// The `sun_path` bytes for `NOTIFY_SOCKET`, or nil when it is unset or unusable.
    static func socketAddress(from value: String?) -> [UInt8]? {
        #if os(Linux)
        guard let value, let first = value.utf8.first else { return nil }
        var bytes = Array(value.utf8)
        switch first {
        case UInt8(ascii: "/"):
            // A path needs room for its terminating NUL.
            guard bytes.count < pathCapacity else { return nil }
        case UInt8(ascii: "@"):
            // unix(7): an abstract name is a NUL then the name, with no terminator; an empty
            // name would mean autobind, which is not an address to send to.
            bytes[0] = 0
            guard bytes.count > 1, bytes.count <= pathCapacity else { return nil }
        default:
            // Relative paths and other families (systemd 254's `vsock:`) are not supported.
            return nil
        }
        guard !bytes.dropFirst().contains(0) else { return nil }
        return bytes
        #else
        // systemd runs only on Linux; anywhere else there is nobody to notify.
        _ = value
        return nil
        #endif
    }

    static func watchdogInterval(microseconds: String?, processID: String?,
                                 currentProcessID: Int32 = getpid()) -> Duration? {
        guard let microseconds, let usec = UInt64(microseconds), usec > 0 else { return nil }
        if let processID {
            guard let pid = Int32(processID), pid == currentProcessID else { return nil }
        }
        return .microseconds(Int64(clamping: usec / 2))
    }

    // MARK: - Sending

    #if os(Linux)
    private static let pathCapacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
    private static let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!

    private func send(_ lines: [String]) {
        guard let socketAddress else { return }
        // A fresh socket per message, as libsystemd does: nothing to own or share between
        // threads, and a ping every few seconds costs nothing.
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: socketAddress) }
        let isAbstract = socketAddress.first == 0
        let length = socklen_t(Self.pathOffset + socketAddress.count + (isAbstract ? 0 : 1))
        let message = Array(lines.joined(separator: "\n").utf8)

        while true {
            let sent = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
                    message.withUnsafeBytes { buffer in
                        sendto(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL), target, length)
                    }
                }
            }
            // Best effort: only an interrupted send is worth a second try.
            if sent < 0 && errno == EINTR { continue }
            return
        }
    }
    #else
    private func send(_ lines: [String]) {}
    #endif
}
