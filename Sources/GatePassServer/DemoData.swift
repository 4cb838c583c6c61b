import Foundation
import GatePassCore

/// A demo organization: one user per role and visitors in every status, so every screen
/// and route has something to show. Seeding twice is harmless (the second time does nothing).
public enum DemoData {
    public static let organization = "Demo Site"

    public struct Login: Sendable {
        public var email: String
        public var role: Role
        public var canScan: Bool
    }

    public static let logins: [Login] = [
        Login(email: "owner@demo.gatepass", role: .owner, canScan: true),
        Login(email: "admin@demo.gatepass", role: .admin, canScan: true),
        Login(email: "approver@demo.gatepass", role: .approver, canScan: true),
        Login(email: "desk@demo.gatepass", role: .approver, canScan: false),
        Login(email: "platform@demo.gatepass", role: .platformAdmin, canScan: false),
        // An employee who registers their own visitors (Ana Pop and Mihai Ionescu are theirs).
        Login(email: "host@demo.gatepass", role: .host, canScan: false),
    ]

    /// The key under which `seed` returns the EXPECTED pass that needs an approver.
    public static let expectedNeedingApproval = "EXPECTED_NEEDS_APPROVAL"

    /// Seeds the demo organization unless it exists. Returns the short ids created by status
    /// (and the EXPECTED pass that needs approval under `expectedNeedingApproval`); empty when
    /// the organization was already there.
    @discardableResult
    public static func seed(store: ServerDatabase, now: Date, timeZone: TimeZone) throws -> [String: String] {
        try store.write { tx -> [String: String] in
            if try tx.directory.organizationId(named: organization) != nil { return [:] }
            let organizationId = try tx.directory.createOrganization(name: organization, now: now)
            var users: [Role: Profile] = [:]
            let names = ["owner": "Olivia Owner", "admin": "Adrian Admin", "approver": "Ana Approver",
                         "desk": "Dan Desk", "platform": "Paula Platform", "host": "Hana Host"]
            for login in logins {
                let local = String(login.email.prefix(while: { $0 != "@" }))
                let user = try tx.directory.createUser(organizationId: organizationId, email: login.email,
                                                       name: names[local] ?? local, role: login.role, canScan: login.canScan,
                                                       now: now)
                if users[login.role] == nil { users[login.role] = user }
            }
            let gate = try tx.checkpoints.defaultCheckpoint(organizationId: organizationId)!
            _ = try tx.checkpoints.create(organizationId: organizationId, name: "Loading dock", now: now)
            let today = ValidityWindow.day(containing: now, in: timeZone)
            let approver = users[.approver]!.id
            let owner = users[.owner]!.id
            struct Seed {
                var name: String, company: String, status: VisitorStatus, requiresApproval: Bool
                var approver: String?, minutesAgo: Double, walkIn = false
            }
            let seeds = [
                Seed(name: "Ana Pop", company: "Acme Logistics", status: .expected, requiresApproval: false, approver: nil, minutesAgo: 50),
                Seed(name: "Mihai Ionescu", company: "Northwind", status: .expected, requiresApproval: true, approver: approver, minutesAgo: 45),
                Seed(name: "Elena Radu", company: "Contoso", status: .awaitingApproval, requiresApproval: true, approver: approver, minutesAgo: 12),
                Seed(name: "Victor Stan", company: "Fabrikam", status: .awaitingApproval, requiresApproval: true, approver: nil, minutesAgo: 4, walkIn: true),
                Seed(name: "Ioana Dinu", company: "Globex", status: .approved, requiresApproval: true, approver: approver, minutesAgo: 30),
                Seed(name: "Radu Marin", company: "Initech", status: .rejected, requiresApproval: true, approver: approver, minutesAgo: 40),
                Seed(name: "Carmen Vlad", company: "Umbrella", status: .checkedIn, requiresApproval: false, approver: nil, minutesAgo: 35),
                Seed(name: "Paul Georgescu", company: "Hooli", status: .checkedOut, requiresApproval: false, approver: nil, minutesAgo: 90),
                Seed(name: "Sorin Matei", company: "Stark Industries", status: .cancelled, requiresApproval: false, approver: nil, minutesAgo: 60),
            ]
            var created: [String: String] = [:]
            var generator = SystemRandomNumberGenerator()
            for (index, seed) in seeds.enumerated() {
                let at = now.addingTimeInterval(-seed.minutesAgo * 60)
                var visitor = Visitor(
                    id: newIdentifier(), shortId: ShortID.random(using: &generator), name: seed.name,
                    email: seed.name.lowercased().replacingOccurrences(of: " ", with: ".") + "@example.com",
                    phone: "+40 700 000 \(String(format: "%03d", index))", company: seed.company, purpose: "Meeting",
                    hostName: index < 2 ? "Hana Host" : "Olivia Owner",
                    hostEmail: index < 2 ? "host@demo.gatepass" : "owner@demo.gatepass", approverId: seed.approver,
                    requiresApproval: seed.requiresApproval,
                    walkIn: seed.walkIn, status: seed.status, validity: today, createdAt: at.addingTimeInterval(-600))
                switch seed.status {
                case .awaitingApproval: visitor.approvalRequestedAt = at
                case .approved, .rejected:
                    visitor.approvalRequestedAt = at.addingTimeInterval(-300)
                    visitor.decidedAt = at
                    visitor.decidedBy = approver
                    visitor.decisionNote = seed.status == .rejected ? "No appointment on record" : nil
                case .checkedIn:
                    visitor.checkedInAt = at
                    visitor.checkpointId = gate.id
                case .checkedOut:
                    visitor.checkedInAt = at
                    visitor.checkedOutAt = at.addingTimeInterval(45 * 60)
                    visitor.checkpointId = gate.id
                case .expected, .cancelled: break
                }
                try tx.visitors.insert(visitor, organizationId: organizationId,
                                       approvalCheckpointId: visitor.approvalRequestedAt == nil ? nil : gate.id,
                                       createdBy: nil)
                // The two EXPECTED passes behave differently at the gate, so both are named.
                let key = seed.status == .expected && seed.requiresApproval ? expectedNeedingApproval : seed.status.rawValue
                if created[key] == nil { created[key] = visitor.shortId.rawValue }
                if let checkedInAt = visitor.checkedInAt {
                    let scan = Scan(id: newIdentifier(), shortId: visitor.shortId.rawValue, raw: "GP1:\(visitor.shortId.rawValue)",
                                    result: .checkedIn, visitorId: visitor.id, checkpointId: gate.id, scannedBy: owner,
                                    scannedAt: Timestamp(checkedInAt), receivedAt: Timestamp(checkedInAt), offline: false)
                    try tx.scans.insert(scan, organizationId: organizationId, kioskId: nil)
                }
            }
            return created
        }
    }

