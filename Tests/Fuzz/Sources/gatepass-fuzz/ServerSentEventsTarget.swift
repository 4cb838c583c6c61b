import GatePassCore
@testable import GatePassClient

extension FuzzTarget {
    /// A hostile or broken server's event stream, as the client core reads it. The first byte
    /// picks the size of the chunks the stream arrives in; the rest is the stream.
    static let serverSentEvents = FuzzTarget(name: "sse", summary: "ServerSentEventParser (GatePassClient) and each event's payload") { input in
        guard let selector = input.first else { return }
        let stream = input.dropFirst()
        let chunkSize = Int(selector % 32) + 1
        // A small limit, so that the fuzzer reaches the oversized-event path with small inputs.
        let limit = 64

        var whole = ServerSentEventParser(maxEventBytes: limit)
        let wholeEvents = whole.feed(stream)
        FuzzCheck.require(whole.bufferedBytes <= limit, "the parser holds \(whole.bufferedBytes) bytes, over its limit")

        // The same stream in chunks gives the same events: where a read ends is not meaning.
        var chunked = ServerSentEventParser(maxEventBytes: limit)
        var chunkedEvents: [ServerEvent] = []
        var start = stream.startIndex
        while start < stream.endIndex {
            let end = stream.index(start, offsetBy: chunkSize, limitedBy: stream.endIndex) ?? stream.endIndex
            chunkedEvents += chunked.feed(stream[start..<end])
            FuzzCheck.require(chunked.bufferedBytes <= limit, "the parser holds \(chunked.bufferedBytes) bytes, over its limit")
            start = end
        }
        FuzzCheck.require(chunkedEvents == wholeEvents, "chunks of \(chunkSize) give other events than the whole stream")
        FuzzCheck.require(chunked.commentsSeen == whole.commentsSeen && chunked.malformedEvents == whole.malformedEvents
                              && chunked.retryMilliseconds == whole.retryMilliseconds,
                          "chunks of \(chunkSize) give other counts than the whole stream")

        for event in wholeEvents {
            // Each byte kept becomes at most one scalar (an invalid sequence becomes one U+FFFD).
            FuzzCheck.require(event.data.unicodeScalars.count <= limit, "an event of \(event.data.unicodeScalars.count) scalars passed the limit")
            // Malformed data is a reported failure, never a crash.
            _ = try? event.payload()
        }
    }
}
