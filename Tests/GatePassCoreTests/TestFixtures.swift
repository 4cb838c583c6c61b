import Foundation
@testable import GatePassCore

/// Shared helpers for the GatePassCore tests. Instants are written as epoch seconds computed
/// outside Swift (Python's `datetime`), so no test depends on the code under test to build
/// its expected values.
enum Fixture {
    /// 2026-11-29T00:00:00Z
    static let day = Date(timeIntervalSince1970: 1_795_910_400)
    /// 2026-11-29T08:00:00Z
    static let validFrom = day.addingTimeInterval(8 * 3600)
    /// 2026-11-29T18:00:00Z
    static let validUntil = day.addingTimeInterval(18 * 3600)
    static let window = ValidityWindow(from: validFrom, until: validUntil)
    /// 2026-11-28T10:00:00Z
    static let createdAt = day.addingTimeInterval(-14 * 3600)
    static let shortId = ShortID("K7Q2M9XD")!
    static let gate = "checkpoint-main-gate"

    static func date(_ secondsSince1970: Double) -> Date { Date(timeIntervalSince1970: secondsSince1970) }

    /// A visitor in `status`, with the timestamps a visitor in that status would really have,
    /// so that "returned unchanged" is checked against a fully populated value.
    static func visitor(status: VisitorStatus, requiresApproval: Bool,
                        validity: ValidityWindow = window) -> Visitor {
        var v = Visitor(id: "0b8a2c4e-7d1f-4a6b-9c3e-5f2d1a0b9c8d", shortId: shortId, name: "Ana Pop",
                        email: "ana@example.com", phone: "+40712345678", company: "Acme",
                        purpose: "Delivery", hostName: "Ion", approverId: "approver-1",
                        requiresApproval: requiresApproval, walkIn: false, status: status,
                        validity: validity, createdAt: createdAt)
        let earlier = validity.from.addingTimeInterval(-3600)
        switch status {
        case .expected:
            break
        case .awaitingApproval:
            v.approvalRequestedAt = earlier
        case .approved, .rejected:
            v.approvalRequestedAt = earlier
            v.decidedAt = earlier.addingTimeInterval(60)
            v.decidedBy = "approver-1"
            v.decisionNote = status == .approved ? "ok" : "not today"
        case .checkedIn:
            v.checkedInAt = validity.from.addingTimeInterval(60)
            v.checkpointId = "checkpoint-side-door"
        case .checkedOut:
            v.checkedInAt = validity.from.addingTimeInterval(60)
            v.checkpointId = "checkpoint-side-door"
            v.checkedOutAt = validity.from.addingTimeInterval(1800)
        case .cancelled:
            break
        }
        return v
    }
}

/// A generator that answers the same word (to pin the alphabet's ends). After 64 words it
/// turns pseudo-random, so an implementation that rejection-samples fails instead of hanging.
struct ConstantGenerator: RandomNumberGenerator {
    var value: UInt64
    private var calls = 0
    private var fallback = SplitMix64(seed: 7)
    init(value: UInt64) { self.value = value }
    mutating func next() -> UInt64 {
        calls += 1
        return calls <= 64 ? value : fallback.next()
    }
}

/// Any JSON value, to inspect encoder output without JSONSerialization's platform quirks.
enum JSONValue: Decodable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }
}
