import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

/// Bad input in every field of every POST route with a body: each answer is 400 with the
/// error shape of api.md and a message that names the field; nothing is stored. Plus body
/// limits, unknown routes and methods, and text stored verbatim.
@Suite struct BadInputTests {
    enum Caller: Sendable { case anonymous, owner, approver, scanner }

    /// A POST route with a body, described by its fields.
    struct BodyRoute: Sendable, CustomStringConvertible {
        var name: String
        var caller: Caller
        /// The path; `{id}` is a fresh visitor that needs approval (decidable).
        var path: String
        var strings: [String: String]
        var bools: [String: Bool] = [:]
        var required: Set<String>
        /// Fields whose value is an id looked up as is: a bad one is just unknown (404).
        var lookedUp: Set<String> = []
        var description: String { name }

        func body(_ overrides: [String: Any?] = [:]) -> [String: Any] {
            var body: [String: Any] = strings
            body.merge(bools) { $1 }
            for (key, value) in overrides { body[key] = value ?? NSNull() }
            return body
        }

        var fields: [String] { (Array(strings.keys) + Array(bools.keys)).sorted() }
    }

    static let routes: [BodyRoute] = [
        BodyRoute(name: "send-otp", caller: .anonymous, path: "/api/auth/send-otp",
                  strings: ["email": "owner@acme.test"], required: ["email"]),
        BodyRoute(name: "verify-otp", caller: .anonymous, path: "/api/auth/verify-otp",
                  strings: ["email": "owner@acme.test", "otp": "123456"], required: ["email", "otp"]),
        BodyRoute(name: "create visitor", caller: .owner, path: "/api/visitors",
                  strings: ["name": "Ana Pop", "email": "ana@example.com", "phone": "+40 721 000 111", "company": "Acme",
                            "purpose": "Delivery", "hostName": "Ion", "approverId": "{approverId}", "validFrom": "2026-11-29T08:00:00Z",
                            "validUntil": "2026-11-29T18:00:00Z"],
                  bools: ["requiresApproval": true], required: ["name"]),
        BodyRoute(name: "approve-scan", caller: .owner, path: "/api/visitors/{id}/approve-scan",
                  strings: ["note": "fine"], required: []),
        BodyRoute(name: "reject-scan", caller: .owner, path: "/api/visitors/{id}/reject-scan",
                  strings: ["note": "no"], required: []),
        BodyRoute(name: "visitors device register", caller: .owner, path: "/api/visitors/devices/register",
                  strings: ["token": "push-1", "platform": "web"], required: ["token", "platform"]),
        BodyRoute(name: "visitors device unregister", caller: .owner, path: "/api/visitors/devices/unregister",
                  strings: ["token": "push-1"], required: ["token"]),
        BodyRoute(name: "approver approve", caller: .approver, path: "/api/approver/visitors/{id}/approve",
                  strings: ["note": "fine"], required: []),
        BodyRoute(name: "approver reject", caller: .approver, path: "/api/approver/visitors/{id}/reject",
                  strings: ["note": "no"], required: []),
        BodyRoute(name: "approver device register", caller: .approver, path: "/api/approver/devices/register",
                  strings: ["token": "push-2", "platform": "ios"], required: ["token", "platform"]),
        BodyRoute(name: "approver device unregister", caller: .approver, path: "/api/approver/devices/unregister",
                  strings: ["token": "push-2"], required: ["token"]),
        BodyRoute(name: "scanner token", caller: .owner, path: "/api/visitor-scanner/token",
                  strings: ["checkpointId": "{mainGate}"], required: [], lookedUp: ["checkpointId"]),
        BodyRoute(name: "checkin", caller: .scanner, path: "/api/visitor-scanner/checkin",
                  strings: ["shortId": "{shortId}", "scannedAt": "2026-11-29T11:00:00Z"],
                  bools: ["confirmApprovalRequest": false, "offline": true], required: ["shortId"]),
        BodyRoute(name: "checkout", caller: .scanner, path: "/api/visitor-scanner/checkout",
                  strings: ["shortId": "{shortId}"], required: ["shortId"]),
        BodyRoute(name: "walk-in", caller: .scanner, path: "/api/visitor-scanner/walk-in-arrived",
                  strings: ["name": "Walk In", "phone": "+40 700 000 000", "email": "walk@in.test", "company": "Co",
                            "purpose": "Parcel", "hostName": "Desk"],
                  required: ["name"]),
        BodyRoute(name: "create checkpoint", caller: .owner, path: "/api/checkpoints",
                  strings: ["name": "North gate"], required: ["name"]),
    ]

