import Foundation
import Testing

/// The project's rule on locks (README, "Concurrency contracts"): state that threads contend
/// for sits behind `Locked` (a pthread mutex), never `Synchronization.Mutex`. On Linux `Mutex`
/// is a futex whose contended hand-off happens in the kernel, where ThreadSanitizer cannot see
/// it, so the sanitizer run reports races that are not there — it did in CI for a test's log
/// sink that several server threads wrote to at once. The rule is checked here, on the source,
/// because the sanitizer only catches a breach on the runs where the threads happen to collide.
@Suite struct LockChoiceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Where `Mutex` may stay: `SQLBinding` sits below `GatePassCore` (it cannot use `Locked`),
    /// and there each `Mutex` is a one-shot hand-off that a semaphore orders — no two threads
    /// ever hold it at once.
    /// (This file names `Mutex` only in its detector's examples.)
    static let allowed: Set<String> = ["Sources/SQLBinding/GroupCommitWriter.swift", "Tests/GatePassCoreTests/LockChoiceTests.swift"]

    /// Every Swift file under Sources and Tests, relative to the package root.
    static func swiftFiles() throws -> [String] {
        var files: [String] = []
        for top in ["Sources", "Tests"] {
            let folder = root.appendingPathComponent(top)
            guard let walker = FileManager.default.enumerator(atPath: folder.path) else {
                throw CocoaError(.fileReadNoSuchFile)
            }
            while let path = walker.nextObject() as? String {
                if path.hasSuffix(".swift") { files.append(top + "/" + path) }
            }
        }
        return files.sorted()
    }

    /// Whether a line of code (its comment cut off) creates or names a `Synchronization.Mutex`.
    static func usesMutex(_ line: Substring) -> Bool {
        let code = line.range(of: "//").map { line[..<$0.lowerBound] } ?? line
        guard code.contains("Mutex") else { return false } // (Swift's Regex is slow; most lines skip it)
        return code.firstMatch(of: /(^|[^A-Za-z0-9_])Mutex\s*[<(]/) != nil
    }

    @Test func theDetectorSeesEveryWayOfWritingAMutex() {
        #expect(Self.usesMutex("    private let lines = Mutex<[String]>([])"))
        #expect(Self.usesMutex("let current = Mutex(Date())"))
        #expect(Self.usesMutex("let x = Synchronization.Mutex <Int>(0)"))
        #expect(!Self.usesMutex("    // a Mutex<Int> would do here"))
        #expect(!Self.usesMutex("let lock = NSLock() // not a Mutex(…)"))
        #expect(!Self.usesMutex("let state = Locked<[String]>([])"))
        #expect(!Self.usesMutex("let other = MyMutex<Int>(0)"))
    }

    @Test func noFileOutsideTheAllowedOnesUsesSynchronizationMutex() throws {
        let files = try Self.swiftFiles()
        #expect(files.count > 100, "the walk found the package's sources")
        var offenders: [String] = []
        for file in files where !Self.allowed.contains(file) {
            let text = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where Self.usesMutex(line) {
                offenders.append("\(file):\(number + 1)")
            }
        }
        #expect(offenders.isEmpty, "use Locked (GatePassCore) instead of Synchronization.Mutex at: \(offenders)")
    }
}
