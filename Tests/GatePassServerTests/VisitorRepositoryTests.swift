import Foundation
import GatePassCore
import Testing
@testable import GatePassServer

/// The store's state change is conditional on the status it was decided from, so the
/// exactly-once check-in holds without relying on one writer serializing every write (on a
/// database whose transactions do run at once, the second change of a race must fail).
@Suite struct VisitorRepositoryTests {
    static func withVisitor(_ body: (ServerDatabase, VisitorRecord) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let database = try ServerDatabase(path: directory + "/gatepass.sqlite")
            defer { database.close() }
            let now = Date(timeIntervalSince1970: 1_750_000_000)
            let record = try database.write { tx -> VisitorRecord in
                let organization = try tx.directory.createOrganization(name: "Acme", now: now)
                let visitor = try tx.visitors.insertWithFreshShortID(organizationId: organization) { shortId in
                    Visitor(id: newIdentifier(now: now), shortId: shortId, name: "Ana Pop", email: nil, phone: nil,
                            company: nil, purpose: nil, hostName: nil, approverId: nil, requiresApproval: false,
                            walkIn: false, status: .expected,
                            validity: ValidityWindow(from: now, until: now.addingTimeInterval(3600)), createdAt: now)
                }
                return try #require(try tx.visitors.find(id: visitor.id))
            }
            try body(database, record)
        }
    }

    static func checkedIn(_ visitor: Visitor, at time: Date) -> Visitor {
        var changed = visitor
        changed.status = .checkedIn
        changed.checkedInAt = time
        return changed
    }

    @Test func aChangeDecidedFromAStaleStatusIsNotApplied() throws {
        try Self.withVisitor { database, record in
            let first = Self.checkedIn(record.visitor, at: Date(timeIntervalSince1970: 1_750_000_010))
            let second = Self.checkedIn(record.visitor, at: Date(timeIntervalSince1970: 1_750_000_020))
            // Both were decided from the same read (EXPECTED): the first applies, the second does not.
            #expect(try database.write { tx in try tx.visitors.updateState(first, from: record.visitor, approvalCheckpointId: nil) })
            #expect(try !database.write { tx in try tx.visitors.updateState(second, from: record.visitor, approvalCheckpointId: nil) })
            let stored = try #require(try database.read { tx in try tx.visitors.find(id: record.visitor.id) })
            #expect(stored.visitor.status == .checkedIn)
            #expect(stored.visitor.checkedInAt == first.checkedInAt, "the losing change left nothing behind")
        }
    }

    @Test func changeStateTurnsALostRaceIntoAConflict() throws {
        try Self.withVisitor { database, record in
            let changed = Self.checkedIn(record.visitor, at: Date(timeIntervalSince1970: 1_750_000_010))
            try database.write { tx in try tx.visitors.changeState(changed, from: record.visitor) }
            #expect(throws: APIError.self) {
                try database.write { tx in try tx.visitors.changeState(changed, from: record.visitor) }
            }
        }
    }
}
