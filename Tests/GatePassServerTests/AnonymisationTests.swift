import Foundation
import GatePassCore
import SQLite
import Testing
@testable import GatePassServer

/// The pure parts of anonymisation (events and stored answers rewritten) and migration 0008.
@Suite struct AnonymisationTests {
    static let visitor = Visitor(id: "v-1", shortId: ShortID("K7Q2M9XD")!, name: "Ana Pop", email: "ana@example.com",
                                 phone: "+40 712", company: "Acme", purpose: "Audit", hostName: "Ion",
                                 hostEmail: "ion@acme.test", status: .rejected,
                                 validity: ValidityWindow(from: Date(timeIntervalSince1970: 0), until: Date(timeIntervalSince1970: 60)),
                                 createdAt: Date(timeIntervalSince1970: 0), decisionNote: "Not today, Ana")

    static func text(_ value: some Encodable) -> String { String(decoding: JSONBody.encode(value), as: UTF8.self) }

    @Test func aDecisionEventKeepsItsStatusAndItsTitleSaysRejected() throws {
        let data = EventLog.encode(VisitorEventData(visitor: Self.visitor, checkpointId: "gate"))
        let title = NotificationItem.title(for: .visitorDecided, visitorName: "Ana Pop", decision: .rejected)
        let erased = EventLog.anonymised(kindName: "visitor.decided", title: title, data: data)
        #expect(erased.title == "(anonymised) was rejected")
        let event = try JSONDecoder().decode(VisitorEventData.self, from: Data(erased.data.utf8))
        #expect(event.visitor == Self.visitor.anonymised() && event.checkpointId == "gate")
        #expect(!erased.data.contains("Ana") && !erased.data.contains("ana@"))
    }

