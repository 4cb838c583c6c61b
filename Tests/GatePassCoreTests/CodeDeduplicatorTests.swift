import Foundation
import Testing
@testable import GatePassCore

/// Issue 5: the held-code/cooldown rules over a frame sequence. A code held in view is reported
/// once; the same code again only after it has been out of view for a cooldown; a code in
/// progress is never reported twice.
@Suite("Code de-duplication")
struct CodeDeduplicatorTests {
    static let start = Date(timeIntervalSinceReferenceDate: 800_000_000)
    /// About the gate camera's 30 frames a second; a power of two so that frame times add up
    /// exactly and "away for 3 s" lands on the cooldown, not a rounding error short of it.
    static let frameInterval: TimeInterval = 1.0 / 32

    /// A deduplicator in a class, so that `#expect` can call its mutating methods, which
    /// plays frames from `start`, one every `frameInterval`, and collects every report.
    final class Player {
        var deduplicator: CodeDeduplicator
        var time = CodeDeduplicatorTests.start
        var reports: [String] = []

        init(cooldown: TimeInterval = 3, capacity: Int = 256) {
            deduplicator = CodeDeduplicator(cooldown: cooldown, capacity: capacity)
        }

        /// One frame at an explicit time (does not move `time`).
        func observe(_ codes: Set<String>, at date: Date) -> [String] {
            let reported = deduplicator.observe(codes, at: date)
            reports += reported
            return reported
        }

        /// Shows `codes` for `count` frames; returns what those frames reported.
        @discardableResult
        func frames(_ count: Int, _ codes: Set<String>) -> [String] {
            var reported: [String] = []
            for _ in 0..<count {
                reported += observe(codes, at: time)
                time += CodeDeduplicatorTests.frameInterval
            }
            return reported
        }

        /// Shows `codes` for `seconds` worth of frames.
        @discardableResult
        func during(_ seconds: TimeInterval, _ codes: Set<String>) -> [String] {
            frames(Int((seconds / CodeDeduplicatorTests.frameInterval).rounded()), codes)
        }

        func begin(_ code: String) -> Bool { deduplicator.beginProcessing(code) }
        func finish(_ code: String, at date: Date? = nil) { deduplicator.finishProcessing(code, at: date ?? time) }
        func isProcessing(_ code: String) -> Bool { deduplicator.isProcessing(code) }
        var remembered: Int { deduplicator.rememberedCount }
        var capacity: Int { deduplicator.capacity }
    }

    // MARK: - Held codes and cooldown

    @Test("A code held in view for 100 frames is reported once, on the first")
    func heldCodeOnce() {
        let player = Player()
        #expect(player.frames(1, ["GP1:K7Q2M9XD"]) == ["GP1:K7Q2M9XD"])
        player.frames(99, ["GP1:K7Q2M9XD"])
        #expect(player.reports == ["GP1:K7Q2M9XD"])
    }

    @Test("A flicker shorter than the cooldown does not report the code again")
    func flickerOnce() {
        let player = Player()
        player.frames(10, ["A"])
        player.frames(1, [])                 // one frame zbar missed
        player.frames(10, ["A"])
        player.during(2.9, [])               // lowered, raised again within the cooldown
        player.frames(10, ["A"])
        #expect(player.reports == ["A"])
    }

    @Test("Flickers do not add up: each absence must last a full cooldown on its own")
    func flickersDoNotAccumulate() {
        let player = Player()
        player.frames(1, ["A"])
        for _ in 0..<10 {                    // ten absences of 2 s each, 20 s in all
            player.during(2, [])
            player.frames(1, ["A"])
        }
        #expect(player.reports == ["A"])
    }

    @Test("Away for at least the cooldown: reported again on return")
    func awayCooldownTwice() {
        let player = Player()
        player.frames(10, ["A"])
        player.during(3, [])
        player.frames(10, ["A"])
        #expect(player.reports == ["A", "A"])
    }

