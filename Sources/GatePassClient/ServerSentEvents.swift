import GatePassCore

/// An incremental parser for `text/event-stream` (WHATWG HTML, "Server-sent events",
/// section "Interpreting an event stream"): feed it bytes as they arrive, in chunks of any
/// size, and it returns the events completed so far.
///
/// ```swift
/// var parser = ServerSentEventParser()
/// let events = parser.feed(Array("id: 7\nevent: visitor.arrived\ndata: {}\n\n".utf8))
/// // events == [ServerEvent(id: 7, kindName: "visitor.arrived", data: "{}")]
/// ```
///
/// Where it departs from the standard, on purpose:
/// - `ServerEvent.id` is the `id:` of that event only; the standard's "last event ID" carries
///   over to later events, which would give a `stream.gap` (sent without an id) the id of
///   the event before it and make the consumer's dedupe drop it. The consumer tracks the id
///   to resume from itself.
/// - An event bigger than `maxEventBytes` (one line, or its data lines together) is dropped
///   and counted in `malformedEvents`, and the parser skips to the next blank line; the
///   standard sets no limit, but a hostile or broken server must not grow memory without end.
public struct ServerSentEventParser: Sendable {
    /// 1 MiB: far above any real event (one visitor's JSON is about 1 KiB).
    public static let defaultMaxEventBytes = 1 << 20

    public let maxEventBytes: Int
    /// Comment lines seen (the server's `: ping` keep-alives), so a caller can treat them as
    /// a sign of life.
    public private(set) var commentsSeen = 0
    /// Events dropped because they exceeded `maxEventBytes`.
    public private(set) var malformedEvents = 0
    /// The last valid `retry:` field: the server's wish for the reconnection delay, in milliseconds.
    public private(set) var retryMilliseconds: Int?

    private var line: [UInt8] = []
    private var data: [UInt8] = []
    private var eventType: [UInt8] = []
    private var eventID: [UInt8]?
    /// A line ended in CR: a LF right after it (maybe in the next chunk) belongs to that line end.
    private var pendingLineFeed = false
    /// How many bytes of the UTF-8 BOM matched at the start of the stream; nil once past it.
    private var byteOrderMarkMatched: Int? = 0
    /// Skipping the rest of an oversized event until the next blank line.
    private var discarding = false
    private var discardedLineHasBytes = false
    private var completed: [ServerEvent] = []

    /// What the parser holds for the event in progress; never more than `maxEventBytes` (tests check).
    var bufferedBytes: Int { line.count + data.count }

    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
    private static let lineFeed = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")
    private static let colon = UInt8(ascii: ":")
    private static let space = UInt8(ascii: " ")

    /// - Parameter maxEventBytes: the largest event (any one line, or all its data together) kept.
    public init(maxEventBytes: Int = defaultMaxEventBytes) {
        precondition(maxEventBytes > 0, "maxEventBytes must be positive")
        self.maxEventBytes = maxEventBytes
    }

    /// Parses the next chunk of the stream and returns the events it completed, in order.
    public mutating func feed(_ bytes: some Collection<UInt8>) -> [ServerEvent] {
        for byte in bytes {
            if let matched = byteOrderMarkMatched {
                if byte == Self.byteOrderMark[matched] {
                    byteOrderMarkMatched = matched + 1 == Self.byteOrderMark.count ? nil : matched + 1
                    continue
                }
                // Not a BOM after all: the bytes held back are ordinary text.
                byteOrderMarkMatched = nil
                for held in Self.byteOrderMark[..<matched] { consume(held) }
            }
            consume(byte)
        }
        defer { completed = [] }
        return completed
    }

    private mutating func consume(_ byte: UInt8) {
        if pendingLineFeed {
            pendingLineFeed = false
            if byte == Self.lineFeed { return }
        }
        switch byte {
        case Self.lineFeed:
            endLine()
        case Self.carriageReturn:
            endLine()
            pendingLineFeed = true
        default:
            if discarding {
                discardedLineHasBytes = true
            } else {
                line.append(byte)
                if line.count + data.count > maxEventBytes { dropOversizedEvent() }
            }
        }
    }

    private mutating func dropOversizedEvent() {
        malformedEvents += 1
        discarding = true
        discardedLineHasBytes = true
        // Fresh arrays, not removeAll(keepingCapacity:), so the megabyte is given back.
        line = []
        data = []
        eventType = []
        eventID = nil
    }

    private mutating func endLine() {
        if discarding {
            if !discardedLineHasBytes { discarding = false }
            discardedLineHasBytes = false
            return
        }
        defer { line.removeAll(keepingCapacity: true) }
        guard let first = line.first else { return dispatch() }
        if first == Self.colon {
            commentsSeen += 1
            return
        }
        let colonIndex = line.firstIndex(of: Self.colon) ?? line.endIndex
        let name = line[..<colonIndex]
        var value = colonIndex < line.endIndex ? line[(colonIndex + 1)...] : []
        if value.first == Self.space { value = value.dropFirst() }
        switch String(decoding: name, as: UTF8.self) {
        case "event":
            eventType = Array(value)
        case "data":
            data.append(contentsOf: value)
            data.append(Self.lineFeed)
        case "id":
            if !value.contains(0) { eventID = Array(value) }
        case "retry":
            if !value.isEmpty, value.allSatisfy(Self.isDigit), let milliseconds = Int(String(decoding: value, as: UTF8.self)) {
                retryMilliseconds = milliseconds
            }
        default:
            break // unknown fields are ignored, as the standard says
        }
    }

    private mutating func dispatch() {
        defer {
            data.removeAll(keepingCapacity: true)
            eventType.removeAll(keepingCapacity: true)
            eventID = nil
        }
        // No data line at all: nothing to dispatch, per the standard (even with an event name).
        guard data.last == Self.lineFeed else { return }
        data.removeLast()
        let kind = eventType.isEmpty ? "message" : String(decoding: eventType, as: UTF8.self)
        completed.append(ServerEvent(id: eventID.flatMap(Self.decimalID), kindName: kind,
                                     data: String(decoding: data, as: UTF8.self)))
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// Our ids are decimal; anything else (a sign, hex, spaces, too large) is no id we can resume from.
    private static func decimalID(_ bytes: [UInt8]) -> Int64? {
        guard !bytes.isEmpty, bytes.allSatisfy(isDigit) else { return nil }
        return Int64(String(decoding: bytes, as: UTF8.self))
    }
}
