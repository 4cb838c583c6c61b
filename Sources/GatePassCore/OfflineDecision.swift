import Foundation

/// What a kiosk may decide by itself while the server does not answer (`gatepass kiosk
/// --offline-policy`).
public enum OfflinePolicy: String, Codable, Sendable, CaseIterable {
    /// Nothing is judged offline: every pass is refused (`NOT_FOUND`) until the server answers.
    case deny
    /// Only passes in the kiosk's cache are judged, through the server's decision table.
    case cachedOnly = "cached-only"
    /// Cached passes as `cachedOnly`; a GP2 pass not in the cache by its signature, window and
    /// the revocation list (never one signed with an `approval` key).
    case signed
}

/// What the kiosk knows when the server does not answer: the day's passes and revocations
/// from `/expected`, the organization's pass keys, and what it admitted itself since then.
public struct OfflineCacheSnapshot: Sendable, Equatable {
    public var visitors: [ShortID: Visitor]
    /// Passes revoked since they were cached (cancelled, blocked): refused offline.
    public var revoked: Set<ShortID>
    public var keys: [PassKey]
    /// Short ids this kiosk admitted offline since its last sync: a second scan of one is
    /// `ALREADY_CHECKED_IN`, even where the cache does not know the visitor.
    public var admittedSinceSync: Set<ShortID>

    public init(visitors: [ShortID: Visitor] = [:], revoked: Set<ShortID> = [], keys: [PassKey] = [],
                admittedSinceSync: Set<ShortID> = []) {
        self.visitors = visitors; self.revoked = revoked; self.keys = keys; self.admittedSinceSync = admittedSinceSync
    }
}

/// A kiosk's decision without the server, and what it rests on.
public struct OfflineDecision: Sendable, Equatable {
    public enum Basis: String, Codable, Sendable {
        /// The cached visitor, through the server's decision table.
        case cachedVisitor = "cached-visitor"
        /// A GP2 pass not in the cache: its signature, window and the revocation list.
        case signature
        /// Nothing to judge by: the text is not a pass, its signature failed, or the policy or
        /// the cache left the kiosk without anything to go on.
        case none
    }

    public var result: ScanResult
    public var basis: Basis
    /// The cached visitor, as it would be after the decision (CHECKED_IN after an admission).
    public var visitor: Visitor?
    /// The short id the text names, when it is a pass text.
    public var shortId: ShortID?

    public init(result: ScanResult, basis: Basis, visitor: Visitor? = nil, shortId: ShortID? = nil) {
        self.result = result; self.basis = basis; self.visitor = visitor; self.shortId = shortId
    }

    /// Whether the visitor may go in (`CHECKED_IN`, or `ALREADY_CHECKED_IN`: already inside).
    public var admits: Bool { result == .checkedIn || result == .alreadyCheckedIn }

