import Foundation

/// Where a visitor stands in the visit's life cycle (api.md "Visitor").
///
/// Expiry is deliberately not a status: it is judged against the validity window at scan time.
public enum VisitorStatus: String, Codable, Sendable, CaseIterable {
    case expected = "EXPECTED"
    case awaitingApproval = "AWAITING_APPROVAL"
    case approved = "APPROVED"
    case rejected = "REJECTED"
    case checkedIn = "CHECKED_IN"
    case checkedOut = "CHECKED_OUT"
    case cancelled = "CANCELLED"
}

/// A pre-registered or walk-in visitor, exactly as the API shows it.
public struct Visitor: Codable, Sendable, Equatable {
    public var id: String
    public var shortId: ShortID
    public var name: String
    public var email: String?
    public var phone: String?
    public var company: String?
    public var purpose: String?
    public var hostName: String?
    /// Who is told of the arrival (api.md "Site operations"); null when nobody is.
    public var hostEmail: String?
    public var approverId: String?
    public var requiresApproval: Bool
    public var walkIn: Bool
    public var status: VisitorStatus
    public var validity: ValidityWindow
    public var createdAt: Date
    public var approvalRequestedAt: Date?
    public var decidedAt: Date?
    public var decidedBy: String?
    public var decisionNote: String?
    public var checkedInAt: Date?
    public var checkedOutAt: Date?
    public var checkpointId: String?

    public init(id: String, shortId: ShortID, name: String, email: String? = nil, phone: String? = nil,
                company: String? = nil, purpose: String? = nil, hostName: String? = nil, hostEmail: String? = nil,
                approverId: String? = nil, requiresApproval: Bool = false, walkIn: Bool = false,
                status: VisitorStatus = .expected, validity: ValidityWindow, createdAt: Date,
                approvalRequestedAt: Date? = nil, decidedAt: Date? = nil, decidedBy: String? = nil,
                decisionNote: String? = nil, checkedInAt: Date? = nil, checkedOutAt: Date? = nil,
                checkpointId: String? = nil) {
        self.id = id; self.shortId = shortId; self.name = name; self.email = email; self.phone = phone
        self.company = company; self.purpose = purpose; self.hostName = hostName; self.hostEmail = hostEmail
        self.approverId = approverId; self.requiresApproval = requiresApproval; self.walkIn = walkIn
        self.status = status; self.validity = validity; self.createdAt = createdAt
        self.approvalRequestedAt = approvalRequestedAt; self.decidedAt = decidedAt
        self.decidedBy = decidedBy; self.decisionNote = decisionNote
        self.checkedInAt = checkedInAt; self.checkedOutAt = checkedOutAt; self.checkpointId = checkpointId
    }

    enum CodingKeys: String, CodingKey {
        case id, shortId, name, email, phone, company, purpose, hostName, hostEmail, approverId, requiresApproval
        case walkIn, status, validFrom, validUntil, createdAt, approvalRequestedAt, decidedAt, decidedBy
        case decisionNote, checkedInAt, checkedOutAt, checkpointId
    }

    // Every key is written, with `null` for absent values: api.md shows the full shape and
    // clients decode strictly, so a missing key and a null must not be confused.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(shortId, forKey: .shortId)
        try c.encode(name, forKey: .name)
        try c.encode(email, forKey: .email)
        try c.encode(phone, forKey: .phone)
        try c.encode(company, forKey: .company)
        try c.encode(purpose, forKey: .purpose)
        try c.encode(hostName, forKey: .hostName)
        try c.encode(hostEmail, forKey: .hostEmail)
        try c.encode(approverId, forKey: .approverId)
        try c.encode(requiresApproval, forKey: .requiresApproval)
        try c.encode(walkIn, forKey: .walkIn)
        try c.encode(status, forKey: .status)
        try c.encode(Timestamp(validity.from), forKey: .validFrom)
        try c.encode(Timestamp(validity.until), forKey: .validUntil)
        try c.encode(Timestamp(createdAt), forKey: .createdAt)
        try c.encode(approvalRequestedAt.map(Timestamp.init), forKey: .approvalRequestedAt)
        try c.encode(decidedAt.map(Timestamp.init), forKey: .decidedAt)
        try c.encode(decidedBy, forKey: .decidedBy)
        try c.encode(decisionNote, forKey: .decisionNote)
        try c.encode(checkedInAt.map(Timestamp.init), forKey: .checkedInAt)
        try c.encode(checkedOutAt.map(Timestamp.init), forKey: .checkedOutAt)
        try c.encode(checkpointId, forKey: .checkpointId)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        shortId = try c.decode(ShortID.self, forKey: .shortId)
        name = try c.decode(String.self, forKey: .name)
        email = try c.decodeIfPresent(String.self, forKey: .email)
        phone = try c.decodeIfPresent(String.self, forKey: .phone)
        company = try c.decodeIfPresent(String.self, forKey: .company)
        purpose = try c.decodeIfPresent(String.self, forKey: .purpose)
        hostName = try c.decodeIfPresent(String.self, forKey: .hostName)
        hostEmail = try c.decodeIfPresent(String.self, forKey: .hostEmail)
        approverId = try c.decodeIfPresent(String.self, forKey: .approverId)
        requiresApproval = try c.decode(Bool.self, forKey: .requiresApproval)
        walkIn = try c.decode(Bool.self, forKey: .walkIn)
        status = try c.decode(VisitorStatus.self, forKey: .status)
        let from = try c.decode(Timestamp.self, forKey: .validFrom).date
        let until = try c.decode(Timestamp.self, forKey: .validUntil).date
        validity = ValidityWindow(from: from, until: until)
        createdAt = try c.decode(Timestamp.self, forKey: .createdAt).date
        approvalRequestedAt = try c.decodeIfPresent(Timestamp.self, forKey: .approvalRequestedAt)?.date
        decidedAt = try c.decodeIfPresent(Timestamp.self, forKey: .decidedAt)?.date
        decidedBy = try c.decodeIfPresent(String.self, forKey: .decidedBy)
        decisionNote = try c.decodeIfPresent(String.self, forKey: .decisionNote)
        checkedInAt = try c.decodeIfPresent(Timestamp.self, forKey: .checkedInAt)?.date
        checkedOutAt = try c.decodeIfPresent(Timestamp.self, forKey: .checkedOutAt)?.date
        checkpointId = try c.decodeIfPresent(String.self, forKey: .checkpointId)
    }
}
