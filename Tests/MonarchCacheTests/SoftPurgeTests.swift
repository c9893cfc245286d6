import Foundation
import Monarch
@testable import MonarchCache
import MonarchLoop
import MonarchTransport
import MonarchWire
import MonarchWorker
import TestOrigins
import Testing

/// Soft purges (`invalidate` with `soft: true`): entries made stale in place, kept for the
/// stale window, in memory, in an SQLite file and in Redis.
@Suite struct SoftPurgeTests {
    @Test func anEntryMadeStaleHasItsAgeForTTLAndOneAlreadyStaleIsLeftAlone() throws {
        let fresh = CacheEntry(status: 200, storedAtMs: 1000, ttlMs: 60_000)
        let stale = try #require(fresh.madeStale(at: 6000))
        #expect(stale.ttlMs == 5000)
        #expect(!stale.isFresh(at: 6000))
        #expect(!stale.isSweepable(at: 6000 + 9_999, keepStaleMs: 10_000))
        #expect(stale.isSweepable(at: 6000 + 10_000, keepStaleMs: 10_000))
        // For ever fresh: stale from now on.
        #expect(CacheEntry(status: 200, storedAtMs: 1000).madeStale(at: 3000)?.ttlMs == 2000)
        // Stale already: nothing to change.
        #expect(CacheEntry(status: 200, storedAtMs: 1000, ttlMs: 10).madeStale(at: 3000) == nil)
        // Stored a little ahead of this clock: stale at once, with a TTL of 0.
        #expect(CacheEntry(status: 200, storedAtMs: 3500, ttlMs: 60_000).madeStale(at: 3000)?.ttlMs == 0)
    }

    @Test func memoryMarksByKeyPrefixAndTagInPlaceKeepingItsCostAndOrder() {
        var memory = MemoryCache(budgetBytes: 1 << 20)
        memory.put("GET a 1", CacheEntry(status: 200, storedAtMs: 0, ttlMs: 60_000, tags: ["t"]))
        memory.put("GET a 2", CacheEntry(status: 200, storedAtMs: 0, ttlMs: 60_000))
        memory.put("GET b 1", CacheEntry(status: 200, storedAtMs: 0, ttlMs: 60_000, tags: ["t"]))
        let used = memory.usedBytes
        let order = memory.keysByRecency
        let first = memory.markStale("GET a 2", at: 100)
        let again = memory.markStale("GET a 2", at: 100)
        let absent = memory.markStale("GET zzz", at: 100)
        #expect(first && !again && !absent, "marked once; stale already; nothing there")
        let byPrefix = memory.markStaleAll(withPrefix: "GET a", at: 200)
        let byTag = memory.markStaleAll(taggedWith: "t", at: 300)
        #expect(byPrefix == ["GET a 1"])
        #expect(byTag == ["GET b 1"])
        #expect(memory.peek("GET a 1")?.ttlMs == 200)
        #expect(memory.peek("GET b 1")?.ttlMs == 300)
        #expect(memory.usedBytes == used && memory.keysByRecency == order && memory.count == 3)
    }

    @Test func aMemoryOnlyCacheAnswersStaleAfterASoftPurgeUntilTheSweep() async throws {
        try await withCacheFixture { fixture in
            let cache = fixture.provider(store: nil, keepStale: .seconds(60))
            try await cache.store(textResponse("one", ttl: .seconds(600)), under: "GET api users/1", tags: ["users"])
            try await cache.store(textResponse("two", ttl: .seconds(600)), under: "GET api users/2")
            fixture.clock.advance(by: .seconds(5))
            #expect(try await cache.markStaleKeys(.tag("users")) == ["GET api users/1"])
            let stale = try #require(await cache.perform(cacheRequest("GET api users/1")).response)
            #expect(stale.stale && stale.body == Data("one".utf8) && stale.age == .seconds(5) && stale.ttl == .seconds(5))
            #expect(await cache.perform(cacheRequest("GET api users/2")).response?.stale == false)
            #expect(try await cache.markStaleKeys(.tag("users")) == [], "nothing fresh is left under the tag")
            fixture.clock.advance(by: .seconds(59))
            #expect(try await cache.sweep() == 0)
            fixture.clock.advance(by: .seconds(1))
            #expect(try await cache.sweep() == 1)
            #expect(await cache.perform(cacheRequest("GET api users/1")).isMiss)
            await #expect(throws: ProviderFailure.self) { try await cache.markStaleKeys(.path("users/1")) }
        }
    }