    /// Decides a scan offline (pure: the caller records the scan and the admission).
    ///
    /// Precedence: a text that is not a pass, or a GP2 text whose signature fails (unknown,
    /// revoked or wrong key, changed field) or that no longer matches its cached visitor
    /// (re-issued) or is signed by a key of the other purpose, is `INVALID` under every policy;
    /// policy `deny` refuses the rest (`NOT_FOUND`). A cached visitor that is revoked but not
    /// cancelled → `BLOCKED`, else judged by `CheckIn.decide`, the server's table, at
    /// `scannedAt` (as inside when this kiosk admitted it since the last sync, unless the pass
    /// was cancelled or rejected since: a revocation beats the kiosk's own admission). A
    /// verified GP2 pass not in the cache, under policy `signed`, goes through the same
    /// table as a pass whose fields are what the text signs: revoked → `BLOCKED`, admitted since
    /// sync → `ALREADY_CHECKED_IN`, outside its window → `NOT_YET_VALID` / `EXPIRED`, an
    /// `approval` key → `APPROVAL_REQUIRED`, else `CHECKED_IN`. Anything else is `NOT_FOUND`.
    /// `APPROVAL_REQUIRED` refuses offline: the approval is requested once the server answers.
    /// - Parameters:
    ///   - text: the scanned text, as read from the code.
    ///   - scannedAt: when it was scanned, on the kiosk's clock.
    ///   - checkpointId: the gate the kiosk is bound to.
    ///   - verify: Ed25519 verification `(signature, message, publicKey)` (GatePassCrypto's
    ///     `Ed25519.verify`; the domain holds no crypto).
    public static func decide(text: String, scannedAt: Date, cache: OfflineCacheSnapshot, policy: OfflinePolicy,
                              checkpointId: String, verify: ([UInt8], [UInt8], [UInt8]) -> Bool) -> OfflineDecision {
        let parsed: QRPayload.Reference
        do {
            parsed = try QRPayload.reference(from: text)
        } catch {
            return OfflineDecision(result: .invalid, basis: .none)
        }
        let shortId = parsed.shortId
        let cached = cache.visitors[shortId]
        var signingKey: PassKey?
        if case .signed(let signed) = parsed {
            guard case .verified(let key) = signed.check(against: cache.keys, verify: verify) else {
                return OfflineDecision(result: .invalid, basis: .none, shortId: shortId)
            }
            if let cached, !signed.matches(cached, signedBy: key) {
                return OfflineDecision(result: .invalid, basis: .none, shortId: shortId)
            }
            signingKey = key
        }
        guard policy != .deny else { return OfflineDecision(result: .notFound, basis: .none, shortId: shortId) }
        let revoked = cache.revoked.contains(shortId)
        let admitted = cache.admittedSinceSync.contains(shortId)
        if let cached {
            // A revoked pass that is not cancelled was blocked (the server's table: BLOCKED first).
            if revoked && cached.status != .cancelled {
                return OfflineDecision(result: .blocked, basis: .cachedVisitor, visitor: cached, shortId: shortId)
            }
            var judged = cached
            // This kiosk's own admission makes the pass "inside" — unless it was cancelled or
            // rejected since: a revocation the kiosk was told of beats what it did before it knew.
            if admitted && OfflineClaim.admissibleStatuses.contains(judged.status) {
                judged.status = .checkedIn
                judged.checkpointId = checkpointId
            }
            let decision = decideByTable(judged, at: scannedAt, checkpointId: checkpointId)
            return OfflineDecision(result: decision.result, basis: .cachedVisitor, visitor: decision.visitor, shortId: shortId)
        }
        guard policy == .signed, case .signed(let signed) = parsed, let signingKey else {
            return OfflineDecision(result: .notFound, basis: .none, shortId: shortId)
        }
        if revoked { return OfflineDecision(result: .blocked, basis: .signature, shortId: shortId) }
        // The pass as the text signs it, through the very table the server runs: the precedence
        // (already inside → window → approval → admit) is the server's, not a copy of it.
        let signedPass = Visitor(id: "", shortId: shortId, name: "", requiresApproval: signingKey.purpose == .approval,
                                 status: admitted ? .checkedIn : .expected, validity: signed.validity,
                                 createdAt: signed.validity.from)
        let decision = decideByTable(signedPass, at: scannedAt, checkpointId: checkpointId)
        return OfflineDecision(result: decision.result, basis: .signature, shortId: shortId)
    }

    /// The server's table, offline: no approval is requested (nobody can be asked until the
    /// server answers) and the revocation list stands in for the blocklist.
    private static func decideByTable(_ visitor: Visitor, at scannedAt: Date, checkpointId: String) -> CheckInDecision {
        CheckIn.decide(visitor: visitor, receivedAt: scannedAt, request: CheckInRequest(confirmApprovalRequest: false),
                       checkpointId: checkpointId)
    }
}

/// Why the server does not count a kiosk's offline admission (api.md "Which offline claims
/// count"); the raw value is what `security.alert` names.
public enum OfflineClaimFailure: String, Codable, Sendable, CaseIterable {
    /// `scannedAt` is later than the server's clock allows, even with the skew.
    case future
    /// The pass's stored window does not contain `scannedAt`.
    case window
    /// The claim rests on a signature alone that cannot admit: not an `admit` key's.
    case signature
    /// A `GP1:` text, short id or URL of a visitor this device's `/expected` answers never carried.
    case notCached = "not-cached"
    /// As of this device's last `/expected` answer the visitor was cancelled, rejected, blocked
    /// or waiting for an approval.
    case knownRevoked = "known-revoked"
}

