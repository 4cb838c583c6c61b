import Foundation
import GatePassCore
import Testing
@testable import GatePassServer

/// The request log is buffered (issue 15): no system call per line, yet no line lost, torn
/// or reordered, and none held longer than the flush interval.
@Suite struct BufferedLogTests {
    @Test func linesFromManyThreadsArriveWholeAndInEachThreadsOrderAfterAFlush() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-buffered-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let log = try FileLog(path: path)
        let threads = 8, perThread = 2_000
        // Long lines too: several batches pass the high-water mark while others append.
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<perThread {
                log.log("t\(thread) \(index) " + String(repeating: "x", count: index % 7 == 0 ? 3_000 : 20))
            }
        }
        log.flush()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == threads * perThread)
        for thread in 0..<threads {
            let mine = lines.filter { $0.hasPrefix("t\(thread) ") }
            let order = mine.compactMap { Int($0.split(separator: " ")[1]) }
            #expect(order == Array(0..<perThread), "thread \(thread)'s lines, whole and in order")
        }
        #expect(lines.allSatisfy { $0.hasSuffix("x") && $0.split(separator: " ").count == 3 }, "no line torn or interleaved")
    }

    @Test func linesReachTheDescriptorWithinTheIntervalWithoutAFlush() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let writer = BufferedLogWriter(descriptor: ends[1], closesDescriptor: true)
        writer.append("one")
        writer.append("two")
        // Read what arrives, waiting on the pipe (the bound only catches a hang).
        var received: [UInt8] = []
        let deadline = Date().addingTimeInterval(20)
        while !received.contains(contentsOf: Array("one\ntwo\n".utf8)), Date() < deadline {
            var descriptor = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 1_000) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 256)
            let count = read(ends[0], &chunk, chunk.count)
            if count > 0 { received += chunk.prefix(count) }
        }
        #expect(String(decoding: received, as: UTF8.self) == "one\ntwo\n")
        withExtendedLifetime(writer) {}
    }

    @Test func aWriterGoingAwayWritesWhatItHeld() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-buffered-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let log = try FileLog(path: path)
            for index in 0..<100 { log.log("held \(index)") }
        }
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines == (0..<100).map { "held \($0)"[...] })
    }
}

private extension Array where Element == UInt8 {
    func contains(contentsOf other: [UInt8]) -> Bool {
        guard other.count <= count else { return false }
        return (0...(count - other.count)).contains { Array(self[$0..<($0 + other.count)]) == other }
    }
}
