import Foundation
import LoopbackHTTP
import GatePassCore
import Testing

/// One `gatepass serve` per SQLite file: a second is refused at start (an flock on
/// `<db>.lock` beside the file's real path, which the kernel drops when the holder dies), the
/// `--db` commands keep working beside a running server, and a port already taken is reported
/// in one line of ours.
@Suite struct ServeLockTests {
    func withFolder(_ name: String, _ body: (String) throws -> Void) throws {
        try #require(FileManager.default.isExecutableFile(atPath: ServeProcessTests.executable.path),
                     "build the gatepass executable first")
        let folder = temporaryPath(name)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try body(URL(fileURLWithPath: folder).resolvingSymlinksInPath().path)
    }

    @Test func aSecondServeOnTheSameFileIsRefusedUntilTheFirstIsKilled() throws {
        try withFolder("serve-lock") { folder in
            let database = folder + "/gatepass.db"
            let first = try SharedDatabaseKillTests.serve(["--db", database])
            defer { if first.0.isRunning { first.0.terminate() } }

            let second = try ServeProcessTests.runToEnd(["serve", "--port", "0", "--dev", "--db", database])
            #expect(second.status == 1, "\(second.out) \(second.err)")
            #expect(second.err.contains(database) && second.err.contains("another gatepass serve holds it"), "\(second.err)")
            #expect(!second.out.contains("listening"), "\(second.out)")
            // The same file through a symbolic link, and through a path with a detour.
            try FileManager.default.createSymbolicLink(atPath: folder + "/link.db", withDestinationPath: database)
            let linked = try ServeProcessTests.runToEnd(["serve", "--port", "0", "--dev", "--db", folder + "/link.db"])
            #expect(linked.status == 1 && linked.err.contains(database), "\(linked.err)")
            try FileManager.default.createDirectory(atPath: folder + "/sub", withIntermediateDirectories: false)
            let detour = try ServeProcessTests.runToEnd(["serve", "--port", "0", "--dev", "--db", folder + "/sub/../gatepass.db"])
            #expect(detour.status == 1 && detour.err.contains(database), "\(detour.err)")

            // The --db commands do not take the lock: they work beside the running server.
            let added = try ServeProcessTests.runToEnd(["user", "add", "--db", database, "--email", "o@acme.test", "--name", "O",
                                                        "--role", "OWNER", "--organization", "Acme"])
            #expect(added.status == 0, "\(added.err)")

            // kill -9 leaves nothing to clean up: the kernel released the lock with the process.
            kill(first.0.processIdentifier, SIGKILL)
            first.0.waitUntilExit()
            let third = try SharedDatabaseKillTests.serve(["--db", database])
            #expect(third.1 > 0)
            third.0.terminate()
            third.0.waitUntilExit()
            #expect(third.0.terminationStatus == 0)
        }
    }

    @Test func aTakenPortIsReportedInOneLineOfOurs() throws {
        try withFolder("serve-port") { folder in
            let first = try SharedDatabaseKillTests.serve(["--db", folder + "/a.db"])
            defer { if first.0.isRunning { first.0.terminate() } }
            let second = try ServeProcessTests.runToEnd(["serve", "--port", String(first.1), "--dev", "--db", folder + "/b.db"])
            #expect(second.status == 1)
            let lines = second.err.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.isEmpty }
            #expect(lines.count == 1, "exactly one line: \(second.err.debugDescription)")
            #expect(second.err.hasPrefix("error: ") && second.err.contains("\(first.1)") && second.err.contains("in use"),
                    "\(second.err)")
        }
    }
}
