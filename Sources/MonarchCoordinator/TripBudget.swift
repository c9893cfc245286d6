/// When a trip down the chain must be over: the deadline of its longest-waiting waiter. It
/// only grows (a waiter that leaves early does not shorten the others' wait; the trip ends
/// when its last waiter leaves). Loop thread only.
final class TripBudget: @unchecked Sendable {
    /// The end; nil for no deadline.
    private(set) var end: ContinuousClock.Instant?

    /// A budget ending at `end`.
    init(end: ContinuousClock.Instant?) {
        self.end = end
    }

    /// Moves the end to `later` if that is later.
    func extend(to later: ContinuousClock.Instant) {
        if let end, end < later { self.end = later }
    }

    /// Whether the end is now later than `earlier` (by more than a few milliseconds, so clock
    /// noise is not taken for a new waiter).
    func outgrew(_ earlier: ContinuousClock.Instant?) -> Bool {
        guard let end, let earlier else { return false }
        return end - earlier > .milliseconds(20)
    }
}
