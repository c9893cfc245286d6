import Synchronization

/// When a trip down the chain must be over: the deadline of its longest-waiting waiter. It
/// only grows (a waiter that leaves early does not shorten the others' wait; the trip ends
/// when its last waiter leaves). It reads no clock: its makers give it instants of the
/// coordinator's (``Coordinator/clock``). Safe from any thread.
final class TripBudget: Sendable {
    private let storedEnd: Mutex<ContinuousClock.Instant?>

    /// A budget ending at `end`.
    init(end: ContinuousClock.Instant?) {
        storedEnd = Mutex(end)
    }

    /// The end; nil for no deadline.
    var end: ContinuousClock.Instant? { storedEnd.withLock { $0 } }

    /// Moves the end to `later` if that is later.
    func extend(to later: ContinuousClock.Instant) {
        storedEnd.withLock { end in
            if let current = end, current < later { end = later }
        }
    }

    /// Whether the end is now later than `earlier` (by more than a few milliseconds, so clock
    /// noise is not taken for a new waiter).
    func outgrew(_ earlier: ContinuousClock.Instant?) -> Bool {
        guard let end, let earlier else { return false }
        return end - earlier > .milliseconds(20)
    }
}
