import Foundation
import GatePassAPI
import GatePassCore

/// A typed client for every route of api.md.
///
/// Answers are decoded strictly into the domain's shapes; a decoding error names the field.
/// Failures are sorted into `ClientError`'s taxonomy: offline, transient (5xx, timeout),
/// unauthorized (401), rate limited (429, with its `Retry-After`), permanent (other 4xx with the
/// server's code; a 409 with `Retry-After` is transient), decoding.
public struct APIClient: Sendable {
    public let baseURL: String
    let transport: any HTTPTransport

    /// - Parameter baseURL: the server, e.g. `https://gate.example.com` (no trailing slash needed).
    public init(baseURL: String, transport: any HTTPTransport) {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.transport = transport
    }

    // MARK: - Raw requests

    /// Sends one request to `endpoint` and sorts the outcome; 2xx answers are returned as they are.
    ///
    ///     try api.send(.visitorsCancel, visitorId, token: token, body: Array("{}".utf8))
    ///
    /// - Parameters:
    ///   - parameters: one value per path parameter of the endpoint, in order (percent-encoded here).
    ///   - query: appended percent-encoded; items whose value is nil are left out.
    public func send(_ endpoint: Endpoint, _ parameters: String..., query: [(String, String?)] = [], token: String? = nil,
                     body: [UInt8]? = nil, idempotencyKey: String? = nil,
                     headers extra: [(name: String, value: String)] = []) throws(ClientError) -> HTTPResponse {
        try send(endpoint.method.rawValue, url: baseURL + endpoint.path(values: parameters, query: query), token: token,
                 body: body, idempotencyKey: idempotencyKey, headers: extra)
    }

    /// Like `send(_:_:…)`, with a method and a full URL (outbox entries store theirs).
    public func send(_ method: String, url: String, token: String? = nil, body: [UInt8]? = nil,
                     idempotencyKey: String? = nil, headers extra: [(name: String, value: String)] = []) throws(ClientError) -> HTTPResponse {
        var headers: [(name: String, value: String)] = [("Accept", "application/json")]
        if body != nil { headers.append(("Content-Type", "application/json")) }
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        if let idempotencyKey { headers.append(("Idempotency-Key", idempotencyKey)) }
        headers += extra
        let response: HTTPResponse
        do {
            response = try transport.perform(HTTPRequest(method: method, url: url, headers: headers, body: body))
        } catch {
            throw ClientError.from(error)
        }
        try Self.check(response)
        return response
    }

    /// Throws the taxonomy's error for a non-2xx answer.
    static func check(_ response: HTTPResponse) throws(ClientError) {
        guard !(200..<300).contains(response.status) else { return }
        let detail = try? JSONDecoder().decode(APIErrorBody.self, from: Data(response.body)).error
        let code = detail?.code ?? "HTTP_\(response.status)"
        let message = detail?.message ?? "the server answered \(response.status)"
        switch response.status {
        case 401 where code == "REVOKED": throw .revoked(message)
        case 401: throw .unauthorized(message)
        case 500...: throw .transient(status: response.status, message: message)
        // A conflict that says when to come back is not final (a request with its key still in
        // progress, a lost race): retried, never dead-lettered.
        case 409 where response.headers["retry-after"] != nil: throw .transient(status: response.status, message: message)
        // Asked too often (a limit, the login's throttle): wait and send again.
        case 429:
            let seconds = response.headers["retry-after"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            throw .rateLimited(retryAfterSeconds: seconds.map { max(0, $0) }, message: message)
        case 400..<500: throw .permanent(status: response.status, code: code, message: message)
        default: throw .transient(status: response.status, message: "unexpected status \(response.status)")
        }
    }

    /// Sends `json` (if any) to `endpoint` and decodes the answer strictly as `T`.
    func request<T: Decodable>(_ type: T.Type, _ endpoint: Endpoint, _ parameters: String..., query: [(String, String?)] = [],
                               token: String?, json: (any Encodable)? = nil, idempotencyKey: String? = nil) throws(ClientError) -> T {
        let body: [UInt8]? = json.map { CanonicalJSON.encode($0) }
        let response = try send(endpoint.method.rawValue, url: baseURL + endpoint.path(values: parameters, query: query),
                                token: token, body: body, idempotencyKey: idempotencyKey)
        return try Self.decode(T.self, from: response.body)
    }

    /// Strict decoding with an error that names the field (`items[3].shortId is missing`).
    public static func decode<T: Decodable>(_ type: T.Type, from body: [UInt8]) throws(ClientError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch let error as DecodingError {
            throw .decoding(describe(error))
        } catch {
            throw .decoding("the answer is not JSON")
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            let all = keys + (last.map { [$0] } ?? [])
            guard !all.isEmpty else { return "the answer" }
            var text = ""
            for key in all {
                if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
            return text
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context.codingPath, key)) is missing"
        case .typeMismatch(let type, let context): return "\(path(context.codingPath)) is not of type \(type)"
        case .valueNotFound(let type, let context): return "\(path(context.codingPath)) is null, expected \(type)"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "the answer is not JSON" : "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default: return "the answer could not be read"
        }
    }

