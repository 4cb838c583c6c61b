import Foundation
import Testing
@testable import GatePassCore

@Suite struct ChangeSignalTests {
    @Test func aConditionThatHoldsReturnsAtOnce() {
        #expect(ChangeSignal().wait(timeout: 30) { true })
    }

    @Test func aWaiterSeesAChangeMadeOnAnotherThreadWhenItIsSignalled() {
        let signal = ChangeSignal()
        let value = Locked(0)
        let started = DispatchSemaphore(value: 0)
        let writer = Thread {
            started.wait()
            for _ in 0..<5 {
                value.withLock { $0 += 1 }
                signal.signal()
            }
        }
        writer.start()
        started.signal()
        #expect(signal.wait(timeout: 30) { value.withLock { $0 } == 5 })
    }

    @Test func aConditionThatNeverHoldsGivesUpAtTheLimit() {
        // The limit is what keeps a broken component from hanging a suite; nothing is timed.
        #expect(!ChangeSignal().wait(timeout: 0.01) { false })
    }
}
