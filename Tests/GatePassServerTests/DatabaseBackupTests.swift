import Foundation
import GatePassCore
import LoopbackHTTP
import SQLite
import Testing
@testable import GatePassServer

/// `gatepass db backup`: SQLite's online backup of a database a server is writing.
@Suite struct DatabaseBackupTests {
    @Test func aBackupTakenWhileTheServerWritesIsWholeAndPrivate() throws {
        try withSite { server, site in
            let written = Locked(0)
            let stopping = Locked(false)
            let finished = DispatchSemaphore(value: 0)
            let (port, token) = (server.port, site.ownerToken)
            Thread.detachNewThread {
                defer { finished.signal() }
                let client = LoopbackHTTPClient(port: port)
                var index = 0
                while !stopping.withLock({ $0 }) {
                    index += 1
                    guard let answer = try? client.send("POST", "/api/visitors", token: token, json: ["name": "Writer \(index)"]),
                          answer.status == 201 else { return }
                    written.withLock { $0 += 1 }
                }
            }
            defer {
                stopping.withLock { $0 = true }
                finished.wait()
            }
            // Waits for the writer to be under way (bounded: the writer commits within milliseconds).
            let deadline = Date().addingTimeInterval(30)
            while written.withLock({ $0 }) < 10 && Date() < deadline { usleep(5_000) }
            let writtenBefore = written.withLock { $0 }
            try #require(writtenBefore >= 10, "the writer did not get going")

            let backupPath = server.directory + "/backup.db"
            let report = try DatabaseBackup.backup(.sqlite(path: server.store.path), to: backupPath)

            // One page a step: the server's writes make the backup start over, until the
            // wrapper copies the rest in one step (a small database fits one default step).
            let writtenBeforeSlowBackup = written.withLock { $0 }
            let slowPath = server.directory + "/backup-page-by-page.db"
            let source = try Connection(path: server.store.path)
            let slowPages = try source.backup(to: slowPath, pagesPerStep: 1)
            source.close()
            stopping.withLock { $0 = true }

            #expect(report.pages > 0)
            let visitors = try #require(report.rows(of: "visitors"))
            #expect(visitors >= writtenBefore)
            #expect(report.rows(of: "users") == 4)
            let slow = try Connection(path: slowPath)
            defer { slow.close() }
            #expect(slowPages > 1)
            #expect(try slow.query("PRAGMA quick_check") { try $0.string(0) } == ["ok"])
            #expect(try slow.scalarInt("SELECT COUNT(*) FROM visitors") ?? 0 >= Int64(writtenBeforeSlowBackup))
            var info = stat()
            #expect(stat(backupPath, &info) == 0 && info.st_mode & 0o777 == 0o600)
            // The copy is a database the server opens (quick_check and the migrations pass).
            let reopened = try ServerDatabase(path: backupPath)
            reopened.close()
        }
    }

    @Test func anExistingFileIsNeverOverwritten() throws {
        try withSite { server, _ in
            let backupPath = server.directory + "/backup.db"
            _ = try DatabaseBackup.backup(.sqlite(path: server.store.path), to: backupPath)
            let before = try FileManager.default.contentsOfDirectory(atPath: server.directory).sorted()
            let size = try FileManager.default.attributesOfItem(atPath: backupPath)[.size] as? Int
            let refused = #expect(throws: DatabaseCopyError.self) {
                try DatabaseBackup.backup(.sqlite(path: server.store.path), to: backupPath)
            }
            #expect(refused?.description == "\(backupPath) exists: a backup never overwrites a file; name a new one")
            #expect(try FileManager.default.attributesOfItem(atPath: backupPath)[.size] as? Int == size)
            #expect(try FileManager.default.contentsOfDirectory(atPath: server.directory).sorted() == before)
        }
    }

    @Test func postgresAndAMissingFileAreRefused() throws {
        try withTemporaryDirectory { directory in
            let postgres = #expect(throws: DatabaseCopyError.self) {
                try DatabaseBackup.backup(.postgres(url: "postgres://gatepass@127.0.0.1:1/site"), to: directory + "/b.db")
            }
            #expect(postgres?.description.contains("pg_dump --format=custom") == true)
            let missing = directory + "/missing.db"
            let noSource = #expect(throws: DatabaseCopyError.self) {
                try DatabaseBackup.backup(.sqlite(path: missing), to: directory + "/b.db")
            }
            #expect(noSource?.description == "no SQLite database at \(missing)")
            let created = try FileManager.default.contentsOfDirectory(atPath: directory)
            #expect(created.isEmpty, "nothing is created")
        }
    }
}
