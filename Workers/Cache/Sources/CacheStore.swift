import MonarchWire

/// Where the cache worker keeps entries behind its memory LRU: an SQLite file
/// (``SQLiteStore``) or a Redis database (``RedisStore``).
///
/// ``CacheProvider`` queues every operation with ``enqueue(_:)`` while it holds its own lock,
/// so a store runs operations in the order they were queued, and then awaits the outcome
/// outside the lock. A store that cannot be reached answers `unavailable` at once instead of
/// making its callers wait: reads are misses, writes are dropped.
package protocol CacheStore: Sendable {
    /// Queues `work` at once, in the caller's order with other enqueues, and returns the
    /// operation to await. Never blocks.
    func enqueue(_ work: StoreOperation.Work) -> StoreOperation

    /// Whether the store can be reached now, as far as it knows; a write-back to a store that
    /// cannot is not kept in memory either (it would be the only copy, unseen by the workers
    /// sharing the store). True by default.
    var isReachable: Bool { get }

    /// Runs what was queued so far (or gives up on it), then closes; later operations fail.
    func close() async

    /// The store's figures for the worker's `status` (state, dropped writes, …); none by
    /// default.
    var statusFigures: [String: JSONValue] { get }

    /// Calls `handler` (on any thread) when another cache worker sharing the store changed an
    /// entry this worker may hold in memory, or when such changes may have been missed. A store
    /// no other worker shares never calls it.
    func observeChanges(_ handler: @escaping @Sendable (StoreChange) -> Void)

    /// Marks the changes this worker publishes from now on as made through the coordinator
    /// `origin` (its `welcome`'s). Nothing by default (a store no other worker shares).
    func adopt(origin: String)
}

/// A change another cache worker made to a shared store, as ``CacheStore/observeChanges(_:)``
/// reports it.
package enum StoreChange: Sendable, Equatable {
    /// The entries under the note's target changed (stored again, or invalidated): drop them
    /// from memory, and tell the coordinator when another coordinator made the change.
    case changed(StoreChangeNote)
    /// Changes may have been missed (the store's notifications were interrupted, and are heard
    /// again from now on): drop everything from memory.
    case mayHaveMissedChanges
    /// The store's notifications were interrupted: changes made from now on may not be heard
    /// until ``mayHaveMissedChanges`` says they are again. Memory keeps answering for the
    /// cache's memory grace only (``CacheProvider/memoryGrace``), then is emptied.
    case mayMissChanges
}

extension CacheStore {
    /// No figures.
    package var statusFigures: [String: JSONValue] { [:] }

    /// Always reachable (a file).
    package var isReachable: Bool { true }

    /// Nothing to observe: no other worker changes the store.
    package func observeChanges(_ handler: @escaping @Sendable (StoreChange) -> Void) {}

    /// Nothing to mark: no other worker hears of its changes.
    package func adopt(origin: String) {}
}

extension SQLiteStore: CacheStore {}
