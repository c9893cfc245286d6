import Monarch
import Synchronization

/// A clock that stands still until the test moves it: hand ``clock`` to what is tested, and
/// ``advance(by:)`` it where a test would otherwise sleep. It starts at the real time it was
/// made (instants of `ContinuousClock` cannot be made otherwise) and never moves by itself.
/// Any thread.
final class TestClock: Sendable {
    private let instant: Mutex<ContinuousClock.Instant>

    /// A clock standing at the real time now.
    init() {
        instant = Mutex(ContinuousClock.now)
    }

    /// Where the clock stands.
    var now: ContinuousClock.Instant { instant.withLock { $0 } }

    /// Moves the clock `duration` forward (never back: a negative duration is refused).
    func advance(by duration: Duration) {
        precondition(duration >= .zero, "a clock never goes back")
        instant.withLock { $0 += duration }
    }

    /// The clock to hand to the coordinator, or to a policy under test: it reads this one.
    var clock: MonotonicClock { MonotonicClock { [self] in now } }
}
