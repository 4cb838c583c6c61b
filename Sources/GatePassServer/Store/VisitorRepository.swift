import Foundation
import GatePassCore

/// A visitor with the fields the API does not show.
struct VisitorRecord: Sendable {
    var visitor: Visitor
    var organizationId: String
    var approvalCheckpointId: String?
    /// The user who registered the visitor (nil for rows from before issue 12 and demo data).
    var createdBy: String? = nil
    /// The row's position among rows with the same list time (the keyset cursor's tie-break).
    var seq: Int64
}

/// What the visitor list of a site's managers narrows by.
struct VisitorListFilter: Sendable {
    /// nil only for PLATFORM_ADMIN reading every organization.
    var organizationId: String?
    var status: VisitorStatus?
    /// Lowercased text matched in name, email, phone, company and short id.
    var search: String?
    /// Only visitors whose validity overlaps this range (`from=`/`to=`).
    var validDuring: ValidityWindow? = nil
    /// Only visitors this HOST registered or hosts (`hostEmail` = its email).
    var hostedBy: Profile? = nil
}

/// How often the same person (same email, or same phone without one) came before.
struct PreviousVisits: Sendable {
    var count: Int
    var last: Date?
}

/// Reading and writing visitors. Lists are newest first, one keyset page at a time.
protocol VisitorRepository {
    func find(id: String) throws -> VisitorRecord?
    func find(shortId: ShortID) throws -> VisitorRecord?
    func isTaken(shortId: ShortID) throws -> Bool
    /// The visitor whose pass page token hashes to this (SHA-256).
    func find(passTokenHash: [UInt8]) throws -> VisitorRecord?
    /// Gives the visitor a new pass page token (ending the old one), or none.
    func setPassToken(hash: [UInt8]?, visitorId: String) throws
    /// Whether the visitor has a pass page (an invitation was sent).
    func hasPassToken(visitorId: String) throws -> Bool
    func insert(_ visitor: Visitor, organizationId: String, approvalCheckpointId: String?, createdBy: String?) throws
    /// Stores the state `previous` → `visitor` changed, only if the stored status is still
    /// `previous.status` (a conditional update, so exactly one of two racing changes wins on
    /// any database); false when it was not.
    func updateState(_ visitor: Visitor, from previous: Visitor, approvalCheckpointId: String?) throws -> Bool
    /// Managers' list, by creation.
    func list(_ filter: VisitorListFilter, after cursor: ListCursor?, limit: Int) throws -> [VisitorRecord]
    /// The approvals queue of `approverId` (theirs and unassigned), by approval request.
    func approvalQueue(organizationId: String, approverId: String, status: VisitorStatus, after cursor: ListCursor?,
                       limit: Int) throws -> [VisitorRecord]
    /// Earlier check-ins of the same person: by email, else by phone; none without either.
    func previousVisits(of visitor: Visitor, organizationId: String) throws -> PreviousVisits
    /// Matches of `search` (lowercased) in short id, name, phone and email, newest first.
    func lookup(organizationId: String, search: String, limit: Int) throws -> [VisitorRecord]
    /// Visitors checked in now, latest arrival first.
    func onSite(organizationId: String, after cursor: ListCursor?, limit: Int) throws -> [VisitorRecord]
    /// Passes valid during `day` changed after `sequence`, oldest change first, with their change sequence.
    func changed(organizationId: String, after sequence: Int64, validDuring day: ValidityWindow,
                 limit: Int) throws -> [(visitor: Visitor, changeSequence: Int64)]
    /// Moves the visitors to the end of the change feed (their pass changed without a change
    /// of their own: a blocklist entry now matches them, or no longer does).
    func markChanged(visitorIds: [String]) throws
    /// Today's counts for a site, narrowed to one gate when asked.
    func counts(organizationId: String, checkpointId: String?, day: ValidityWindow) throws -> ScanStats

    // MARK: Retention

    /// Visitors of the organization whose pass ended before `cutoff` and who are not anonymised
    /// yet, oldest pass first, at most `limit`. A visitor still on site is not due: the
    /// evacuation roll must name who is inside (it is due once checked out).
    func dueForRetention(organizationId: String, endedBefore cutoff: Date, limit: Int) throws -> [VisitorRecord]
    /// How many visitors `dueForRetention` would give without a limit.
    func dueForRetentionCount(organizationId: String, endedBefore cutoff: Date) throws -> Int
    /// Stores `anonymised` (the visitor with its personal data removed) and marks it anonymised
    /// at `time`; its pass page stops opening. False when it was anonymised already.
    func anonymise(_ anonymised: Visitor, at time: Date) throws -> Bool
    /// When the visitor was anonymised, nil if it was not.
    func anonymisedAt(visitorId: String) throws -> Date?
}

extension VisitorRepository {
    func insert(_ visitor: Visitor, organizationId: String) throws {
        try insert(visitor, organizationId: organizationId, approvalCheckpointId: nil, createdBy: nil)
    }

    /// `updateState` that must win: a lost race is a conflict for the client to retry.
    func changeState(_ visitor: Visitor, from previous: Visitor, approvalCheckpointId: String? = nil) throws {
        guard try updateState(visitor, from: previous, approvalCheckpointId: approvalCheckpointId) else {
            throw APIError(code: .conflict, message: "the visitor changed while this request ran; try again",
                           headers: ["Retry-After": "1"])
        }
    }

    /// A short id no visitor has, drawn from the CSPRNG.
    func freshShortID() throws -> ShortID {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<8 {
            let shortId = ShortID.random(using: &generator)
            if try !isTaken(shortId: shortId) { return shortId }
        }
        throw APIError.internal("could not draw an unused short id")
    }

    /// The visitor a path names (api.md: its id, or its short id in any spelling the
    /// Crockford decoding accepts).
    func find(idOrShortId reference: String) throws -> VisitorRecord? {
        if let record = try find(id: reference) { return record }
        guard let shortId = ShortID(reference) else { return nil }
        return try find(shortId: shortId)
    }

    /// Inserts `make(shortId)` with a fresh short id, drawing again on the (rare) collision.
    func insertWithFreshShortID(organizationId: String, approvalCheckpointId: String? = nil, createdBy: String? = nil,
                                _ make: (ShortID) -> Visitor) throws -> Visitor {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<8 {
            let visitor = make(ShortID.random(using: &generator))
            if try !isTaken(shortId: visitor.shortId) {
                try insert(visitor, organizationId: organizationId, approvalCheckpointId: approvalCheckpointId,
                           createdBy: createdBy)
                return visitor
            }
        }
        throw APIError.internal("could not draw an unused short id")
    }
}
