import Foundation
import GatePassCore
import Testing
@testable import GatePassServer

/// Retention and data-subject requests (issue 12 item 3, api.md "Retention"), on a movable clock:
/// the dry run counts exactly what the real run does, anonymised visitors keep their counts and
/// history, a current visitor is never touched, every copy of the data goes (the database file's
/// bytes are searched), the audit chain still verifies, and the daily run catches up after downtime.
@Suite struct RetentionTests {
    static let day: TimeInterval = 86_400

    /// Personal data of the visitor a test erases: none of it may be left in the file.
    static let secrets = ["Ilinca Retentova", "ilinca retentova", "ilinca.retentova@example.org", "+40 721 999 111",
                          "Zorilor Mills", "Deliver the zebra crates", "Horia Gazdaru", "horia.gazdaru@example.net",
                          "Escort by Radu Notescu"]

    static var personalFields: [String: Any] { [
        "name": "Ilinca Retentova", "email": "ilinca.retentova@example.org", "phone": "+40 721 999 111",
        "company": "Zorilor Mills", "purpose": "Deliver the zebra crates", "hostName": "Horia Gazdaru",
        "hostEmail": "horia.gazdaru@example.net", "requiresApproval": true,
    ] }

    /// The full life of one visitor, leaving a copy of its data everywhere the server keeps one:
    /// a stored idempotent answer, an invitation and an arrival mail, a decision note, a scan,
    /// events with titles (so notifications) and one read, and audit entries.
    @discardableResult
    static func visitWithEveryCopy(_ server: TestServer, _ site: Site, fields: [String: Any] = personalFields) throws -> [String: Any] {
        let created = try server.post("/api/visitors", token: site.ownerToken, fields.merging(["invite": true]) { $1 },
                                      headers: ["Idempotency-Key": "create-\(UUID().uuidString)"])
        #expect(created.status == 201, "\(created.text)")
        let id = try #require(created.string("id"))
        let shortId = try #require(created.string("shortId"))
        let approved = try server.post("/api/visitors/\(id)/approve-scan", token: site.ownerToken, ["note": "Escort by Radu Notescu"])
        #expect(approved.status == 200, "\(approved.text)")
        let checkedIn = try server.checkIn(site.scanner, shortId, headers: ["Idempotency-Key": "checkin-\(shortId)"])
        #expect(checkedIn.status == 200 && checkedIn.string("result") == "CHECKED_IN", "\(checkedIn.text)")
        let notifications = try server.get("/api/notifications?limit=1", token: site.ownerToken)
        let newest = try #require(notifications.items.first?["id"] as? String)
        #expect(try server.post("/api/notifications/\(newest)/read", token: site.ownerToken).status == 200)
        #expect(try server.checkOut(site.scanner, shortId).status == 200)
        return try server.visitor(id, site.ownerToken)
    }

    /// Tokens and stored answers that outlive the clock's jumps (months, here).
    static func longLived(_ configuration: inout ServerConfiguration) {
        configuration.tokenLifetimeSeconds = 400 * 86_400
        configuration.scannerTokenLifetimeSeconds = 400 * 86_400
        configuration.idempotencyRetentionHours = 400 * 24
    }

    static func run(_ server: TestServer, _ token: String, dryRun: Bool) throws -> RetentionCounts {
        let answer = try server.post("/api/admin/retention/run", token: token, ["dryRun": dryRun])
        guard answer.status == 200, let visitors = answer.json?["visitors"] as? Int, let scans = answer.json?["scans"] as? Int,
              answer.keys == ["visitors", "scans"]
        else { throw TestFailure("retention/run answered \(answer.status): \(answer.text)") }
        return RetentionCounts(visitors: visitors, scans: scans)
    }

    /// The bytes of the database file and its WAL, as a thief with a copy of the folder would read them.
    static func databaseBytes(_ server: TestServer) -> [UInt8] {
        let path = server.directory + "/gatepass.db"
        return [path, path + "-wal"].flatMap { Array(FileManager.default.contents(atPath: $0) ?? Data()) }
    }

