import Foundation
import GatePassCore
import SQLite
import Testing
@testable import GatePassServer

/// The audit log's chain and its verification (issue 12 item 2, first part: the chain, its head
/// outside the database and `audit verify`; the handlers do not write entries yet).
@Suite struct AuditChainTests {
    /// A database with `count` chained entries and its head written, in a temporary folder.
    private func withChain(_ count: Int, actions: [String] = ["visitor.create"],
                           _ body: (ServerDatabase, AuditChain, String) throws -> Void) throws {
        try withTemporaryDirectory { folder in
            let path = folder + "/audit.db"
            let store = try ServerDatabase(path: path, synchronous: "NORMAL")
            defer { store.close() }
            let chain = AuditChain(key: Array("a key kept outside the database".utf8))
            let log = AuditLog(chain: chain, headPath: AuditHead.path(forDatabase: path))
            #expect(try log.takeOver(store, now: Date(timeIntervalSince1970: 1_800_000_000), recreate: false,
                                     requirePrivate: true) == .empty)
            for index in 0..<count {
                let entry = AuditEntry(id: "entry-\(index)", at: Date(timeIntervalSince1970: 1_800_000_000 + Double(index)),
                                       actorKind: index % 3 == 0 ? .system : .user, actorId: index % 3 == 0 ? nil : "user-1",
                                       action: actions[index % actions.count],
                                       entity: String(actions[index % actions.count].prefix { $0 != "." }),
                                       entityId: "visitor-\(index)",
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

    /// Marked erased or not, a value that is not the one recorded is found: an erased entry
    /// holds no values (issue 27: the marker hid an edit from verification and the API).
    @Test(arguments: ["", ", erased = 1"])
    func anAlteredValueIsNamedWithItsField(marker: String) throws {
        try withChain(5) { store, chain, path in
            _ = try store.writeConnection { db in
                try db.execute(#"UPDATE audit_log SET after = '{"name":"Someone else"}'"# + marker + " WHERE seq = 3")
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

    /// Appends a `retention.run` entry listing `seqs` as erased, and moves the head to it.
    private func recordErasure(of seqs: [Int64], _ store: ServerDatabase, _ chain: AuditChain, _ path: String) throws {
        let log = AuditLog(chain: chain, headPath: AuditHead.path(forDatabase: path))
        try log.takeOver(store, now: Date(timeIntervalSince1970: 1_800_000_100), recreate: false, requirePrivate: true)
        let values = AuditValues.erasure(Erasure(counts: RetentionCounts(visitors: 1, scans: 0), auditEntries: seqs))
        let entry = AuditEntry(id: "erasure-\(seqs)", at: Date(timeIntervalSince1970: 1_800_000_100), actorKind: .system,
                               actorId: nil, action: "retention.run", entity: "retention", entityId: "org-1",
                               before: values.before, after: values.after)
        try store.write { tx in _ = try log.append(entry, organizationId: "org-1", tx) }
        try log.committed(store)
    }

    @Test func erasedValuesKeepTheChainWhenALaterEntryRecordsTheErasure() throws {
        try withChain(4) { store, chain, path in
            try store.write { tx in
                try tx.audit.eraseValues(seq: 2)
                try tx.audit.eraseValues(seq: 3)
            }
            let erased = try store.read { tx in try tx.audit.entries(after: 1, limit: 1) }.first
            #expect(erased?.erased == true && erased?.entry.after == nil)
            try recordErasure(of: [2, 3], store, chain, path)
            let record = try #require(try store.read { tx in try tx.audit.latest() })
            #expect(record.entry.after == #"{"erasedEntries":"2-3","scans":0,"visitors":1}"#)
            #expect(try verdict(store, chain, path) == .intact(entries: 5))
        }
    }

    @Test func entryNumbersAreListedAsRangesAndReadBackStrictly() {
        #expect(SequenceRanges.text([9, 3, 5, 6, 7, 12, 8, 3]) == "3,5-9,12")
        #expect(SequenceRanges.numbers("3,5-9,12") == [3...3, 5...9, 12...12])
        for bad in ["", "3,", "5-3", "3-3", "03", "3,2", "3,4", "1-2-3", "-1", "x", "3,3"] {
            #expect(SequenceRanges.numbers(bad) == nil, "\(bad.debugDescription) was read")
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

    // MARK: - What verification trusts (issue 27 item 2)

    @Test func anEntryOfAnActionNeverErasedCannotBeMarkedErased() throws {
        try withChain(4, actions: ["session.login"]) { store, chain, path in
            _ = try store.writeConnection { db in
                try db.execute("UPDATE audit_log SET before = NULL, after = NULL, erased = 1 WHERE seq = 2")
            }
            #expect(try verdict(store, chain, path) == .notErasable(seq: 2, id: "entry-1", action: "session.login"))
            // Even when a later record lists it: only the fixed table's actions are erased.
            try recordErasure(of: [2], store, chain, path)
            #expect(try verdict(store, chain, path) == .notErasable(seq: 2, id: "entry-1", action: "session.login"))
        }
    }

    @Test func anErasureThatNoLaterEntryRecordsIsTampering() throws {
        try withChain(4) { store, chain, path in
            try store.write { tx in try tx.audit.eraseValues(seq: 2) }
            #expect(try verdict(store, chain, path) == .erasureUnrecorded(seq: 2, id: "entry-1"))
            // A record listing other entries does not cover it.
            try store.write { tx in try tx.audit.eraseValues(seq: 3) }
            try recordErasure(of: [3], store, chain, path)
            #expect(try verdict(store, chain, path) == .erasureUnrecorded(seq: 2, id: "entry-1"))
        }
    }

    @Test func removingTheNewestEntriesWithTheHeadIsCaught() throws {
        try withChain(5) { store, chain, path in
            _ = try store.writeConnection { db in try db.execute("DELETE FROM audit_log WHERE seq >= 4") }
            #expect(unlink(AuditHead.path(forDatabase: path)) == 0)
            #expect(try verdict(store, chain, path) == .headMissing(lastSeq: 3))
        }
    }

    @Test func aHeadWrittenWithoutTheKeyIsCaught() throws {
        try withChain(5) { store, chain, path in
            _ = try store.writeConnection { db in try db.execute("DELETE FROM audit_log WHERE seq >= 4") }
            // Anyone who can read the database can write the head of what is left.
            let third = try #require(try store.read { tx in try tx.audit.latest() })
            let hex = third.link.map { String(format: "%02x", $0) }.joined()
            let headPath = AuditHead.path(forDatabase: path)
            try "3 \(hex)\n".write(toFile: headPath, atomically: true, encoding: .utf8)
            #expect(try verdict(store, chain, path) == .headUnsigned(seq: 3))
            try "3 \(hex) \(String(repeating: "ab", count: 32))\n".write(toFile: headPath, atomically: true, encoding: .utf8)
            #expect(try verdict(store, chain, path) == .headForged(seq: 3))
            // The key's own signature over the truncated end is what only the server can write.
            try AuditHead.signed(seq: 3, link: third.link, chain).save(path: headPath)
            #expect(try verdict(store, chain, path) == .intact(entries: 3))
        }
    }

    @Test func theHeadIsPrivateFromItsFirstByteEvenOverAStalePartialFile() throws {
        try withTemporaryDirectory { folder in
            let path = folder + "/db.audit-head"
            // A partial file left by a crash, open to everyone: never reused with its mode.
            let partial = path + ".partial-\(getpid())"
            #expect(FileManager.default.createFile(atPath: partial, contents: Data("junk".utf8)))
            #expect(chmod(partial, 0o666) == 0)
            let chain = AuditChain(key: Array("key".utf8))
            try AuditHead.signed(seq: 7, link: [UInt8](repeating: 1, count: 32), chain).save(path: path)
            var info = stat()
            #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
            #expect(!FileManager.default.fileExists(atPath: partial))
            let head = try #require(try AuditHead.read(path: path, requirePrivate: true))
            #expect(head.seq == 7 && head.isSigned(by: chain) && !head.isSigned(by: AuditChain(key: Array("other".utf8))))
            #expect(chmod(path, 0o640) == 0)
            #expect(throws: AuditHeadError.self) { try AuditHead.read(path: path, requirePrivate: true) }
            #expect(try AuditHead.read(path: path)?.seq == 7, "a command checking a copy still reads it")
        }
    }

    @Test func anEntryPutInTheHeadsPlaceIsCaughtAndStopsTheTakeOver() throws {
        try withChain(5) { store, chain, path in
            // The newest entry removed and its number given out again: what comes next chains
            // well from entry 4, but it is not the entry the head recorded.
            _ = try store.writeConnection { db in
                try db.execute("DELETE FROM audit_log WHERE seq = 5")
                try db.execute("UPDATE sqlite_sequence SET seq = 4 WHERE name = 'audit_log'")
            }
            let other = AuditLog(chain: chain, headPath: AuditHead.path(forDatabase: path) + ".elsewhere")
            let entry = AuditEntry(id: "replacement", at: Date(timeIntervalSince1970: 1_800_000_500), actorKind: .system,
                                   actorId: nil, action: "mail.test", entity: "mail", entityId: nil, before: nil, after: nil)
            let written = try store.write { tx in try other.append(entry, organizationId: nil, tx) }
            #expect(written.seq == 5)
            #expect(try verdict(store, chain, path) == .headMismatch(seq: 5))
            let log = AuditLog(chain: chain, headPath: AuditHead.path(forDatabase: path))
            do {
                try log.takeOver(store, now: Date(), recreate: false, requirePrivate: true)
                Issue.record("a head naming a replaced entry was taken over")
            } catch {
                #expect("\(error)".contains("does not hold that entry as written"), "\(error)")
            }
        }
    }
}
