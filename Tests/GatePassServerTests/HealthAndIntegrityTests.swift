import Foundation
import GatePassCore
import LoopbackHTTP
import SQLite
import Testing
@testable import GatePassServer

/// Issue 9, item 4: healthz says ok only while the database can be written; a corrupt
/// database or a secret readable by others stops the server at start.
@Suite struct HealthAndIntegrityTests {
    /// The writer connection refuses writes as a read-only database does (`PRAGMA query_only`
    /// makes every write fail with SQLITE_READONLY). Tests run as root, whom file modes do not
    /// stop, so the read-only condition is made inside SQLite, on the writer itself.
    static func makeWriterReadOnly(_ server: TestServer, _ readOnly: Bool) throws {
        try server.store.sqlite.writer.outsideTransaction { db in try db.executeScript("PRAGMA query_only = \(readOnly ? "ON" : "OFF")") }
    }

    @Test func healthzIs503WhenTheDatabaseCannotBeWrittenAndProbesAtMostOnceASecond() throws {
        try withServer { server in
            #expect(try server.get("/api/healthz").status == 200)
            try Self.makeWriterReadOnly(server, true)
            // Within the same second the cached answer stands (the probe is not run again).
            #expect(try server.get("/api/healthz").status == 200)
            server.clock.advance(by: 1.1)
            let down = try server.get("/api/healthz")
            #expect(down.isError(503, "UNAVAILABLE"), "\(down.status) \(down.text)")
            #expect(down.headers["retry-after"] == "1")
            #expect(server.log.all.contains { $0.contains("readonly") || $0.contains("read-only") }, "\(server.log.all.suffix(3))")
            try Self.makeWriterReadOnly(server, false)
            #expect(try server.get("/api/healthz").isError(503, "UNAVAILABLE"), "still cached")
            server.clock.advance(by: 1.1)
            #expect(try server.get("/api/healthz").status == 200)
        }
    }

    /// Many health checks at once run one probe; the ones that arrive while it runs wait for
    /// its outcome (there is no earlier one), and a failed probe is answered until the next second.
    @Test func concurrentHealthChecksShareOneProbe() throws {
        let clock = TestClock()
        let probes = Locked(0)
        let release = DispatchSemaphore(value: 0)
        let failing = Locked(false)
        let probe = WriteProbe(clock: clock, logSink: RecordingLog()) {
            probes.withLock { $0 += 1 }
            release.wait()
            if failing.withLock({ $0 }) { throw TestFailure("read-only") }
        }
        let started = DispatchSemaphore(value: 0)
        let results = Locked<[String?]>([])
        let done = DispatchGroup()
        for _ in 0..<24 {
            done.enter()
            Thread {
                started.signal()
                let failure = probe.failure()
                results.withLock { $0.append(failure) }
                done.leave()
            }.start()
        }
        for _ in 0..<24 { started.wait() }
        release.signal()
        #expect(done.wait(timeout: .now() + 10) == .success, "a health check hung")
        #expect(probes.withLock { $0 } == 1)
        #expect(results.withLock { $0 }.count == 24 && results.withLock { $0 }.allSatisfy { $0 == nil })
        failing.withLock { $0 = true }
        clock.advance(by: 1)
        release.signal()
        #expect(probe.failure()?.contains("read-only") == true)
        #expect(probe.failure()?.contains("read-only") == true, "cached within the second")
        #expect(probes.withLock { $0 } == 2)
    }

    /// Issue 9, item 7: another process holding the write lock past the busy timeout is 503
    /// with Retry-After (worth a retry), not 500; nothing is applied; reads go on (WAL).
    @Test func aLockedDatabaseAnswers503WithRetryAfter() throws {
        try withSite(configure: { $0.sqliteBusyTimeoutMilliseconds = 50 }) { server, site in
            let visitor = try server.createVisitor(site.ownerToken)
            let shortId = visitor["shortId"] as! String
            server.clock.advance(by: 2)
            let other = try Connection(path: server.store.path)
            defer { other.close() }
            try other.execute("BEGIN EXCLUSIVE")
            let checkIn = try server.checkIn(site.scanner, shortId, headers: ["Idempotency-Key": "busy-1"])
            #expect(checkIn.isError(503, "UNAVAILABLE"), "\(checkIn.status) \(checkIn.text)")
            #expect(checkIn.headers["retry-after"] == "1")
            let plain = try server.post("/api/visitors", token: site.ownerToken, ["name": "Busy Person"])
            #expect(plain.isError(503, "UNAVAILABLE") && plain.headers["retry-after"] == "1")
            #expect(server.log.all.contains { $0.contains("locked") || $0.contains("busy") }, "\(server.log.all.suffix(3))")
            let health = try server.get("/api/healthz")
            #expect(health.isError(503, "UNAVAILABLE") && health.headers["retry-after"] == "1")
            #expect(try server.get("/api/visitors", token: site.ownerToken).status == 200, "reads go on")
            try other.execute("ROLLBACK")
            // The same key again: the 503 was not stored, so the check-in now happens once.
            let again = try server.checkIn(site.scanner, shortId, headers: ["Idempotency-Key": "busy-1"])
            #expect(again.status == 200 && again.string("result") == "CHECKED_IN", "\(again.text)")
            #expect(again.headers["idempotent-replayed"] == nil)
            server.clock.advance(by: 1.1)
            #expect(try server.get("/api/healthz").status == 200)
        }
    }