    @Test("The absence is measured from the first frame the code is missing in")
    func absenceStartsAtFirstMissingFrame() {
        let gate = Player(cooldown: 3)
        let t = Self.start
        #expect(gate.observe(["A"], at: t) == ["A"])
        #expect(gate.observe(["A"], at: t + 10) == [])          // held, however long
        #expect(gate.observe([], at: t + 11) == [])             // left view at 11
        #expect(gate.observe([], at: t + 12) == [])
        #expect(gate.observe(["A"], at: t + 13.999) == [])      // 2.999 s away
        #expect(gate.observe([], at: t + 14) == [])             // left again at 14
        #expect(gate.observe(["A"], at: t + 17) == ["A"])       // exactly 3 s away
    }

    @Test("Two codes in view at once are both reported, in a stable order")
    func twoCodesStableOrder() {
        for _ in 0..<20 {
            let player = Player()
            #expect(player.frames(1, ["GP1:ZZZZZZZZ", "GP1:AB12CD34"]) == ["GP1:AB12CD34", "GP1:ZZZZZZZZ"])
            #expect(player.frames(30, ["GP1:ZZZZZZZZ", "GP1:AB12CD34"]) == [])
            // One stays, the other leaves and comes back after the cooldown.
            player.during(3, ["GP1:AB12CD34"])
            #expect(player.frames(1, ["GP1:ZZZZZZZZ", "GP1:AB12CD34"]) == ["GP1:ZZZZZZZZ"])
        }
    }

    @Test("Cooldown 0: reported on every reappearance, once while held")
    func zeroCooldown() {
        let player = Player(cooldown: 0)
        player.frames(5, ["A"])
        player.frames(1, [])
        player.frames(5, ["A"])
        player.frames(1, [])
        player.frames(1, ["A"])
        #expect(player.reports == ["A", "A", "A"])
    }

    // MARK: - Processing lock

    @Test("A code in progress is not reported again even if it leaves and returns")
    func processingLockBlocksReReport() {
        let player = Player()
        let first = player.frames(1, ["A"])
        #expect(first == ["A"])
        #expect(player.begin("A"))
        #expect(!player.begin("A"), "a second begin must be refused")
        #expect(player.isProcessing("A"))
        player.during(5, [])                 // away longer than the cooldown, still in flight
        player.frames(10, ["A"])
        #expect(player.reports == ["A"])
        // Finished while in view: held, so still not reported.
        player.finish("A")
        #expect(!player.isProcessing("A"))
        player.frames(10, ["A"])
        #expect(player.reports == ["A"])
        // Leaves for a full cooldown after finishing: reported again.
        player.during(3, [])
        player.frames(1, ["A"])
        #expect(player.reports == ["A", "A"])
        #expect(player.begin("A"))
    }

    @Test("After processing, the cooldown runs from the later of 'left view' and 'finished'")
    func cooldownFromLaterOfLeftAndFinished() {
        let gate = Player(cooldown: 3)
        let t = Self.start
        #expect(gate.observe(["A"], at: t) == ["A"])
        #expect(gate.begin("A"))
        #expect(gate.observe([], at: t + 1) == [])               // left view at 1
        gate.finish("A", at: t + 5)                    // answer at 5
        // 4.5 s since it left, but only 0.5 s since the answer: not again.
        #expect(gate.observe(["A"], at: t + 5.5) == [])
        #expect(gate.observe([], at: t + 6) == [])               // left again at 6
        #expect(gate.observe(["A"], at: t + 8.9) == [])          // 2.9 s
        #expect(gate.observe([], at: t + 9) == [])               // left at 9
        #expect(gate.observe(["A"], at: t + 12) == ["A"])        // 3 s after both
    }

    @Test("Finishing a code that is not in progress changes nothing")
    func finishWithoutBegin() {
        let player = Player()
        player.frames(5, ["A"])
        player.finish("A")
        player.finish("never seen")
        player.frames(5, ["A"])
        #expect(player.reports == ["A"])
        #expect(player.remembered == 1)
    }

