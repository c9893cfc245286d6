import DequeModule
import Monarch
import MonarchWire

/// Answers of trips that have ended, kept for the identical reads that arrive before the
/// trip's write-back is stored — as a Varnish waiting list gets the new object. Without them,
/// a read arriving between a trip's answer and its write-back (a pipelined client whose later
/// requests start as its first answers go out, typically) would miss the cache and make the
/// same trip again.
///
/// Only an answer the cache will keep for everyone is held: a response that may be shared
/// with every caller and stored (never private, no-store, Set-Cookie or a Vary the key does
/// not hold), for a request that may be shared, not answered by a cache, on a chain with a
/// cache to write it back to. It is handed out under the same key identical reads share a
/// trip under, and only while:
/// - the trip's write-back has not ended (once stored, the cache answers);
/// - no invalidation since the trip started covers it, as the write-back itself checks
///   (``CachePool/invalidated(_:tags:since:)``) — an invalidation always wins;
/// - it is younger than ``longestHold``, its time to live, and how long the cache pools
///   remember invalidations.
///
/// Bounded: at most `capacity` answers (the flight table passes ``BackgroundWork/limit``, as
/// each one waits for a write-back in the background work); past that the oldest is dropped.
/// Those whose time is up are dropped as others are held or asked for. Time is read on the
/// clock it is given. Loop thread only.
struct HeldAnswers {
    /// One answer held.
    struct Entry {
        /// The flight that fetched it (an entry is replaced by a later flight's).
        let flight: Int
        /// The response.
        let response: Response
        /// The response prepared once for every frame it goes out in, made on first use.
        var prepared: PreparedResponse?
        /// What the trip met: its write-backs.
        let notes: TripNotes
        /// When it is no longer handed out.
        let until: ContinuousClock.Instant
        /// Whether an invalidation since the trip started covers it.
        let isInvalidated: () -> Bool

        /// Whether it may still be handed out at `now`.
        func isUsable(at now: ContinuousClock.Instant) -> Bool {
            now < until && !notes.writeBacksOver && !isInvalidated()
        }
    }

    /// How long an answer is held at most, however slow its write-back.
    static let longestHold: Duration = .seconds(5)

    /// Answers held at most.
    let capacity: Int
    private var entries: [String: Entry] = [:]
    /// The keys in the order their answers were held, with the flight that held each.
    private var order: Deque<(key: String, flight: Int)> = []
    /// Answers handed out since start.
    private(set) var handedOut = 0
    /// Where ``Entry/until`` is compared with the time.
    let clock: MonotonicClock

    /// A table holding at most `capacity` answers, each until its ``Entry/until`` on `clock`.
    init(capacity: Int, clock: MonotonicClock) {
        self.capacity = max(1, capacity)
        self.clock = clock
    }

    /// Answers held now (some may be past use, until they are dropped).
    var count: Int { entries.count }

    /// Holds `entry` under `key`, replacing any answer held there.
    mutating func hold(_ entry: Entry, under key: String) {
        dropUnusable(now: clock.now)
        entries[key] = entry
        order.append((key, entry.flight))
        while entries.count > capacity, let oldest = order.popFirst() {
            if entries[oldest.key]?.flight == oldest.flight { entries[oldest.key] = nil }
        }
    }

    /// The answer held under `key` if it may be handed out now (counted as handed out), its
    /// prepared form made if it had none; nil otherwise.
    mutating func answer(for key: String) -> Entry? {
        let now = clock.now
        dropUnusable(now: now)
        guard var entry = entries[key] else { return nil }
        guard entry.isUsable(at: now) else {
            entries[key] = nil
            return nil
        }
        if entry.prepared == nil {
            entry.prepared = PreparedResponse(entry.response.message(id: 0))
            entries[key] = entry
        }
        handedOut += 1
        return entry
    }

    /// Drops the oldest answers while they may no longer be handed out, and gives the
    /// storage back once none is held.
    private mutating func dropUnusable(now: ContinuousClock.Instant) {
        while let oldest = order.first {
            if let entry = entries[oldest.key], entry.flight == oldest.flight {
                guard !entry.isUsable(at: now) else { break }
                entries[oldest.key] = nil
            }
            order.removeFirst()
        }
        if entries.isEmpty, !order.isEmpty || entries.capacity > 64 {
            entries = [:]
            order = []
        }
    }
}
