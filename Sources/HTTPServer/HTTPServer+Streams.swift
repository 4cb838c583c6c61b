import CMicroHTTPD
import Foundation

/// One streaming response: its body and whether its connection is suspended waiting for it.
final class StreamState: @unchecked Sendable {
    let body: any HTTPStreamBody
    let server: HTTPServer
    private let connectionAddress: UInt
    // Guards `suspended`, `ending` and `closed`; the reader holds it across body.read and
    // suspend so that a wake in between cannot be lost.
    private let lock = NSLock()
    private var suspended = false
    private var ending = false
    private var closed = false

    init(body: any HTTPStreamBody, server: HTTPServer, connection: OpaquePointer) {
        self.body = body
        self.server = server
        connectionAddress = UInt(bitPattern: connection)
    }

    /// libmicrohttpd asks for more of the body.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        lock.lock()
        defer { lock.unlock() }
        guard !ending, !peerHasClosed() else { return gatepass_mhd_end_of_stream() }
        guard let count = body.read(into: buffer) else { return gatepass_mhd_end_of_stream() }
        if count > 0 { return count }
        // Nothing yet: returning 0 alone would make libmicrohttpd poll us in a loop.
        suspended = true
        if let connection = OpaquePointer(bitPattern: connectionAddress) { MHD_suspend_connection(connection) }
        return 0
    }

    /// A suspended connection is not watched, so a client that left is only noticed when
    /// bytes are written, and the first write after the peer's FIN still succeeds. A stream
    /// client sends nothing after its request, so a readable end-of-file means it is gone.
    private func peerHasClosed() -> Bool {
        guard let connection = OpaquePointer(bitPattern: connectionAddress) else { return true }
        let socket = gatepass_mhd_connection_fd(connection)
        guard socket >= 0 else { return false }
        var byte: UInt8 = 0
        let received = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return received == 0 || (received < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    }

    func wake() {
        lock.lock()
        guard suspended, !closed else {
            lock.unlock()
            return
        }
        suspended = false
        lock.unlock()
        // Outside the lock, so a worker reading another frame never waits on the resume's
        // signal. Safe: a suspended connection is neither read nor closed until resumed.
        if let connection = OpaquePointer(bitPattern: connectionAddress) { MHD_resume_connection(connection) }
    }

    /// Ends the stream at the next read.
    func end() {
        lock.lock()
        ending = true
        lock.unlock()
        wake()
    }

    /// libmicrohttpd is done with the response (the connection is closing).
    func close() {
        lock.lock()
        closed = true
        lock.unlock()
        body.finished()
        server.streams.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(self)) }
    }
}

private let streamReader: MHD_ContentReaderCallback = { context, _, buffer, max in
    guard let context, let buffer else { return gatepass_mhd_end_of_stream() }
    let state = Unmanaged<StreamState>.fromOpaque(context).takeUnretainedValue()
    return state.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: max))
}

private let streamFinished: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    let state = Unmanaged<StreamState>.fromOpaque(context).takeRetainedValue()
    state.close()
}

extension HTTPServer {
    func queueStream(_ response: HTTPResponse, _ body: any HTTPStreamBody,
                                 on connection: OpaquePointer) -> MHD_Result {
        let stream = StreamState(body: body, server: self, connection: connection)
        streams.withLock { $0[ObjectIdentifier(stream)] = stream }
        let context = Unmanaged.passRetained(stream).toOpaque()
        guard let mhdResponse = MHD_create_response_from_callback(gatepass_mhd_size_unknown(), 4_096, streamReader,
                                                                  context, streamFinished) else {
            Unmanaged<StreamState>.fromOpaque(context).release()
            streams.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(stream)) }
            return gatepass_mhd_no()
        }
        defer { MHD_destroy_response(mhdResponse) }
        Self.addCommonHeaders(response, closingConnection: false, to: mhdResponse)
        body.start { [weak stream] in stream?.wake() }
        // A stream begun while the server stops ends at once (stop's own pass may be over).
        if unanswered.withLock({ $0.stopping }) { stream.end() }
        return MHD_queue_response(connection, UInt32(response.status), mhdResponse)
    }

}