    @Test("A code begun without being seen counts from when processing finishes")
    func beginUnseenCode() {
        let gate = Player(cooldown: 3)
        let t = Self.start
        #expect(gate.begin("TYPED"))
        #expect(gate.observe(["TYPED"], at: t) == [])
        #expect(gate.observe([], at: t + 1) == [])
        gate.finish("TYPED", at: t + 2)
        #expect(gate.observe(["TYPED"], at: t + 4.9) == [])
        #expect(gate.observe([], at: t + 5) == [])
        #expect(gate.observe(["TYPED"], at: t + 8) == ["TYPED"])
    }

    // MARK: - Memory

    @Test("Codes out of view for a full cooldown are forgotten")
    func forgetsCooledDownCodes() {
        let player = Player()
        player.frames(1, ["A", "B", "C"])
        #expect(player.remembered == 3)
        player.during(2, ["B"])
        #expect(player.remembered == 3)        // A and C cooling down
        player.during(1.1, ["B"])
        #expect(player.remembered == 1)        // only B, held
        player.during(3.1, [])
        #expect(player.remembered == 0)
    }

    @Test("10,000 distinct codes in quick succession: the remembered set stays within the cap")
    func memoryBoundByCap() {
        let gate = Player(cooldown: 3)
        var time = Self.start
        var reported = 0
        for index in 0..<10_000 {
            // A new code every millisecond, each held for two frames: thousands within one
            // cooldown, so forgetting cooled-down codes is not enough and the cap must hold.
            reported += gate.observe(["GP1:\(index)", "GP1:\(index + 1)"], at: time).count
            time += 0.001
            #expect(gate.remembered <= gate.capacity)
        }
        #expect(gate.capacity == 256)
        #expect(gate.remembered == 256)
        // Eviction takes the least recently seen, never a code still in view.
        #expect(reported == 10_001)
    }

    @Test("A day of traffic at gate pace is forgotten as it cools down")
    func memoryBoundByCooldown() {
        let gate = Player(cooldown: 3)
        for index in 0..<2_000 {                 // a pass every 10 s, held for 2 s
            gate.during(2, ["GP1:\(index)"])
            gate.during(8, [])
            #expect(gate.remembered == 0)
        }
        #expect(gate.reports.count == 2_000)
    }

    @Test("Large, hostile code text is stored as is, and only up to the cap")
    func hostileCodes() {
        let gate = Player(cooldown: 3, capacity: 16)
        let big = String(repeating: "\u{0}\u{202E}🙂\r\n%s", count: 500)   // ~3.5 KB
        let t = Self.start
        #expect(gate.observe([big], at: t) == [big])
        #expect(gate.observe([big], at: t + 1) == [])
        for index in 0..<1_000 {
            _ = gate.observe([big, big + "\(index)"], at: t + 2 + Double(index) / 30)
        }
        #expect(gate.remembered <= 16)
        // `big` was seen in every frame, so it was never the least recently seen.
        #expect(gate.observe([big], at: t + 100) == [])
    }

    @Test("Codes in progress are never evicted by the cap")
    func inProgressSurvivesEviction() {
        let gate = Player(cooldown: 3, capacity: 4)
        let t = Self.start
        #expect(gate.observe(["PASS"], at: t) == ["PASS"])
        #expect(gate.begin("PASS"))
        for index in 0..<100 {
            _ = gate.observe(["FLOOD\(index)"], at: t + Double(index) / 30)
        }
        #expect(gate.isProcessing("PASS"))
        #expect(gate.observe(["PASS"], at: t + 10) == [])
        #expect(gate.remembered <= 4)
    }

    // MARK: - Cooldown validation

    @Test("The default cooldown is 3 s; a negative or non-finite cooldown traps")
    func cooldownValidation() async {
        #expect(CodeDeduplicator().cooldown == 3)
        #expect(CodeDeduplicator(cooldown: 0).cooldown == 0)
        await #expect(processExitsWith: .failure) {
            _ = CodeDeduplicator(cooldown: -1)
        }
        await #expect(processExitsWith: .failure) {
            _ = CodeDeduplicator(cooldown: .nan)
        }
    }
}
