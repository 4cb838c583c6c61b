import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

typealias HTTPAnswer = LoopbackHTTPClient.Response

/// Whether a pass form's QR codes are exactly one GP2 text of the pass `shortId` (its
/// signature is checked against the site's keys in OfflinePassTests).
func isSignedPass(_ texts: [String], shortId: String) -> Bool {
    texts.count == 1 && SignedPassText(parsing: texts[0])?.shortId.rawValue == shortId
}

// MARK: - Shapes of api.md

enum Shape {
    static let visitor: Set<String> = [
        "id", "shortId", "name", "email", "phone", "company", "purpose", "hostName", "hostEmail", "approverId",
        "requiresApproval", "walkIn", "status", "validFrom", "validUntil", "createdAt", "approvalRequestedAt",
        "decidedAt", "decidedBy", "decisionNote", "checkedInAt", "checkedOutAt", "checkpointId",
    ]
    static let profile: Set<String> = ["id", "email", "name", "role", "organizationId", "canScanCheckpoint"]
    static let scan: Set<String> = [
        "id", "shortId", "raw", "result", "visitorId", "checkpointId", "scannedBy", "scannedAt", "receivedAt", "offline",
        "offlineDecision",
    ]
    static let device: Set<String> = ["token", "platform", "userId", "createdAt", "lastSeenAt"]
    static let list: Set<String> = ["items", "nextCursor"]
    static let stats: Set<String> = ["checkedInToday", "checkedOutToday", "awaitingApproval", "expectedToday", "onSite"]
}

/// The clock every server of these tests starts at (TestSupport's `withTestServer`).
let testStart = Timestamp.parse("2026-11-29T12:00:00Z")!

func iso(_ date: Date) -> String { Timestamp.format(date) }
func date(_ text: Any?) -> Date? { (text as? String).flatMap(Timestamp.parse) }

/// A client writing a body the server closes on (413 before the body is read) must not die of SIGPIPE.
func ignoreSIGPIPE() { signal(SIGPIPE, SIG_IGN) }

// MARK: - Responses

extension LoopbackHTTPClient.Response {
    var error: [String: Any]? { json?["error"] as? [String: Any] }
    var errorCode: String? { error?["code"] as? String }
    var errorMessage: String { error?["message"] as? String ?? "" }
    var items: [[String: Any]] { json?["items"] as? [[String: Any]] ?? [] }
    var keys: Set<String> { Set(json?.keys.map { $0 } ?? []) }
    func string(_ key: String) -> String? { json?[key] as? String }
    var visitor: [String: Any] { json?["visitor"] as? [String: Any] ?? [:] }
    /// The whole body parsed as any JSON value.
    var anyJSON: Any? { try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) }

    /// Whether this is exactly api.md's error shape with `code`.
    func isError(_ status: Int, _ code: String) -> Bool {
        guard self.status == status, let json, json.count == 1, let error, error.count == 2,
              error["code"] as? String == code, let message = error["message"] as? String, !message.isEmpty,
              headers["content-type"]?.hasPrefix("application/json") == true
        else { return false }
        return true
    }
}

/// Ids of a list answer's items.
func ids(_ items: [[String: Any]]) -> [String] { items.compactMap { $0["id"] as? String } }

// MARK: - Server helpers

extension TestServer {
    func post(_ path: String, token: String? = nil, _ body: Any = [String: Any](),
              headers: [String: String] = [:]) throws -> HTTPAnswer {
        try client().send("POST", path, token: token, headers: headers, json: body)
    }

    /// A POST with raw body bytes (malformed JSON and the like).
    func postRaw(_ path: String, token: String? = nil, body: [UInt8]?, headers: [String: String] = [:]) throws -> HTTPAnswer {
        var all = headers
        all["Content-Type"] = all["Content-Type"] ?? "application/json"
        if let token { all["Authorization"] = "Bearer \(token)" }
        return try client().send("POST", path, headers: all, body: body)
    }

    func get(_ path: String, token: String? = nil, headers: [String: String] = [:]) throws -> HTTPAnswer {
        try client().get(path, token: token, headers: headers)
    }

    /// Asks for a code and reads it back through dev-peek-otp (dev mode only).
    func requestCode(_ email: String) throws -> String {
        let sent = try post("/api/auth/send-otp", ["email": email])
        guard sent.status == 202 else { throw TestFailure("send-otp answered \(sent.status): \(sent.text)") }
        let peek = try get("/api/auth/dev-peek-otp?email=\(email)")
        guard let otp = peek.string("otp") else { throw TestFailure("no dev code: \(peek.text)") }
        return otp
    }

    /// The whole verify-otp answer of a fresh login (moves the clock past the resend throttle afterwards).
    func loginAnswer(_ email: String) throws -> [String: Any] {
        let code = try requestCode(email)
        let verified = try post("/api/auth/verify-otp", ["email": email, "otp": code])
        guard verified.status == 200, let json = verified.json else {
            throw TestFailure("verify-otp answered \(verified.status): \(verified.text)")
        }
        clock.advance(by: 31)
        return json
    }

    /// The whole answer of POST /api/visitor-scanner/token.
    func scannerTokenAnswer(_ loginToken: String, checkpointId: String? = nil) throws -> [String: Any] {
        var body: [String: Any] = [:]
        if let checkpointId { body["checkpointId"] = checkpointId }
        let response = try post("/api/visitor-scanner/token", token: loginToken, body)
        guard response.status == 201, let json = response.json else {
            throw TestFailure("scanner token answered \(response.status): \(response.text)")
        }
        return json
    }

