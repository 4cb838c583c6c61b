import Foundation
import HTTPServer
import LoopbackHTTP
import GatePassCore
import Testing

/// A responder that takes its time, so a stop arrives while a request is in flight.
struct SlowResponder: HTTPResponder {
    let started: DispatchSemaphore
    func respond(to request: HTTPRequest, reply: @escaping @Sendable (HTTPResponse) -> Void) {
        started.signal()
        // Answer from another thread, later: the connection is suspended meanwhile.
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
            reply(HTTPResponse(status: 200, headers: [("Content-Type", "text/plain")], body: Array("finished".utf8)))
        }
    }
}

@Suite struct GracefulStopTests {
    @Test func stopLetsTheRequestInFlightFinish() throws {
        let started = DispatchSemaphore(value: 0)
        let server = HTTPServer(configuration: .init(port: 0, threads: 2), responder: SlowResponder(started: started))
        let port = try server.start()
        let answer = Locked<LoopbackHTTPClient.Response?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let response = try? LoopbackHTTPClient(port: port).get("/slow")
            answer.withLock { $0 = response }
            done.signal()
        }
        started.wait()
        server.stop(grace: .seconds(5))
        done.wait()
        let response = try #require(answer.withLock { $0 })
        #expect(response.status == 200)
        #expect(response.text == "finished")
        // After the stop, nothing listens any more.
        #expect(throws: (any Error).self) { try LoopbackHTTPClient(port: port, timeoutSeconds: 2).get("/again") }
    }

    /// Once a stop begins, a new request on a kept-alive connection is answered 503 with
    /// `Connection: close` without reaching the responder, while the request that was running
    /// when the stop began gets its real answer.
    @Test func onceAStopBeginsANewRequestOnAKeptAliveConnectionIs503AndCloses() throws {
        let responder = HoldingResponder()
        let server = HTTPServer(configuration: .init(port: 0, threads: 2), responder: responder)
        let port = try server.start()
        let kept = try RawSocket(port: port)
        kept.write("GET /first HTTP/1.1\r\nHost: x\r\n\r\n")
        responder.arrived.wait()
        responder.held.withLock { $0[0] }(HTTPResponse(status: 200, body: Array("first".utf8)))
        #expect(kept.readResponse().hasPrefix("HTTP/1.1 200"))
        let running = try RawSocket(port: port)
        running.write("GET /running HTTP/1.1\r\nHost: x\r\n\r\n")
        responder.arrived.wait()
        let stopped = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            server.stop(grace: .seconds(60))
            stopped.signal()
        }
        #expect(server.stopChanges.wait { server.isStopping })
        kept.write("GET /second HTTP/1.1\r\nHost: x\r\n\r\n")
        let (bytes, closed) = kept.readUntilClosed()
        let refused = String(decoding: bytes, as: UTF8.self)
        #expect(refused.hasPrefix("HTTP/1.1 503"), "\(refused)")
        #expect(refused.lowercased().contains("connection: close"), "\(refused)")
        #expect(closed)
        let seen = responder.held.withLock { $0 }
        #expect(seen.count == 2, "the new request reached the responder")
        // The request running since before the stop finishes with its own answer.
        seen[1](HTTPResponse(status: 200, body: Array("finished".utf8)))
        let finished = running.readResponse()
        #expect(finished.hasPrefix("HTTP/1.1 200") && finished.hasSuffix("finished"), "\(finished)")
        for reply in seen.dropFirst(2) { reply(HTTPResponse(status: 200)) }
        stopped.wait()
    }
}