    // MARK: - Auth

    public func sendOTP(email: String) throws(ClientError) {
        _ = try send(.authSendOTP, body: CanonicalJSON.encode(["email": email]))
    }

    public func verifyOTP(email: String, otp: String) throws(ClientError) -> LoginAnswer {
        try request(LoginAnswer.self, .authVerifyOTP, token: nil, json: ["email": email, "otp": otp])
    }

    /// The code a development server (`--dev`) holds for `email`; a production server answers 404.
    public func devPeekOTP(email: String) throws(ClientError) -> String {
        struct Answer: Decodable { var otp: String }
        return try request(Answer.self, .authDevPeekOTP, query: [("email", email)], token: nil).otp
    }

    public func me(token: String) throws(ClientError) -> Profile {
        try request(Profile.self, .authMe, token: token)
    }

    public func logout(token: String) throws(ClientError) {
        _ = try send(.authLogout, token: token, body: Array("{}".utf8))
    }

    public func adminMe(token: String) throws(ClientError) -> AdminProfile {
        try request(AdminProfile.self, .visitorsAdminMe, token: token)
    }

    // MARK: - Visitors

    /// - Parameters:
    ///   - from, to: days (`YYYY-MM-DD`, the site's zone): visitors whose validity overlaps them.
    public func visitors(token: String, status: VisitorStatus? = nil, search: String? = nil, from: String? = nil,
                         to: String? = nil, limit: Int? = nil, cursor: String? = nil,
                         organizationId: String? = nil) throws(ClientError) -> Page<Visitor> {
        try request(Page<Visitor>.self, .visitorsList, query: [
            ("status", status?.rawValue), ("q", search), ("from", from), ("to", to), ("limit", limit.map(String.init)),
            ("cursor", cursor), ("organizationId", organizationId),
        ], token: token)
    }

    public struct NewVisitor: Encodable, Sendable {
        public var name: String
        public var email: String?
        public var phone: String?
        public var company: String?
        public var purpose: String?
        public var hostName: String?
        public var hostEmail: String?
        public var approverId: String?
        public var requiresApproval: Bool?
        public var validFrom: Timestamp?
        public var validUntil: Timestamp?
        /// Queue the invitation mail with the creation.
        public var invite: Bool?
        /// Register them even though they match the blocklist (api.md "Blocklist").
        public var confirmBlocked: Bool?

        public init(name: String, email: String? = nil, phone: String? = nil, company: String? = nil, purpose: String? = nil,
                    hostName: String? = nil, hostEmail: String? = nil, approverId: String? = nil,
                    requiresApproval: Bool? = nil, validFrom: Timestamp? = nil, validUntil: Timestamp? = nil,
                    invite: Bool? = nil, confirmBlocked: Bool? = nil) {
            self.name = name; self.email = email; self.phone = phone; self.company = company; self.purpose = purpose
            self.hostName = hostName; self.hostEmail = hostEmail; self.approverId = approverId
            self.requiresApproval = requiresApproval; self.validFrom = validFrom; self.validUntil = validUntil
            self.invite = invite; self.confirmBlocked = confirmBlocked
        }
    }

