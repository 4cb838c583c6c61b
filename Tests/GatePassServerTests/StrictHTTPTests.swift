import Foundation
import GatePassCore
import HTTPServer
import Testing

/// Issue 9 item 6: a request whose framing is ambiguous is refused by our handler before any
/// body is read — 400 in the JSON shape with `Connection: close`, so that bytes left over
/// (a smuggled second request) are never read as a request.
@Suite struct StrictHTTPTests {
    /// Sends `head` + `rest` on one connection and returns everything the server sent until it closed.
    private func exchange(_ port: UInt16, _ head: String, then rest: String = "") -> (text: String, closed: Bool) {
        guard let socket = try? RawSocket(port: port) else { return ("connect failed", false) }
        socket.write(head + rest)
        let (bytes, closed) = socket.readUntilClosed()
        return (String(decoding: bytes, as: UTF8.self), closed)
    }

    /// Answers in `text`, counted by their status lines wherever they start: a body without a
    /// final line break runs straight into the next answer's status line.
    private func statusLines(_ text: String) -> Int {
        text.matches(of: try! Regex(#"HTTP/1\.[01] [0-9]{3} "#)).count
    }

    /// The request a refused one tries to smuggle: it must never run. Its route is logged when
    /// it runs (the log line is written before the answer, so before the connection closes).
    static let smuggled = "GET /api/healthz HTTP/1.1\r\nHost: x\r\n\r\n"

    /// A send-otp request whose body, by `Content-Length`, is the smuggled request: a server
    /// that does not take `framing` as the length reads the body as a second request.
    private static func bodyIsSmuggled(_ framing: String) -> String {
        "POST /api/auth/send-otp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + framing.replacingOccurrences(of: "N", with: String(smuggled.utf8.count)) + "\r\n\r\n" + smuggled
    }

    private static func head(_ headers: String, _ method: String = "POST", _ path: String = "/api/auth/send-otp") -> String {
        "\(method) \(path) HTTP/1.1\r\nHost: x\r\n\(headers)\r\n"
    }

    /// Each case is sent, followed on the same connection by `smuggled` (unless the case's
    /// own body is it). Whatever libmicrohttpd makes of the framing, our answer is one 400 and
    /// the end of the connection.
    static let framingCases: [(name: String, bytes: String)] = [
        // Framing headers that libmicrohttpd ignores as framing (measured on 0.9.75).
        ("space before the colon of Content-Length", bodyIsSmuggled("Content-Length : N")),
        ("tab before the colon of Content-Length", bodyIsSmuggled("Content-Length\t: N")),
        ("Content-Length folded onto a second line", bodyIsSmuggled("Content-Length:\r\n N")),
        ("Content-Length folded with a tab", bodyIsSmuggled("Content-Length:\r\n\tN")),
        ("a name that begins with Content-Length", bodyIsSmuggled("Content-Length-Extra: N")),
        ("space before the colon of Transfer-Encoding", head("Transfer-Encoding : chunked\r\n") + "0\r\n\r\n" + smuggled),
        ("Transfer-Encoding folded onto a second line", head("Transfer-Encoding:\r\n chunked\r\n") + "0\r\n\r\n" + smuggled),
        ("Transfer-Encoding chunked with a trailing space", head("Transfer-Encoding: chunked \r\n") + "0\r\n\r\n" + smuggled),
        ("Transfer-Encoding chunked with a trailing tab", head("Transfer-Encoding: chunked\t\r\n") + "0\r\n\r\n" + smuggled),
        // Header names that are not tokens (RFC 9110 tchar).
        ("a space inside a header name", head("X Note: a\r\n", "GET", "/api/nothing-here") + smuggled),
        ("a separator in a header name", head("X(Note): a\r\n", "GET", "/api/nothing-here") + smuggled),
        ("a non-ASCII header name", head("X-Noté: a\r\n", "GET", "/api/nothing-here") + smuggled),
        // Repeated and conflicting framing.
        ("repeated Content-Length", head("Content-Length: 2\r\nContent-Length: 2\r\n") + "{}" + smuggled),
        ("conflicting Content-Length", head("Content-Length: 2\r\nContent-Length: 40\r\n") + "{}" + smuggled),
        ("Transfer-Encoding gzip", head("Transfer-Encoding: gzip\r\n") + smuggled),
        ("Transfer-Encoding gzip, chunked", head("Transfer-Encoding: gzip, chunked\r\n") + "0\r\n\r\n" + smuggled),
        ("Transfer-Encoding twice", head("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n") + "0\r\n\r\n" + smuggled),
        ("Transfer-Encoding and Content-Length", head("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n") + "0\r\n\r\n" + smuggled),
        ("two Host headers", "GET /api/nothing-here HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n" + smuggled),
        // Controls in values, and malformed targets.
        ("a control character in a header value", head("X-Note: a\u{01}b\r\n", "GET", "/api/nothing-here") + smuggled),
        ("an escape in a header value", head("User-Agent: \u{1B}[2Jwiped\r\n", "GET", "/api/nothing-here") + smuggled),
        ("DEL in a header value", head("X-Note: a\u{7F}\r\n", "GET", "/api/nothing-here") + smuggled),
        ("a bare CR inside a header value", head("X-Note: a\rb\r\n", "GET", "/api/nothing-here") + smuggled),
        ("a malformed percent escape in the path", head("", "GET", "/api/visitors/%zz") + smuggled),
        ("a malformed percent escape in the query", head("", "GET", "/api/auth/dev-peek-otp?email=%4") + smuggled),
    ]

    @Test(arguments: 0..<framingCases.count)
    func ambiguousFramingIs400InTheJSONShapeAndClosesTheConnection(_ index: Int) throws {
        let (name, bytes) = Self.framingCases[index]
        try withTestServer { server in
            let (text, closed) = exchange(server.port, bytes)
            #expect(text.hasPrefix("HTTP/1.1 400"), "\(name): \(text.prefix(200))")
            #expect(text.lowercased().contains("connection: close"), "\(name)")
            #expect(text.contains(#""code":"BAD_REQUEST""#), "\(name): \(text)")
            #expect(text.lowercased().contains("x-content-type-options: nosniff"), "\(name)")
            // One answer, then the end: never silence, never a second request.
            #expect(statusLines(text) == 1, "\(name): \(text)")
            #expect(closed, "\(name)")
            #expect(!server.log.all.contains { $0.hasPrefix("GET /api/healthz ") }, "\(name): the smuggled request ran")
        }
    }

    /// The same connection serves a valid request after a valid one: the checks above refuse
    /// framing, not keep-alive.
    @Test func aValidRequestIsFollowedOnTheSameConnection() throws {
        try withTestServer { server in
            let (text, _) = exchange(server.port, Self.head("Content-Length: 2\r\nX-Content-Length: 3\r\n") + "{}"
                                        + Self.smuggled.replacingOccurrences(of: "Host: x", with: "Host: x\r\nConnection: close"))
            #expect(statusLines(text) == 2, "\(text)")
            #expect(server.log.all.contains { $0.hasPrefix("GET /api/healthz 200") }, "\(server.log.all)")
        }
    }

    @Test func http11WithoutHostIsRefused() throws {
        try withTestServer { server in
            let (text, closed) = exchange(server.port, "GET /api/healthz HTTP/1.1\r\n\r\n", then: Self.smuggled)
            #expect(text.hasPrefix("HTTP/1.1 400"), "\(text.prefix(300))")
            #expect(statusLines(text) == 1, "\(text)")
            #expect(closed)
        }
    }

    @Test func http10WithoutHostIsServed() throws {
        try withTestServer { server in
            let (text, _) = exchange(server.port, "GET /api/healthz HTTP/1.0\r\n\r\n")
            #expect(text.hasPrefix("HTTP/1.0 200") || text.hasPrefix("HTTP/1.1 200"), "\(text.prefix(200))")
        }
    }

    /// A coding's name is compared in any case, as libmicrohttpd does: both read the same body,
    /// and the request after it on the connection is served.
    @Test(arguments: ["chunked", "Chunked"])
    func aWellFramedChunkedBodyIsStillRead(_ coding: String) throws {
        try withTestServer { server in
            let body = #"{"email":"nobody@example.com"}"#
            let chunk = String(body.utf8.count, radix: 16) + "\r\n" + body + "\r\n0\r\n\r\n"
            let next = Self.smuggled.replacingOccurrences(of: "Host: x", with: "Host: x\r\nConnection: close")
            let (text, _) = exchange(server.port, Self.head("Content-Type: application/json\r\nTransfer-Encoding: \(coding)\r\n") + chunk + next)
            #expect(text.hasPrefix("HTTP/1.1 202"), "\(text.prefix(300))")
            #expect(statusLines(text) == 2 && text.contains("HTTP/1.1 200"), "\(text)")
        }
    }

    /// Paths are routed on raw segments: an encoded `/` is part of its segment.
    @Test func anEncodedSlashNeverSeparatesSegments() throws {
        try withTestServer { server in
            let owner = try server.addUser("owner@acme.test", role: .owner)
            _ = owner
            let token = try server.login("owner@acme.test")
            #expect(try server.client().get("/api/visitors/admin-me", token: token).status == 200)
            let encoded = try server.client().get("/api/visitors%2Fadmin-me", token: token)
            #expect(encoded.status == 404)
            #expect(encoded.text.contains("NOT_FOUND"))
            // An encoded slash inside a parameter stays in that parameter (an unknown visitor).
            let inside = try server.client().get("/api/visitors/abc%2F..%2Fadmin-me", token: token)
            #expect(inside.status == 404)
            #expect(inside.text.contains("visitor not found"), "\(inside.text)")
        }
    }

    /// An encoded NUL is part of the value, never its end: the email below is not `a@b.test`.
    @Test func anEncodedNulNeverEndsAValue() throws {
        try withTestServer { server in
            _ = try server.addUser("a@b.test", role: .owner)
            _ = try server.client().send("POST", "/api/auth/send-otp", json: ["email": "a@b.test"])
            #expect(try server.client().get("/api/auth/dev-peek-otp?email=a%40b.test").status == 200)
            let cut = try server.client().get("/api/auth/dev-peek-otp?email=a%40b.test%00evil")
            #expect(cut.status == 400, "\(cut.status) \(cut.text)")
            // Decoded exactly once: %2540 is the text "%40", not "@".
            #expect(try server.client().get("/api/auth/dev-peek-otp?email=a%2540b.test").status == 400)
        }
    }

    @Test func everyAnswerSaysNosniff() throws {
        try withTestServer { server in
            for path in ["/api/healthz", "/api/nothing-here", "/metrics", "/api/visitors"] {
                let response = try server.client().get(path)
                #expect(response.headers["x-content-type-options"] == "nosniff", "\(path) \(response.status)")
            }
            let tooLarge = try server.client().send("POST", "/api/auth/send-otp", headers: ["Content-Type": "application/json"],
                                                    body: [UInt8](repeating: 0x20, count: 70_000))
            #expect(tooLarge.status == 413)
            #expect(tooLarge.headers["x-content-type-options"] == "nosniff")
        }
    }
}

/// Answers with the headers it was handed (names in lower case), as JSON, and counts calls:
/// what libmicrohttpd made of the bytes on the wire before our code ran.
final class HeaderEchoResponder: HTTPResponder, @unchecked Sendable {
    let calls = Locked(0)
    func respond(to request: HTTPRequest, reply: @escaping @Sendable (HTTPResponse) -> Void) {
        calls.withLock { $0 += 1 }
        let body = (try? JSONSerialization.data(withJSONObject: request.headers, options: [.sortedKeys])) ?? Data()
        reply(HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(body)))
    }
}

/// What libmicrohttpd 0.9.75 does to a request head before our handler sees it (the README's
/// "Strict HTTP" part relies on these; an upgrade that changes one fails here first).
@Suite struct LibraryHeaderParsingTests {
    private func withEchoServer(_ body: (UInt16, HeaderEchoResponder) throws -> Void) throws {
        let responder = HeaderEchoResponder()
        let server = HTTPServer(configuration: .init(port: 0, threads: 2), responder: responder)
        let port = try server.start()
        defer { server.stop(grace: .seconds(2)) }
        try body(port, responder)
    }

