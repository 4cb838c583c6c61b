import Foundation
import HTTPServer
import LoopbackHTTP
import SQLite
import GatePassCore
import Testing

/// A responder that never answers by itself: its replies are handed to the test.
final class HoldingResponder: HTTPResponder, @unchecked Sendable {
    let held = Locked<[@Sendable (HTTPResponse) -> Void]>([])
    let arrived = DispatchSemaphore(value: 0)
    func respond(to request: HTTPRequest, reply: @escaping @Sendable (HTTPResponse) -> Void) {
        held.withLock { $0.append(reply) }
        arrived.signal()
    }
}

/// Issue 9 item 2: a stop always answers what is in flight, and nothing touches a stopped daemon.
@Suite struct ShutdownTests {
    @Test func aRequestStillUnansweredAtTheEndOfTheGraceIsAnswered503AndALateReplyIsDropped() throws {
        let responder = HoldingResponder()
        let server = HTTPServer(configuration: .init(port: 0, threads: 2), responder: responder)
        let port = try server.start()
        let answer = Locked<LoopbackHTTPClient.Response?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let response = try? LoopbackHTTPClient(port: port).get("/waits-forever")
            answer.withLock { $0 = response }
            done.signal()
        }
        responder.arrived.wait()
        server.stop(grace: .milliseconds(200))
        done.wait()
        #expect(answer.withLock { $0?.status } == 503)
        // The responder answers after the daemon is gone: dropped, no crash.
        for reply in responder.held.withLock({ $0 }) {
            reply(HTTPResponse(status: 200, body: Array("too late".utf8)))
        }
    }

    @Test func queuedWritesAreRefusedAndTheBatchBeingCommittedIsAnsweredForReal() throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory + "/g.db")
            try connection.executeScript("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER PRIMARY KEY);")
            let writer = GroupCommitWriter(connection: connection)
            let inside = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let first = Locked<Result<Int, any Error>?>(nil)
            let second = Locked<Result<Int, any Error>?>(nil)
            let answered = DispatchGroup()
            answered.enter()
            writer.submit({ db -> Int in
                try db.execute("INSERT INTO t (n) VALUES (1)")
                inside.signal()
                release.wait()
                return 1
            }) { result in
                first.withLock { $0 = result }
                answered.leave()
            }
            inside.wait()
            // The writer is inside the first batch; this one waits in the queue.
            answered.enter()
            let secondAnswered = DispatchSemaphore(value: 0)
            writer.submit({ db -> Int in
                try db.execute("INSERT INTO t (n) VALUES (2)")
                return 2
            }) { result in
                second.withLock { $0 = result }
                secondAnswered.signal()
                answered.leave()
            }
            let refusing = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                writer.refuseQueued()
                refusing.signal()
            }
            // The queued job is refused before the batch ends...
            #expect(secondAnswered.wait(timeout: .now() + 30) == .success, "the queued write was answered")
            if case .failure(let error as SQLiteError) = second.withLock({ $0 }) {
                #expect(error.isWriterClosing)
            } else {
                Issue.record("the queued write was not refused: \(String(describing: second.withLock { $0 }))")
            }
            // ...and the batch in progress commits and is answered before refuseQueued returns.
            release.signal()
            refusing.wait()
            answered.wait()
            #expect(try first.withLock { $0 }?.get() == 1)
            // Later writes are refused too.
            #expect(throws: SQLiteError.self) { try writer.write { db in try db.execute("INSERT INTO t (n) VALUES (3)") } }
            writer.close()
            let reader = try Connection(path: directory + "/g.db")
            #expect(try reader.query("SELECT n FROM t ORDER BY n") { try $0.int(0) } == [1])
        }
    }

    /// A push-test waiting 30 s when the server stops is answered 503 UNAVAILABLE at once.
    @Test func aPushTestWaitingWhenTheServerStopsIsAnswered503() throws {
        try withSite { server, site in
            try server.registerDevice(site.ownerToken, "owner-console")
            let answer = Locked<HTTPAnswer?>(nil)
            let done = DispatchSemaphore(value: 0)
            let owner = site.ownerToken
            let port = server.port
            Thread.detachNewThread {
                let response = try? LoopbackHTTPClient(port: port).send("POST", "/api/admin/push-test", token: owner,
                                                                         json: ["waitSeconds": 30])
                answer.withLock { $0 = response }
                done.signal()
            }
            #expect(server.server.application.pushTestWaitChanges.wait { server.server.application.pushTestWaitCount > 0 })
            #expect(server.server.application.pushTestWaitCount == 1)
            server.server.stop(grace: .milliseconds(100))
            #expect(done.wait(timeout: .now() + 60) == .success, "the push-test was answered")
            // 503 rather than the wait's own 200: the stop answered it, it did not wait it out.
            #expect(answer.withLock { $0?.status } == 503)
            #expect((answer.withLock { $0?.text } ?? "").contains("UNAVAILABLE"))
        }
    }

    @Test func pushTestWaitsAreCapped() throws {
        try withSite(configure: { $0.maxPushTestWaits = 1 }) { server, site in
            try server.registerDevice(site.ownerToken, "owner-console")
            let owner = site.ownerToken
            let port = server.port
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                _ = try? LoopbackHTTPClient(port: port).send("POST", "/api/admin/push-test", token: owner,
                                                            json: ["waitSeconds": 30])
                done.signal()
            }
            #expect(server.server.application.pushTestWaitChanges.wait { server.server.application.pushTestWaitCount > 0 })
            let second = try server.post("/api/admin/push-test", token: owner, ["waitSeconds": 1])
            #expect(second.status == 503)
            #expect(second.headers["retry-after"] != nil)
            server.server.stop(grace: .zero)
            done.wait()
        }
    }

    /// `serve`'s stop (SIGTERM): from its first moment a write on a kept-alive connection is
    /// 503 `UNAVAILABLE` with `Connection: close` and is not applied, while a write whose head
    /// had arrived before the stop finishes and is answered for real.
    @Test func onceAStopBeginsWritesOnKeptAliveConnectionsAre503AndARunningOneFinishes() throws {
        try withSite { server, site in
            func post(_ name: String, expectContinue: Bool = false) -> (head: String, body: String) {
                let body = #"{"name":"\#(name)"}"#
                let head = "POST /api/visitors HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(site.ownerToken)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                    + (expectContinue ? "Expect: 100-continue\r\n" : "") + "\r\n"
                return (head, body)
            }
            let kept = try RawSocket(port: server.port)
            let warm = post("Before Stop")
            kept.write(warm.head + warm.body)
            #expect(kept.readResponse().hasPrefix("HTTP/1.1 201"))
            // A write begun before the stop: its head is read (libmicrohttpd says 100 Continue
            // once our handler has taken it), its body not sent yet.
            let running = try RawSocket(port: server.port)
            let held = post("Running Visitor", expectContinue: true)
            running.write(held.head)
            #expect(running.read(until: "\r\n\r\n").hasPrefix("HTTP/1.1 100"))
            let stopped = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                server.server.stop(grace: .seconds(60))
                stopped.signal()
            }
            #expect(server.server.stopChanges.wait { server.server.isStopping })
            let refused = post("Refused Visitor")
            kept.write(refused.head + refused.body)
            let (bytes, closed) = kept.readUntilClosed()
            let answer = String(decoding: bytes, as: UTF8.self)
            #expect(answer.hasPrefix("HTTP/1.1 503"), "\(answer)")
            #expect(answer.lowercased().contains("connection: close"), "\(answer)")
            #expect(answer.lowercased().contains("retry-after: "), "\(answer)")
            #expect(answer.contains(#""code":"UNAVAILABLE""#), "\(answer)")
            #expect(closed)
            running.write(held.body)
            let finished = running.readResponse()
            #expect(finished.hasPrefix("HTTP/1.1 201") && finished.contains("Running Visitor"), "\(finished)")
            stopped.wait()
            // The refused write never reached the application: two creations were logged.
            #expect(server.log.all.filter { $0.hasPrefix("POST /api/visitors 201") }.count == 2, "\(server.log.all.suffix(5))")
            #expect(!server.log.all.contains { $0.hasPrefix("POST /api/visitors") && !$0.hasPrefix("POST /api/visitors 201") })
        }
    }
}
