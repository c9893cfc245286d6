import Logging
import Monarch
@testable import MonarchCoordinator
import MonarchLoop
import MonarchWire
import Testing

@Suite struct CachePoolTests {
    func makePool(
        clock: MonotonicClock = .system, memory: Duration = .seconds(60), limit: Int = 1000
    ) -> CachePool {
        CachePool(
            kind: "cache", logger: Logger(label: "test"), clock: clock, wallClock: .system, invalidationMemory: memory,
            invalidationLimit: limit)
    }

    func request(_ key: String) -> Request { Request(path: "p", route: RouteContext(cacheKey: key)) }

    func store(_ pool: CachePool, _ key: String, tripStartedAt start: ContinuousClock.Instant) async {
        await pool.store(Response(), for: request(key), on: WorkerPool.Trip(start: start, budget: nil, client: 0))
    }

    @Test("On a trip, a cache pool is asked and written back to with the trip; a plain pool only asked")
    func poolsOnATrip() async throws {
        let cache = makePool()
        let network = WorkerPool(kind: "network", clock: .system)
        let trip = WorkerPool.Trip(start: .now, budget: nil, client: 0)
        #expect(cache.pool.role == .cache && network.role == .provider)
        let cacheLeg = try #require(cache.onTrip(trip) as? PoolOnTrip<CachePool>)
        #expect(cacheLeg.pool === cache && cacheLeg.name == "cache")
        #expect(cache.onTrip(trip) is any ResponseStoring)
        #expect(!(network.onTrip(trip) is any ResponseStoring))
        #expect((network.onTrip(trip) as? PoolOnTrip<WorkerPool>)?.pool === network)
    }

    @Test("a write-back from a trip that started before an invalidation of its key is dropped")
    func writeBackAfterInvalidation() async throws {
        let pool = makePool()

        let startedBefore = ContinuousClock.now
        _ = await pool.invalidate(InvalidateMessage.Target.prefix("GET api users/"))
        await store(pool, "GET api users/1", tripStartedAt: startedBefore)
        await store(pool, "GET api posts/1", tripStartedAt: startedBefore)
        await store(pool, "GET api users/2", tripStartedAt: .now)
        // Only the first was dropped: the others found no worker to go to, which is not a skip.
        #expect(await CoordinatorActor.run { pool.storesSkipped } == 1)
    }

    @Test("invalidations remembered stay within their limit: the oldest fold into one covering every key")
    func invalidationMemoryIsBoundedInCount() async throws {
        let pool = makePool(limit: 3)
        let startedBefore = ContinuousClock.now
        for index in 0..<10 { _ = await pool.invalidate(InvalidateMessage.Target.key("GET api k\(index)")) }
        #expect(await CoordinatorActor.run { pool.rememberedInvalidations } == 3)
        // A key never invalidated, from a trip older than the folded invalidations: dropped too.
        await store(pool, "GET api other", tripStartedAt: startedBefore)
        #expect(await CoordinatorActor.run { pool.storesSkipped } == 1)
        // A trip that started after all of them keeps its write-back (no worker: not a skip).
        await store(pool, "GET api other", tripStartedAt: .now)
        #expect(await CoordinatorActor.run { pool.storesSkipped } == 1)
    }

    @Test("invalidations are forgotten once no trip under way can need them")
    func invalidationMemoryIsBoundedInTime() async throws {
        let clock = TestClock()
        let pool = makePool(clock: clock.clock, memory: .seconds(30), limit: 1)
        let startedBefore = clock.now
        clock.advance(by: .seconds(1))
        for index in 0..<3 { _ = await pool.invalidate(InvalidateMessage.Target.key("GET api k\(index)")) }
        #expect(await CoordinatorActor.run { pool.rememberedInvalidations } == 1)
        // Within the memory, an older trip's write-back is still dropped (the folded ones cover every key).
        clock.advance(by: .seconds(30))
        await CoordinatorActor.run { pool.forgetOldInvalidations(now: clock.now) }
        #expect(await CoordinatorActor.run { pool.rememberedInvalidations } == 1)
        await store(pool, "GET api other", tripStartedAt: startedBefore)
        #expect(await CoordinatorActor.run { pool.storesSkipped } == 1)
        // Past it, nothing is remembered, folded or not: the same write-back is kept (no worker: not a skip).
        clock.advance(by: .milliseconds(1))
        await CoordinatorActor.run { pool.forgetOldInvalidations(now: clock.now) }
        #expect(await CoordinatorActor.run { pool.rememberedInvalidations } == 0)
        await store(pool, "GET api other", tripStartedAt: startedBefore)
        #expect(await CoordinatorActor.run { pool.storesSkipped } == 1)
    }
}
