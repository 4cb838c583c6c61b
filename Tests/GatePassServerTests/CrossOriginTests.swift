import Foundation
import GatePassAPI
import LoopbackHTTP
import Testing
@testable import GatePassServer

/// The page origin these tests list in `corsOrigins`, and one they do not.
let listedOrigin = "http://127.0.0.1:5173"
let unlistedOrigin = "https://elsewhere.example"

/// A server whose `corsOrigins` lists `listedOrigin` (written as a person might: upper case,
/// a default port elsewhere), with one site.
func withBrowserSite<T>(_ body: (TestServer, Site) throws -> T) throws -> T {
    try withSite(configure: { $0.corsOrigins = ["HTTP://127.0.0.1:5173", "https://desk.example.com:443"] }, body)
}

extension HTTPAnswer {
    /// The `Access-Control-*` headers of the answer.
    var corsHeaders: [String: String] { headers.filter { $0.key.hasPrefix("access-control-") } }

    /// Whether the answer carries what every answer to the listed origin carries.
    var isForListedOrigin: Bool {
        headers["access-control-allow-origin"] == listedOrigin && headers["vary"]?.contains("Origin") == true
            && headers["access-control-expose-headers"] == "Retry-After, Idempotent-Replayed"
    }
}

/// api.md "Browser clients": origins in the configuration, preflights, and the headers of
/// every answer to a listed origin.
@Suite struct CrossOriginTests {
    // MARK: - Configured origins

    @Test(arguments: [
        ("HTTPS://Desk.Example.COM", "https://desk.example.com"),
        ("https://desk.example.com:443", "https://desk.example.com"),
        ("http://localhost:80", "http://localhost"),
        ("http://127.0.0.1:5173", "http://127.0.0.1:5173"),
        ("https://example.com:8443", "https://example.com:8443"),
        ("http://[::1]:8080", "http://[::1]:8080"),
        ("http://[0:0:0:0:0:0:0:1]", "http://[::1]"),
        ("https://xn--bcher-kva.example", "https://xn--bcher-kva.example"),
        ("http://my_host.internal:3000", "http://my_host.internal:3000"),
    ])
    func anOriginIsReadAsBrowsersWriteIt(written: String, serialized: String) throws {
        #expect(try WebOrigin(configured: written).text == serialized)
    }

