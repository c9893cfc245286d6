import Monarch
import Synchronization

/// A clock that stands still until the test moves it: hand ``clock`` (and, where wall-clock
/// time is read, ``wallClock``) to what is tested, and ``advance(by:)`` it where a test would
/// otherwise sleep. It starts at the real time it was made (instants of `ContinuousClock`
/// cannot be made otherwise) and never moves by itself; both of its faces move together.
/// Any thread.
final class TestClock: Sendable {
    private let state: Mutex<(instant: ContinuousClock.Instant, wallMs: Int64)>

    /// A clock standing at the real time now.
    init() {
        state = Mutex((ContinuousClock.now, WallClock.system.nowMs))
    }

    /// Where the clock stands.
    var now: ContinuousClock.Instant { state.withLock { $0.instant } }

    /// Where the clock stands, as wall-clock time: milliseconds since the epoch.
    var nowMs: Int64 { state.withLock { $0.wallMs } }

    /// Moves the clock `duration` forward (never back: a negative duration is refused); its
    /// wall-clock face moves by the whole milliseconds of it.
    func advance(by duration: Duration) {
        precondition(duration >= .zero, "a clock never goes back")
        let (seconds, attoseconds) = duration.components
        state.withLock { state in
            state.instant += duration
            state.wallMs += seconds * 1000 + attoseconds / 1_000_000_000_000_000
        }
    }

    /// The monotonic clock to hand to the coordinator, or to a policy under test: it reads this one.
    var clock: MonotonicClock { MonotonicClock { [self] in now } }

    /// The wall clock to hand to the coordinator (its hot tier): it reads this one.
    var wallClock: WallClock { WallClock { [self] in nowMs } }
}
