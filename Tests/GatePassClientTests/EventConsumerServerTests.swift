import CurlHTTP
import Foundation
import GatePassCore
import LoopbackHTTP
import Synchronization
import Testing
@testable import GatePassClient
@testable import GatePassServer

/// The client core's event consumer against the real server: every event exactly once,
/// across dropped connections, server restarts and a new process on the same state file.
@Suite(.serialized) struct EventConsumerServerTests {
    /// What the consumer delivered; the waits return as soon as a delivery makes them true
    /// (each `add` signals), or false after 30 s, which only a hang reaches.
    final class Received: @unchecked Sendable {
        // @unchecked: `events` and `statuses` are guarded by `changed`.
        private let changed = NSCondition()
        private var events: [ServerEvent] = []
        private var statuses: [EventStreamConsumer.Status] = []

        func add(_ event: ServerEvent) { update { events.append(event) } }
        func add(_ status: EventStreamConsumer.Status) { update { statuses.append(status) } }
        var all: [ServerEvent] { read { events } }
        var ids: [Int64] { all.compactMap(\.id) }
        var connections: Int { read { statuses.filter { $0 == .connected }.count } }
        var stoppedBySession: Bool {
            read { statuses.contains { if case .stopped(let reason) = $0 { reason != nil } else { false } } }
        }

        /// Waits until `count` events have arrived.
        func wait(for count: Int) -> Bool { waitUntil { events.count >= count } }

        /// Waits until the consumer has connected `number` times.
        func waitForConnection(_ number: Int) -> Bool { waitUntil { statuses.filter { $0 == .connected }.count >= number } }

        /// Waits until the consumer has stopped because the session ended.
        func waitForSessionEnd() -> Bool { waitUntil { statuses.contains { if case .stopped(let reason) = $0 { reason != nil } else { false } } } }

        private func waitUntil(_ holds: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(30)
            changed.lock()
            defer { changed.unlock() }
            while !holds() {
                if !changed.wait(until: deadline) { return holds() }
            }
            return true
        }

        private func update(_ body: () -> Void) {
            changed.lock()
            body()
            changed.broadcast()
            changed.unlock()
        }

        private func read<T>(_ body: () -> T) -> T {
            changed.lock()
            defer { changed.unlock() }
            return body()
        }
    }

    /// A walk-in at the owner's gate: `request.created` then `notification.new`.
    func walkIn(_ world: ClientWorld, _ scanner: String, _ name: String) throws {
        let answer = try LoopbackHTTPClient(port: world.port).send("POST", "/api/visitor-scanner/walk-in-arrived",
                                                                   token: scanner, json: ["name": name])
        guard answer.status == 201 else { throw ClientTestFailure("walk-in: \(answer.text)") }
    }

    func scannerToken(_ world: ClientWorld, _ token: String) throws -> String {
        let answer = try LoopbackHTTPClient(port: world.port).send("POST", "/api/visitor-scanner/token", token: token,
                                                                   json: [String: Any]())
        guard let scanner = answer.json?["scannerToken"] as? String else { throw ClientTestFailure(answer.text) }
        return scanner
    }

    func consumer(_ core: ClientCore, _ received: Received) throws -> EventStreamConsumer {
        try core.eventConsumer(idleTimeout: .seconds(5), backoff: Backoff(base: 0.05, cap: 0.2),
                               transport: CurlSession(options: .init(connectTimeout: .seconds(1))),
                               onStatus: { received.add($0) }, onEvent: { received.add($0) })
    }

    @Test func everyEventOnceAcrossRestartsAndANewProcess() throws {
        let world = try ClientWorld()
        try world.addUser("owner@acme.test", role: .owner, canScan: true)
        let core = try world.core()
        try world.login(core, "owner@acme.test")
        let scanner = try scannerToken(world, try world.token("owner@acme.test"))
        let received = Received()
        let first = try consumer(core, received)
        first.start()
        #expect(received.waitForConnection(1))
        try walkIn(world, scanner, "Before Restart")
        #expect(received.wait(for: 2))

        // The server goes away; changes happen after it is back, before the consumer reconnects
        // (it waits at least the server's `retry: 3000`).
        world.stop()
        try world.start()
        try walkIn(world, scanner, "While Reconnecting")
        #expect(received.wait(for: 4))
        #expect(received.waitForConnection(2))
        try walkIn(world, scanner, "Live Again")
        #expect(received.wait(for: 6))
        first.stop()

        // A new consumer on the same state file (a restarted console) resumes after the last id.
        try walkIn(world, scanner, "While Closed")
        let second = try consumer(core, received)
        second.start()
        #expect(received.wait(for: 8))
        // A last change, and its events as the positive signal that everything before them
        // has been delivered: no replay of an earlier event may come in between.
        try walkIn(world, scanner, "Marker")
        #expect(received.wait(for: 10))
        second.stop()

        #expect(received.ids == Array(1...10), "every event once, in order: \(received.ids)")
        let names = received.all.compactMap { event -> String? in
            if case .visitor(let data)? = try? event.payload() { return data.visitor.name }
            return nil
        }
        #expect(names == ["Before Restart", "While Reconnecting", "Live Again", "While Closed", "Marker"])
        #expect(received.all.allSatisfy { $0.kind == .requestCreated || $0.kind == .notificationNew })
    }

    @Test func theConsumerPresentsTheDeviceTokenSoItsDeliveriesAreConfirmed() throws {
        let world = try ClientWorld()
        try world.addUser("owner@acme.test", role: .owner, canScan: true)
        let core = try world.core()
        let login = try world.login(core, "owner@acme.test")
        #expect(login.device != nil, "login registers this device's push token")
        let device = try core.store.deviceToken()
        let received = Received()
        let consumer = try consumer(core, received)
        consumer.start()
        defer { consumer.stop() }
        #expect(received.waitForConnection(1))
        let outcomes = try core.pushTest(server: nil, deviceToken: device, waitSeconds: 3)
        #expect(outcomes.map(\.status) == [.delivered])
        #expect(received.wait(for: 2))
        #expect(received.all.first?.kind == .pushTest)
    }

    @Test func aLogoutEndsTheStream() throws {
        let world = try ClientWorld()
        try world.addUser("owner@acme.test", role: .owner, canScan: true)
        let core = try world.core()
        try world.login(core, "owner@acme.test")
        let token = try #require(try core.session()?.token)
        let received = Received()
        let consumer = try consumer(core, received)
        consumer.start()
        defer { consumer.stop() }
        #expect(received.waitForConnection(1))
        // The session is ended elsewhere (a script logs this session out): the server ends
        // the open stream at once, the reconnect is refused with 401, and the consumer stops.
        _ = try LoopbackHTTPClient(port: world.port).send("POST", "/api/auth/logout", token: token, json: [String: Any]())
        #expect(received.waitForSessionEnd())
        #expect(received.stoppedBySession)
    }
}
