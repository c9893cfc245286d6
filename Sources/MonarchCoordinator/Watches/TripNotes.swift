import Synchronization

/// What one trip down the chain met, read by its write-back: whether a cache answered with an
/// entry (fresh or stale) before the response that is written back — the write-back then
/// refreshes an entry rather than storing a new one. Any thread.
final class TripNotes: Sendable {
    private let cachedEntry = Atomic<Bool>(false)

    /// Notes that a cache answered the trip with an entry.
    func noteCachedEntry() { cachedEntry.store(true, ordering: .relaxed) }

    /// Whether a cache answered the trip with an entry.
    var hadCachedEntry: Bool { cachedEntry.load(ordering: .relaxed) }
}
