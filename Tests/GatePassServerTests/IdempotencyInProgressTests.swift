import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

/// api.md: "Same key while the first is still being processed: 409 CONFLICT".
@Suite struct IdempotencyInProgressTests {
    @Test func sameKeyWhileTheFirstIsProcessedIsAConflict() throws {
        try withTestServer { server in
            try server.addUser("owner@acme.test", role: .owner)
            let token = try server.login("owner@acme.test")
            // Hold the writer, so the first request stays "being processed".
            let release = DispatchSemaphore(value: 0)
            let holding = DispatchSemaphore(value: 0)
            server.store.writeAsync({ _ in
                holding.signal()
                release.wait()
            }, completion: { _ in })
            holding.wait()

            let first = Locked<LoopbackHTTPClient.Response?>(nil)
            let firstDone = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                let answer = try? server.client().send("POST", "/api/visitors", token: token,
                                                       headers: ["Idempotency-Key": "visit-42"], json: ["name": "Ana Pop"])
                first.withLock { $0 = answer }
                firstDone.signal()
            }
            #expect(server.server.application.changes.wait { server.server.application.idempotentRequestsInProgress > 0 })
            #expect(server.server.application.idempotentRequestsInProgress == 1)

            let second = try server.client().send("POST", "/api/visitors", token: token,
                                                  headers: ["Idempotency-Key": "visit-42"], json: ["name": "Ana Pop"])
            #expect(second.status == 409)
            #expect((second.json?["error"] as? [String: Any])?["code"] as? String == "CONFLICT")
            // Not final: it says when to come back, so an outbox retries instead of giving up.
            #expect(second.headers["retry-after"] == "1")

            release.signal()
            firstDone.wait()
            let created = try #require(first.withLock { $0 })
            #expect(created.status == 201)
            // Once done, the same key replays the stored answer.
            let replay = try server.client().send("POST", "/api/visitors", token: token,
                                                  headers: ["Idempotency-Key": "visit-42"], json: ["name": "Ana Pop"])
            #expect(replay.status == 201)
            #expect(replay.headers["idempotent-replayed"] == "true")
            #expect(replay.body == created.body)
        }
    }
}