    @Test func theFileKeepsWhatASoftPurgeMadeStaleAcrossAReopenWithTheKeysVariantSlots() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let cache = fixture.provider(store: store)
            try await cache.store(textResponse("en", ttl: .seconds(600)), under: "GET api news", variant: "accept-language:en")
            try await cache.store(textResponse("p", ttl: .seconds(600)), under: "GET api users/1")
            try await cache.store(textResponse("q", ttl: .seconds(600)), under: "GET api users/2", tags: ["q"])
            try await cache.store(textResponse("old", ttl: .seconds(1)), under: "GET api old")
            fixture.clock.advance(by: .seconds(3))
            #expect(try await cache.markStaleKeys(.key("GET api news")) == ["GET api news"])
            #expect(try await cache.markStaleKeys(.prefix("GET api users/")) == ["GET api users/1", "GET api users/2"])
            // Stale already: left as it was.
            #expect(try await cache.markStaleKeys(.key("GET api old")) == [])
            #expect(try await store.entry(forKey: "GET api old")?.ttlMs == 1000)
            let slot = CacheVariants.slotKey("GET api news", variant: "accept-language:en")
            for key in ["GET api news", slot, "GET api users/1", "GET api users/2"] {
                #expect(try await store.entry(forKey: key)?.ttlMs == 3000, "\(key)")
            }
            #expect(try await store.count() == 5, "nothing was deleted")
            await store.close()

            let reopened = try await fixture.openStore()
            let fromDisk = fixture.provider(store: reopened)
            let answer = try #require(await fromDisk.perform(cacheRequest("GET api users/2")).response)
            #expect(answer.stale && answer.body == Data("q".utf8))
            // A soft purge by tag reaches the file (memory holds the entry now too).
            try await fromDisk.store(textResponse("q2", ttl: .seconds(600)), under: "GET api users/2", tags: ["q"])
            #expect(try await fromDisk.markStaleKeys(.tag("q")) == ["GET api users/2"])
            #expect(try await reopened.entry(forKey: "GET api users/2")?.ttlMs == 0)
            #expect(await fromDisk.perform(cacheRequest("GET api users/2")).response?.stale == true)
            await reopened.close()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aSoftInvalidateOverTheWireIsAnsweredWithMarkedStaleAndTheEntryThenAnswersStale() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let runtime = WorkerRuntime(
                identity: WorkerIdentity(kind: "cache"), provider: fixture.provider(store: store), loop: fixture.loop,
                logger: fixture.logs.logger)
            let coordinator = try await TestCoordinator.connect(runtime, fixture)
            let worker = coordinator.worker
            try await worker.send(.store(StoreMessage(id: 1, key: "users/1", status: 200, body: Data("one".utf8), ttlMs: 60_000)))
            #expect(try await worker.nextMessage() == .result(ResultMessage(id: 1, data: ["stored": .bool(true)])))
            try await worker.send(.invalidate(InvalidateMessage(id: 2, target: .key("users/1"), soft: true)))
            #expect(
                try await worker.nextMessage()
                    == .result(ResultMessage(id: 2, data: ["markedStale": .integer(1), "keys": .array([.string("users/1")])])))
            try await worker.send(.request(RequestMessage(id: 3, path: "users/1", key: "users/1")))
            guard case .response(let response)? = try await worker.nextMessage() else {
                Issue.record("expected a response")
                return
            }
            #expect(response.stale == true)
            #expect(response.body == Data("one".utf8))
            try await coordinator.finish()
            await store.close()
        }
    }
}