    public func createVisitor(token: String, _ visitor: NewVisitor, idempotencyKey: String? = nil) throws(ClientError) -> Visitor {
        try request(Visitor.self, .visitorsCreate, token: token, json: visitor, idempotencyKey: idempotencyKey)
    }

    public func visitor(token: String, id: String) throws(ClientError) -> Visitor {
        try request(Visitor.self, .visitorsGet, id, token: token)
    }

    public func cancelVisitor(token: String, id: String, idempotencyKey: String? = nil) throws(ClientError) -> Visitor {
        try request(Visitor.self, .visitorsCancel, id, token: token, json: [String: String](), idempotencyKey: idempotencyKey)
    }

    public func passSVG(token: String, id: String) throws(ClientError) -> String {
        let response = try send(.visitorsPass, id, token: token)
        return String(decoding: response.body, as: UTF8.self)
    }

    /// The endpoint that approves or rejects for `role` (its one parameter is the visitor's
    /// id): approvers use their own routes, owners and admins the `-scan` routes.
    public static func decisionEndpoint(_ decision: ApprovalDecision, role: Role) -> Endpoint {
        switch (decision, role == .approver) {
        case (.approve, true): .approverApprove
        case (.reject, true): .approverReject
        case (.approve, false): .visitorsApprove
        case (.reject, false): .visitorsReject
        }
    }

    /// The path that approves or rejects `visitorId` for `role`.
    public static func decisionPath(_ decision: ApprovalDecision, visitorId: String, role: Role) -> String {
        decisionEndpoint(decision, role: role).path(visitorId)
    }

    // MARK: - Approver

    public func approverMe(token: String) throws(ClientError) -> Profile {
        try request(Profile.self, .approverMe, token: token)
    }

    public func approvalQueue(token: String, limit: Int? = nil, cursor: String? = nil) throws(ClientError) -> Page<Visitor> {
        try request(Page<Visitor>.self, .approverList, query: [
            ("status", VisitorStatus.awaitingApproval.rawValue), ("limit", limit.map(String.init)), ("cursor", cursor),
        ], token: token)
    }

    public func approverVisitor(token: String, id: String) throws(ClientError) -> VisitorWithContext {
        try request(VisitorWithContext.self, .approverGet, id, token: token)
    }

    /// The role's route that registers (or unregisters) this device's push token
    /// (PLATFORM_ADMIN and HOST have none: nil).
    public static func deviceEndpoint(role: Role, register: Bool) -> Endpoint? {
        switch role {
        case .owner, .admin: register ? .visitorsDeviceRegister : .visitorsDeviceUnregister
        case .approver: register ? .approverDeviceRegister : .approverDeviceUnregister
        // A HOST is sent no organization-wide events, so no pushes either.
        case .platformAdmin, .host: nil
        }
    }

    public func registerDevice(token: String, role: Role, deviceToken: String, platform: String) throws(ClientError) -> Device? {
        guard let endpoint = Self.deviceEndpoint(role: role, register: true) else { return nil }
        return try request(Device.self, endpoint, token: token, json: ["token": deviceToken, "platform": platform])
    }

    public func unregisterDevice(token: String, role: Role, deviceToken: String) throws(ClientError) {
        guard let endpoint = Self.deviceEndpoint(role: role, register: false) else { return }
        _ = try send(endpoint, token: token, body: CanonicalJSON.encode(["token": deviceToken]))
    }

    // MARK: - Scanner

    /// A new scanner token. `previous`: the scanner token this device held, which the new one
    /// continues (the server judges the device's offline claims by what `/expected` told it).
    public func scannerToken(token: String, checkpointId: String? = nil, previous: String? = nil) throws(ClientError)
        -> ScannerTokenAnswer {
        var body: [String: String] = [:]
        if let checkpointId { body["checkpointId"] = checkpointId }
        if let previous { body["previousScannerToken"] = previous }
        return try request(ScannerTokenAnswer.self, .scannerToken, token: token, json: body)
    }

    public func stats(token: String, checkpointId: String? = nil) throws(ClientError) -> ScanStats {
        try request(ScanStats.self, .scannerStats, query: [("checkpointId", checkpointId)], token: token)
    }

