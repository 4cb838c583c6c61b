#if canImport(Glibc)
import Glibc
#endif
import Foundation
import GatePassCore
import Testing
@testable import GatePassClient
@testable import GatePassServer

/// The background outbox drain has its own HTTP handle: while its request hangs on a server
/// that never answers, what a person does (a read, a check-in) still goes through.
@Suite(.serialized) struct BackgroundHandleTests {
    @Test func aDrainHangingOnASilentServerDoesNotHoldThePersonsRequests() throws {
        let world = try ClientWorld()
        try world.addUser("guard@acme.test", role: .admin)
        let pass = try world.createVisitor(try world.token("guard@acme.test"))
        // A request may take a minute before it gives up: longer than this test waits for
        // the person's requests, so sharing one handle with the drain shows as a hang.
        let core = try world.core(timeout: .seconds(60))
        try world.login(core, "guard@acme.test")

        let silent = try SilentServer()
        defer { silent.stop() }
        _ = try core.store.enqueue(kind: "checkin", method: "POST", url: "http://127.0.0.1:\(silent.port)/api/visitor-scanner/checkin",
                                   body: #"{"confirmApprovalRequest":false,"shortId":"GP1:AAAAAAAA"}"#, credential: .scanner,
                                   scannedAt: Date(), now: Date())
        let drainReports = DispatchSemaphore(value: 0)
        let service = OutboxService(core: core, interval: 30, probeCap: 30) { _, _ in drainReports.signal() }
        service.start()
        defer { service.stop() }
        #expect(silent.waitForConnection(timeout: 30), "the drain's request reached the silent server")

        // The person's requests, on another thread so that a hang shows as a timeout here.
        let outcome = Locked<(profile: String?, checkIn: String?)>((nil, nil))
        let personDone = DispatchSemaphore(value: 0)
        Thread {
            let profile = try? core.whoami()
            let checkIn = try? core.checkIn(code: "GP1:\(pass.shortId)", confirmApprovalRequest: false)
            outcome.withLock { value in
                value.profile = profile.map { $0.fromCache ? "from the cache" : $0.value.email }
                if case .applied? = checkIn { value.checkIn = "applied" } else { value.checkIn = checkIn.map { "\($0)" } }
            }
            personDone.signal()
        }.start()
        let answered = personDone.wait(timeout: .now() + 30) == .success
        #expect(answered, "the person's requests waited behind the hanging drain")
        // Let the drain's request fail, so the person's requests (if held) and the drain end.
        silent.stop()
        if !answered { _ = personDone.wait(timeout: .now() + 90) }
        #expect(outcome.withLock { $0.profile } == "guard@acme.test")
        #expect(outcome.withLock { $0.checkIn } == "applied")
        #expect(drainReports.wait(timeout: .now() + 90) == .success, "the drain ended once the silent server closed")
        service.stop()
    }
}

/// A TCP listener on loopback that accepts connections and never answers: what a server
/// that hangs looks like to a client. `stop()` closes them all, so a waiting request fails.
final class SilentServer: @unchecked Sendable {
    // @unchecked: `accepted` is used under `lock`.
    let port: UInt16
    private let listener: Int32
    private var accepted: [Int32] = []
    private var stopped = false
    private let lock = NSLock()

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ClientTestFailure("socket() failed (errno \(errno))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && listen(descriptor, 8) == 0
                    && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw ClientTestFailure("cannot listen on 127.0.0.1 (errno \(errno))")
        }
        listener = descriptor
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { stop() }

    /// Accepts one connection, waiting at most `timeout` seconds; true when one came.
    func waitForConnection(timeout: TimeInterval) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return false }
        var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else { return false }
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return false }
        accepted.append(connection)
        return true
    }

    /// Closes the listener and every accepted connection. Safe to call more than once.
    func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        stopped = true
        for connection in accepted { close(connection) }
        close(listener)
    }
}