/// Soft purges on a real `redis-server`.
@Suite("Redis soft purge", .serialized, .timeLimit(.minutes(5)))
struct RedisSoftPurgeTests {
    @Test("by key, tag and prefix: the entry is rewritten stale with its body, tags and headers, expires after the stale window, and other workers' memory lets go")
    func softPurges() async throws {
        let redis = try await TestRedis.start()
        defer { Task { await redis.remove() } }
        try await withCacheFixture { fixture in
            // A stale window long enough for a loaded machine: Redis must not expire what the
            // test still reads (a full run on 2 cores held this test up for many seconds).
            let (first, firstStore) = try await redisProvider(fixture, redis, keepStale: .seconds(300))
            let (second, secondStore) = try await redisProvider(fixture, redis, keepStale: .seconds(300))
            try await first.store(
                textResponse("héllo", ttl: .seconds(600), headers: ["Content-Type": "text/plain", "X-Note": "a \"quoted\" é/ü"]),
                under: "GET api users/1", tags: ["users", "user-1"])
            // No headers and no tags: cjson must not write the empty tags back as an object.
            try await first.store(Response(status: 200, headers: [:], body: Data([0, 255, 1]), ttl: .seconds(600)), under: "GET api bare")
            try await first.store(textResponse("other", ttl: .seconds(600)), under: "GET api other", tags: ["users"])
            // The second worker reads them into its memory.
            try await waitUntil { secondStore.statusFigures["storeNotifications"] == .integer(3) }
            for key in ["GET api users/1", "GET api bare", "GET api other"] {
                #expect(await second.perform(cacheRequest(key)).response?.stale == false)
            }

            #expect(try await first.markStaleKeys(.key("GET api users/1")) == ["GET api users/1"])
            let remaining = try #require(Int(try await redis.cli("PTTL", "monarch:e:GET api users/1")))
            // The entry lived 600 s + 300 s; made stale, it lives the stale window from now.
            #expect(remaining > 0 && remaining <= 300_000, "expires after the stale window: \(remaining) ms")
            // The second worker hears the change and reads the stale entry from Redis.
            try await eventuallyStale(second, "GET api users/1", store: secondStore, redis: redis, logs: fixture.logs)
            let stale = try #require(await second.perform(cacheRequest("GET api users/1")).response)
            #expect(stale.body == Data("héllo".utf8))
            #expect(stale.headers == ["content-type": "text/plain", "x-note": "a \"quoted\" é/ü"])
            // Its TTL is what its age was when it was made stale.
            #expect(stale.ttl != nil && stale.age != nil && stale.ttl! <= stale.age! && stale.ttl! < .seconds(600))
            let entry = try #require(await stored(firstStore, "GET api users/1", redis))
            #expect(entry.tags.sorted() == ["user-1", "users"])
            #expect(try await first.markStaleKeys(.key("GET api users/1")) == [], "stale already")

            #expect(try await first.markStaleKeys(.prefix("GET api ba")) == ["GET api bare"])
            let bare = try #require(await stored(firstStore, "GET api bare", redis), "the rewritten entry reads back")
            #expect(bare.tags == [] && bare.headers == [:] && bare.body == Data([0, 255, 1]))
            #expect(!bare.isFresh(at: WallClock.system.nowMs))
            try await eventuallyStale(second, "GET api bare", store: secondStore, redis: redis, logs: fixture.logs)

            // By tag: what still carries it and is fresh.
            #expect(try await first.markStaleKeys(.tag("users")) == ["GET api other"])
            try await eventuallyStale(second, "GET api other", store: secondStore, redis: redis, logs: fixture.logs)
            #expect(try await redis.cli("DBSIZE") != "0", "nothing was deleted")
            #expect(fixture.logs.messages(at: .warning).isEmpty, "\(fixture.logs.messages(at: .warning))")
            await firstStore.close()
            await secondStore.close()
        }
    }

    /// The entry `store` reads under `key` (nil: none, or one it cannot decode; the outcome
    /// and Redis's view of the key are recorded then).
    private func stored(_ store: RedisStore, _ key: String, _ redis: TestRedis) async -> CacheEntry? {
        let outcome = await store.enqueue(.get(key)).outcome()
        if case .entry(let entry?) = outcome { return entry }
        let pttl = (try? await redis.cli("PTTL", "monarch:e:" + key)) ?? "?"
        let info = (try? await redis.cli("INFO", "stats")) ?? "?"
        let server = (try? await redis.cli("INFO", "server")) ?? "?"
        let counts = info.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("expired_keys") || $0.hasPrefix("evicted_keys") }
        let uptime = server.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("uptime_in_seconds") || $0.hasPrefix("tcp_port") }
        Issue.record("no entry under \(key): \(outcome); PTTL \(pttl); \(counts); \(uptime); store \(store.statusFigures)")
        return nil
    }

    /// Waits until `cache` answers `key` stale (its memory let go of the fresh copy).
    private func eventuallyStale(
        _ cache: CacheProvider, _ key: String, store: RedisStore, redis: TestRedis, logs: LogRecords
    ) async throws {
        let start = ContinuousClock.now
        var seen: [String] = []
        while true {
            let outcome = await cache.perform(cacheRequest(key))
            if outcome.response?.stale == true { return }
            let text = outcome.response.map { "fresh, ttl \($0.ttl.map { "\($0)" } ?? "-")" }
                ?? "\(outcome)"
            if seen.last?.hasSuffix(text) != true { seen.append("\(ContinuousClock.now - start): \(text)") }
            guard ContinuousClock.now - start < .seconds(30) else {
                Issue.record("""
                    \(key) was not answered stale within 30 s: \(seen); memory \(cache.memoryUsage); \
                    store \(store.statusFigures); log: \(logs.messages(at: .warning) + logs.messages(at: .error))
                    """)
                _ = await stored(store, key, redis)
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