    func checkIn(_ scanner: String, _ shortId: String, _ extra: [String: Any] = [:], headers: [String: String] = [:]) throws -> HTTPAnswer {
        var body: [String: Any] = ["shortId": shortId]
        body.merge(extra) { $1 }
        return try post("/api/visitor-scanner/checkin", token: scanner, body, headers: headers)
    }

    func checkOut(_ scanner: String, _ shortId: String) throws -> HTTPAnswer {
        try post("/api/visitor-scanner/checkout", token: scanner, ["shortId": shortId])
    }

    /// The scan history (first page, up to 500) as `token` sees it.
    func history(_ token: String, _ query: String = "") throws -> [[String: Any]] {
        let response = try get("/api/visitor-scanner/scan-history?limit=500" + (query.isEmpty ? "" : "&" + query), token: token)
        guard response.status == 200 else { throw TestFailure("scan-history answered \(response.status): \(response.text)") }
        return response.items
    }

    /// GET /api/visitors/:id as `token`.
    func visitor(_ id: Any?, _ token: String) throws -> [String: Any] {
        let response = try get("/api/visitors/\(id as? String ?? "")", token: token)
        guard response.status == 200, let json = response.json else {
            throw TestFailure("get visitor answered \(response.status): \(response.text)")
        }
        return json
    }

    /// Every page of a list route, following nextCursor.
    func allPages(_ path: String, token: String, limit: Int) throws -> (items: [[String: Any]], pages: Int) {
        var items: [[String: Any]] = []
        var cursor: String?
        var pages = 0
        repeat {
            let separator = path.contains("?") ? "&" : "?"
            var url = path + separator + "limit=\(limit)"
            if let cursor { url += "&cursor=\(cursor)" }
            let response = try get(url, token: token)
            guard response.status == 200 else { throw TestFailure("\(url) answered \(response.status): \(response.text)") }
            items += response.items
            cursor = response.json?["nextCursor"] as? String
            pages += 1
            if pages > 1000 { throw TestFailure("\(path): the cursor never ends") }
        } while cursor != nil
        return (items, pages)
    }

    /// Creates an organization with one user per role, each logged in, and a scanner token
    /// (the owner's, default checkpoint).
    func makeSite(_ organization: String = "Acme", domain: String = "acme.test") throws -> Site {
        let owner = try addUser("owner@\(domain)", role: .owner, organization: organization, name: "Olga Owner")
        let admin = try addUser("admin@\(domain)", role: .admin, organization: organization, name: "Adam Admin")
        let approver = try addUser("approver@\(domain)", role: .approver, organization: organization, canScan: true,
                                   name: "Ana Approver")
        let desk = try addUser("desk@\(domain)", role: .approver, organization: organization, name: "Dan Desk")
        let ownerToken = try login(owner.email)
        let scanner = try scannerTokenAnswer(ownerToken)
        let checkpoint = scanner["checkpoint"] as? [String: Any]
        return Site(organization: organization, domain: domain,
                    owner: owner, ownerToken: ownerToken,
                    admin: admin, adminToken: try login(admin.email),
                    approver: approver, approverToken: try login(approver.email),
                    desk: desk, deskToken: try login(desk.email),
                    scanner: scanner["scannerToken"] as? String ?? "",
                    mainGate: checkpoint?["id"] as? String ?? "")
    }
}

/// One organization's users, logged in.
struct Site {
    var organization: String
    var domain: String
    var owner: Profile
    var ownerToken: String
    var admin: Profile
    var adminToken: String
    /// An APPROVER with canScanCheckpoint.
    var approver: Profile
    var approverToken: String
    /// An APPROVER without canScanCheckpoint.
    var desk: Profile
    var deskToken: String
    /// A scanner token made by the owner at "Main gate".
    var scanner: String
    var mainGate: String
    var organizationId: String { owner.organizationId }
}

/// A test server whose "today" is a UTC day (tests do not depend on the machine's zone).
func withServer<T>(devMode: Bool = true, configure: (inout ServerConfiguration) -> Void = { _ in },
                   _ body: (TestServer) throws -> T) throws -> T {
    try withTestServer(devMode: devMode, configure: { configuration in
        configuration.timeZone = "UTC"
        configure(&configuration)
    }, body)
}

/// A server with one site set up.
func withSite<T>(devMode: Bool = true, configure: (inout ServerConfiguration) -> Void = { _ in },
                 _ body: (TestServer, Site) throws -> T) throws -> T {
    try withServer(devMode: devMode, configure: configure) { server in
        try body(server, try server.makeSite())
    }
}

/// Runs `body` on `count` threads at once and returns their results in index order. Each
/// body prepares what it needs (its own client, a warm connection), then calls `startGate`,
/// which returns only when every thread has reached it.
func runConcurrently<T: Sendable>(_ count: Int,
                                  _ body: @escaping @Sendable (_ index: Int, _ startGate: () -> Void) throws -> T)
    -> [Result<T, any Error>] {
    let results = Locked<[Int: Result<T, any Error>]>([:])
    let ready = DispatchSemaphore(value: 0)
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for index in 0..<count {
        done.enter()
        let thread = Thread {
            var waited = false
            let gate = {
                guard !waited else { return }
                waited = true
                ready.signal()
                start.wait()
            }
            let result = Result { try body(index, gate) }
            gate()
            results.withLock { $0[index] = result }
            done.leave()
        }
        thread.start()
    }
    for _ in 0..<count { ready.wait() }
    for _ in 0..<count { start.signal() }
    done.wait()
    return results.withLock { all in (0..<count).map { all[$0]! } }
}