    public struct HistoryFilter: Sendable {
        public var from: Date?
        public var to: Date?
        public var result: ScanResult?
        public var checkpointId: String?
        public init(from: Date? = nil, to: Date? = nil, result: ScanResult? = nil, checkpointId: String? = nil) {
            self.from = from; self.to = to; self.result = result; self.checkpointId = checkpointId
        }
        var queryItems: [(String, String?)] {
            [("from", from.map { Timestamp($0).description }), ("to", to.map { Timestamp($0).description }),
             ("result", result?.rawValue), ("checkpointId", checkpointId)]
        }
    }

    public func scanHistory(token: String, filter: HistoryFilter = HistoryFilter(), limit: Int? = nil,
                            cursor: String? = nil) throws(ClientError) -> Page<Scan> {
        try request(Page<Scan>.self, .scannerHistory,
                    query: filter.queryItems + [("limit", limit.map(String.init)), ("cursor", cursor)], token: token)
    }

    public func scanHistoryCSV(token: String, filter: HistoryFilter = HistoryFilter()) throws(ClientError) -> String {
        let response = try send(.adminHistoryCSV, query: filter.queryItems, token: token)
        return String(decoding: response.body, as: UTF8.self)
    }

    public func checkIn(scannerToken: String, code: String, confirmApprovalRequest: Bool = false,
                        idempotencyKey: String? = nil) throws(ClientError) -> CheckInAnswer {
        try request(CheckInAnswer.self, .scannerCheckIn, token: scannerToken,
                    json: CheckInBody(shortId: code, confirmApprovalRequest: confirmApprovalRequest),
                    idempotencyKey: idempotencyKey)
    }

    public func checkOut(scannerToken: String, code: String, idempotencyKey: String? = nil) throws(ClientError) -> CheckOutAnswer {
        try request(CheckOutAnswer.self, .scannerCheckOut, token: scannerToken,
                    json: ["shortId": code], idempotencyKey: idempotencyKey)
    }

    public func lookup(scannerToken: String, query: String) throws(ClientError) -> Page<Visitor> {
        try request(Page<Visitor>.self, .scannerLookup, query, token: scannerToken)
    }

    public func onSite(scannerToken: String, limit: Int? = nil, cursor: String? = nil) throws(ClientError) -> Page<Visitor> {
        try request(Page<Visitor>.self, .scannerOnSite,
                    query: [("limit", limit.map(String.init)), ("cursor", cursor)], token: scannerToken)
    }

    public func expected(scannerToken: String, since: String? = nil) throws(ClientError) -> ExpectedPasses {
        try request(ExpectedPasses.self, .scannerExpected, query: [("since", since)], token: scannerToken)
    }

    /// The organization's pass keys (public halves), for checking GP2 signatures offline.
    public func passKeys(token: String) throws(ClientError) -> PassKeyList {
        try request(PassKeyList.self, .scannerPassKeys, token: token)
    }

    public func checkpoints(token: String) throws(ClientError) -> Page<Checkpoint> {
        try request(Page<Checkpoint>.self, .checkpointsList, token: token)
    }

    public func createCheckpoint(token: String, name: String) throws(ClientError) -> Checkpoint {
        try request(Checkpoint.self, .checkpointsCreate, token: token, json: ["name": name])
    }

    // MARK: - Operations

    /// Whether the server answers its health check.
    public func isHealthy() -> Bool {
        (try? send(.healthz)) != nil
    }
}

/// The body of a check-in, as the kiosk and the outbox send it.
public struct CheckInBody: Codable, Sendable, Equatable {
    public var shortId: String
    public var confirmApprovalRequest: Bool
    public var offline: Bool?
    public var scannedAt: Timestamp?
    /// What the kiosk decided offline (api.md "Offline passes"), for a replay of an offline scan.
    public var offlineDecision: ScanResult?

    public init(shortId: String, confirmApprovalRequest: Bool, offline: Bool? = nil, scannedAt: Timestamp? = nil,
                offlineDecision: ScanResult? = nil) {
        self.shortId = shortId
        self.confirmApprovalRequest = confirmApprovalRequest
        self.offline = offline
        self.scannedAt = scannedAt
        self.offlineDecision = offlineDecision
    }
}
