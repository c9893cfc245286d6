import Monarch
import Synchronization
import Testing

@Suite struct MonotonicClockTests {
    @Test("The system clock reads ContinuousClock and never goes back")
    func system() {
        let before = ContinuousClock.now
        let clock = MonotonicClock.system
        let first = clock.now
        let second = clock.now
        let after = ContinuousClock.now
        #expect(before <= first && first <= second && second <= after)
    }

    @Test("A clock given a source reads it, and only it")
    func source() {
        let start = ContinuousClock.now
        let reads = Mutex(0)
        let clock = MonotonicClock {
            reads.withLock { $0 += 1 }
            return start + .seconds(3600)
        }
        #expect(clock.now == start + .seconds(3600))
        #expect(clock.now - start == .seconds(3600), "an hour on, though no hour passed")
        #expect(reads.withLock { $0 } == 2)
    }
}
