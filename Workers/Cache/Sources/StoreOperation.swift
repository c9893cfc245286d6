import MonarchWire
import Synchronization

/// One operation waiting in a ``CacheStore``'s queue (``SQLiteStore``'s or ``RedisStore``'s):
/// what to do, and where its outcome goes.
///
/// The queue runs it at most once. A read may be cancelled until it starts (its waiter then
/// gets `cancelled` at once and it is skipped); a write, once queued, always runs, and its
/// waiter learns how it ended.
package final class StoreOperation: Sendable {
    /// What to do.
    package enum Work: Sendable {
        case get(String)
        case count
        case put(CacheEntry, key: String)
        case remove(InvalidateMessage.Target)
        /// A soft purge: the target's entries that are fresh at `nowMs` become stale then
        /// (``CacheEntry/madeStale(at:)``); outcome: the keys changed.
        case markStale(InvalidateMessage.Target, nowMs: Int64)
        case deleteExpired(by: Int64)
        /// Runs on the pool thread in the queue's turn; tests use it to hold the queue.
        case probe(@Sendable () -> Void)
        /// Closes the connection; the last operation of the store.
        case close

        /// Whether it changes the file, and so runs in the batch's transaction.
        var isWrite: Bool {
            switch self {
            case .put, .remove, .markStale, .deleteExpired: true
            case .get, .count, .probe, .close: false
            }
        }
    }

    /// How it ended.
    package enum Outcome: Sendable {
        case entry(CacheEntry?)
        case count(Int)
        case keys([String])
        case done
        case failed(SQLiteStoreError)
        /// The store cannot be reached now (a Redis that is down, restarting or too slow): a
        /// read is a miss, a write was dropped. Says why.
        case unavailable(String)
        /// The store refused the operation (a Redis error reply). Says what it said.
        case refused(String)
    }

    /// What to do.
    package let work: Work
    private let state = Mutex(State())

    private struct State {
        var outcome: Outcome?
        var waiter: CheckedContinuation<Outcome, Never>?
        var started = false
    }

    package init(_ work: Work) {
        self.work = work
    }

    /// Waits for the outcome. Cancelling the waiting task cancels a read not yet started.
    package func outcome() async -> Outcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Outcome? in
                    if let outcome = state.outcome { return outcome }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            if !work.isWrite { finish(.failed(SQLiteStoreError(.cancelled, "cancelled before it ran")), ifNotStarted: true) }
        }
    }

    /// Marks the operation as running; false when it already has an outcome (cancelled), and
    /// so must be skipped.
    package func start() -> Bool {
        state.withLock { state in
            guard state.outcome == nil else { return false }
            state.started = true
            return true
        }
    }

    /// Hands `outcome` to the waiter (now or when it comes). Only the first outcome counts.
    package func finish(_ outcome: Outcome, ifNotStarted: Bool = false) {
        let waiter = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
            guard state.outcome == nil, !(ifNotStarted && state.started) else { return nil }
            state.outcome = outcome
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: outcome)
    }
}
