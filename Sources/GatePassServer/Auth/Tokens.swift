import Foundation
import GatePassCore
import GatePassCrypto

enum Base64URLText {
    static func encode(_ text: String) -> String { Base64URL.encode(Array(text.utf8)) }
    static func decode(_ token: String) -> String? {
        Base64URL.decode(token).flatMap { String(validating: $0, as: UTF8.self) }
    }
}

/// The server secret: 32 random bytes kept in a file of mode 0600 beside the database
/// (or where configured), made on first start. It signs tokens and keys the OTP HMACs.
public struct ServerSecret: Sendable {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// Reads the secret at `path`, creating it (owner-only, `O_CREAT | O_EXCL`, mode 0600) if
    /// it does not exist.
    /// - Throws: `ConfigurationError` when the file cannot be read or made, does not hold a
    ///   secret, or may be read or written by its group or others (a leaked secret forges every token).
    public static func loadOrCreate(path: String) throws -> ServerSecret {
        let existing = open(path, O_RDONLY | O_CLOEXEC)
        if existing >= 0 {
            defer { close(existing) }
            var status = stat()
            guard fstat(existing, &status) == 0 else { throw ConfigurationError(message: "cannot read the secret file \(path)") }
            try PrivateFileMode.check(status, path: path, what: "the secret file",
                                      advice: " (and consider it leaked: delete it to make a new one, which ends every token)")
            let data = FileHandle(fileDescriptor: existing, closeOnDealloc: false).readDataToEndOfFile()
            guard let text = String(data: data, encoding: .utf8),
                  let bytes = Base64URL.decode(text.trimmingCharacters(in: .whitespacesAndNewlines)), bytes.count >= 32
            else { throw ConfigurationError(message: "\(path) does not hold a Gate Pass secret (delete it to make a new one; every token then ends)") }
            return ServerSecret(bytes: bytes)
        }
        guard errno == ENOENT else {
            throw ConfigurationError(message: "cannot read the secret file \(path): \(String(cString: strerror(errno)))")
        }
        let bytes = try SecureRandom.bytes(32)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw ConfigurationError(message: "cannot create the secret file \(path)") }
        defer { close(descriptor) }
        let text = Array((Base64URL.encode(bytes) + "\n").utf8)
        guard write(descriptor, text, text.count) == text.count, fsync(descriptor) == 0 else {
            throw ConfigurationError(message: "cannot write the secret file \(path)")
        }
        return ServerSecret(bytes: bytes)
    }

    /// A key derived for one purpose, so a token signature can never double as an OTP HMAC.
    func key(for purpose: String) -> [UInt8] { HMACSHA256.authenticate(key: bytes, message: "gatepass:" + purpose) }
}

/// What a token says about itself; the session behind it is checked on every request.
struct TokenClaims: Equatable {
    enum Kind: String {
        case login = "l", scanner = "s"

        /// The kind as the sessions table names it.
        init?(storedName: String) {
            switch storedName {
            case "login": self = .login
            case "scanner": self = .scanner
            default: return nil
            }
        }
    }
    var kind: Kind
    var sessionId: String
    var expiresAt: Int64 // seconds since 1970
}

/// Text fields signed with one key: `<prefix><base64url "f1:f2:…">.<base64url HMAC-SHA256>`.
/// The prefix is covered by the signature, and each use has its own key (`ServerSecret.key(for:)`),
/// so a value signed for one use never verifies for another.
struct SignedFields: Sendable {
    let prefix: String
    private let key: [UInt8]

    init(prefix: String, key: [UInt8]) {
        self.prefix = prefix
        self.key = key
    }

    /// - Precondition: no field contains `:` (ids, numbers and base64url never do).
    func sign(_ fields: [String]) -> String {
        precondition(!fields.contains { $0.contains(":") }, "a signed field may not contain ':'")
        let payload = prefix + Base64URLText.encode(fields.joined(separator: ":"))
        return payload + "." + Base64URL.encode(HMACSHA256.authenticate(key: key, message: payload))
    }

    /// The fields of a well-signed value with exactly `count` fields, or nil.
    func verify(_ value: String, count: Int) -> [String]? {
        guard value.utf8.count <= 512, value.hasPrefix(prefix), let dot = value.lastIndex(of: ".") else { return nil }
        let payload = String(value[..<dot])
        guard let signature = Base64URL.decode(value[value.index(after: dot)...]),
              constantTimeEquals(signature, HMACSHA256.authenticate(key: key, message: payload)),
              let text = Base64URLText.decode(String(payload.dropFirst(prefix.count)))
        else { return nil }
        let fields = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        return fields.count == count ? fields : nil
    }
}

/// Signs and verifies bearer tokens: `gp1.<base64url payload>.<base64url HMAC-SHA256>`.
struct TokenSigner: Sendable {
    private let signed: SignedFields

    init(secret: ServerSecret) { signed = SignedFields(prefix: "gp1.", key: secret.key(for: "token")) }

