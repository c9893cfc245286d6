import Monarch
import Synchronization

/// Queries, mutations and pages over any ``MonarchService`` — a cluster's `MonarchClient`,
/// the in-process `Monarch`, or `MonarchPreview`. Queries with the same key made from one
/// query client share one state and one request in flight.
///
/// ```swift
/// let queries = QueryClient(service: client)
/// let user = queries.query(CurrentUser())
/// for await state in user.states { render(state) }
/// ```
public final class QueryClient: Sendable {
    /// The service every query and mutation asks.
    public let service: any MonarchService

    private struct EntryID: Hashable {
        var key: QueryKey
        var type: ObjectIdentifier
    }

    private let entries = Mutex<[EntryID: any AnyQueryEntry]>([:])

    /// A query client asking `service`.
    public init(service: any MonarchService) { self.service = service }

    /// A live query for `request`: sharing the state of other live queries with the same key
    /// and value type, fetching now unless `options` say on demand or a shared value is fresh.
    public func query<R: MonarchRequest>(_ request: R, options: QueryOptions = QueryOptions()) -> Query<R.Response> {
        let service = service
        let asked = QueryRequest(base: request, options: options)
        let fetch = { @Sendable () async throws(MonarchError) -> R.Response in try await service.perform(asked) }
        let key = QueryKey((try? request.request()) ?? Request(path: request.path, domain: request.domain, method: request.method))
        let id = EntryID(key: key, type: ObjectIdentifier(R.Response.self))
        let (entry, handle) = entries.withLock { entries -> (QueryEntry<R.Response>, Int) in
            let entry = (entries[id] as? QueryEntry<R.Response>) ?? QueryEntry(key: key, fetch: fetch)
            entries[id] = entry
            return (entry, entry.attach(pollInterval: options.pollInterval))
        }
        let query = Query(entry: entry, handle: handle, ttl: options.ttl) { [weak self] in
            self?.release(id, entry: entry, handle: handle)
        }
        if options.start == .immediately { query.start() }
        return query
    }

    /// A mutation: performs requests of type `R` (a `POST`, `PUT`, `PATCH`, `DELETE`), then
    /// invalidates what `invalidates` names for the request performed.
    public func mutation<R: MonarchRequest>(
        _ type: R.Type = R.self, invalidates: @escaping @Sendable (R) -> [QueryMatch]
    ) -> Mutation<R> {
        Mutation(queries: self, invalidates: invalidates)
    }

    /// Drops what `matches` name: the cluster's cached entries (for a service that shares a
    /// cache), then refetches every live query here whose key matches; returns once those
    /// refetches ended.
    ///
    /// - Throws: the service's error when a cluster's caches could not be invalidated (the
    ///   live queries here are refetched anyway).
    public func invalidate(_ matches: [QueryMatch]) async throws(MonarchError) {
        var failure: MonarchError?
        for match in matches {
            do throws(MonarchError) {
                _ = try await service.invalidate(match.wireTarget)
            } catch {
                failure = failure ?? error
            }
        }
        await refetchLive(matching: matches)
        if let failure { throw failure }
    }

    /// Refetches every live query whose key one of `matches` matches (every live query when
    /// nil); returns once those refetches ended.
    func refetchLive(matching matches: [QueryMatch]?) async {
        let hit = entries.withLock { entries in
            entries.values.filter { entry in matches?.contains { $0.matches(entry.key) } ?? true }
        }
        await withTaskGroup(of: Void.self) { group in
            for entry in hit { group.addTask { await entry.invalidate() } }
        }
    }

    /// How many keys have live queries (for tests and diagnostics).
    public var liveKeys: Int { entries.withLock { $0.count } }

    private func release<Value>(_ id: EntryID, entry: QueryEntry<Value>, handle: Int) {
        entries.withLock { entries in
            if entry.detach(handle) == 0, entries[id] === entry { entries.removeValue(forKey: id) }
        }
    }
}
