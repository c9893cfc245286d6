import Monarch
import MonarchQuery
import Testing

/// ``QueryClient/refetch(following:)`` over any sequence of cache changes, no cluster.
@Suite(.timeLimit(.minutes(1))) struct RefetchFollowingTests {
    @Test("Any sequence of changes refetches the live queries an invalidation or an overflow concerns, and nothing for a store")
    func followsAnySequenceOfChanges() async throws {
        let provider = CounterProvider()
        let service = monarch(provider)
        let queries = QueryClient(service: service)
        let query = queries.query(CounterRequest())
        #expect(await query.refetch() == .success(Counter(value: 0)))
        // The count changes behind the query's back (another process, say).
        #expect(try await service.perform(IncrementRequest()) == Counter(value: 1))
        let key = QueryKey(path: "counter").rawValue
        let (changes, feed) = AsyncStream.makeStream(of: CacheChange.self)
        let follower = queries.refetch(following: changes)
        feed.yield(CacheChange(kind: .stored, key: key))
        feed.yield(CacheChange(kind: .invalidated, key: QueryKey(path: "elsewhere").rawValue))
        feed.finish()
        await follower.value
        #expect(provider.calls("GET counter") == 1, "a store or another key's invalidation refetched")
        #expect(query.state == .success(Counter(value: 0)))

        let (more, moreFeed) = AsyncStream.makeStream(of: CacheChange.self)
        let next = queries.refetch(following: more)
        moreFeed.yield(CacheChange(kind: .invalidated, key: key))
        moreFeed.yield(CacheChange(kind: .overflow))
        moreFeed.finish()
        await next.value
        #expect(provider.calls("GET counter") == 3)
        #expect(query.state == .success(Counter(value: 1)))
        withExtendedLifetime(query) {}
    }
}