    @Test(arguments: [
        "", "null", "*", "desk.example.com", "//desk.example.com", "ftp://desk.example.com", "file:///etc/passwd",
        "https://desk.example.com/", "https://desk.example.com/app", "https://desk.example.com?x=1",
        "https://desk.example.com#top", "https://user:secret@desk.example.com", "https://desk.example.com:0",
        "https://desk.example.com:65536", "https://desk.example.com:", "https://desk.example.com:+80",
        "https://desk.example.com:8080:1", "https://desk.example.com:８０", "https:// desk.example.com",
        "https://desk.example.com\r\nSet-Cookie: a=b", "https://desk.example.com\t", "https://bücher.example",
        "http://127.1", "http://1.2.3.256", "http://01.2.3.4", "http://1.2.3.4.5", "http://[::1", "http://[::1]x",
        "http://[::ffff:1.2.3.4]", "http://[zz::1]", "http://-desk.example.com", "http://desk-.example.com",
        "http://desk..example.com", "http://desk.example.com.", "http://", "http://:8080",
        "http://" + String(repeating: "a", count: 64) + ".example", "http://" + String(repeating: "a.", count: 140) + "com",
        "https://" + String(repeating: "x", count: 100_000),
    ])
    func anythingElseIsAConfigurationError(written: String) {
        let refused = #expect(throws: ConfigurationError.self, "\(written.prefix(80).debugDescription)") {
            try WebOrigin(configured: written)
        }
        #expect(refused?.message.hasPrefix("corsOrigins: ") == true)
        var configuration = ServerConfiguration()
        configuration.corsOrigins = ["https://fine.example", written]
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
    }

    /// Never silently ignored: the server does not start, and says which origin and why, in one
    /// visible line however hostile the text.
    @Test func aBadOriginStopsTheServerAtStartAndIsNamed() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/server.json"
            let file = #"{"database": "\#(directory)/g.db", "corsOrigins": ["https://ok.example", "https://desk.example.com/\u001b[2J"]}"#
            try file.write(toFile: path, atomically: true, encoding: .utf8)
            let error = #expect(throws: ConfigurationError.self) { _ = try ServerConfiguration.load(path: path) }
            let message = error?.message ?? ""
            #expect(message.hasPrefix("corsOrigins: "), "\(message)")
            #expect(message.contains("desk.example.com/") && message.contains("printable ASCII"), "\(message)")
            #expect(!message.contains("\u{1B}") && !message.contains("\n"), "\(message)")
            var configuration = ServerConfiguration()
            configuration.database = directory + "/g.db"
            configuration.port = 0
            configuration.corsOrigins = ["desk.example.com"]
            #expect(throws: ConfigurationError.self) { _ = try GatePassServer(configuration: configuration, logSink: RecordingLog()) }
            #expect(!FileManager.default.fileExists(atPath: directory + "/g.db"), "nothing was opened")
        }
    }

    @Test func theFileKeyIsRead() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/server.json"
            try #"{"corsOrigins": ["https://desk.example.com"]}"#.write(toFile: path, atomically: true, encoding: .utf8)
            #expect(try ServerConfiguration.load(path: path).corsOrigins == ["https://desk.example.com"])
            #expect(ServerConfiguration().corsOrigins.isEmpty)
        }
    }

    // MARK: - Preflights

    func preflight(_ server: TestServer, _ path: String, origin: String? = listedOrigin,
                   method: String = "POST") throws -> HTTPAnswer {
        var headers = ["Access-Control-Request-Method": method,
                       "Access-Control-Request-Headers": "authorization, content-type, idempotency-key"]
        if let origin { headers["Origin"] = origin }
        return try server.client().send("OPTIONS", path, headers: headers)
    }

    @Test func aPreflightFromAListedOriginNamesTheRoutesMethods() throws {
        try withBrowserSite { server, _ in
            let answer = try preflight(server, "/api/visitors")
            #expect(answer.status == 204 && answer.body.isEmpty)
            #expect(answer.isForListedOrigin)
            #expect(Set(answer.headers["access-control-allow-methods"]?.components(separatedBy: ", ") ?? []) == ["GET", "POST"])
            #expect(answer.headers["access-control-allow-headers"] == "Authorization, Content-Type, Idempotency-Key, Last-Event-ID")
            #expect(answer.headers["access-control-max-age"] == "600")
            // The second listed origin, written with its default port, is the one browsers send.
            let desk = try preflight(server, "/api/events/ticket", origin: "https://desk.example.com")
            #expect(desk.status == 204 && desk.headers["access-control-allow-origin"] == "https://desk.example.com")
            #expect(desk.headers["access-control-allow-methods"] == "POST")
            #expect(server.log.all.contains { $0.hasPrefix("OPTIONS (preflight) 204 ") })
        }
    }

    /// The methods come from the router: every route whose pattern matches the path, so a
    /// literal path also names what its parameter sibling answers.
    @Test func theMethodsAreWhatTheRouterRoutesForThePath() throws {
        try withBrowserSite { server, _ in
            let router = Router(routes: GatePassApplication.routes)
            for path in ["/api/visitors/v-1", "/api/visitors/admin-me", "/api/visitors/v-1/cancel", "/api/events",
                         "/api/visitor-scanner/lookup/ana%20pop", "/api/notifications/n-1"] {
                let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
                    .map { $0.removingPercentEncoding ?? String($0) }
                let expected = router.methods(segments: segments)
                #expect(!expected.isEmpty, "\(path)")
                let answer = try preflight(server, path, method: "GET")
                #expect(answer.status == 204, "\(path)")
                #expect(answer.headers["access-control-allow-methods"] == expected.joined(separator: ", "), "\(path)")
            }
            #expect(router.methods(segments: ["api", "visitors", "v-1", "cancel"]) == ["POST"])
            #expect(router.methods(segments: ["api", "nothing"]).isEmpty)
            #expect(router.methods(segments: ["api", "visitors", ""]).isEmpty)
        }
    }

    /// A path no route answers gets the 404 any request gets there; it carries the listed
    /// origin's headers like every answer to it, and the browser fails the preflight on the status.
    @Test func aPreflightOnAPathNoRouteAnswersIs404() throws {
        try withBrowserSite { server, _ in
            for path in ["/api/nothing", "/api/visitors/", "/api//visitors", "/api/visitors/v-1/cancel/more"] {
                let answer = try preflight(server, path)
                #expect(answer.isError(404, "NOT_FOUND"), "\(path): \(answer.text)")
                #expect(answer.isForListedOrigin && answer.headers["access-control-allow-methods"] == nil, "\(path)")
            }
        }
    }

    /// An unlisted origin (or none) gets what any OPTIONS gets: the router's 405 with `Allow`,
    /// and no CORS headers, so the browser refuses the request.
    @Test func aPreflightFromAnUnlistedOriginIsAnOrdinary405() throws {
        try withBrowserSite { server, _ in
            for origin in [unlistedOrigin, nil, "null", "http://127.0.0.1:5174", "http://localhost:5173"] {
                let answer = try preflight(server, "/api/visitors", origin: origin)
                #expect(answer.isError(405, "METHOD_NOT_ALLOWED"), "\(origin ?? "no origin")")
                #expect(answer.headers["allow"] == "GET, POST" || answer.headers["allow"] == "POST, GET")
                #expect(answer.corsHeaders.isEmpty, "\(origin ?? "no origin"): \(answer.corsHeaders)")
                #expect(answer.headers["vary"] == "Origin", "caches keep the origins apart")
            }
        }
    }

    /// CORS covers /api/ only: /metrics is not for pages.
    @Test func pathsOutsideTheAPIHaveNoCORS() throws {
        try withBrowserSite { server, _ in
            let options = try preflight(server, "/metrics", method: "GET")
            #expect(options.status == 405 && options.corsHeaders.isEmpty && options.headers["vary"] == nil)
            let metrics = try server.get("/metrics", headers: ["Origin": listedOrigin])
            #expect(metrics.status == 200 && metrics.corsHeaders.isEmpty)
        }
    }

    @Test func withoutCorsOriginsNothingChanges() throws {
        try withSite { server, site in
            let options = try preflight(server, "/api/visitors")
            #expect(options.isError(405, "METHOD_NOT_ALLOWED") && options.corsHeaders.isEmpty && options.headers["vary"] == nil)
            let list = try server.get("/api/visitors", token: site.ownerToken, headers: ["Origin": listedOrigin])
            #expect(list.status == 200 && list.corsHeaders.isEmpty && list.headers["vary"] == nil)
        }
    }

    // MARK: - Every answer to a listed origin

    @Test func successesAndErrorsCarryTheHeaders() throws {
        try withBrowserSite { server, site in
            let origin = ["Origin": listedOrigin]
            let answers: [(String, HTTPAnswer)] = [
                ("list", try server.get("/api/visitors", token: site.ownerToken, headers: origin)),
                ("create", try server.post("/api/visitors", token: site.ownerToken, ["name": "From A Page"], headers: origin)),
                ("no token", try server.get("/api/visitors", headers: origin)),
                ("forbidden", try server.get("/api/visitors", token: site.scanner, headers: origin)),
                ("not found", try server.get("/api/visitors/nobody", token: site.ownerToken, headers: origin)),
                ("wrong method", try server.client().send("PUT", "/api/visitors", headers: origin)),
                ("bad JSON", try server.postRaw("/api/visitors", token: site.ownerToken, body: Array("{".utf8), headers: origin)),
                ("too large", try server.postRaw("/api/visitors", token: site.ownerToken,
                                                 body: [UInt8](repeating: 0x20, count: 70_000), headers: origin)),
                ("healthz", try server.get("/api/healthz", headers: origin)),
            ]
            let expected = [200, 201, 401, 403, 404, 405, 400, 413, 200]
            for ((name, answer), status) in zip(answers, expected) {
                #expect(answer.status == status, "\(name): \(answer.text)")
                #expect(answer.isForListedOrigin, "\(name): \(answer.headers)")
                #expect(answer.headers["access-control-allow-methods"] == nil, "\(name): only preflights name methods")
            }
        }
    }

    /// A replayed idempotent answer and a 429 carry the headers the page is allowed to read.
    @Test func replayAndRetryAfterAreExposed() throws {
        try withBrowserSite { server, site in
            let headers = ["Origin": listedOrigin, "Idempotency-Key": "page-create-1"]
            _ = try server.post("/api/visitors", token: site.ownerToken, ["name": "Once"], headers: headers)
            let replay = try server.post("/api/visitors", token: site.ownerToken, ["name": "Once"], headers: headers)
            #expect(replay.status == 201 && replay.headers["idempotent-replayed"] == "true" && replay.isForListedOrigin)
            var limited: HTTPAnswer?
            for _ in 0..<3 where limited == nil {
                let answer = try server.post("/api/auth/send-otp", ["email": "page@acme.test"], headers: ["Origin": listedOrigin])
                if answer.status == 429 { limited = answer }
            }
            let throttled = try #require(limited, "the resend throttle answers 429")
            #expect(throttled.headers["retry-after"] != nil && throttled.isForListedOrigin)
        }
    }

    @Test func theEventStreamCarriesTheHeaders() throws {
        try withBrowserSite { server, site in
            let stream = try SSETestClient(port: server.port, headers: ["Authorization": "Bearer \(site.ownerToken)",
                                                                          "Origin": listedOrigin])
            #expect(stream.answer.status == 200 && stream.answer.isForListedOrigin)
            try server.awaitingVisitor(site)
            #expect(kinds(stream.events(1)) == ["visitor.awaiting"])
            let refused = try SSETestClient(port: server.port, headers: ["Origin": listedOrigin]).answer
            #expect(refused.isError(401, "UNAUTHORIZED") && refused.isForListedOrigin)
            let other = try SSETestClient(port: server.port, headers: ["Authorization": "Bearer \(site.ownerToken)",
                                                                         "Origin": unlistedOrigin])
            #expect(other.answer.status == 200 && other.answer.corsHeaders.isEmpty)
        }
    }

    @Test func anUnlistedOriginGetsNoCORSHeaders() throws {
        try withBrowserSite { server, site in
            // (Spaces around the value are not part of it: HTTP strips them, and so does libmicrohttpd.)
            for origin in [unlistedOrigin, "null", "HTTP://127.0.0.1:5173", "http://127.0.0.1:5173/", "http://127.0.0.1", "https://desk.example.com:443"] {
                let answer = try server.get("/api/visitors", token: site.ownerToken, headers: ["Origin": origin])
                #expect(answer.status == 200 && answer.corsHeaders.isEmpty, "\(origin.debugDescription): \(answer.corsHeaders)")
                #expect(answer.headers["vary"] == "Origin")
            }
        }
    }

    // MARK: - Hostile Origin headers

    /// Whatever the header holds, no byte of it reaches an answer: a listed origin is named by
    /// the configured text, and anything else is not named at all.
    @Test func hostileOriginsAreNeverEchoed() throws {
        try withBrowserSite { server, site in
            let marker = "HOSTILE-MARKER"
            let values = [
                listedOrigin + String(repeating: "x", count: 8_000) + marker,
                String(repeating: marker, count: 4_000),
                listedOrigin + "%0d%0aSet-Cookie:%20" + marker,
                "null", marker + "\u{7F}\u{01}",
                listedOrigin + "\u{00E9}" + marker,
            ]
            for value in values {
                // Served (200), or refused as malformed by the framing rules or the library (400, 431).
                let answer = try server.get("/api/visitors", token: site.ownerToken, headers: ["Origin": value])
                #expect([200, 400, 431].contains(answer.status), "\(value.prefix(40)): \(answer.status)")
                #expect(answer.corsHeaders.isEmpty, "\(value.prefix(40))")
                #expect(!answer.headers.values.contains { $0.contains(marker) } && !answer.text.contains(marker))
                let options = try preflight(server, "/api/visitors", origin: value)
                #expect([405, 400, 431].contains(options.status) && options.corsHeaders.isEmpty, "\(value.prefix(40))")
                #expect(!options.headers.values.contains { $0.contains(marker) } && !options.text.contains(marker))
            }
            #expect(try server.get("/api/healthz").status == 200, "the server still answers")
        }
    }

    /// CR and LF cannot smuggle a header through Origin: a bare CR or an obsolete line fold is
    /// refused as malformed, and a CRLF simply ends the header.
    @Test func carriageReturnsAndLineFeedsInOriginDoNotInjectHeaders() throws {
        try withBrowserSite { server, site in
            let heads = [
                "GET /api/visitors HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(site.ownerToken)\r\nOrigin: \(listedOrigin)\rSet-Cookie: injected=1\r\nConnection: close\r\n\r\n",
                "GET /api/visitors HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(site.ownerToken)\r\nOrigin: \(listedOrigin)\r\n Set-Cookie: injected=1\r\nConnection: close\r\n\r\n",
                "GET /api/visitors HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(site.ownerToken)\r\nOrigin: http://evil.example\r\nSet-Cookie: injected=1\r\nConnection: close\r\n\r\n",
                "OPTIONS /api/visitors HTTP/1.1\r\nHost: x\r\nOrigin: \(listedOrigin)\nSet-Cookie: injected=1\r\nConnection: close\r\n\r\n",
            ]
            for head in heads {
                let socket = try RawSocket(port: server.port)
                socket.write(head)
                let text = String(decoding: socket.readUntilClosed().bytes, as: UTF8.self)
                let headLines = text.components(separatedBy: "\r\n\r\n").first?.components(separatedBy: "\r\n") ?? []
                #expect(headLines.first?.hasPrefix("HTTP/1.1 ") == true, "\(text.prefix(200))")
                #expect(!headLines.contains { $0.lowercased().hasPrefix("set-cookie") }, "\(text.prefix(400))")
                #expect(!text.contains("injected"), "\(text.prefix(400))")
                // A listed origin that arrived intact is named by its configured text, never more.
                for line in headLines where line.lowercased().hasPrefix("access-control-allow-origin:") {
                    #expect(line == "Access-Control-Allow-Origin: \(listedOrigin)")
                }
            }
            #expect(try server.get("/api/healthz").status == 200, "the server still answers")
        }
    }
}
