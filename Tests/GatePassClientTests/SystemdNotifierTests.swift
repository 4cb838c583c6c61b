import Foundation
import Testing
@testable import GatePassClient
#if canImport(Glibc)
import Glibc
#endif

/// Issue 5: sd_notify datagrams received on a test socket — readiness, the watchdog ping, the
/// status line and stopping, sent to `$NOTIFY_SOCKET` with no library.
#if os(Linux)
@Suite("systemd notifications")
struct SystemdNotifierTests {
    /// A datagram socket bound where a test's `NOTIFY_SOCKET` points, standing in for systemd.
    final class NotifyReceiver {
        let descriptor: Int32
        /// The value for `NOTIFY_SOCKET`.
        let notifySocket: String
        private let path: String?

        /// Binds a file system socket in /tmp (short, so it fits `sun_path`) or, with
        /// `abstract`, an abstract name; a unique name either way, so tests can run in parallel.
        init(abstract: Bool) throws {
            let name = "gatepass-notify-\(UUID().uuidString.prefix(8))"
            var pathBytes: [UInt8]
            if abstract {
                notifySocket = "@" + name
                path = nil
                pathBytes = [0] + Array(name.utf8)
            } else {
                notifySocket = "/tmp/\(name).sock"
                path = notifySocket
                pathBytes = Array(notifySocket.utf8)
            }
            descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            // A missing datagram fails the test after 2 s instead of hanging it.
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes) }
            let offset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
            let length = socklen_t(offset + pathBytes.count + (abstract ? 0 : 1))
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
            }
            guard bound == 0 else {
                let code = errno
                close(descriptor)
                throw POSIXError(.init(rawValue: code) ?? .EIO)
            }
        }

        deinit {
            close(descriptor)
            if let path { unlink(path) }
        }

        /// The next datagram, or nil after 2 s without one.
        func receive() -> String? {
            var buffer = [UInt8](repeating: 0, count: 8_192)
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count >= 0 else { return nil }
            return String(decoding: buffer[..<count], as: UTF8.self)
        }

        /// Whether a datagram is waiting, without waiting for one.
        var hasPending: Bool {
            var byte: UInt8 = 0
            return recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK)) >= 0
        }
    }

    /// Runs `body` with a receiver and a notifier pointed at it.
    func withNotifier(abstract: Bool, extra: [String: String] = [:],
                      _ body: (SystemdNotifier, NotifyReceiver) throws -> Void) throws {
        let receiver = try NotifyReceiver(abstract: abstract)
        let environment = extra.merging(["NOTIFY_SOCKET": receiver.notifySocket]) { _, new in new }
        try body(SystemdNotifier(environment: environment), receiver)
    }

    /// The four messages, in order, as systemd would read them.
    func expectProtocol(_ notifier: SystemdNotifier, _ receiver: NotifyReceiver) {
        #expect(notifier.isEnabled)
        notifier.ready(status: nil)
        #expect(receiver.receive() == "READY=1")
        notifier.ready(status: "scanning /dev/gate-camera")
        #expect(receiver.receive() == "READY=1\nSTATUS=scanning /dev/gate-camera")
        notifier.watchdog()
        #expect(receiver.receive() == "WATCHDOG=1")
        notifier.status("event stream: live")
        #expect(receiver.receive() == "STATUS=event stream: live")
        notifier.stopping()
        #expect(receiver.receive() == "STOPPING=1")
        #expect(!receiver.hasPending)
    }

    // MARK: - Datagrams

    @Test("Datagrams arrive on a file system socket")
    func pathSocket() throws {
        try withNotifier(abstract: false) { notifier, receiver in expectProtocol(notifier, receiver) }
    }

    @Test("Datagrams arrive on an abstract socket ('@' is a leading NUL)")
    func abstractSocket() throws {
        try withNotifier(abstract: true) { notifier, receiver in expectProtocol(notifier, receiver) }
    }

    @Test("A status cannot inject other assignments: control characters become spaces, 1,024 bytes at most")
    func statusIsOneSafeLine() throws {
        try withNotifier(abstract: false) { notifier, receiver in
            notifier.status("offline\nSTOPPING=1\r\u{0}x")
            #expect(receiver.receive() == "STATUS=offline STOPPING=1  x")
            notifier.status(String(repeating: "é", count: 2_000))
            #expect(receiver.receive() == "STATUS=" + String(repeating: "é", count: 512))
        }
    }

    // MARK: - Disabled

    @Test("Without NOTIFY_SOCKET nothing is sent and the notifier is disabled")
    func withoutNotifySocket() throws {
        let receiver = try NotifyReceiver(abstract: false)
        let notifier = SystemdNotifier(environment: ["WATCHDOG_USEC": "20000000"])
        #expect(!notifier.isEnabled)
        notifier.ready(status: "x")
        notifier.watchdog()
        notifier.status("x")
        notifier.stopping()
        #expect(!receiver.hasPending)
        #expect(!SystemdNotifier(environment: [:]).isEnabled)
        #expect(!SystemdNotifier(environment: ["NOTIFY_SOCKET": ""]).isEnabled)
    }

    @Test("Addresses that do not fit or are not supported disable the notifier without a crash", arguments: [
        "/tmp/" + String(repeating: "a", count: 200),
        "@" + String(repeating: "a", count: 200),
        "/" + String(repeating: "a", count: 107),           // 108 bytes: no room for the NUL
        "@" + String(repeating: "a", count: 108),           // 109 bytes
        "@",
        "relative/notify.sock",
        "vsock:2:1234",
    ])
    func unusableAddresses(_ value: String) {
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": value])
        #expect(!notifier.isEnabled)
        notifier.ready(status: "x")
        notifier.watchdog()
        notifier.status("x")
        notifier.stopping()
    }

    @Test("The longest addresses that fit are accepted")
    func longestAddresses() {
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "/" + String(repeating: "a", count: 106)]).isEnabled)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "@" + String(repeating: "a", count: 107)]).isEnabled)
    }

    @Test("Sending to a socket nobody listens on is ignored")
    func nobodyListening() {
        for value in ["/tmp/gatepass-notify-nobody-\(UUID().uuidString.prefix(8)).sock",
                      "@gatepass-notify-nobody-\(UUID().uuidString.prefix(8))"] {
            let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": value])
            #expect(notifier.isEnabled)
            notifier.ready(status: "x")
            notifier.watchdog()
            notifier.stopping()
        }
    }

    // MARK: - Watchdog

    @Test("WATCHDOG_USEC=20000000 gives a ping every 10 s")
    func watchdogInterval() {
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "20000000"]).watchdogInterval == .seconds(10))
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "\(getpid())"])
            .watchdogInterval == .seconds(15))
    }

    @Test("No interval when the watchdog is off or meant for another process")
    func noWatchdogInterval() {
        #expect(SystemdNotifier(environment: [:]).watchdogInterval == nil)
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "0"]).watchdogInterval == nil)
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "-5"]).watchdogInterval == nil)
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "soon"]).watchdogInterval == nil)
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "20000000", "WATCHDOG_PID": "\(getpid() + 1)"])
            .watchdogInterval == nil)
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "20000000", "WATCHDOG_PID": "parent"])
            .watchdogInterval == nil)
    }
}
#endif
