import Foundation
import GatePassCore
import SQLite
import Testing
@testable import GatePassServer

/// Erasure leaves no copy (SQLite): `secure_delete` zeroes what a change frees, and after an
/// erase or a retention run a `wal_checkpoint(TRUNCATE)` is attempted without waiting for
/// anyone — a busy answer is retried on a timer — so once readers end, the bytes of the
/// database, its WAL and its shm hold no erased value. A reader held open across the erase
/// is what once left copies in the WAL (two of the name and five of the email), and a
/// checkpoint that waited for it held up every write meanwhile (4.7 s).
@Suite struct ErasureJournalTests {
    static let name = "Wilhelmina Walcopy"
    static let email = "wilhelmina.walcopy@example.org"

    /// Keeps the retries the store schedules and runs them when the test says.
    final class ManualRetryTimer: RetryTimer {
        private let scheduled = Locked<[(delay: Duration, work: @Sendable () -> Void)]>([])

        func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
            scheduled.withLock { $0.append((delay, work)) }
        }

        /// The delays of the retries waiting now.
        var pending: [Duration] { scheduled.withLock { $0.map(\.delay) } }

        /// Runs the retries waiting now (on this thread); those they schedule wait for the next call.
        func fire() {
            let due = scheduled.withLock { waiting in
                defer { waiting.removeAll() }
                return waiting
            }
            for retry in due { retry.work() }
        }
    }

    /// A site on a server whose store retries on `timer`.
    static func withSite<T>(timer: ManualRetryTimer, _ body: (TestServer, Site) throws -> T) throws -> T {
        try withTemporaryDirectory { directory in
            var configuration = ServerConfiguration()
            configuration.database = directory + "/gatepass.db"
            configuration.port = 0
            configuration.sqliteSynchronous = "NORMAL"
            patient(&configuration)
            let clock = TestClock(Timestamp.parse("2026-11-29T12:00:00Z")!)
            let log = RecordingLog()
            let server = try GatePassServer(configuration: configuration, devMode: true, clock: clock, logSink: log, retryTimer: timer)
            defer { server.stop(grace: .seconds(2)) }
            let test = TestServer(server: server, clock: clock, log: log, directory: directory)
            return try body(test, try test.makeSite())
        }
    }

    /// How often `needle` occurs in each of the database's files, as a thief with a copy of the
    /// folder would find it.
    static func copies(of needle: String, in server: TestServer) -> [String: Int] {
        var found: [String: Int] = [:]
        for suffix in ["", "-wal", "-shm"] {
            let bytes = Array(FileManager.default.contents(atPath: server.store.path + suffix) ?? Data())
            let count = occurrences(of: Array(needle.utf8), in: bytes)
            if count > 0 { found["gatepass.db" + suffix] = count }
        }
        return found
    }

    static func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> Int {
        guard !needle.isEmpty, needle.count <= haystack.count else { return 0 }
        var count = 0
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { count += 1 }
        }
        return count
    }

    /// A connection of another process's kind, in a read transaction that has read the
    /// visitors: its snapshot is fixed until it ends.
    static func openReader(_ server: TestServer) throws -> Connection {
        let reader = try Connection(path: server.store.path, readOnly: true)
        try reader.executeScript("BEGIN")
        _ = try reader.scalarInt("SELECT COUNT(*) FROM visitors")
        return reader
    }

    /// Runs `body` on a thread of its own and waits for it at most `seconds`: false when it
    /// did not finish by then (a write held up behind a checkpoint that waits for a reader).
    static func finishes(within seconds: Int, _ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        return done.wait(timeout: .now() + .seconds(seconds)) == .success
    }

    /// The server waits for another connection's lock up to 2 minutes, so a checkpoint that
    /// waited for the reader would hold the test far past its 30-second bound.
    static func patient(_ configuration: inout ServerConfiguration) {
        configuration.sqliteBusyTimeoutMilliseconds = 120_000
    }

    @Test func theWriterKeepsSecureDeleteOn() throws {
        try withServer { server in
            let value = try server.store.sqlite.writer.outsideTransaction { db in try db.scalarInt("PRAGMA secure_delete") }
            #expect(value == 1)
        }
    }

    @Test func anEraseWithAReaderOpenLeavesNoCopyOnceTheReaderEnds() throws {
        let timer = ManualRetryTimer()
        try Self.withSite(timer: timer) { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": Self.name, "email": Self.email, "invite": true])
            let id = try #require(visitor["id"] as? String)
            #expect(!Self.copies(of: Self.email, in: server).isEmpty, "the search finds what is there")
            let reader = try Self.openReader(server)
            var readerOpen = true
            defer { if readerOpen { reader.close() } }

            let erased = Locked<HTTPAnswer?>(nil)
            let answered = Self.finishes(within: 30) {
                erased.withLock { $0 = try? server.post("/api/admin/visitors/\(id)/erase", token: site.ownerToken) }
            }
            #expect(answered, "the erase waited for the reader")
            // A write while the reader still holds its snapshot is not held up either.
            let wrote = Self.finishes(within: 30) { _ = try? server.createVisitor(site.ownerToken, ["name": "Next Visitor"]) }
            #expect(wrote, "a write waited for the erase's checkpoint")
            guard answered && wrote else {
                reader.close()
                readerOpen = false
                return
            }
            #expect(erased.withLock { $0 }?.status == 200)
            // The reader still needs what its snapshot shows: the attempt was busy, and waits.
            #expect(timer.pending == [.seconds(1)])
            #expect(Self.copies(of: Self.email, in: server)["gatepass.db-wal", default: 0] > 0)
            timer.fire()
            #expect(timer.pending == [.seconds(1)], "busy again while the reader reads: retried again")

            try reader.executeScript("COMMIT")
            reader.close()
            readerOpen = false
            timer.fire()
            #expect(timer.pending.isEmpty, "done: nothing more to retry")
            #expect(Self.copies(of: Self.name, in: server) == [:])
            #expect(Self.copies(of: Self.email, in: server) == [:])
            #expect(try server.visitor(id, site.ownerToken)["name"] as? String == "(anonymised)")
        }
    }

    /// `gatepass admin retention --db` beside a running server: its attempts to empty the WAL
    /// wait for no lock (a closing checkpoint that waited held the server's writes up), it
    /// tries again after a pause, and it says so when a reader outlasts every attempt.
    @Test func theCommandsRetentionRunEmptiesTheJournalOnceTheReaderEnds() throws {
        try Self.withSite(timer: ManualRetryTimer()) { server, site in
            let start = server.clock.now()
            _ = try server.createVisitor(site.ownerToken, ["name": Self.name, "email": Self.email, "invite": true,
                                                           "validFrom": iso(start), "validUntil": iso(start.addingTimeInterval(3_600))])
            let reader = try Self.openReader(server)
            var readerOpen = true
            defer { if readerOpen { reader.close() } }
            var pauses: [Int] = []
            var warnings: [String] = []
            let outcomes = try Administration.runRetention(
                database: server.store.path, dryRun: false, now: start.addingTimeInterval(181 * 86_400), journalAttempts: 3,
                pause: { attempt in
                    pauses.append(attempt)
                    // The server's reader ends while the command waits between two attempts.
                    try? reader.executeScript("COMMIT")
                    reader.close()
                    readerOpen = false
                },
                warn: { warnings.append($0) })
            #expect(outcomes.map(\.counts.visitors) == [1])
            #expect(pauses == [1], "busy once, emptied at the second attempt")
            #expect(warnings.isEmpty, "\(warnings)")
            #expect(Self.copies(of: Self.name, in: server) == [:])
            #expect(Self.copies(of: Self.email, in: server) == [:])
        }
    }

    @Test func theCommandSaysWhenAReaderOutlastsItsAttempts() throws {
        try Self.withSite(timer: ManualRetryTimer()) { server, site in
            let start = server.clock.now()
            _ = try server.createVisitor(site.ownerToken, ["name": Self.name, "email": Self.email,
                                                           "validFrom": iso(start), "validUntil": iso(start.addingTimeInterval(3_600))])
            let reader = try Self.openReader(server)
            defer { reader.close() }
            var warnings: [String] = []
            let outcomes = try Administration.runRetention(
                database: server.store.path, dryRun: false, now: start.addingTimeInterval(181 * 86_400), journalAttempts: 2,
                pause: { _ in }, warn: { warnings.append($0) })
            #expect(outcomes.map(\.counts.visitors) == [1])
            #expect(warnings.count == 1 && warnings.first?.contains("gatepass.db-wal") == true, "\(warnings)")
            // Honest: the copies are still there while the reader reads.
            #expect(Self.copies(of: Self.email, in: server)["gatepass.db-wal", default: 0] > 0)
        }
    }

    @Test func aRetentionRunWithAReaderOpenLeavesNoCopyOnceTheReaderEnds() throws {
        let timer = ManualRetryTimer()
        try Self.withSite(timer: timer) { server, site in
            let start = server.clock.now()
            _ = try server.createVisitor(site.ownerToken, ["name": Self.name, "email": Self.email, "invite": true,
                                                           "validFrom": iso(start), "validUntil": iso(start.addingTimeInterval(3_600))])
            server.clock.advance(by: 181 * 86_400)
            let reader = try Self.openReader(server)
            var readerOpen = true
            defer { if readerOpen { reader.close() } }
            let ran = server.server.application.runDueRetention()
            #expect(ran.map(\.counts.visitors) == [1])
            #expect(timer.pending == [.seconds(1)], "the reader was in the way")
            try reader.executeScript("COMMIT")
            reader.close()
            readerOpen = false
            timer.fire()
            #expect(timer.pending.isEmpty)
            #expect(Self.copies(of: Self.name, in: server) == [:])
            #expect(Self.copies(of: Self.email, in: server) == [:])
        }
    }
}
