import Foundation
import GatePassCore
import Synchronization
import Testing
@testable import GatePassClient

/// The background drain service on a clock the test moves, with no server (the outbox is
/// empty, so a drain sends nothing and reports at once).
@Suite struct OutboxServiceTests {
    final class ManualClock: WallClock {
        private let current = Locked(Date(timeIntervalSince1970: 1_800_000_000))
        func now() -> Date { current.withLock { $0 } }
        func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
    }

    struct UnreachableTransport: HTTPTransport {
        func perform(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
            throw .cannotConnect(url: request.url, detail: "no server in this test")
        }
        func separateHandle() -> any HTTPTransport { self }
    }

    /// The service's reports: each signals `started`; the first waits for `releaseFirst`
    /// when `holdFirst`, then records that it finished.
    final class Reports: Sendable {
        let started = DispatchSemaphore(value: 0)
        /// Signalled as each wait between drains begins.
        let waiting = DispatchSemaphore(value: 0)
        let releaseFirst = DispatchSemaphore(value: 0)
        let holdFirst: Bool
        private let count = Atomic<Int>(0)
        private let finished = Atomic<Bool>(false)
        var firstFinished: Bool { finished.load(ordering: .acquiring) }
        init(holdFirst: Bool) { self.holdFirst = holdFirst }

        func report() {
            let number = count.add(1, ordering: .relaxed).newValue
            started.signal()
            guard number == 1, holdFirst else { return }
            releaseFirst.wait()
            finished.store(true, ordering: .releasing)
        }

        func next() -> Bool { started.wait(timeout: .now() + 30) == .success }
    }

    func withService(holdFirst: Bool = false, _ body: (OutboxService, ManualClock, Reports) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-service-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clock = ManualClock()
        let core = try ClientCore(directory: StateDirectory(path: folder), transport: UnreachableTransport(), clock: clock)
        let reports = Reports(holdFirst: holdFirst)
        let service = OutboxService(core: core, interval: 3_600, onReport: { _, _ in reports.report() },
                                    onWait: { _ in reports.waiting.signal() })
        defer {
            reports.releaseFirst.signal()
            service.stop()
        }
        try body(service, clock, reports)
    }

    @Test func theIntervalIsMeasuredOnTheInjectedClock() throws {
        try withService { service, clock, reports in
            service.start()
            #expect(reports.next(), "the first drain at start")
            #expect(reports.waiting.wait(timeout: .now() + 30) == .success, "the service waits for the interval")
            // An hour on the injected clock: the next drain comes now, not in an hour of real time.
            clock.advance(by: 3_600)
            service.clockDidAdvance()
            #expect(reports.next(), "the drain after the interval")
        }
    }

    @Test func stopReturnsOnlyOnceTheThreadHasExited() throws {
        try withService(holdFirst: true) { service, _, reports in
            service.start()
            #expect(reports.next(), "the first drain is reporting (and held)")
            let stopped = DispatchSemaphore(value: 0)
            Thread {
                service.stop()
                stopped.signal()
            }.start()
            reports.releaseFirst.signal()
            #expect(stopped.wait(timeout: .now() + 30) == .success)
            // stop() returned after the held report had finished: it joined the thread.
            #expect(reports.firstFinished)
            // A restart gets a new thread, which drains at once.
            service.start()
            #expect(reports.next(), "a restarted service drains")
        }
    }
}
