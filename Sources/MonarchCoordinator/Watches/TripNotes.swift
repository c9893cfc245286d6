import Synchronization

/// What one trip down the chain met, read by its write-back and by the flight table: whether a
/// cache answered with an entry (fresh or stale) before the response that is written back —
/// the write-back then refreshes an entry rather than storing a new one — and whether the
/// trip's write-backs are over (see ``HeldAnswers``). Any thread.
final class TripNotes: Sendable {
    private let cachedEntry = Atomic<Bool>(false)
    private let writeBacksBegun = Atomic<Int>(0)
    private let writeBacksEnded = Atomic<Int>(0)

    /// Notes that a cache answered the trip with an entry.
    func noteCachedEntry() { cachedEntry.store(true, ordering: .relaxed) }

    /// Whether a cache answered the trip with an entry.
    var hadCachedEntry: Bool { cachedEntry.load(ordering: .relaxed) }

    /// Notes that a write-back of the trip's response began.
    func writeBackBegan() { writeBacksBegun.add(1, ordering: .sequentiallyConsistent) }

    /// Notes that a write-back of the trip's response ended: stored, refused, lost or skipped.
    func writeBackEnded() { writeBacksEnded.add(1, ordering: .sequentiallyConsistent) }

    /// Whether a write-back of the trip began and every one that began has ended.
    var writeBacksOver: Bool {
        let ended = writeBacksEnded.load(ordering: .sequentiallyConsistent)
        let begun = writeBacksBegun.load(ordering: .sequentiallyConsistent)
        return begun > 0 && ended >= begun
    }
}