    /// Visitors expected on the next days, each invited by mail (in `--dev`, `.eml` files in
    /// the mail folder). For a freshly seeded demo organization; returns name and short id of
    /// each, in the order they come.
    @discardableResult
    public static func seedUpcoming(server: GatePassServer, now: Date, timeZone: TimeZone) throws -> [(name: String, shortId: String)] {
        let application = server.application
        let effects = GatePassApplication.CommitEffects()
        let upcoming = try server.store.write { tx -> [(name: String, shortId: String)] in
            guard let organizationId = try tx.directory.organizationId(named: organization) else { return [] }
            let approver = try tx.directory.user(email: "approver@demo.gatepass")?.id
            let people: [(name: String, company: String, days: Int, hours: ClosedRange<Int>, needsApproval: Bool)] = [
                ("Sofia Lungu", "Acme Logistics", 1, 9...11, false),
                ("Tudor Cazacu", "Northwind", 1, 14...16, true),
                ("Raluca Enache", "Contoso", 2, 10...12, false),
            ]
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = timeZone
            var made: [(name: String, shortId: String)] = []
            for person in people {
                let day = calendar.date(byAdding: .day, value: person.days, to: calendar.startOfDay(for: now))!
                let from = calendar.date(bySettingHour: person.hours.lowerBound, minute: 0, second: 0, of: day)!
                let until = calendar.date(bySettingHour: person.hours.upperBound, minute: 0, second: 0, of: day)!
                let visitor = try tx.visitors.insertWithFreshShortID(organizationId: organizationId) { shortId in
                    Visitor(id: newIdentifier(), shortId: shortId, name: person.name,
                            email: person.name.lowercased().replacingOccurrences(of: " ", with: ".") + "@example.com",
                            company: person.company, purpose: "Meeting", hostName: "Olivia Owner",
                            hostEmail: "owner@demo.gatepass", approverId: person.needsApproval ? approver : nil,
                            requiresApproval: person.needsApproval, validity: ValidityWindow(from: from, until: until),
                            createdAt: now)
                }
                _ = try application.queueInvitation(visitor, organizationId: organizationId, now: now, effects: effects, tx)
                made.append((visitor.name, visitor.shortId.rawValue))
            }
            return made
        }
        if effects.queuedMail { application.mailWorker.wake() }
        return upcoming
    }

    /// Names for the walk-ins `addArrival` makes, in turn.
    static let arrivalNames: [(name: String, company: String)] = [
        ("Bianca Toma", "Acme Logistics"), ("Cristian Pavel", "Northwind"), ("Diana Lupu", "Contoso"),
        ("Emil Barbu", "Fabrikam"), ("Flavia Nistor", "Globex"), ("George Dobre", "Initech"),
        ("Irina Costache", "Umbrella"), ("Liviu Preda", "Hooli"), ("Monica Suciu", "Stark Industries"),
        ("Nicu Florea", "Wayne Enterprises"),
    ]

    /// A walk-in arriving at one of the demo checkpoints (taking turns), waiting for approval,
    /// written with its `request.created` event in one transaction like the walk-in route —
    /// so consoles see it live. `gatepass demo` calls it every half minute.
    /// - Returns: the new visitor, or nil when the demo organization does not exist.
    @discardableResult
    public static func addArrival(to server: GatePassServer, number: Int, now: Date, timeZone: TimeZone) throws -> Visitor? {
        let visitor = try server.store.write { tx -> Visitor? in
            guard let organizationId = try tx.directory.organizationId(named: organization) else { return nil }
            let checkpoints = try tx.checkpoints.all(organizationId: organizationId)
            guard !checkpoints.isEmpty else { return nil }
            let checkpoint = checkpoints[number % checkpoints.count]
            let person = arrivalNames[number % arrivalNames.count]
            let visitor = try tx.visitors.insertWithFreshShortID(organizationId: organizationId,
                                                                 approvalCheckpointId: checkpoint.id) { shortId in
                Visitor(id: newIdentifier(), shortId: shortId, name: person.name,
                        email: person.name.lowercased().replacingOccurrences(of: " ", with: ".") + "@example.com",
                        phone: nil, company: person.company, purpose: "Delivery", hostName: "Olivia Owner",
                        approverId: nil, requiresApproval: true, walkIn: true, status: .awaitingApproval,
                        validity: ValidityWindow.day(containing: now, in: timeZone), createdAt: now, approvalRequestedAt: now)
            }
            try tx.events.appendVisitorEvent(.requestCreated, visitor: visitor, organizationId: organizationId,
                                             checkpointId: checkpoint.id, now: now)
            return visitor
        }
        // Fan out at once rather than at the hub's next poll.
        server.application.eventHub.committed()
        return visitor
    }
}