    static func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
        let needle = Array(needle.utf8)
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { start in
            haystack[start] == needle[0] && Array(haystack[start..<(start + needle.count)]) == needle
        }
    }

    // MARK: - The run

    @Test func aDryRunCountsExactlyWhatTheRealRunThenDoesAndCurrentVisitorsAreUntouched() throws {
        // Stored answers outlive the clock's jump here, so the run must rewrite them too.
        try withSite(configure: Self.longLived) { server, site in
            let old = try Self.visitWithEveryCopy(server, site)
            // Ended 179 days before the run: not due yet.
            let recent = try server.createVisitor(site.ownerToken, [
                "name": "Rares Recentu", "email": "rares.recentu@example.org",
                "validFrom": iso(server.clock.now()), "validUntil": iso(server.clock.now().addingTimeInterval(2 * Self.day)),
            ])
            server.clock.advance(by: 181 * Self.day)
            let current = try Self.visitWithEveryCopy(server, site, fields: [
                "name": "Carmen Curenta", "email": "carmen.curenta@example.org", "company": "Today Ltd", "requiresApproval": true,
            ])
            let recentBefore = try server.visitor(recent["id"], site.ownerToken)
            let historyBefore = try server.history(site.ownerToken)

            let dry = try Self.run(server, site.adminToken, dryRun: true)
            #expect(dry == RetentionCounts(visitors: 1, scans: 1))
            #expect(try Self.run(server, site.adminToken, dryRun: true) == dry, "a dry run changes nothing")
            #expect(try server.visitor(old["id"], site.ownerToken)["name"] as? String == "Ilinca Retentova")

            #expect(try Self.run(server, site.ownerToken, dryRun: false) == dry)
            #expect(try Self.run(server, site.ownerToken, dryRun: false) == .zero, "nothing is anonymised twice")

            let anonymised = try server.visitor(old["id"], site.ownerToken)
            #expect(anonymised["name"] as? String == "(anonymised)")
            for key in ["email", "phone", "company", "purpose", "hostName", "hostEmail", "decisionNote"] {
                #expect(anonymised[key] is NSNull, "\(key) is \(String(describing: anonymised[key]))")
            }
            // Statuses, times and the gate stay: history and counts keep the visitor.
            for key in ["id", "shortId", "status", "validFrom", "validUntil", "createdAt", "decidedAt", "checkedInAt",
                        "checkedOutAt", "checkpointId", "requiresApproval"] {
                #expect(String(describing: anonymised[key]) == String(describing: old[key]), "\(key) changed")
            }
            let historyAfter = try server.history(site.ownerToken)
            #expect(ids(historyAfter) == ids(historyBefore), "the scan history keeps every scan")
            let oldScan = try #require(historyAfter.first { $0["visitorId"] as? String == old["id"] as? String })
            #expect(oldScan["raw"] is NSNull && oldScan["result"] as? String == "CHECKED_IN")

            // The current visitor and the one not due: exactly as before, every copy kept.
            #expect(NSDictionary(dictionary: try server.visitor(current["id"], site.ownerToken)) == NSDictionary(dictionary: current))
            #expect(NSDictionary(dictionary: try server.visitor(recent["id"], site.ownerToken)) == NSDictionary(dictionary: recentBefore))
            let currentScan = try #require(historyAfter.first { $0["visitorId"] as? String == current["id"] as? String })
            #expect(currentScan["raw"] as? String != nil)
            let bytes = Self.databaseBytes(server)
            #expect(Self.contains(bytes, "Carmen Curenta") && Self.contains(bytes, "carmen.curenta@example.org"))
            let currentAudit = try server.store.read { tx in try tx.audit.entries(entityId: current["id"] as! String) }
            #expect(!currentAudit.isEmpty && currentAudit.allSatisfy { !$0.erased })
            let mail = try server.get("/api/admin/mail", token: site.ownerToken).items
            #expect(mail.contains { $0["to"] as? String == "carmen.curenta@example.org" })

            // One retention.run entry per real run (the second changed nothing, and says so).
            let runs = try server.store.read { tx in try tx.audit.entries(entityId: site.organizationId) }
                .filter { $0.entry.action == "retention.run" }
            // The run that erased lists the entries it erased (verification asks that of each).
            let erasedOfOld = try server.store.read { tx in try tx.audit.entries(entityId: old["id"] as! String) }
                .filter(\.erased).map(\.seq)
            #expect(!erasedOfOld.isEmpty)
            #expect(runs.first?.entry.after == #"{"erasedEntries":"\#(SequenceRanges.text(erasedOfOld))","scans":1,"visitors":1}"#)
            #expect(runs.last?.entry.after == #"{"scans":0,"visitors":0}"#)
            #expect(runs.allSatisfy { $0.entry.actorKind == .user && $0.entry.actorId == site.owner.id })
            #expect(try AuditVerification.verify(database: server.directory + "/gatepass.db").isIntact)
        }
    }

    @Test func anErasedVisitorLeavesNoCopyInTheDatabaseFileAndTheAuditChainStillVerifies() throws {
        try withSite { server, site in
            let createKey = "create-the-erased-one"
            var fields = Self.personalFields
            fields["invite"] = true
            let created = try server.post("/api/visitors", token: site.ownerToken, fields, headers: ["Idempotency-Key": createKey])
            let id = try #require(created.string("id"))
            let shortId = try #require(created.string("shortId"))
            #expect(try server.post("/api/visitors/\(id)/approve-scan", token: site.ownerToken, ["note": "Escort by Radu Notescu"]).status == 200)
            #expect(try server.checkIn(site.scanner, shortId, headers: ["Idempotency-Key": "erased-checkin"]).status == 200)
            let newest = try #require(try server.get("/api/notifications?limit=1", token: site.ownerToken).items.first?["id"] as? String)
            #expect(try server.post("/api/notifications/\(newest)/read", token: site.ownerToken).status == 200)
            // On site: an erase waits for the check-out (the evacuation roll names who is inside).
            #expect(try server.post("/api/admin/visitors/\(id)/erase", token: site.ownerToken).isError(409, "CONFLICT"))
            #expect(try server.checkOut(site.scanner, shortId).status == 200)
            let statsBefore = try #require(try server.get("/api/visitor-scanner/stats", token: site.ownerToken).json)
            // The search finds what is there: every secret is in the file before the erase.
            let before = Self.databaseBytes(server)
            for secret in Self.secrets { #expect(Self.contains(before, secret), "\(secret) was never stored") }

            let erased = try server.post("/api/admin/visitors/\(shortId.lowercased())/erase", token: site.ownerToken)
            #expect(erased.status == 200 && erased.string("name") == "(anonymised)" && erased.string("status") == "CHECKED_OUT",
                    "\(erased.text)")

            let bytes = Self.databaseBytes(server)
            for secret in Self.secrets { #expect(!Self.contains(bytes, secret), "\(secret) is still in the database file") }
            #expect(Self.contains(bytes, shortId), "the visitor itself is still there")

            // Counted as before: today's stats and the history keep the anonymised visitor.
            let statsAfter = try #require(try server.get("/api/visitor-scanner/stats", token: site.ownerToken).json)
            #expect(NSDictionary(dictionary: statsAfter) == NSDictionary(dictionary: statsBefore))
            #expect(try server.history(site.ownerToken).contains { $0["visitorId"] as? String == id && $0["raw"] is NSNull })
            // A retried registration replays the answer, the visitor now anonymised: it is not run again.
            let replay = try server.post("/api/visitors", token: site.ownerToken, fields, headers: ["Idempotency-Key": createKey])
            #expect(replay.status == 201 && replay.headers["idempotent-replayed"] == "true")
            #expect(replay.string("id") == id && replay.string("name") == "(anonymised)" && replay.json?["email"] is NSNull)
            // The pass page no longer opens, notifications and the mail log say "(anonymised)".
            let titles = try server.get("/api/notifications", token: site.ownerToken).items.compactMap { $0["title"] as? String }
            #expect(titles.contains("(anonymised) arrived") && titles.contains("(anonymised) left"))
            let mail = try server.get("/api/admin/mail", token: site.ownerToken).items
            #expect(mail.contains { $0["kind"] as? String == "invitation" && $0["to"] as? String == "(anonymised)" })

            // The chain: values erased, hashes kept, one visitor.erase entry with the counts only.
            let entries = try server.store.read { tx in try tx.audit.entries(entityId: id) }
            #expect(entries.last?.entry.action == "visitor.erase")
            #expect(entries.dropLast().allSatisfy { $0.erased && $0.entry.before == nil && $0.entry.after == nil })
            let erasedSeqs = SequenceRanges.text(entries.dropLast().map(\.seq))
            #expect(entries.last?.entry.after == #"{"erasedEntries":"\#(erasedSeqs)","scans":1,"visitors":1}"#)
            #expect(entries.last?.entry.entity == "erase-request", "the record of an erasure is not the visitor's")
            #expect(try AuditVerification.verify(database: server.directory + "/gatepass.db").isIntact)

            // Again: nothing left to erase, no second entry.
            #expect(try server.post("/api/admin/visitors/\(id)/erase", token: site.ownerToken).status == 200)
            #expect(try server.store.read { tx in try tx.audit.entries(entityId: id) }.count == entries.count)
        }
    }

    @Test func theRecordsOfAnErasureAndOfAnExportAreNeverErased() throws {
        try withSite { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Erin Recorded", "email": "erin@example.org"])
            let id = try #require(visitor["id"] as? String)
            #expect(try server.get("/api/admin/visitors/\(id)/export", token: site.adminToken).status == 200)
            #expect(try server.post("/api/admin/visitors/\(id)/erase", token: site.ownerToken).status == 200)
            let entries = try server.store.read { tx in try tx.audit.entries(entityId: id) }
            let export = try #require(entries.first { $0.entry.action == "visitor.export" })
            #expect(!export.erased && export.entry.after != nil, "an export's counts hold nothing of the person")
            let created = try #require(entries.first { $0.entry.action == "visitor.create" })
            #expect(created.erased && created.entry.after == nil)
            let record = try #require(entries.last)
            #expect(record.entry.action == "visitor.erase" && !record.erased)
            #expect(record.entry.after?.contains("erasedEntries") == true, "\(String(describing: record.entry.after))")
            #expect(try AuditVerification.verify(database: server.directory + "/gatepass.db").isIntact)
        }
    }

    @Test func aVisitorStillOnSiteIsNotDueUntilCheckedOut() throws {
        try withSite(configure: Self.longLived) { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Stan Staying", "email": "stan@example.org"])
            let shortId = try #require(visitor["shortId"] as? String)
            #expect(try server.checkIn(site.scanner, shortId).status == 200)
            server.clock.advance(by: 200 * Self.day)
            #expect(try Self.run(server, site.ownerToken, dryRun: false) == .zero)
            #expect(try server.visitor(visitor["id"], site.ownerToken)["name"] as? String == "Stan Staying")
            #expect(try server.checkOut(site.scanner, shortId).status == 200)
            #expect(try Self.run(server, site.ownerToken, dryRun: true) == RetentionCounts(visitors: 1, scans: 1))
            #expect(try Self.run(server, site.ownerToken, dryRun: false) == RetentionCounts(visitors: 1, scans: 1))
        }
    }

    // MARK: - Export

    @Test func theExportHoldsEverythingStoredAboutTheVisitorWithoutMailBodiesAndIsAudited() throws {
        try withSite { server, site in
            let visitor = try Self.visitWithEveryCopy(server, site)
            let id = try #require(visitor["id"] as? String)
            let answer = try server.get("/api/admin/visitors/\(id)/export", token: site.adminToken)
            #expect(answer.status == 200, "\(answer.text)")
            let export = try #require(answer.json)
            #expect(Set(export.keys) == ["exportedAt", "visitor", "anonymisedAt", "scans", "events", "notificationMarks",
                                         "mail", "audit", "storedAnswers"])
            #expect((export["visitor"] as? [String: Any])?["email"] as? String == "ilinca.retentova@example.org")
            #expect(export["anonymisedAt"] is NSNull)
            #expect((export["scans"] as? [[String: Any]])?.count == 1)
            let kinds = (export["events"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
            #expect(kinds.contains("visitor.arrived") && kinds.contains("visitor.departed") && kinds.contains("notification.read"))
            #expect((export["notificationMarks"] as? [[String: Any]])?.first?["userId"] as? String == site.owner.id)
            #expect((export["notificationMarks"] as? [[String: Any]])?.first.map { Set($0.keys) }
                    == ["eventId", "userId", "readAt", "deletedAt"], "absent values are null, not left out")
            let mail = export["mail"] as? [[String: Any]] ?? []
            #expect(Set(mail.compactMap { $0["kind"] as? String }) == ["invitation", "arrival"])
            #expect(!answer.text.contains("passToken") && !answer.text.contains("payload"), "no mail body, no pass token")
            let actions = (export["audit"] as? [[String: Any]] ?? []).compactMap { $0["action"] as? String }
            #expect(actions.starts(with: ["visitor.create"]) && actions.contains("visitor.checkout"))
            #expect(export["storedAnswers"] as? Int == 2)
            // The read is audited, after the data it lists.
            let entries = try server.store.read { tx in try tx.audit.entries(entityId: id) }
            #expect(entries.last?.entry.action == "visitor.export" && entries.last?.entry.actorId == site.admin.id)
            // After an erase the export shows what is left.
            #expect(try server.post("/api/admin/visitors/\(id)/erase", token: site.ownerToken).status == 200)
            let after = try #require(try server.get("/api/admin/visitors/\(id)/export", token: site.ownerToken).json)
            #expect((after["visitor"] as? [String: Any])?["name"] as? String == "(anonymised)")
            #expect(after["anonymisedAt"] as? String != nil)
            let text = String(describing: after)
            for secret in Self.secrets { #expect(!text.contains(secret), "\(secret) is in the export after the erase") }
        }
    }

    // MARK: - Bad input

    @Test func malformedAndHostileBodiesChangeNothing() throws {
        try withSite(configure: Self.longLived) { server, site in
            let visitor = try Self.visitWithEveryCopy(server, site)
            server.clock.advance(by: 200 * Self.day)
            let path = "/api/admin/retention/run"
            for body in [#"{}"#, #"{"dryRun": "false"}"#, #"{"dryRun": null}"#, #"{"dryRun": [false]}"#, "[]", "not json",
                         #"{"dryRun": false"#, "\u{0}\u{1B}[2J", ""] {
                let answer = try server.postRaw(path, token: site.ownerToken, body: Array(body.utf8))
                #expect(answer.isError(400, "BAD_REQUEST"), "\(body.debugDescription): \(answer.status) \(answer.text)")
            }
            let huge = #"{"dryRun": false, "padding": ""# + String(repeating: "x", count: 70_000) + #""}"#
            #expect(try server.postRaw(path, token: site.ownerToken, body: Array(huge.utf8)).isError(413, "PAYLOAD_TOO_LARGE"))
            let injection = "'; DROP TABLE visitors; --".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            for reference in ["UNKNOWN1", String(repeating: "9", count: 3_000), "..%2F..%2Fetc", "%00", injection] {
                let erase = try server.postRaw("/api/admin/visitors/\(reference)/erase", token: site.ownerToken, body: nil)
                #expect(erase.status == 404 || erase.status == 400 || erase.status == 414, "\(reference): \(erase.status)")
                let export = try server.get("/api/admin/visitors/\(reference)/export", token: site.ownerToken)
                #expect(export.status == 404 || export.status == 400 || export.status == 414, "\(reference): \(export.status)")
            }
            // A body on the erase is not read; the visitor is still there after all of it.
            #expect(try server.visitor(visitor["id"], site.ownerToken)["name"] as? String == "Ilinca Retentova")
            #expect(try Self.run(server, site.ownerToken, dryRun: true) == RetentionCounts(visitors: 1, scans: 1))
        }
    }

    // MARK: - The daily run

    /// A server on `directory`'s database, started at `clock`'s time (for a restart on the same file).
    static func withServerOn<T>(_ directory: String, clock: TestClock, _ body: (GatePassServer) throws -> T) throws -> T {
        var configuration = ServerConfiguration()
        configuration.database = directory + "/gatepass.db"
        configuration.port = 0
        configuration.threads = 4
        configuration.sqliteSynchronous = "NORMAL"
        configuration.timeZone = "Europe/Bucharest"
        let server = try GatePassServer(configuration: configuration, devMode: true, clock: clock, logSink: RecordingLog())
        defer { server.stop(grace: .seconds(2)) }
        return try body(server)
    }

    static func bucharest(_ text: String) -> Date {
        try! SiteTime.parse(text, "time").instant(in: TimeZone(identifier: "Europe/Bucharest")!, "time")
    }

    @Test func theDailyRunComesAt0330SiteTimeOnceADayAndCatchesUpAfterDowntime() throws {
        try withTemporaryDirectory { directory in
            let clock = TestClock(Self.bucharest("2026-11-29 12:00"))
            let (organizationId, visitorId) = try Self.withServerOn(directory, clock: clock) { server in
                let owner = try Administration.addUser(store: server.store, email: "owner@acme.test", name: "Olga", role: .owner,
                                                       organization: "Acme", canScan: false, now: clock.now())
                let organizationId = owner.organizationId
                let visitor = Visitor(id: newIdentifier(), shortId: ShortID("K7Q2M9XD")!, name: "Ilinca Retentova",
                                      email: "ilinca.retentova@example.org",
                                      validity: ValidityWindow(from: Self.bucharest("2026-11-29 09:00"),
                                                               until: Self.bucharest("2026-11-29 18:00")),
                                      createdAt: clock.now())
                try server.store.write { tx in
                    try tx.visitors.insert(visitor, organizationId: organizationId)
                    var organization = try tx.directory.organization(id: organizationId)!
                    organization.retentionDays = 1
                    try tx.directory.update(organization)
                }
                // Never ran: due at once (an upgraded database is caught up the day it starts).
                #expect(server.application.runDueRetention().map(\.organizationId) == [organizationId])
                #expect(server.application.runDueRetention().isEmpty, "never twice the same day")
                clock.set(Self.bucharest("2026-11-30 03:29"))
                #expect(server.application.runDueRetention().isEmpty, "not before 03:30")
                clock.set(Self.bucharest("2026-11-30 03:31"))
                // Due, but the pass ended 1 day and 9½ hours ago... not yet more than 1 day before 18:00.
                let ran = server.application.runDueRetention()
                #expect(ran.map(\.organizationId) == [organizationId] && ran.first?.counts == .zero)
                #expect(try server.store.read { tx in try tx.directory.lastRetentionDay(organizationId: organizationId) }
                        == LocalDay("2026-11-30"))
                return (organizationId, visitor.id)
            }
            // Down from 30 November until 1 December has passed: its 03:30 run was missed.
            clock.set(Self.bucharest("2026-12-02 01:10"))
            try Self.withServerOn(directory, clock: clock) { server in
                // Caught up at start, before serving, and counted as 2 December's run.
                let record = try #require(try server.store.read { tx in try tx.visitors.find(id: visitorId) })
                #expect(record.visitor.name == "(anonymised)" && record.visitor.email == nil)
                #expect(try server.store.read { tx in try tx.directory.lastRetentionDay(organizationId: organizationId) }
                        == LocalDay("2026-12-02"))
                clock.set(Self.bucharest("2026-12-02 03:40"))
                #expect(server.application.runDueRetention().isEmpty, "the catch-up was this day's run")
                clock.set(Self.bucharest("2026-12-03 03:35"))
                #expect(server.application.runDueRetention().map(\.organizationId) == [organizationId])
                let runs = try server.store.read { tx in try tx.audit.entries(entityId: organizationId) }
                #expect(runs.map(\.entry.action) == ["retention.run"], "only the run that changed something is recorded")
                #expect(runs.first?.entry.actorKind == .system && runs.first?.entry.after == #"{"scans":0,"visitors":1}"#)
            }
            #expect(try AuditVerification.verify(database: directory + "/gatepass.db").isIntact)
        }
    }

    // MARK: - Purges by their own limits

    @Test func theMailLogAndPushDeliveriesArePurgedByTheirOwnLimits() throws {
        try withSite(configure: { Self.longLived(&$0); $0.mailLogRetentionHours = 48; $0.pushDeliveryRetentionHours = 24 }) { server, site in
            let device = "retention-device"
            #expect(try server.post("/api/visitors/devices/register", token: site.ownerToken,
                                    ["token": device, "platform": "web"]).status < 300)
            _ = try Self.visitWithEveryCopy(server, site)
            server.server.deliverDueMail()
            let mails = try server.get("/api/admin/mail?limit=500", token: site.ownerToken).items.count
            #expect(mails >= 2)
            func deliveries() throws -> Int {
                try server.get("/api/admin/push-deliveries?token=\(device)&limit=500", token: site.ownerToken).items.count
            }
            #expect(try deliveries() > 0)
            server.clock.advance(by: 23 * 3600)
            server.server.application.purgeExpiredRecords()
            #expect(try deliveries() > 0, "not yet 24 hours")
            server.clock.advance(by: 2 * 3600)
            server.server.application.purgeExpiredRecords()
            #expect(try deliveries() == 0)
            #expect(try server.get("/api/admin/mail?limit=500", token: site.ownerToken).items.count == mails, "not yet 48 hours")
            server.clock.advance(by: 24 * 3600)
            server.server.application.purgeExpiredRecords()
            #expect(try server.get("/api/admin/mail?limit=500", token: site.ownerToken).items.isEmpty)
            // The events themselves stay for eventRetentionHours (720): the notifications are still listed.
            #expect(!(try server.get("/api/notifications", token: site.ownerToken).items.isEmpty))
        }
    }

    // MARK: - The command

    @Test func theCommandRunsOnTheDatabaseFileAndItsDryRunChangesNothing() throws {
        try withTemporaryDirectory { directory in
            let clock = TestClock(Self.bucharest("2026-06-01 12:00"))
            let visitorId = try Self.withServerOn(directory, clock: clock) { server in
                let owner = try Administration.addUser(store: server.store, email: "owner@acme.test", name: "Olga", role: .owner,
                                                       organization: "Acme", canScan: false, now: clock.now())
                let visitor = Visitor(id: newIdentifier(), shortId: ShortID("K7Q2M9XE")!, name: "Ilinca Retentova",
                                      validity: ValidityWindow(from: clock.now(), until: clock.now()), createdAt: clock.now())
                try server.store.write { tx in try tx.visitors.insert(visitor, organizationId: owner.organizationId) }
                return visitor.id
            }
            let path = directory + "/gatepass.db"
            let later = clock.now().addingTimeInterval(200 * Self.day)
            let dry = try Administration.runRetention(database: path, dryRun: true, now: later)
            #expect(dry.map(\.counts) == [RetentionCounts(visitors: 1, scans: 0)] && dry.map(\.organization) == ["Acme"])
            #expect(try Administration.runRetention(database: path, dryRun: true, now: later).map(\.counts) == dry.map(\.counts))
            #expect(try Administration.runRetention(database: path, dryRun: false, now: later).map(\.counts) == dry.map(\.counts))
            #expect(try Administration.runRetention(database: path, dryRun: false, now: later).map(\.counts) == [.zero])
            let store = try ServerDatabase(path: path)
            defer { store.close() }
            #expect(try store.read { tx in try tx.visitors.find(id: visitorId)?.visitor.name } == "(anonymised)")
            #expect(try AuditVerification.verify(database: path).isIntact)
            #expect(throws: Administration.Failure.self) {
                try Administration.runRetention(database: path, secretFile: directory + "/missing.secret", dryRun: true, now: later)
            }
        }
    }

    // MARK: - The server's default

    /// The server file's `retentionDays` is the retention of every organization that sets
    /// none: answers show the number in force, `retentionDays: null` returns to it, and
    /// `gatepass admin retention --db`, which runs without the server's file, follows it.
    @Test func theServerFilesRetentionIsTheDefaultOfOrganizationsThatSetNone() throws {
        try withTemporaryDirectory { directory in
            let clock = TestClock(Self.bucharest("2026-06-01 12:00"))
            let path = directory + "/gatepass.db"
            func withServer<T>(retentionDays: Int, _ body: (GatePassServer) throws -> T) throws -> T {
                var configuration = ServerConfiguration()
                configuration.database = path
                configuration.port = 0
                configuration.threads = 4
                configuration.sqliteSynchronous = "NORMAL"
                configuration.retentionDays = retentionDays
                let server = try GatePassServer(configuration: configuration, devMode: true, clock: clock, logSink: RecordingLog())
                defer { server.stop(grace: .seconds(2)) }
                return try body(server)
            }
            let (organizationId, visitorId) = try withServer(retentionDays: 30) { server in
                let owner = try Administration.addUser(store: server.store, email: "owner@acme.test", name: "Olga", role: .owner,
                                                       organization: "Acme", canScan: false, now: clock.now())
                let visitor = Visitor(id: newIdentifier(), shortId: ShortID("K7Q2M9XF")!, name: "Ilinca Retentova",
                                      validity: ValidityWindow(from: clock.now(), until: clock.now()), createdAt: clock.now())
                try server.store.write { tx in try tx.visitors.insert(visitor, organizationId: owner.organizationId) }
                let app = server.application
                func shown() throws -> Int {
                    try server.store.read { tx in try app.organization(owner.organizationId, tx).retentionDays }
                }
                #expect(try shown() == 30, "the server's default, shown as the number in force")
                try server.store.write { tx in
                    var stored = try #require(try tx.directory.organization(id: owner.organizationId))
                    stored.retentionDays = 90
                    try tx.directory.update(stored)
                }
                #expect(try shown() == 90)
                return (owner.organizationId, visitor.id)
            }
            // PATCH {"retentionDays": null} is told apart from a PATCH without the key.
            let reset = try JSONDecoder().decode(OrganizationChanges.self, from: Data(#"{"retentionDays": null}"#.utf8))
            #expect(reset.retentionDays == .some(nil))
            #expect(try JSONDecoder().decode(OrganizationChanges.self, from: Data("{}".utf8)).retentionDays == nil)
            #expect(String(decoding: try JSONEncoder().encode(reset), as: UTF8.self) == #"{"retentionDays":null}"#)
            try withServer(retentionDays: 10) { server in
                try server.store.write { tx in
                    var stored = try #require(try tx.directory.organization(id: organizationId))
                    stored.retentionDays = nil
                    try tx.directory.update(stored)
                }
                #expect(try server.store.read { tx in try server.application.organization(organizationId, tx).retentionDays } == 10)
            }
            // 20 days after the pass ended: due under the server's 10, not under the old 180.
            let later = clock.now().addingTimeInterval(20 * Self.day)
            #expect(try Administration.runRetention(database: path, dryRun: false, now: later).map(\.counts)
                    == [RetentionCounts(visitors: 1, scans: 0)])
            let store = try ServerDatabase(path: path)
            defer { store.close() }
            #expect(try store.read { tx in try tx.visitors.find(id: visitorId)?.visitor.name } == "(anonymised)")
        }
    }

    /// Over HTTP: `retentionDays: null` returns to the server's default, which GET then shows.
    @Test func patchingRetentionToNullReturnsToTheServersDefault() throws {
        try withSite(configure: { $0.retentionDays = 45 }) { server, site in
            #expect(try server.get("/api/organization", token: site.deskToken).json?["retentionDays"] as? Int == 45)
            #expect(try server.patch("/api/organization", token: site.ownerToken, ["retentionDays": 90]).json?["retentionDays"] as? Int == 90)
            let reset = try server.patch("/api/organization", token: site.ownerToken, ["retentionDays": NSNull()])
            #expect(reset.status == 200 && reset.json?["retentionDays"] as? Int == 45, "\(reset.text)")
            #expect(try server.get("/api/organization", token: site.deskToken).json?["retentionDays"] as? Int == 45)
        }
    }
}
