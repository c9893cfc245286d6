/// When a local worker that exited is started again, and when its pool has died too often to
/// go on (as Erlang's supervisors and systemd's start limits do).
///
/// The first few exits of a worker are replaced at once (a short, jittered pause, well under a
/// second); a worker that keeps dying waits longer each time (doubling to a cap); one that has
/// run for ``stableAfter`` starts afresh. When a pool's workers have restarted more than
/// ``intensity`` times within ``window``, the pool is failed: nothing is restarted until an
/// operator scales it again. Pure values: the supervisor keeps the state, and hands it instants
/// of its clock.
struct RestartPolicy: Sendable, Equatable {
    /// Restarts within ``window`` that a pool may have; one more fails it.
    var intensity: Int
    /// The window the restarts are counted in.
    var window: Duration
    /// Exits replaced at once, before the back-off starts.
    var quickRestarts = 3
    /// The longest back-off.
    var maxDelay: Duration = .seconds(30)
    /// How long a worker must run for its exits to be counted from zero again.
    var stableAfter: Duration = .seconds(60)

    /// How long to wait before the next start of a worker that has exited `consecutiveExits`
    /// times in a row (1 for its first exit), with `jitter` in 0..<1 spreading starts apart.
    func delay(afterConsecutiveExits consecutiveExits: Int, jitter: Double) -> Duration {
        let jitter = min(max(jitter, 0), 0.999)
        if consecutiveExits <= quickRestarts {
            // 100 to 400 ms: at once, but not all of a pool's workers in the same instant.
            return .milliseconds(100 + Int64(jitter * 300))
        }
        let doublings = min(consecutiveExits - quickRestarts - 1, 20)
        let base = min(Duration.seconds(1) * (1 << doublings), maxDelay)
        // Half the base plus up to half of it again: spread, never longer than the base.
        return base * 0.5 + base * (0.5 * jitter)
    }

    /// Whether a pool whose restarts happened at `restarts` (any order) has restarted more
    /// often than ``intensity`` within ``window`` before `now`.
    func isExceeded(by restarts: [ContinuousClock.Instant], now: ContinuousClock.Instant) -> Bool {
        restarts.filter { now - $0 <= window }.count > intensity
    }
}
