import Monarch
import Synchronization

/// What the registry keeps per key: type-erased so queries of any value type live in one table.
protocol AnyQueryEntry: AnyObject, Sendable {
    var key: QueryKey { get }
    /// Marks the value stale and, when a query still uses it, refetches; returns once done.
    func invalidate() async
}

/// The state one key's queries share: one value, one request in flight, one poller.
final class QueryEntry<Value: Sendable>: AnyQueryEntry {
    let key: QueryKey
    private let fetch: @Sendable () async throws(MonarchError) -> Value
    let broadcast = StateBroadcast<QueryState<Value>>(.idle)

    private struct Inner {
        var inFlight: Task<QueryState<Value>, Never>?
        /// ``generation`` when ``inFlight`` started.
        var inFlightGeneration = 0
        /// How many times the value was invalidated: a request started before the last
        /// invalidation may answer with what the invalidation replaced, so none joins it.
        var generation = 0
        var fetchedAt: ContinuousClock.Instant?
        /// The live queries on this entry, with their poll intervals.
        var handles: [Int: Duration?] = [:]
        var nextHandle = 0
        var poller: Task<Void, Never>?
        var pollInterval: Duration?
    }

    private let inner = Mutex(Inner())

    init(key: QueryKey, fetch: @escaping @Sendable () async throws(MonarchError) -> Value) {
        self.key = key
        self.fetch = fetch
    }

    /// Adds a query polling every `pollInterval` (or never); returns its handle.
    func attach(pollInterval: Duration?) -> Int {
        let handle = inner.withLock { inner in
            defer { inner.nextHandle += 1 }
            inner.handles[inner.nextHandle] = pollInterval
            return inner.nextHandle
        }
        updatePolling()
        return handle
    }

    /// Removes a query; returns how many are left (none: the entry is done).
    func detach(_ handle: Int) -> Int {
        let left = inner.withLock { inner in
            inner.handles.removeValue(forKey: handle)
            return inner.handles.count
        }
        updatePolling()
        if left == 0 {
            inner.withLock { $0.inFlight }?.cancel()
            broadcast.finish()
        }
        return left
    }

    /// Whether a value fetched within `ttl` is there.
    func isFresh(within ttl: Duration?) -> Bool {
        guard let ttl, let fetchedAt = inner.withLock({ $0.fetchedAt }) else { return false }
        guard case .success = broadcast.state else { return false }
        return ContinuousClock.now - fetchedAt < ttl
    }

    /// Asks now, or joins the request already in flight; returns the state it ends in.
    func refetch() async -> QueryState<Value> {
        await begin().value
    }

    /// Starts a request unless one started since the last invalidation is in flight (the state
    /// turns `loading` before this returns); returns the task that ends it. A request that
    /// an invalidation overtook shows its answer only if nothing newer runs, and never as
    /// fresh.
    @discardableResult
    func begin() -> Task<QueryState<Value>, Never> {
        inner.withLock { inner -> Task<QueryState<Value>, Never> in
            if let running = inner.inFlight, inner.inFlightGeneration == inner.generation { return running }
            let generation = inner.generation
            broadcast.update { state in state = .loading(previous: state.value) }
            let task = Task { [self] in
                let outcome: QueryState<Value>
                do throws(MonarchError) {
                    outcome = .success(try await fetch())
                } catch {
                    outcome = .failure(error, previous: broadcast.state.value)
                }
                let shown = self.inner.withLock { inner -> Bool in
                    let newest = inner.inFlightGeneration == generation
                    if newest { inner.inFlight = nil }
                    guard inner.generation == generation else { return newest }
                    if case .success = outcome { inner.fetchedAt = .now }
                    return true
                }
                if shown { broadcast.set(outcome) }
                return outcome
            }
            inner.inFlight = task
            inner.inFlightGeneration = generation
            return task
        }
    }

    /// Marks the value out of date; the live queries on it ask again, never joining a request
    /// that started before.
    func invalidate() async {
        let live = inner.withLock { inner in
            inner.fetchedAt = nil
            inner.generation += 1
            return !inner.handles.isEmpty
        }
        if live { _ = await refetch() }
    }

    /// Starts, restarts or stops the poller for the shortest interval among the live queries.
    private func updatePolling() {
        let (old, new) = inner.withLock { inner -> (Task<Void, Never>?, Duration?) in
            let interval = inner.handles.values.compactMap { $0 }.min()
            guard interval != inner.pollInterval else { return (nil, interval) }
            let old = inner.poller
            inner.pollInterval = interval
            inner.poller = interval.map { interval in
                Task { [weak self] in
                    while !Task.isCancelled {
                        do { try await Task.sleep(for: interval) } catch { return }
                        guard let self else { return }
                        _ = await self.refetch()
                    }
                }
            }
            return (old, interval)
        }
        _ = new
        old?.cancel()
    }
}
