import Foundation
import GatePassCore
import SQLite
import Testing
@testable import GatePassServer

/// The audit log's chain and its verification (issue 12 item 2, first part: the chain, its head
/// outside the database and `audit verify`; the handlers do not write entries yet).
@Suite struct AuditChainTests {
    /// A database with `count` chained entries and its head written, in a temporary folder.
    private func withChain(_ count: Int, _ body: (ServerDatabase, AuditChain, String) throws -> Void) throws {
        try withTemporaryDirectory { folder in
            let path = folder + "/audit.db"
            let store = try ServerDatabase(path: path, synchronous: "NORMAL")
            defer { store.close() }
            let chain = AuditChain(key: Array("a key kept outside the database".utf8))
            let log = AuditLog(chain: chain, headPath: AuditHead.path(forDatabase: path))
            for index in 0..<count {
                let entry = AuditEntry(id: "entry-\(index)", at: Date(timeIntervalSince1970: 1_800_000_000 + Double(index)),
                                       actorKind: index % 3 == 0 ? .system : .user, actorId: index % 3 == 0 ? nil : "user-1",
                                       action: "visitor.create", entity: "visitor", entityId: "visitor-\(index)",
                                       before: nil, after: #"{"name":"Ana \#(index)"}"#)
                try store.write { tx in _ = try log.append(entry, organizationId: "org-1", tx) }
                try log.committed(store)
            }
            try body(store, chain, path)
        }
    }

    private func verdict(_ store: ServerDatabase, _ chain: AuditChain, _ path: String) throws -> AuditVerdict {
        try AuditVerifier.verify(store, chain: chain, head: try AuditHead.read(path: AuditHead.path(forDatabase: path)))
    }

    @Test func anUntouchedChainIsIntactAndItsHeadIsTheNewestEntry() throws {
        try withChain(5) { store, chain, path in
            #expect(try verdict(store, chain, path) == .intact(entries: 5))
            let head = try #require(try AuditHead.read(path: AuditHead.path(forDatabase: path)))
            #expect(head.seq == 5)
            var info = stat()
            #expect(stat(AuditHead.path(forDatabase: path), &info) == 0 && info.st_mode & 0o777 == 0o600)
        }
    }

    @Test func anAlteredValueIsNamedWithItsField() throws {
        try withChain(5) { store, chain, path in
            _ = try store.writeConnection { db in
                try db.execute(#"UPDATE audit_log SET after = '{"name":"Someone else"}' WHERE seq = 3"#)
            }
            #expect(try verdict(store, chain, path) == .altered(seq: 3, id: "entry-2", field: "after"))
        }
    }

    @Test func aRemovedEntryInTheMiddleBreaksTheNextLink() throws {
        try withChain(5) { store, chain, path in
            _ = try store.writeConnection { db in try db.execute("DELETE FROM audit_log WHERE seq = 2") }
            #expect(try verdict(store, chain, path) == .broken(seq: 3, id: "entry-2"))
        }
    }

    @Test func anInsertedEntryIsFoundEvenWithConsistentHashes() throws {
        try withChain(3) { store, chain, path in
            // A forger without the key copies a real row's hashes and link under a new id.
            _ = try store.writeConnection { db in
                try db.execute("""
                    INSERT INTO audit_log (id, organization_id, at, actor_kind, actor_id, action, entity, entity_id, before,
                        after, erased, field_hashes, link)
                    SELECT 'forged', organization_id, at, actor_kind, actor_id, action, entity, entity_id, before, after, 0,
                        field_hashes, link FROM audit_log WHERE seq = 3
                    """)
            }
            #expect(try verdict(store, chain, path) == .altered(seq: 4, id: "forged", field: "id"))
        }
    }

    @Test func removingTheNewestEntriesIsCaughtByTheHead() throws {
        try withChain(5) { store, chain, path in
            _ = try store.writeConnection { db in try db.execute("DELETE FROM audit_log WHERE seq >= 4") }
            #expect(try verdict(store, chain, path) == .truncated(lastSeq: 3, headSeq: 5))
        }
    }

    @Test func erasedValuesKeepTheChain() throws {
        try withChain(4) { store, chain, path in
            try store.write { tx in try tx.audit.eraseValues(seq: 2) }
            let erased = try store.read { tx in try tx.audit.entries(after: 1, limit: 1) }.first
            #expect(erased?.erased == true && erased?.entry.after == nil)
            #expect(try verdict(store, chain, path) == .intact(entries: 4))
        }
    }

    @Test func anotherKeyDoesNotVerify() throws {
        try withChain(2) { store, _, path in
            let other = AuditChain(key: Array("another key".utf8))
            let found = try verdict(store, other, path)
            #expect(found == .broken(seq: 1, id: "entry-0"))
        }
    }

    @Test func aHeadFileThatIsNotAHeadIsAnError() throws {
        try withTemporaryDirectory { folder in
            for text in ["", "12", "x 00", "3 abc", "0 " + String(repeating: "0", count: 64), "5 " + String(repeating: "g", count: 64)] {
                try text.write(toFile: folder + "/head", atomically: true, encoding: .utf8)
                do {
                    _ = try AuditHead.read(path: folder + "/head")
                    Issue.record("\(text.debugDescription) was read as a head")
                } catch {
                    #expect("\(error)".contains("is not one line"), "\(error)")
                }
            }
            #expect(try AuditHead.read(path: folder + "/missing") == nil)
        }
    }
}
