import Logging
import Monarch
@testable import MonarchCoordinator
import MonarchLoop
import MonarchWire
import Testing

@Suite struct CachePoolTests {
    @Test("a write-back from a trip that started before an invalidation of its key is dropped")
    func writeBackAfterInvalidation() async throws {
        let loop = try EventLoop(name: "cache-pool-test")
        defer { _ = loop.shutdown() }
        let pool = CachePool(kind: "cache", loop: loop, logger: Logger(label: "test"))
        func request(_ key: String) -> Request { Request(path: "p", route: RouteContext(cacheKey: key)) }

        let startedBefore = ContinuousClock.now
        _ = await pool.invalidate(.prefix("GET api users/"))
        await WorkerPool.$tripStart.withValue(startedBefore) {
            await pool.store(Response(), for: request("GET api users/1"))
            await pool.store(Response(), for: request("GET api posts/1"))
        }
        await WorkerPool.$tripStart.withValue(.now) {
            await pool.store(Response(), for: request("GET api users/2"))
        }
        // Only the first was dropped: the others found no worker to go to, which is not a skip.
        #expect(try await loop.submit { pool.storesSkipped } == 1)
    }
}
