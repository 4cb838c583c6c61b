import Foundation
import GatePassClient
import GatePassConsole
import GatePassCore

/// Passes requests through and tells the console's `ConsoleConnection` what each one showed:
/// an answer (whatever its status) means the server is there, a transport error (cannot
/// connect, timed out, broken off) that it is not. Every request of the console goes through
/// it — reads, the outbox drain, the event stream's connects — so the status line and the
/// More tab learn of a server gone away at the first request that fails, not at the next drain.
public final class ConnectionReportingTransport: HTTPTransport {
    private let base: any HTTPTransport
    private let connection: ConsoleConnection
    private let clock: any WallClock

    public init(base: any HTTPTransport, connection: ConsoleConnection, clock: any WallClock) {
        self.base = base
        self.connection = connection
        self.clock = clock
    }

    public func separateHandle() -> any HTTPTransport {
        ConnectionReportingTransport(base: base.separateHandle(), connection: connection, clock: clock)
    }

    public func perform(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
        do {
            let response = try base.perform(request)
            connection.serverAnswered(at: clock.now())
            return response
        } catch {
            connection.serverUnreachable(at: clock.now())
            throw error
        }
    }

    public func stream(_ request: HTTPRequest, idleTimeout: Duration, shouldStop: @escaping () -> Bool,
                       onResponse: @escaping (Int, [String: String]) -> Bool,
                       onData: @escaping ([UInt8]) -> Bool) throws(HTTPTransportError) {
        do {
            try base.stream(request, idleTimeout: idleTimeout, shouldStop: shouldStop, onResponse: { [connection, clock] status, headers in
                connection.serverAnswered(at: clock.now())
                return onResponse(status, headers)
            }, onData: onData)
        } catch {
            connection.serverUnreachable(at: clock.now())
            throw error
        }
    }
}