    /// One server with a site and a decidable visitor, and a way to send one route raw bytes.
    struct Bench {
        let server: TestServer
        let site: Site
        let route: BodyRoute
        let visitor: [String: Any]

        init(_ server: TestServer, _ route: BodyRoute) throws {
            self.server = server
            self.route = route
            site = try server.makeSite()
            visitor = try server.createVisitor(site.ownerToken, ["name": "Decidable", "requiresApproval": true])
        }

        var token: String? {
            switch route.caller {
            case .anonymous: nil
            case .owner: site.ownerToken
            case .approver: site.approverToken
            case .scanner: site.scanner
            }
        }

        var path: String { route.path.replacingOccurrences(of: "{id}", with: visitor["id"] as! String) }

        func fill(_ body: [String: Any]) -> [String: Any] {
            body.mapValues { value in
                guard let text = value as? String else { return value }
                return text.replacingOccurrences(of: "{shortId}", with: visitor["shortId"] as! String)
                    .replacingOccurrences(of: "{mainGate}", with: site.mainGate)
                    .replacingOccurrences(of: "{approverId}", with: site.approver.id)
            }
        }

        func send(_ bytes: [UInt8]?) throws -> HTTPAnswer { try server.postRaw(path, token: token, body: bytes) }
        func send(json: Any) throws -> HTTPAnswer {
            try send(Array(try JSONSerialization.data(withJSONObject: json, options: [.fragmentsAllowed])))
        }

        /// Nothing a refused request could have stored is there.
        func expectNothingStored(_ sourceLocation: SourceLocation = #_sourceLocation) throws {
            let visitors = try server.get("/api/visitors", token: site.ownerToken).items
            #expect(ids(visitors) == [visitor["id"] as! String], sourceLocation: sourceLocation)
            #expect(visitors.first?["status"] as? String == "EXPECTED", sourceLocation: sourceLocation)
            #expect(try server.get("/api/checkpoints", token: site.ownerToken).items.count == 1, sourceLocation: sourceLocation)
            let scans = try server.history(site.ownerToken)
            #expect(scans.allSatisfy { $0["result"] as? String == "INVALID" }, sourceLocation: sourceLocation)
        }
    }

