/// Where elapsed time is read: instants of the system's monotonic clock
/// (`ContinuousClock.Instant`), which no change of the wall clock moves, so deadlines,
/// heartbeats, back-off and rate limits measure real intervals.
///
/// The coordinator is handed one and everything it keeps reads the time through it, never
/// `ContinuousClock.now` directly: production runs on ``system``; a test passes a clock it
/// moves by hand (``init(_:)``), so what depends on time is tested without waiting for it.
/// (Wall-clock time, for what is stored or shown to people, is ``WallClock``'s.)
///
/// A value, `Sendable`, read from any thread. Reading ``system`` costs what reading
/// `ContinuousClock.now` does: no allocation, no lock, no dynamic dispatch (one branch on a
/// nil source, inlined).
public struct MonotonicClock: Sendable {
    /// What answers ``now`` instead of the system's clock; nil for ``system``.
    @usableFromInline
    let source: (@Sendable () -> ContinuousClock.Instant)?

    /// A clock whose ``now`` is `read()`: tests pass one they move by hand. `read` is called
    /// on whatever thread reads the clock, and must return instants that never go backwards.
    public init(_ read: @escaping @Sendable () -> ContinuousClock.Instant) {
        source = read
    }

    /// ``system``: no source, so ``now`` reads `ContinuousClock` itself.
    @inlinable
    init(systemClock: Void) {
        source = nil
    }

    /// The system's monotonic clock: ``now`` is `ContinuousClock.now`.
    @inlinable
    public static var system: MonotonicClock { MonotonicClock(systemClock: ()) }

    /// The time now; never earlier than a time read before. On ``system`` it neither blocks
    /// nor allocates. Any thread.
    @inlinable
    public var now: ContinuousClock.Instant {
        if let source { return source() }
        return ContinuousClock.now
    }
}
