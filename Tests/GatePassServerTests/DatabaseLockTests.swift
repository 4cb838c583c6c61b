import Foundation
import GatePassCore
import Testing
@testable import GatePassServer

/// One server per SQLite file, in one process too: a second `GatePassServer` on the file is
/// refused while the first runs, and a stop releases the file so a restart in the same process
/// (as tests and the demo do) starts.
@Suite struct DatabaseLockTests {
    func configuration(_ directory: String) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.database = directory + "/gatepass.db"
        configuration.port = 0
        configuration.threads = 2
        configuration.sqliteSynchronous = "NORMAL"
        return configuration
    }

    @Test func aSecondServerIsRefusedAndAStopReleasesTheFile() throws {
        try withTemporaryDirectory { directory in
            let configuration = configuration(directory)
            let first = try GatePassServer(configuration: configuration, devMode: true, logSink: RecordingLog())
            let real = URL(fileURLWithPath: configuration.database).resolvingSymlinksInPath().path
            do {
                let second = try GatePassServer(configuration: configuration, devMode: true, logSink: RecordingLog())
                second.stop(grace: .seconds(1))
                Issue.record("a second server started on \(configuration.database)")
            } catch {
                #expect("\(error)".contains(real) && "\(error)".contains("another gatepass serve holds it"), "\(error)")
            }
            first.stop(grace: .seconds(2))
            let restarted = try GatePassServer(configuration: configuration, devMode: true, logSink: RecordingLog())
            restarted.stop(grace: .seconds(2))
            // A start that fails after taking the file releases it too.
            var broken = configuration
            broken.host = "not-an-address"
            #expect(throws: (any Error).self) { try GatePassServer(configuration: broken, devMode: true, logSink: RecordingLog()) }
            try GatePassServer(configuration: configuration, devMode: true, logSink: RecordingLog()).stop(grace: .seconds(2))
        }
    }

    @Test func theLockFileRefusesWhatItCannotBe() throws {
        try withTemporaryDirectory { directory in
            // A lock path that is a folder: the start fails with a sentence naming it, nothing held.
            let configuration = configuration(directory)
            try FileManager.default.createDirectory(atPath: configuration.database + ".lock", withIntermediateDirectories: false)
            #expect(throws: (any Error).self) { try GatePassServer(configuration: configuration, devMode: true, logSink: RecordingLog()) }
        }
    }
}