    func sign(_ claims: TokenClaims) -> String {
        signed.sign([claims.kind.rawValue, claims.sessionId, String(claims.expiresAt)])
    }

    /// The claims of a well-signed token, or nil. Expiry is checked by the caller against its clock.
    func verify(_ token: String) -> TokenClaims? {
        guard let fields = signed.verify(token, count: 3), let kind = TokenClaims.Kind(rawValue: fields[0]),
              let expiresAt = Int64(fields[2])
        else { return nil }
        return TokenClaims(kind: kind, sessionId: fields[1], expiresAt: expiresAt)
    }
}

/// Who is calling, once the token and its session have been checked.
///
/// A kiosk's credential (api.md `POST /api/visitor-scanner/enrol`) is bound to its gate, not to
/// a person: its `user` is the admin who made the enrolment code, kept only for what needs a
/// user row (the organization, the idempotency scope, a scan's `scannedBy`); the kiosk's own
/// rights are a scanner token's, and its changes are audited as actor `kiosk`.
struct Principal: Sendable {
    enum Credential: Sendable {
        case login
        case scanner(checkpointId: String)
        case kiosk(kioskId: String, checkpointId: String)
    }
    var user: Profile
    var sessionId: String
    /// When the session behind the token ends (its event streams end then too).
    var sessionExpiresAt: Date
    var credential: Credential

    var kind: PrincipalKind {
        switch credential {
        case .login: user.principalKind
        case .scanner, .kiosk: .scanner
        }
    }

    var organizationId: String { user.organizationId }
    /// Idempotency keys are scoped to the organization and the user behind the token.
    var idempotencyScope: String { user.organizationId + "/" + user.id }
    /// The kiosk behind a kiosk's credential (its scans are named by its label).
    var kioskId: String? {
        if case .kiosk(let id, _) = credential { return id }
        return nil
    }
    var checkpointId: String? {
        switch credential {
        case .login: nil
        case .scanner(let id), .kiosk(_, let id): id
        }
    }
    /// The kind of token the session was made for.
    var tokenKind: TokenClaims.Kind {
        switch credential {
        case .login: .login
        case .scanner, .kiosk: .scanner
        }
    }
}

/// Sessions: one per login and per scanner token, revoked on logout.
enum Sessions {
    static func create(userId: String, kind: TokenClaims.Kind, parent: String?, checkpointId: String?,
                       now: Date, lifetime: Int, _ tx: any Transaction) throws -> TokenClaims {
        let id = newIdentifier()
        let expiresAt = now.addingTimeInterval(TimeInterval(lifetime))
        try tx.sessions.insert(id: id, userId: userId, kind: kind, parent: parent, checkpointId: checkpointId,
                               createdAt: now, expiresAt: expiresAt)
        return TokenClaims(kind: kind, sessionId: id, expiresAt: Int64(expiresAt.timeIntervalSince1970.rounded(.down)))
    }

    /// The principal behind a verified token, or nil when its session is unknown, revoked or expired.
    /// The session was read strictly first (see `SessionRepository.find`), perhaps earlier
    /// (`SessionCache`), and is judged now, against `now`.
    static func principal(for claims: TokenClaims, session: StoredSession?, now: Date) throws -> Principal? {
        guard let session, session.kind == claims.kind else { return nil }
        if session.revokedAt != nil, let reason = session.revokedReason { throw RevokedCredential(reason: reason) }
        // A kiosk is not a person's: the disable of the admin who enrolled it does not stop it.
        let isKiosk = if case .kiosk = session.credential { true } else { false }
        guard session.revokedAt == nil, session.expiresAt.milliseconds > now.milliseconds, isKiosk || !session.userDisabled
        else { return nil }
        return Principal(user: session.user, sessionId: claims.sessionId, sessionExpiresAt: session.expiresAt,
                         credential: session.credential)
    }

    /// Ends a login session and every scanner token it created.
    static func revoke(loginSession id: String, now: Date, _ tx: any Transaction) throws {
        try tx.sessions.revoke(loginSession: id, at: now)
    }

    /// Ends every login session and scanner token of a user (it was disabled); kiosks it
    /// enrolled go on.
    static func revoke(sessionsOfUser userId: String, now: Date, _ tx: any Transaction) throws {
        try tx.sessions.revoke(sessionsOfUser: userId, at: now)
    }
}

/// A scanner token an admin revoked, or whose checkpoint was retired: its next request is
/// 401 `REVOKED`, which tells the kiosk not to renew it (api.md "Conventions").
struct RevokedCredential: Error, Sendable, Equatable {
    var reason: RevocationReason
}

/// Why a scanner session was ended by someone other than its holder (`sessions.revoked_reason`).
enum RevocationReason: String, Sendable {
    case admin, retired

    /// What the kiosk shows (api.md: "this kiosk was signed out by an admin").
    var message: String {
        switch self {
        case .admin: "this kiosk was signed out by an admin; enrol it again with a new code"
        case .retired: "this kiosk's checkpoint was retired by an admin; enrol it again at another checkpoint"
        }
    }
}
