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
}