    /// The headers our handler was handed for `headLines` (sent with `Connection: close`).
    private func headersSeen(_ port: UInt16, _ headLines: String) throws -> [String: String] {
        let socket = try RawSocket(port: port)
        socket.write("GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + headLines + "\r\n")
        let text = String(decoding: socket.readUntilClosed().bytes, as: UTF8.self)
        guard let body = text.components(separatedBy: "\r\n\r\n").dropFirst().first,
              let headers = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: String] else {
            throw TestFailure("no echo: \(text.prefix(300))")
        }
        return headers
    }

    @Test func whatReachesOurHandler() throws {
        try withEchoServer { port, _ in
            // White space before the colon stays in the name; the library does not take it as Content-Length.
            let spaced = try headersSeen(port, "Content-Length : 5\r\n")
            #expect(spaced["content-length "] == "5" && spaced["content-length"] == nil, "\(spaced)")
            // A folded value is glued onto the name, with an empty value.
            let folded = try headersSeen(port, "Content-Length:\r\n 35\r\n")
            #expect(folded["content-length35"] == "" && folded["content-length"] == nil, "\(folded)")
            let otherFolded = try headersSeen(port, "X-Note: a\r\n b\r\n")
            #expect(otherFolded["x-noteb"] == "a" && otherFolded["x-note"] == nil, "\(otherFolded)")
            // A NUL ends the value; leading white space goes, trailing white space stays.
            #expect(try headersSeen(port, "X-Note: a\u{0}b\r\n")["x-note"] == "a")
            #expect(try headersSeen(port, "X-Note:   a\r\n")["x-note"] == "a")
            #expect(try headersSeen(port, "Transfer-Encoding: chunked \r\n")["transfer-encoding"] == "chunked ")
            // A line with nothing before its colon is dropped.
            let empty = try headersSeen(port, ": a\r\n")
            #expect(empty == ["host": "x", "connection": "close"], "\(empty)")
        }
    }

