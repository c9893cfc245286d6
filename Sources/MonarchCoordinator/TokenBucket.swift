/// A rate limit: up to ``burst`` actions at once, refilled at ``ratePerSecond``.
/// A value type; its owner keeps it on one thread.
struct TokenBucket: Sendable {
    /// Actions allowed per second, on average.
    let ratePerSecond: Double
    /// Actions allowed at once after a quiet spell.
    let burst: Double
    private var tokens: Double
    private var refilledAt: ContinuousClock.Instant

    /// A full bucket at `now`.
    init(ratePerSecond: Int, burst: Int, now: ContinuousClock.Instant = .now) {
        self.ratePerSecond = Double(max(ratePerSecond, 1))
        self.burst = Double(max(burst, 1))
        tokens = self.burst
        refilledAt = now
    }

    /// Takes one action's token at `now`: false when none is left (the action must wait).
    mutating func take(now: ContinuousClock.Instant = .now) -> Bool {
        let elapsed = now - refilledAt
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        tokens = min(burst, tokens + max(0, seconds) * ratePerSecond)
        refilledAt = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