    @Test func notificationEventsGetTheAnonymisedTitleAndOthersStayAsTheyWere() throws {
        let item = NotificationItem(id: "7", kind: .visitorDecided, title: "Ana Pop was rejected", visitorId: "v-1",
                                    createdAt: Timestamp(Date(timeIntervalSince1970: 0)), readAt: nil)
        let erased = EventLog.anonymised(kindName: "notification.read", title: nil,
                                         data: EventLog.encode(NotificationEventData(notification: item)))
        let event = try JSONDecoder().decode(NotificationEventData.self, from: Data(erased.data.utf8))
        #expect(event.notification.title == "(anonymised) was rejected" && erased.title == nil)
        let deleted = EventLog.encode(NotificationDeletedData(id: "7"))
        #expect(EventLog.anonymised(kindName: "notification.deleted", title: nil, data: deleted) == (nil, deleted))
        // What cannot be read cannot be shown to be free of the visitor.
        #expect(EventLog.anonymised(kindName: "visitor.future-kind", title: "Ana Pop did something", data: #"{"name":"Ana"}"#)
                == ("visitor.future-kind", "{}"))
        #expect(EventLog.anonymised(kindName: "visitor.arrived", title: "Ana Pop arrived", data: "not json")
                == ("(anonymised) arrived", "{}"))
    }

    @Test func aStoredAnswerHasItsVisitorsAnonymisedWhereverTheySitAndNothingElseChanged() throws {
        var other = Self.visitor
        other.id = "v-2"
        let body = Array(#"{"result":"CHECKED_IN","visitor":\#(Self.text(Self.visitor)),"others":[\#(Self.text(other))]}"#.utf8)
        let erased = try #require(StoredAnswerErasure.anonymised(body, visitorIds: ["v-1"]))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(erased)) as? [String: Any])
        #expect(json["result"] as? String == "CHECKED_IN")
        let visitor = try JSONDecoder().decode(Visitor.self,
                                               from: JSONSerialization.data(withJSONObject: json["visitor"] as Any))
        #expect(visitor == Self.visitor.anonymised())
        let kept = try #require((json["others"] as? [[String: Any]])?.first)
        #expect(kept["name"] as? String == "Ana Pop", "another visitor in the same answer is not touched")
        #expect(StoredAnswerErasure.anonymised(body, visitorIds: ["v-3"]) == nil)
        #expect(StoredAnswerErasure.anonymised(Array("not json".utf8), visitorIds: ["v-1"]) == nil)
        #expect(StoredAnswerErasure.anonymised(Array(#"{"id":"v-1","shortId":"K7Q2M9XD","name":7}"#.utf8), visitorIds: ["v-1"])
                .map { String(decoding: $0, as: UTF8.self) } == #"{"id":"v-1","shortId":"K7Q2M9XD"}"#,
                "a visitor that does not decode keeps its id and short id only")
    }

    @Test func migration0008KeepsScansAndLinksMailToItsVisitor() throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory + "/old.db")
            defer { connection.close() }
            try connection.executeScript("PRAGMA foreign_keys = ON")
            try Migrator.migrate(connection, Array(Schema.sqliteMigrations.prefix { $0.id < "0008-retention" }))
            try connection.executeScript("""
                INSERT INTO organizations (id, name, created_at) VALUES ('org', 'Acme', 0);
                INSERT INTO checkpoints (id, organization_id, name, is_default, created_at) VALUES ('gate', 'org', 'Main gate', 1, 0);
                INSERT INTO users (id, organization_id, email, name, role, created_at) VALUES ('owner', 'org', 'o@acme.test', 'O', 'OWNER', 0);
                INSERT INTO visitors (id, organization_id, short_id, name, requires_approval, walk_in, status,
                                      valid_from, valid_until, created_at, change_seq, search_text, lookup_text)
                    VALUES ('v1', 'org', 'AAAAAAAA', 'Guest', 0, 0, 'CHECKED_OUT', 0, 1, 0, 1, '', '');
                INSERT INTO scans (seq, id, organization_id, short_id, raw, result, visitor_id, checkpoint_id, scanned_by,
                                   scanned_at, received_at, offline)
                    VALUES (41, 's1', 'org', 'AAAAAAAA', 'GP1:AAAAAAAA', 'CHECKED_IN', 'v1', 'gate', 'owner', 5, 5, 0);
                INSERT INTO mail_queue (id, organization_id, kind, recipient, payload, status, created_at, next_attempt_at, give_up_at)
                    VALUES ('m1', 'org', 'invitation', 'g@x.test', '{"invitation":{"visitorId":"v1","passToken":"t"}}', 'queued', 0, 0, 9),
                           ('m2', 'org', 'otp', 'o@acme.test', '{"otp":{"code":"123456"}}', 'queued', 0, 0, 9),
                           ('m3', 'org', 'arrival', 'h@x.test', NULL, 'sent', 0, 0, 9);
                """)
            #expect(try Migrator.migrate(connection, Schema.sqliteMigrations).contains("0008-retention"))
            #expect(try connection.query("PRAGMA foreign_key_check") { try $0.string(0) }.isEmpty)
            #expect(try connection.query("SELECT id, visitor_id FROM mail_queue ORDER BY id") {
                "\(try $0.string(0))=\(try $0.optionalString(1) ?? "-")"
            } == ["m1=v1", "m2=-", "m3=-"])
            #expect(try connection.query("SELECT seq, raw FROM scans") { "\(try $0.int64(0)) \(try $0.optionalString(1) ?? "-")" }
                    == ["41 GP1:AAAAAAAA"])
            // raw may be null now, and new scans continue the sequence.
            try connection.execute("""
                INSERT INTO scans (id, organization_id, short_id, raw, result, visitor_id, checkpoint_id, scanned_by,
                                   scanned_at, received_at, offline)
                VALUES ('s2', 'org', NULL, NULL, 'INVALID', NULL, 'gate', 'owner', 6, 6, 0)
                """)
            #expect(try connection.scalarInt("SELECT seq FROM scans WHERE id = 's2'") == 42)
            #expect(throws: SQLiteError.self) {
                try connection.execute("""
                    INSERT INTO scans (id, organization_id, raw, result, checkpoint_id, scanned_by, scanned_at, received_at, offline)
                    VALUES ('s3', 'org', NULL, 'INVALID', 'nowhere', 'owner', 6, 6, 0)
                    """)
            }
            #expect(try connection.scalarInt("SELECT COUNT(*) FROM visitors WHERE anonymised_at IS NULL") == 1)
        }
    }
}
