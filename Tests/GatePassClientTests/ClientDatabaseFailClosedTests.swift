import Foundation
import SQLite
import Testing
@testable import GatePassClient

/// Issue 9, item 4, on the client: a value read from the state file that the code does not
/// understand is an error, never a default (an entry is never replayed with a guessed
/// credential, a mangled body, or from a guessed stream position).
@Suite struct ClientStoreFailClosedTests {
    func withStore<T>(_ body: (ClientDatabase, Connection) throws -> T) throws -> T {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-state-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ClientDatabase(directory: StateDirectory(path: path))
        defer { store.close() }
        let raw = try Connection(path: store.path)
        defer { raw.close() }
        try raw.executeScript("PRAGMA ignore_check_constraints = ON")
        return try body(store, raw)
    }

    func expectUnreadable<T>(_ what: String, _ read: () throws(ClientError) -> T) {
        do {
            let value = try read()
            Issue.record("\(what) read \(value)")
        } catch {
            #expect("\(error)".contains("state file"), "\(what): \(error)")
        }
    }

    @Test func outboxEntriesThatCannotBeReadAreErrors() throws {
        try withStore { store, raw in
            let entry = try store.enqueue(kind: "checkin", method: "POST", url: "http://gate/api/visitor-scanner/checkin",
                                          body: "{\"shortId\":\"K7Q2M9XD\"}", credential: .scanner, scannedAt: nil, now: Date())
            #expect(try store.outboxEntries().map(\.id) == [entry.id])
            var current = entry.id
            for damage in ["UPDATE outbox SET credential = 'root'", "UPDATE outbox SET body = x'ff00'",
                           "UPDATE outbox SET created_at = 'yesterday'", "UPDATE outbox SET attempts = NULL",
                           // Out of range: a time past year 9999 or before year 0, a negative count
                           // (the backoff subtracts from it: -2^63 trapped there).
                           "UPDATE outbox SET next_attempt_at = 9223372036854775807",
                           "UPDATE outbox SET scanned_at = -9223372036854775808",
                           "UPDATE outbox SET attempts = -9223372036854775808"] {
                try raw.execute("SAVEPOINT damage")
                do {
                    try raw.execute(damage)
                } catch {
                    // NOT NULL holds even without CHECK constraints; such damage cannot happen.
                    try raw.execute("ROLLBACK TO damage")
                    try raw.execute("RELEASE damage")
                    continue
                }
                try raw.execute("RELEASE damage")
                expectUnreadable(damage) { () throws(ClientError) in try store.outboxEntries() }
                expectUnreadable(damage) { () throws(ClientError) in try store.outboxEntry(id: current) }
                try raw.executeScript("DELETE FROM outbox")
                current = try store.enqueue(kind: "checkin", method: "POST", url: "http://gate/x", body: "{}", credential: .login,
                                            scannedAt: nil, now: Date()).id
            }
        }
    }

    @Test func aDeadLetterWithAnUnknownCredentialIsAnError() throws {
        try withStore { store, raw in
            let entry = try store.enqueue(kind: "approve", method: "POST", url: "http://gate/x", body: nil, credential: .login,
                                          scannedAt: nil, now: Date())
            try store.killEntry(entry, status: 409, code: "CONFLICT", message: "already decided", now: Date())
            #expect(try store.deadLetters().count == 1)
            try raw.execute("UPDATE dead_letters SET credential = 'anyone'")
            expectUnreadable("dead letter") { () throws(ClientError) in try store.deadLetters() }
        }
    }

    @Test func anUnreadableLastEventIdIsAnError() throws {
        try withStore { store, _ in
            try store.setLastEventID(41, server: "http://gate")
            #expect(try store.lastEventID(server: "http://gate") == 41)
            for damaged in ["forty-two", "", "-3", "9999999999999999999999"] {
                try store.setMeta(ClientDatabase.lastEventIDKeyPrefix + "http://gate", damaged)
                do {
                    let id = try store.lastEventID(server: "http://gate")
                    Issue.record("\(damaged.debugDescription) read as \(String(describing: id))")
                } catch {
                    #expect("\(error)".contains("last event id"), "\(error)")
                }
            }
        }
    }
}

extension ClientStoreFailClosedTests {
    @Test func aDamagedDeviceTokenIsAnError() throws {
        try withStore { store, _ in
            let token = try store.deviceToken()
            #expect(try store.deviceToken() == token, "kept across calls")
            for damaged in ["", "has space", "tab\there", String(repeating: "x", count: 513), "ünicode"] {
                try store.setMeta(ClientDatabase.deviceTokenKey, damaged)
                expectUnreadable(damaged.debugDescription) { () throws(ClientError) in try store.deviceToken() }
            }
        }
    }
}
