import Foundation
import Testing
@testable import GatePassServer

@Suite struct FileLogTests {
    @Test func linesAreAppendedWholeToAPrivateFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-filelog-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let log = try FileLog(path: path)
        log.log("first")
        DispatchQueue.concurrentPerform(iterations: 200) { index in log.log("line \(index) " + String(repeating: "x", count: 100)) }
        log.flush()
        let reopened = try FileLog(path: path)   // appends, never truncates
        reopened.log("last")
        reopened.flush()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "first" && lines.dropLast().last == "last" && lines.last == "")
        #expect(lines.count == 203)
        #expect(lines.dropFirst().dropLast(2).allSatisfy { $0.hasPrefix("line ") && $0.hasSuffix(String(repeating: "x", count: 100)) },
                "no line interleaved with another")
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
    }

    @Test func aPathThatCannotBeOpenedIsAClearError() {
        #expect {
            _ = try FileLog(path: "/nonexistent-folder-\(UUID().uuidString)/server.log")
        } throws: { error in
            "\(error)".hasPrefix("cannot open the log /nonexistent-folder-") && "\(error)".contains("No such file or directory")
        }
    }
}
