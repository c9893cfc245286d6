import Monarch

/// A live query: the state of one typed request, shared with the other live queries of the
/// same key, refreshed on demand, by polling, or when a mutation invalidates its key.
///
/// ```swift
/// let user = queries.query(CurrentUser(), options: QueryOptions(pollInterval: .seconds(30)))
/// for await state in user.states {
///     if let value = state.value { show(value) }       // kept while refetching
/// }
/// ```
///
/// A query lives as long as it is held; the last query of a key to go stops its polling and
/// ends its streams.
public final class Query<Value: Sendable>: Sendable {
    private let entry: QueryEntry<Value>
    private let handle: Int
    private let ttl: Duration?
    private let onRelease: @Sendable () -> Void

    init(entry: QueryEntry<Value>, handle: Int, ttl: Duration?, onRelease: @escaping @Sendable () -> Void) {
        self.entry = entry
        self.handle = handle
        self.ttl = ttl
        self.onRelease = onRelease
    }

    deinit { onRelease() }

    /// The key the query shares its state under.
    public var key: QueryKey { entry.key }

    /// The current state.
    public var state: QueryState<Value> { entry.broadcast.state }

    /// The states from now on, beginning with the current one; the sequence ends when the
    /// last query of the key is released. A reader that falls behind skips the oldest states.
    public var states: AsyncStream<QueryState<Value>> { entry.broadcast.stream() }

    /// Asks in the background unless a value fetched within the query's TTL is there, or a
    /// request is already in flight (which it joins). The state is `loading` when it returns.
    public func start() {
        guard !entry.isFresh(within: ttl) else { return }
        entry.begin()
    }

    /// Asks now (or joins the request in flight) and returns the state it ends in: `success`
    /// or `failure`, the previous value kept in a failure.
    @discardableResult
    public func refetch() async -> QueryState<Value> {
        await entry.refetch()
    }

    /// The value: the fresh one when the TTL allows, else the answer to a new request.
    ///
    /// - Throws: the request's ``MonarchError``.
    public func value() async throws(MonarchError) -> Value {
        if entry.isFresh(within: ttl), let value = state.value { return value }
        switch await refetch() {
        case .success(let value): return value
        case .failure(let error, _): throw error
        case .idle, .loading: throw .cancelled
        }
    }
}