    /// The file's header damaged while the server runs: healthz stops saying ok.
    @Test func healthzIs503WhenTheFileIsDamagedWhileRunning() throws {
        try withServer { server in
            #expect(try server.get("/api/healthz").status == 200)
            // Everything into the main file, so that new readers read page 1 from it.
            _ = try server.store.sqlite.writer.outsideTransaction { db in try db.executeScript("PRAGMA wal_checkpoint(TRUNCATE)") }
            let handle = try #require(FileHandle(forUpdatingAtPath: server.store.path))
            handle.write(Data(repeating: 0x5A, count: 100))
            try handle.close()
            server.clock.advance(by: 1.1)
            let answer = try server.get("/api/healthz")
            #expect(answer.isError(503, "UNAVAILABLE"), "\(answer.status) \(answer.text)")
            #expect(server.log.all.contains { $0.contains("not a database") }, "\(server.log.all.suffix(3))")
        }
    }

    /// A page of a real database overwritten with garbage: the server does not start on it.
    @Test func theServerRefusesToStartOnADatabaseThatFailsQuickCheck() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/gatepass.db"
            var configuration = ServerConfiguration()
            configuration.database = path
            configuration.port = 0
            let first = try GatePassServer(configuration: configuration, logSink: RecordingLog())
            for index in 0..<300 {
                _ = try Administration.addUser(store: first.store, email: "user\(index)@acme.test", name: "User \(index)",
                                               role: .approver, organization: "Acme", canScan: false, now: Date())
            }
            first.stop()
            let (pageSize, page) = try {
                let connection = try Connection(path: path)
                defer { connection.close() }
                let pageSize = try connection.scalarInt("PRAGMA page_size")!
                let root = try connection.scalarInt("SELECT rootpage FROM sqlite_schema WHERE name = 'users'")!
                return (pageSize, root)
            }()
            let handle = try #require(FileHandle(forUpdatingAtPath: path))
            try handle.seek(toOffset: UInt64((page - 1) * pageSize))
            handle.write(Data((0..<Int(pageSize)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 13) }))
            try handle.close()
            do {
                let server = try GatePassServer(configuration: configuration, logSink: RecordingLog())
                server.stop()
                Issue.record("the server started on a corrupt database")
            } catch {
                #expect("\(error)".contains("quick_check"), "\(error)")
            }
        }
    }

    @Test func aSecretReadableByOthersIsRefusedAtStart() throws {
        try withTemporaryDirectory { directory in
            var configuration = ServerConfiguration()
            configuration.database = directory + "/gatepass.db"
            configuration.port = 0
            let first = try GatePassServer(configuration: configuration, logSink: RecordingLog())
            first.stop()
            let secret = configuration.resolvedSecretFile
            var status = stat()
            #expect(stat(secret, &status) == 0 && status.st_mode & 0o777 == 0o600)
            for mode: mode_t in [0o644, 0o640, 0o604, 0o660] {
                #expect(chmod(secret, mode) == 0)
                do {
                    let server = try GatePassServer(configuration: configuration, logSink: RecordingLog())
                    server.stop()
                    Issue.record("started with a secret of mode \(String(mode, radix: 8))")
                } catch {
                    #expect("\(error)".contains(secret) && "\(error)".contains("chmod 600"), "\(error)")
                }
            }
            #expect(chmod(secret, 0o600) == 0)
            let again = try GatePassServer(configuration: configuration, logSink: RecordingLog())
            again.stop()
        }
    }

    // MARK: - Private and honest storage (issue 27, item 6)

    /// A server configuration on a database in `directory`.
    static func configuration(_ directory: String) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.database = directory + "/gatepass.db"
        configuration.port = 0
        configuration.sqliteSynchronous = "NORMAL"
        return configuration
    }

    /// The server does not start with `configuration`; what it said.
    static func refusal(_ configuration: ServerConfiguration) -> String? {
        do {
            let server = try GatePassServer(configuration: configuration, logSink: RecordingLog())
            server.stop()
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// Whether `chattr` can set the immutable flag here (root on ext4 can; a container without
    /// CAP_LINUX_IMMUTABLE or tmpfs cannot).
    static func immutableFlagWorks(in directory: String) -> Bool {
        let probe = directory + "/chattr-probe"
        guard FileManager.default.createFile(atPath: probe, contents: Data("x".utf8)) else { return false }
        defer {
            _ = chattr("-i", probe)
            unlink(probe)
        }
        guard chattr("+i", probe) else { return false }
        return open(probe, O_WRONLY | O_CLOEXEC) == -1 && errno == EPERM
    }

    /// Runs `chattr flag path`; whether it succeeded.
    @discardableResult
    static func chattr(_ flag: String, _ path: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
        process.arguments = [flag, path]
        process.standardError = Pipe()
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// The database, its WAL and its shm: each one that its group or others may use stops the
    /// start, named, as the secret does; a command reading a copy reads a 0644 one.
    @Test func aDatabaseWALOrShmThatOthersMayUseIsRefusedAtStart() throws {
        try withTemporaryDirectory { directory in
            let configuration = Self.configuration(directory)
            let database = directory + "/gatepass.db"
            let first = try GatePassServer(configuration: configuration, logSink: RecordingLog())
            first.stop()
            for path in [database, database + "-wal", database + "-shm"] {
                // A clean stop removes the WAL and shm: stand-ins are what a crash leaves.
                if !FileManager.default.fileExists(atPath: path) { #expect(FileManager.default.createFile(atPath: path, contents: nil)) }
                for mode: mode_t in [0o644, 0o640, 0o604, 0o660, 0o606, 0o620] {
                    #expect(chmod(path, mode) == 0)
                    let refused = Self.refusal(configuration)
                    #expect(refused?.contains(path + " has mode \(String(mode, radix: 8))") == true
                            && refused?.contains("chmod 600 \(path)") == true,
                            "\(path) \(String(mode, radix: 8)): \(refused ?? "started")")
                }
                #expect(chmod(path, 0o600) == 0)
            }
            #expect(Self.refusal(configuration) == nil)
            // Reading a copy: any mode will do.
            #expect(chmod(database, 0o644) == 0)
            #expect(try AuditVerification.verify(database: database).isIntact)
        }
    }

    /// Immutable, on a read-only mount or without permission, a database file is opened by
    /// SQLite read-only without a word: the server must not start on it (it once did, and
    /// answered every write 500).
    @Test func aDatabaseThatCannotBeWrittenIsRefusedAtStartNamingTheFile() throws {
        try withTemporaryDirectory { directory in
            try #require(Self.immutableFlagWorks(in: directory), "chattr +i must work in the temporary folder (root on ext4)")
            let configuration = Self.configuration(directory)
            let database = directory + "/gatepass.db"
            let first = try GatePassServer(configuration: configuration, logSink: RecordingLog())
            first.stop()
            #expect(Self.chattr("+i", database))
            defer { Self.chattr("-i", database) }
            let refused = Self.refusal(configuration)
            #expect(refused?.contains(database) == true && refused?.contains("cannot be written") == true, "\(refused ?? "started")")
            Self.chattr("-i", database)
            #expect(Self.refusal(configuration) == nil)
        }
    }

    /// A file made immutable while the server runs still takes writes into the WAL: the
    /// health probe finds it (a new connection can only read it), and from then on healthz
    /// and every write answer 503 — also after the flag is gone, until a restart.
    @Test func aDatabaseMadeUnwritableWhileServingIsFoundByTheProbe() throws {
        try withSite { server, site in
            try #require(Self.immutableFlagWorks(in: server.directory), "chattr +i must work in the temporary folder (root on ext4)")
            #expect(try server.get("/api/healthz").status == 200)
            #expect(Self.chattr("+i", server.store.path))
            defer { Self.chattr("-i", server.store.path) }
            server.clock.advance(by: 1.1)
            let health = try server.get("/api/healthz")
            #expect(health.isError(503, "UNAVAILABLE"), "\(health.status) \(health.text)")
            let write = try server.post("/api/visitors", token: site.ownerToken, ["name": "After The Flag"])
            #expect(write.isError(503, "UNAVAILABLE"), "\(write.status) \(write.text)")
            #expect(server.log.all.contains { $0.contains(server.store.path) && $0.contains("cannot be written") },
                    "\(server.log.all.suffix(3))")
            Self.chattr("-i", server.store.path)
            server.clock.advance(by: 1.1)
            #expect(try server.get("/api/healthz").isError(503, "UNAVAILABLE"), "until a restart")
            #expect(try server.post("/api/visitors", token: site.ownerToken, ["name": "Still Refused"]).isError(503, "UNAVAILABLE"))
            #expect(try server.get("/api/visitors", token: site.ownerToken).status == 200, "reads go on")
        }
    }

    /// A write that finds the database read-only answers 503, never 500, and so does every
    /// write and health check after it, until a restart — whether or not the write carried
    /// an Idempotency-Key (the handler's own savepoint sees the failure then).
    @Test func aWriteThatFindsTheDatabaseReadOnlyIs503AndEveryOneAfterIt() throws {
        for withKey in [false, true] {
            try withSite { server, site in
                #expect(try server.get("/api/healthz").status == 200)
                try Self.makeWriterReadOnly(server, true)
                let headers = withKey ? ["Idempotency-Key": "read-only-1"] : [:]
                let refused = try server.post("/api/visitors", token: site.ownerToken, ["name": "Read Only"], headers: headers)
                #expect(refused.isError(503, "UNAVAILABLE"), "key \(withKey): \(refused.status) \(refused.text)")
                try Self.makeWriterReadOnly(server, false)
                let after = try server.post("/api/visitors", token: site.ownerToken, ["name": "After"], headers: headers)
                #expect(after.isError(503, "UNAVAILABLE"), "key \(withKey): \(after.status) \(after.text)")
                // The same second: the cached probe outcome must not say ok.
                #expect(try server.get("/api/healthz").isError(503, "UNAVAILABLE"), "key \(withKey)")
                server.clock.advance(by: 1.1)
                #expect(try server.get("/api/healthz").isError(503, "UNAVAILABLE"), "key \(withKey)")
                #expect(try server.get("/api/visitors", token: site.ownerToken).items.isEmpty, "nothing was written")
            }
        }
    }

    /// A page of the visitors table damaged under the running server: the write that reads
    /// it answers 503 (SQLITE_CORRUPT), not 500, and the server stops taking writes.
    @Test func aWriteOnACorruptDatabaseIs503() throws {
        try withSite { server, site in
            _ = try server.createVisitor(site.ownerToken)
            _ = try server.store.sqlite.writer.outsideTransaction { db in try db.executeScript("PRAGMA wal_checkpoint(TRUNCATE)") }
            let (pageSize, page) = try server.store.readConnection { db in
                (try db.scalarInt("PRAGMA page_size")!, try db.scalarInt("SELECT rootpage FROM sqlite_schema WHERE name = 'visitors'")!)
            }
            let handle = try #require(FileHandle(forUpdatingAtPath: server.store.path))
            try handle.seek(toOffset: UInt64((page - 1) * pageSize))
            handle.write(Data((0..<Int(pageSize)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 13) }))
            try handle.close()
            // Another connection's commit makes the server's connections drop their cached pages.
            let other = try Connection(path: server.store.path)
            try other.executeScript("CREATE TABLE damage_marker (n INTEGER)")
            other.close()
            let write = try server.post("/api/visitors", token: site.ownerToken, ["name": "On Damaged Pages"])
            #expect(write.isError(503, "UNAVAILABLE"), "\(write.status) \(write.text)")
            #expect(server.log.all.contains { $0.contains("malformed") || $0.contains("corrupt") }, "\(server.log.all.suffix(3))")
            #expect(try server.get("/api/healthz").isError(503, "UNAVAILABLE"))
            let next = try server.post("/api/visitors/devices/register", token: site.adminToken, ["token": "d-1", "platform": "console"])
            #expect(next.isError(503, "UNAVAILABLE"), "\(next.status) \(next.text)")
        }
    }

    /// A file made immutable while the server runs, with no health check to find it: the
    /// writes go on into the WAL until a checkpoint must write the file (here the one after an
    /// erase) and fails; from then on every write and healthz answer 503.
    @Test func aFailedCheckpointStopsTheWrites() throws {
        try withSite { server, site in
            try #require(Self.immutableFlagWorks(in: server.directory), "chattr +i must work in the temporary folder (root on ext4)")
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Erin Erased"])
            #expect(Self.chattr("+i", server.store.path))
            defer { Self.chattr("-i", server.store.path) }
            #expect(try server.post("/api/visitors", token: site.ownerToken, ["name": "Into The WAL"]).status == 201)
            let erased = try server.post("/api/admin/visitors/\(visitor["id"] as! String)/erase", token: site.ownerToken)
            #expect(erased.status == 200, "committed into the WAL: \(erased.text)")
            #expect(server.log.all.contains { $0.contains("checkpoint of \(server.store.path) failed") }, "\(server.log.all.suffix(3))")
            let write = try server.post("/api/visitors", token: site.ownerToken, ["name": "After The Checkpoint"])
            #expect(write.isError(503, "UNAVAILABLE"), "\(write.status) \(write.text)")
            #expect(try server.get("/api/healthz").isError(503, "UNAVAILABLE"))
        }
    }
}