    static func expectBadRequest(_ answer: HTTPAnswer, naming words: [String], _ what: String,
                                 sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(answer.isError(400, "BAD_REQUEST"), "\(what): \(answer.status) \(answer.text)", sourceLocation: sourceLocation)
        #expect(words.contains { answer.errorMessage.contains($0) }, "\(what): \(answer.errorMessage)",
                sourceLocation: sourceLocation)
    }

    @Test(arguments: routes)
    func malformedJSON(_ route: BodyRoute) throws {
        try withServer { server in
            let bench = try Bench(server, route)
            let bodies: [[UInt8]] = [
                Array("{\"name\": \"x\"".utf8), Array("{name: \"x\"}".utf8), Array("not json at all".utf8),
                Array("{\"a\": 1,}".utf8), Array("{\"a\": 1} trailing".utf8), Array("{\"a\": 'single'}".utf8),
                [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0xFE, 0x22, 0x7D], // invalid UTF-8
                Array("{\"a\": \"\\uZZZZ\"}".utf8), Array(repeating: UInt8(ascii: "["), count: 10_000),
            ]
            for body in bodies {
                Self.expectBadRequest(try bench.send(body), naming: ["JSON", "body"], "\(route) \(String(decoding: body.prefix(20), as: UTF8.self))")
            }
            try bench.expectNothingStored()
        }
    }

    @Test(arguments: routes)
    func anythingButAnObject(_ route: BodyRoute) throws {
        try withServer { server in
            let bench = try Bench(server, route)
            for json: Any in [[Any](), [bench.fill(route.body())], "text", 42, NSNull(), true] {
                Self.expectBadRequest(try bench.send(json: json), naming: ["body", "object"], "\(route) \(json)")
            }
            try bench.expectNothingStored()
        }
    }

    @Test(arguments: routes)
    func wrongTypes(_ route: BodyRoute) throws {
        try withServer { server in
            let bench = try Bench(server, route)
            for field in route.strings.keys.sorted() {
                for wrong: Any in [42, true, ["nested": "object"], ["an", "array"], 1.5] {
                    let answer = try bench.send(json: bench.fill(route.body([field: wrong])))
                    Self.expectBadRequest(answer, naming: [field], "\(route).\(field) = \(wrong)")
                }
            }
            for field in route.bools.keys.sorted() {
                for wrong: Any in ["true", 1, 0, "yes", ["a"]] {
                    let answer = try bench.send(json: bench.fill(route.body([field: wrong])))
                    Self.expectBadRequest(answer, naming: [field], "\(route).\(field) = \(wrong)")
                }
            }
            try bench.expectNothingStored()
        }
    }

    @Test(arguments: routes.filter { !$0.required.isEmpty })
    func missingOrNullRequiredFields(_ route: BodyRoute) throws {
        try withServer { server in
            let bench = try Bench(server, route)
            for field in route.required.sorted() {
                var body = bench.fill(route.body())
                body.removeValue(forKey: field)
                Self.expectBadRequest(try bench.send(json: body), naming: [field], "\(route) without \(field)")
                Self.expectBadRequest(try bench.send(json: bench.fill(route.body([field: nil]))), naming: [field],
                                      "\(route) with \(field) null")
                Self.expectBadRequest(try bench.send(json: bench.fill(route.body([field: ""]))), naming: [field],
                                      "\(route) with \(field) empty")
            }
            Self.expectBadRequest(try bench.send(json: [String: Any]()), naming: Array(route.required), "\(route) {}")
            Self.expectBadRequest(try bench.send(nil), naming: ["body"], "\(route) without a body")
            try bench.expectNothingStored()
        }
    }

    @Test(arguments: routes)
    func oversizedStringsAndControlCharacters(_ route: BodyRoute) throws {
        try withServer { server in
            let bench = try Bench(server, route)
            let long = String(repeating: "x", count: 10_000)
            for field in route.strings.keys.sorted() {
                let original = bench.fill(route.body())[field] as! String
                for (label, value) in [("10,000 characters", long), ("a NUL", "Ana\u{0}Pop"), ("a bell", "ab\u{7}cd"),
                                       ("an escape", "\u{1B}[31mred"), ("a line break", "two\nlines"),
                                       ("DEL", "x\u{7F}y"), ("C1 control", "x\u{85}y"), ("control suffix", original + "\u{1}")] {
                    let answer = try bench.send(json: bench.fill(route.body([field: value])))
                    if route.lookedUp.contains(field) {
                        #expect(answer.isError(404, "NOT_FOUND"), "\(route).\(field) with \(label): \(answer.text)")
                    } else {
                        Self.expectBadRequest(answer, naming: [field], "\(route).\(field) with \(label)")
                    }
                }
            }
            try bench.expectNothingStored()
        }
    }

    /// Optional fields may be null or absent; unknown keys are ignored.
    @Test(arguments: routes.filter { $0.caller != .anonymous })
    func nullOptionalsAndUnknownKeysAreAccepted(_ route: BodyRoute) throws {
        try withServer { server in
            let bench = try Bench(server, route)
            var body: [String: Any] = [:]
            for field in route.required { body[field] = bench.fill(route.body())[field] }
            for field in route.fields where !route.required.contains(field) { body[field] = NSNull() }
            body["unknownKey"] = ["deep": [1, 2, 3]]
            body["id"] = "attacker-chosen"
            body["status"] = "CHECKED_IN"
            body["walkIn"] = "not even a bool"
            let answer = try bench.send(json: body)
            #expect((200..<300).contains(answer.status), "\(route): \(answer.text)")
            if let id = answer.json?["id"] as? String { #expect(id != "attacker-chosen") }
            if route.name == "create visitor" {
                #expect(answer.string("status") == "EXPECTED" && answer.json?["walkIn"] as? Bool == false)
            }
        }
    }

    /// The strictness above refuses nothing RFC 8259 allows.
    @Test func unusualButValidJSONIsAccepted() throws {
        try withSite { server, site in
            let body = " \r\n\t{ \"name\" : \"\\u0041na \\ud83d\\ude00 \\\"Q\\\" \\/ \\\\\" ,\n"
                + "\"extra\": [ 0, -0, -0.5e+10, 1E-3, 12.25, true, false, null, {}, [], {\"a\": [[[\"\\b\\f\\n\\r\\t\"]]]} ],"
                + " \"requiresApproval\" : true }\n "
            let answer = try server.postRaw("/api/visitors", token: site.ownerToken, body: Array(body.utf8))
            #expect(answer.status == 201, "\(answer.text)")
            #expect(answer.string("name") == "Ana 😀 \"Q\" / \\")
            #expect(answer.json?["requiresApproval"] as? Bool == true)
        }
    }

    @Test func sqlMetacharactersAreStoredVerbatim() throws {
        try withSite { server, site in
            let evil = "'); DROP TABLE visitors;--"
            let fields = ["name": evil, "company": "Robert'); DELETE FROM scans; --", "purpose": "1' OR '1'='1",
                          "hostName": "\" OR \"\"=\"", "email": "o'brien@example.com"]
            let visitor = try server.createVisitor(site.ownerToken, fields)
            for (key, value) in fields { #expect(visitor[key] as? String == value, "\(key)") }
            let fetched = try server.visitor(visitor["id"], site.ownerToken)
            for (key, value) in fields { #expect(fetched[key] as? String == value, "\(key)") }
            // The table is still there and searchable by the same text; LIKE wildcards are literal.
            _ = try server.createVisitor(site.ownerToken, ["name": "Plain Person"])
            #expect(try server.get("/api/visitors", token: site.ownerToken).items.count == 2)
            let search = "'); DROP".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            #expect(ids(try server.get("/api/visitors?q=\(search)", token: site.ownerToken).items) == [visitor["id"] as! String])
            for wildcard in ["%25", "_", "%25%25"] {
                #expect(try server.get("/api/visitors?q=\(wildcard)", token: site.ownerToken).items.isEmpty, "\(wildcard)")
            }
            #expect(try server.get("/api/visitor-scanner/lookup/%25", token: site.scanner).items.isEmpty)
            let walkIn = try server.post("/api/visitor-scanner/walk-in-arrived", token: site.scanner, ["name": evil])
            #expect(walkIn.visitor["name"] as? String == evil)
            let checkpoint = try server.post("/api/checkpoints", token: site.ownerToken, ["name": evil])
            #expect(checkpoint.status == 201 && checkpoint.string("name") == evil)
            let note = try server.createVisitor(site.ownerToken, ["requiresApproval": true])
            let decided = try server.post("/api/visitors/\(note["id"] as! String)/approve-scan", token: site.ownerToken,
                                          ["note": evil])
            #expect(decided.string("decisionNote") == evil)
            let scanned = try server.checkIn(site.scanner, evil)
            #expect(scanned.isError(400, "BAD_REQUEST"))
            #expect(try server.history(site.ownerToken).first?["raw"] as? String == evil)
            #expect(try server.get("/api/visitors", token: site.ownerToken).items.count == 4)
            #expect(try server.get("/api/healthz").status == 200)
        }
    }

    @Test func unicodeIsStoredVerbatim() throws {
        try withSite { server, site in
            let names = ["Zoë 👩🏽‍💻 Ştefan", "李小龙", "Ελένη Παπαδοπούλου", "עִבְרִית", "e\u{301}mile (decomposed)",
                         "🇷🇴🏳️‍🌈", String(repeating: "👍🏽", count: 100)]
            for name in names {
                let visitor = try server.createVisitor(site.ownerToken, ["name": name, "company": name])
                let fetched = try server.visitor(visitor["id"], site.ownerToken)
                #expect(Array((fetched["name"] as? String ?? "").utf8) == Array(name.utf8), "\(name)")
                #expect(Array((fetched["company"] as? String ?? "").utf8) == Array(name.utf8), "\(name)")
            }
            // 201 characters are too many, however few they look.
            let tooMany = try server.post("/api/visitors", token: site.ownerToken, ["name": String(repeating: "👍🏽", count: 201)])
            Self.expectBadRequest(tooMany, naming: ["name"], "201 emoji")
            // And 200 emoji with a skin tone are 200 characters but 1,600 bytes: over the
            // byte limit (4 per character, issue 9), so no one fits more by stacking scalars.
            let tooLarge = try server.post("/api/visitors", token: site.ownerToken, ["name": String(repeating: "👍🏽", count: 200)])
            Self.expectBadRequest(tooLarge, naming: ["name"], "200 emoji of 8 bytes")
            let found = try server.get("/api/visitors?q=%E6%9D%8E%E5%B0%8F", token: site.ownerToken) // 李小
            #expect(found.items.count == 1)
        }
    }

    @Test func surroundingWhitespaceIsTrimmedAndBlankIsMissing() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "  Ana Pop \t", "company": "   "])
            #expect(visitor["name"] as? String == "Ana Pop" && visitor["company"] is NSNull)
            Self.expectBadRequest(try server.post("/api/visitors", token: site.ownerToken, ["name": " \t\n "]),
                                  naming: ["name"], "blank name")
        }
    }

    @Test(arguments: [("email", "not-an-email"), ("phone", "call me maybe"), ("phone", "12"), ("validFrom", "tomorrow"),
                      ("validUntil", "2026-02-30T00:00:00Z"), ("validFrom", "2026-11-29 08:00:00"),
                      ("approverId", "no-such-user"), ("validUntil", "2027-12-31T00:00:00Z")])
    func malformedValuesNameTheirField(_ field: String, _ value: String) throws {
        try withSite { server, site in
            let answer = try server.post("/api/visitors", token: site.ownerToken, ["name": "X", field: value])
            Self.expectBadRequest(answer, naming: [field], "\(field) = \(value)")
            #expect(try server.get("/api/visitors", token: site.ownerToken).items.isEmpty)
        }
    }

    // MARK: - Body limits

    /// A create-visitor body of exactly `size` bytes (padded with an unknown key).
    static func paddedBody(size: Int) -> [UInt8] {
        let prefix = "{\"name\":\"Padded\",\"padding\":\""
        let suffix = "\"}"
        return Array((prefix + String(repeating: "p", count: size - prefix.utf8.count - suffix.utf8.count) + suffix).utf8)
    }

    @Test func bodyOfExactly64KiBIsAcceptedAndOneMoreByteIsTooLarge() throws {
        try withSite { server, site in
            let exact = Self.paddedBody(size: 65_536)
            #expect(exact.count == 65_536)
            let accepted = try server.postRaw("/api/visitors", token: site.ownerToken, body: exact)
            #expect(accepted.status == 201 && accepted.string("name") == "Padded")
            let over = Self.paddedBody(size: 65_537)
            ignoreSIGPIPE()
            let refused = try server.postRaw("/api/visitors", token: site.ownerToken, body: over)
            #expect(refused.isError(413, "PAYLOAD_TOO_LARGE"))
            #expect(try server.get("/api/visitors", token: site.ownerToken).items.count == 1)
            // The limit holds before authentication too.
            #expect(try server.postRaw("/api/auth/send-otp", body: over).isError(413, "PAYLOAD_TOO_LARGE"))
        }
    }

    @Test func aMultiMegabyteBodyIsRefusedAndTheServerCarriesOn() throws {
        try withSite { server, site in
            ignoreSIGPIPE()
            let huge = Self.paddedBody(size: 8 << 20)
            let refused = try server.postRaw("/api/visitors", token: site.ownerToken, body: huge)
            #expect(refused.isError(413, "PAYLOAD_TOO_LARGE"))
            #expect(try server.get("/api/healthz").status == 200)
            #expect(try server.createVisitor(site.ownerToken)["status"] as? String == "EXPECTED")
            #expect(try server.get("/api/visitors", token: site.ownerToken).items.count == 1)
        }
    }

    /// A chunked upload has no Content-Length: the server counts as it reads.
    @Test func chunkedBodiesAreCountedToo() throws {
        try withSite { server, site in
            ignoreSIGPIPE()
            func chunked(_ body: [UInt8], chunk: Int) -> [UInt8] {
                var request = Array("""
                    POST /api/visitors HTTP/1.1\r
                    Host: 127.0.0.1\r
                    Authorization: Bearer \(site.ownerToken)\r
                    Content-Type: application/json\r
                    Transfer-Encoding: chunked\r
                    \r

                    """.utf8)
                var offset = 0
                while offset < body.count {
                    let piece = body[offset..<min(body.count, offset + chunk)]
                    request += Array((String(piece.count, radix: 16) + "\r\n").utf8) + piece + Array("\r\n".utf8)
                    offset += chunk
                }
                return request + Array("0\r\n\r\n".utf8)
            }
            let small = try server.client().sendRaw(chunked(Array("{\"name\":\"Chunked Person\"}".utf8), chunk: 5), method: "POST")
            #expect(small.status == 201 && small.string("name") == "Chunked Person")
            let exact = try server.client().sendRaw(chunked(Self.paddedBody(size: 65_536), chunk: 4096), method: "POST")
            #expect(exact.status == 201)
            let over = try server.client().sendRaw(chunked(Self.paddedBody(size: 65_537), chunk: 4096), method: "POST")
            #expect(over.isError(413, "PAYLOAD_TOO_LARGE"))
            let huge = try server.client().sendRaw(chunked(Self.paddedBody(size: 3 << 20), chunk: 65_536), method: "POST")
            #expect(huge.isError(413, "PAYLOAD_TOO_LARGE"))
            #expect(try server.get("/api/visitors", token: site.ownerToken).items.count == 2)
            #expect(try server.get("/api/healthz").status == 200)
        }
    }

    // MARK: - Routes and methods

    @Test(arguments: ["/api/nope", "/api/visitors/a/b/c", "/", "/api", "/api/visitors/", "/api//visitors", "/API/healthz",
                      "/api/visitor-scanner/lookup/", "/metrics/extra"])
    func unknownRoutesAreJSON404s(_ path: String) throws {
        try withSite { server, site in
            let anonymous = try server.get(path)
            #expect(anonymous.isError(404, "NOT_FOUND"), "\(path): \(anonymous.status) \(anonymous.text)")
            let authenticated = try server.post(path, token: site.ownerToken, ["name": "x"])
            #expect(authenticated.isError(404, "NOT_FOUND"), "\(path): \(authenticated.text)")
        }
    }

    @Test(arguments: [("DELETE", "/api/visitors", ["GET", "POST"]), ("PUT", "/api/healthz", ["GET"]),
                      ("GET", "/api/auth/logout", ["POST"]), ("GET", "/api/visitor-scanner/checkin", ["POST"]),
                      ("POST", "/api/visitors/abc", ["GET"]), ("PATCH", "/api/checkpoints", ["GET", "POST"]),
                      ("DELETE", "/metrics", ["GET"])])
    func wrongMethodsAre405WithAllow(_ method: String, _ path: String, _ allowed: [String]) throws {
        try withSite { server, site in
            let answer = try server.client().send(method, path, headers: ["Authorization": "Bearer \(site.ownerToken)"],
                                                  body: method == "GET" ? nil : Array("{}".utf8))
            #expect(answer.status == 405)
            #expect(answer.error?["code"] as? String != nil && !answer.errorMessage.isEmpty)
            #expect(answer.headers["content-type"]?.hasPrefix("application/json") == true)
            let allow = Set((answer.headers["allow"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(allow.isSuperset(of: allowed) && !allow.contains(method), "Allow: \(answer.headers["allow"] ?? "none")")
        }
    }
}