/// What one device (a kiosk's enrolment, or a chain of renewed scanner tokens) was last told of a
/// visitor by `/expected`: the server records it per answer, and judges the device's offline
/// claims against it.
public struct DeviceKnowledge: Sendable, Equatable {
    /// False when the last answer named the visitor as revoked, or carried it in a state an
    /// offline kiosk refuses (`OfflineClaim.refusesOffline`).
    public var admissible: Bool
    /// When not admissible: the server's time of the first answer that told the device so (a
    /// scan made before it could not have known).
    public var refusedSince: Date?

    /// - Throws: `DeviceKnowledge.Inconsistent` for a refusal without its time, or the reverse
    ///   (a stored row this code does not understand is an error, never a default).
    public init(admissible: Bool, refusedSince: Date?) throws(Inconsistent) {
        guard admissible == (refusedSince == nil) else { throw Inconsistent() }
        self.admissible = admissible; self.refusedSince = refusedSince
    }

    /// What an answer at `time` carrying `visitor` (blocked: named in `revoked` only) tells the device.
    public init(told visitor: Visitor, blocked: Bool, at time: Date) {
        admissible = !blocked && !OfflineClaim.refusesOffline(visitor)
        refusedSince = admissible ? nil : time
    }

    public struct Inconsistent: Error, Sendable {}
}

/// The server's judgement of a replayed offline admission (`offlineDecision: CHECKED_IN`): it
/// counts only where an offline kiosk could have made it (api.md "Which offline claims count").
/// The kiosk's side of the same rules is `OfflineDecision.decide`.
public enum OfflineClaim {
    /// How far a kiosk's clock may run ahead of the server's.
    public static let clockSkew: TimeInterval = 5 * 60

    /// The statuses an admission is made from; a kiosk's own admission is laid over these only.
    static let admissibleStatuses: Set<VisitorStatus> = [.expected, .approved, .awaitingApproval]

    /// How the scanned text vouches for the pass, once the server verified it.
    public enum Text: Sendable, Equatable {
        /// A `GP1:` text, a bare short id or a URL: it names the pass, nothing more.
        case unsigned
        /// A GP2 text that verifies and matches the stored pass, signed with a key of `purpose`.
        case signed(PassKeyPurpose)
    }

    /// Whether an offline kiosk holding `visitor` in its cache refuses it whatever the time:
    /// cancelled, rejected, or waiting for an approval (asked for or not).
    public static func refusesOffline(_ visitor: Visitor) -> Bool {
        switch visitor.status {
        case .cancelled, .rejected, .awaitingApproval: true
        case .expected: visitor.requiresApproval
        case .approved, .checkedIn, .checkedOut: false
        }
    }

    /// The first condition the claim fails, in api.md's order, or nil when it counts.
    /// - Parameters:
    ///   - scannedAt: the scan's time as the kiosk says (nil: it said none, so the receive time).
    ///   - receivedAt: the server's clock.
    ///   - visitor: the pass as stored now.
    ///   - text: how the scanned text vouches for the pass.
    ///   - knowledge: what this device's last `/expected` answers carried of the visitor; nil
    ///     when they never carried it. A refusal it was told of counts from its time on: a
    ///     kiosk that synced after the scan, before its replay, could not have known then.
    public static func failure(scannedAt: Date?, receivedAt: Date, visitor: Visitor, text: Text,
                               knowledge: DeviceKnowledge?) -> OfflineClaimFailure? {
        let scanned = scannedAt ?? receivedAt
        if scanned.timeIntervalSince(receivedAt) > clockSkew { return .future }
        guard visitor.validity.position(of: scanned) == .inside else { return .window }
        guard let knowledge else {
            // Not in the device's cache: only a pass an `admit` key signed can be admitted by
            // its signature alone (an `approval` key's never is).
            switch text {
            case .signed(.admit): return nil
            case .signed: return .signature
            case .unsigned: return .notCached
            }
        }
        // Known only if the device was told before the scan, even with its clock running ahead.
        guard let refusedSince = knowledge.refusedSince, refusedSince <= scanned.addingTimeInterval(-clockSkew) else { return nil }
        return .knownRevoked
    }
}