    /// These never reach our handler: the library answers with its own HTML page and closes.
    static let libraryAnswers: [(name: String, bytes: String, status: String)] = [
        ("a bare CR in the request line", "GET /echo HTTP/1.1\rHost: x\r\n\r\n", "400"),
        ("a header line without a colon", "GET /echo HTTP/1.1\r\nHost: x\r\nX-Note a\r\n\r\n", "400"),
        ("a NUL in a header name", "GET /echo HTTP/1.1\r\nHost: x\r\nX-\u{0}Note: a\r\n\r\n", "400"),
        ("Content-Length not a number", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2x\r\n\r\n{}", "400"),
        ("Content-Length negative", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n{}", "400"),
        ("Content-Length with a sign", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: +2\r\n\r\n{}", "400"),
        ("Content-Length as a list", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 2\r\n\r\n{}", "400"),
        ("Content-Length with a trailing space", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2 \r\n\r\n{}", "400"),
        ("Content-Length past 64 bits", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n{}", "413"),
    ]

    @Test(arguments: 0..<libraryAnswers.count)
    func whatTheLibraryAnswersItself(_ index: Int) throws {
        let (name, bytes, status) = Self.libraryAnswers[index]
        try withEchoServer { port, responder in
            let socket = try RawSocket(port: port)
            socket.write(bytes + StrictHTTPTests.smuggled)
            let (received, closed) = socket.readUntilClosed()
            let text = String(decoding: received, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 \(status)"), "\(name): \(text.prefix(200))")
            #expect(text.contains("<html>"), "\(name): \(text)")
            #expect(closed, "\(name)")
            #expect(responder.calls.withLock { $0 } == 0, "\(name): the request or the one after it reached the handler")
        }
    }
}
