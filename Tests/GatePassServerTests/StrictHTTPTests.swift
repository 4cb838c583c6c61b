import Foundation
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

    private func statusLines(_ text: String) -> Int {
        text.components(separatedBy: "\r\n").filter { $0.hasPrefix("HTTP/1.") }.count
    }

    /// libmicrohttpd 0.9.75 refuses a Content-Length that is not a number itself, before our
    /// handler runs, with its own HTML 400 (listed in the README); it still closes the connection.
    @Test func aContentLengthThatIsNotANumberIsRefusedByTheLibrary() throws {
        try withTestServer { server in
            let (text, closed) = exchange(server.port, "POST /api/auth/send-otp HTTP/1.1\r\nHost: x\r\nContent-Length: 2x\r\n\r\n{}",
                                          then: Self.smuggled)
            #expect(text.hasPrefix("HTTP/1.1 400"))
            #expect(!text.contains("HTTP/1.1 200"), "the smuggled request must not be answered: \(text)")
            #expect(closed)
        }
    }

    static let smuggled = "GET /api/healthz HTTP/1.1\r\nHost: x\r\n\r\n"

    static let framingCases: [(name: String, head: String)] = [
        ("repeated Content-Length", "POST /api/auth/send-otp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}"),
        ("conflicting Content-Length", "POST /api/auth/send-otp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}"),
        ("Transfer-Encoding gzip", "POST /api/auth/send-otp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"),
        ("Transfer-Encoding gzip, chunked", "POST /api/auth/send-otp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"),
        ("Transfer-Encoding twice", "POST /api/auth/send-otp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        ("Transfer-Encoding and Content-Length", "POST /api/auth/send-otp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n"),
        ("a control character in a header value", "GET /api/healthz HTTP/1.1\r\nHost: x\r\nX-Note: a\u{01}b\r\n\r\n"),
        ("an escape in a header value", "GET /api/healthz HTTP/1.1\r\nHost: x\r\nUser-Agent: \u{1B}[2Jwiped\r\n\r\n"),
        ("DEL in a header value", "GET /api/healthz HTTP/1.1\r\nHost: x\r\nX-Note: a\u{7F}\r\n\r\n"),
        ("two Host headers", "GET /api/healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n"),
        ("a malformed percent escape in the path", "GET /api/visitors/%zz HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("a malformed percent escape in the query", "GET /api/auth/dev-peek-otp?email=%4 HTTP/1.1\r\nHost: x\r\n\r\n"),
    ]

    @Test(arguments: 0..<framingCases.count)
    func ambiguousFramingIs400InTheJSONShapeAndClosesTheConnection(_ index: Int) throws {
        let (name, head) = Self.framingCases[index]
        try withTestServer { server in
            let (text, closed) = exchange(server.port, head, then: Self.smuggled)
            #expect(text.hasPrefix("HTTP/1.1 400"), "\(name): \(text.prefix(200))")
            #expect(text.lowercased().contains("connection: close"), "\(name)")
            #expect(text.contains(#""code":"BAD_REQUEST""#), "\(name): \(text)")
            #expect(text.lowercased().contains("x-content-type-options: nosniff"), "\(name)")
            // The smuggled request after the refused one is never answered.
            #expect(statusLines(text) == 1, "\(name): \(text)")
            #expect(closed, "\(name)")
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

    @Test func aWellFramedChunkedBodyIsStillRead() throws {
        try withTestServer { server in
            let body = #"{"email":"nobody@example.com"}"#
            let chunk = String(body.utf8.count, radix: 16) + "\r\n" + body + "\r\n0\r\n\r\n"
            let (text, _) = exchange(server.port,
                                     "POST /api/auth/send-otp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + chunk)
            #expect(text.hasPrefix("HTTP/1.1 202"), "\(text.prefix(300))")
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
