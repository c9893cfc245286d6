import Monarch

/// A rate limit: up to ``burst`` actions at once, refilled at ``ratePerSecond`` as its clock
/// moves. A value type; its owner keeps it on one thread.
struct TokenBucket: Sendable {
    /// Actions allowed per second, on average.
    let ratePerSecond: Double
    /// Actions allowed at once after a quiet spell.
    let burst: Double
    private var tokens: Double
    private var refilledAt: ContinuousClock.Instant
    /// Where the refill's time is read.
    private let clock: MonotonicClock

    /// A bucket full now, refilled as `clock` moves.
    init(ratePerSecond: Int, burst: Int, clock: MonotonicClock) {
        self.ratePerSecond = Double(max(ratePerSecond, 1))
        self.burst = Double(max(burst, 1))
        self.clock = clock
        tokens = self.burst
        refilledAt = clock.now
    }

    /// Takes one action's token now: false when none is left (the action must wait).
    mutating func take() -> Bool {
        let now = clock.now
        let elapsed = now - refilledAt
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        tokens = min(burst, tokens + max(0, seconds) * ratePerSecond)
        refilledAt = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
