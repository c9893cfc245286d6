import Foundation
import Monarch
@testable import MonarchCache
import MonarchLoop
import MonarchWire
import TestOrigins
import Testing

/// The Redis store against a real `redis-server` each test starts on 127.0.0.1.
// One test at a time: each starts, stops and restarts a redis-server of its own while stores
// connect, reconnect and close on loops of the test process; run all at once beside the
// outage tests, the full suite crashed now and then (a call through a null closure on a
// cache-test loop, not reproduced alone nor under AddressSanitizer).
@Suite("Redis store", .serialized, .timeLimit(.minutes(5)))
struct RedisStoreTests {
    @Test("a stored entry is a hit through another worker's provider; an absent key is a miss; Redis expires it ttl + keepStale after")
    func hitsAndMisses() async throws {
        let redis = try await TestRedis.start()
        defer { Task { await redis.remove() } }
        try await withCacheFixture { fixture in
            let (first, firstStore) = try await redisProvider(fixture, redis)
            let (second, secondStore) = try await redisProvider(fixture, redis)
            try await first.store(
                textResponse("hello", ttl: .seconds(60), headers: ["Content-Type": "text/plain", "ETag": "\"1\""]),
                under: "GET api users/1")
            try await waitUntil { secondStore.statusFigures["storeNotifications"] == .integer(1) }
            // The second provider's memory is empty: the hit comes from Redis.
            let response = try #require(await second.perform(cacheRequest("GET api users/1")).response)
            #expect(response.body == Data("hello".utf8))
            #expect(response.headers == ["content-type": "text/plain", "etag": "\"1\""])
            #expect(response.stale == false)
            #expect(response.ttl == .seconds(60))
            #expect(second.memoryUsage.entries == 1)
            #expect(await second.perform(cacheRequest("GET api users/2")).isMiss)
            // Expiry: the TTL plus the stale window (10 s in these tests), no more.
            let remaining = try #require(Int(try await redis.cli("PTTL", "monarch:e:GET api users/1")))
            #expect(remaining > 60_000 && remaining <= 70_000)
            // An entry without TTL does not expire.
            try await first.store(textResponse("for ever"), under: "GET api forever")
            #expect(try await redis.cli("PTTL", "monarch:e:GET api forever") == "-1")
            await firstStore.close()
            await secondStore.close()
        }
    }

    @Test("an entry past its TTL answers stale until the stale window ends, then Redis has dropped it")
    func staleWindow() async throws {
        let redis = try await TestRedis.start()
        defer { Task { await redis.remove() } }
        try await withCacheFixture { fixture in
            let (writer, writerStore) = try await redisProvider(fixture, redis, keepStale: .milliseconds(1500))
            let (reader, readerStore) = try await redisProvider(fixture, redis, keepStale: .milliseconds(1500), memoryBytes: 0)
            try await writer.store(textResponse("v1", ttl: .milliseconds(500)), under: "k")
            // Freshness is judged on the worker's clock from the metadata stored with the value.
            var sawStale = false
            var gone = false
            let start = ContinuousClock.now
            while !gone && ContinuousClock.now - start < .seconds(30) {
                switch await reader.perform(cacheRequest("k")) {
                case .response(let response):
                    #expect(response.body == Data("v1".utf8))
                    if response.stale { sawStale = true }
                case .miss:
                    gone = true
                case .failure(let failure):
                    Issue.record("unexpected failure \(failure)")
                    gone = true
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(sawStale)
            #expect(gone)
            #expect(try await redis.cli("EXISTS", "monarch:e:k") == "0")
            await writerStore.close()
            await readerStore.close()
        }
    }

    @Test("prefix invalidation scans Redis (glob characters are plain bytes) and reaches the other workers' memory")
    func prefixInvalidation() async throws {
        let redis = try await TestRedis.start()
        defer { Task { await redis.remove() } }
        try await withCacheFixture { fixture in
            let (first, firstStore) = try await redisProvider(fixture, redis)
            let (second, secondStore) = try await redisProvider(fixture, redis)
            let keys = ["GET api users/1", "GET api users/2", "GET api usersX", "GET api a*", "GET api ab", "GET api a[1]"]
            for key in keys { try await first.store(textResponse(key), under: key) }
            // Many more, so the scan takes several cursors.
            for index in 0..<2500 { try await first.store(textResponse("x"), under: "GET api many/\(index)") }
            try await waitUntil(.seconds(60)) { secondStore.statusFigures["storeNotifications"] == .integer(2506) }
            if secondStore.statusFigures["storeNotifications"] != .integer(2506) {
                Issue.record("figures \(secondStore.statusFigures); warnings \(fixture.logs.messages(at: .warning))")
            }
            // The second worker holds users/1 in memory.
            #expect(await second.perform(cacheRequest("GET api users/1")).response != nil)
            #expect(second.memoryUsage.entries == 1)

            #expect(try await first.invalidate(.prefix("GET api users/")) == 2)
            #expect(try await first.invalidate(.prefix("GET api a*")) == 1)
            #expect(try await first.invalidate(.prefix("GET api a[")) == 1)
            #expect(try await first.invalidate(.prefix("GET api many/")) == 2500)
            #expect(await first.perform(cacheRequest("GET api users/1")).isMiss)
            #expect(await first.perform(cacheRequest("GET api usersX")).response != nil)
            #expect(await first.perform(cacheRequest("GET api ab")).response != nil)
            // The notification empties the second worker's memory copy.
            try await waitUntil { second.memoryUsage.entries == 0 }
            #expect(await second.perform(cacheRequest("GET api users/1")).isMiss)
            #expect(await second.perform(cacheRequest("GET api users/2")).isMiss)
            #expect(try await redis.cli("DBSIZE") == "2")

            #expect(try await first.invalidate(.key("GET api ab")) == 1)
            #expect(await second.perform(cacheRequest("GET api ab")).isMiss)
            await firstStore.close()
            await secondStore.close()
        }
    }

    @Test("tags: one set per tag that lives as long as its members; invalidation drops what still carries the tag, everywhere")
    func tags() async throws {
        let redis = try await TestRedis.start()
        defer { Task { await redis.remove() } }
        try await withCacheFixture { fixture in
            let (first, firstStore) = try await redisProvider(fixture, redis)
            let (second, secondStore) = try await redisProvider(fixture, redis)
            try await first.store(textResponse("a", ttl: .seconds(60)), under: "a", tags: ["t1", "t2"])
            try await first.store(textResponse("b", ttl: .seconds(30)), under: "b", tags: ["t1"])
            try await first.store(textResponse("c"), under: "c")
            try await first.store(textResponse("d"), under: "d", tags: ["t2"])
            // t1 lives as long as its longest-living entry (60 s + 10 s stale); d keeps t2 for ever.
            let t1 = try #require(Int(try await redis.cli("PTTL", "monarch:t:t1")))
            #expect(t1 > 60_000 && t1 <= 70_000)
            #expect(try await redis.cli("PTTL", "monarch:t:t2") == "-1")
            #expect(try await redis.cli("SCARD", "monarch:t:t1") == "2")
            try await waitUntil { secondStore.statusFigures["storeNotifications"] == .integer(4) }
            #expect(await second.perform(cacheRequest("a")).response != nil)
            #expect(second.memoryUsage.entries == 1)

            // b is stored again under another tag: invalidating t1 leaves it.
            try await first.store(textResponse("b2"), under: "b", tags: ["t3"])
            #expect(try await first.invalidateKeys(.tag("t1")) == ["a"])
            #expect(try await redis.cli("EXISTS", "monarch:t:t1") == "0")
            #expect(await first.perform(cacheRequest("b")).response?.body == Data("b2".utf8))
            // The second worker's memory copy of a goes too.
            try await waitUntil { second.memoryUsage.entries == 0 }
            #expect(await second.perform(cacheRequest("a")).isMiss)

            #expect(try await first.invalidateKeys(.tag("t2")) == ["d"])
            #expect(await second.perform(cacheRequest("d")).isMiss)
            #expect(await second.perform(cacheRequest("c")).response != nil)
            #expect(try await first.invalidateKeys(.tag("none")) == [])
            await firstStore.close()
            await secondStore.close()
        }
    }

    @Test("a tag's set sheds the members whose entries are gone as the tag keeps being stored")
    func tagSetsArePruned() async throws {
        let redis = try await TestRedis.start()
        defer { Task { await redis.remove() } }
        try await withCacheFixture { fixture in
            let (cache, store) = try await redisProvider(fixture, redis)
            for index in 0..<40 { try await cache.store(textResponse("x"), under: "gone/\(index)", tags: ["t"]) }
            #expect(try await cache.invalidate(.prefix("gone/")) == 40)
            #expect(try await redis.cli("SCARD", "monarch:t:t") == "40", "deleting by prefix leaves the members")
            for index in 0..<30 { try await cache.store(textResponse("y"), under: "live/\(index)", tags: ["t"]) }
            // Each store looks at 3 members at random: of 90 looks, about 40 find a gone entry.
            let members = try #require(Int(try await redis.cli("SCARD", "monarch:t:t")))
            #expect(members >= 30 && members < 60, "\(members) members for 30 live entries")
            // What is left still invalidates exactly the live entries.
            #expect(Set(try await cache.invalidateKeys(.tag("t"))) == Set((0..<30).map { "live/\($0)" }))
            await store.close()
        }
    }

    /// With one command waiting at most (`maxPending: 1`), the note of a change follows the
    /// change's reply, and a prefix scan's DEL its SCAN's: both still go out.
    @Test("a write-back or invalidation through one worker replaces the entry another worker holds in memory",
          arguments: [4096, 1])
    func coherence(maxPending: Int) async throws {
        let redis = try await TestRedis.start()
        defer { Task { await redis.remove() } }
        try await withCacheFixture { fixture in
            let settings = RedisSettings(timeoutMs: 5000, maxPending: maxPending)
            let (first, firstStore) = try await redisProvider(fixture, redis, settings: settings)
            let (second, secondStore) = try await redisProvider(fixture, redis, settings: settings)
            try await first.store(textResponse("v1"), under: "k")
            try await waitUntil { secondStore.statusFigures["storeNotifications"] == .integer(1) }
            #expect(await second.perform(cacheRequest("k")).response?.body == Data("v1".utf8))
            #expect(second.memoryUsage.entries == 1)
            try await first.store(textResponse("v2"), under: "k")
            try await waitUntil { second.memoryUsage.entries == 0 }
            #expect(await second.perform(cacheRequest("k")).response?.body == Data("v2".utf8))
            // A worker's own notifications leave its memory alone.
            #expect(first.memoryUsage.entries == 1)
            #expect(try await first.invalidate(.prefix("k")) == 1)
            try await waitUntil { second.memoryUsage.entries == 0 }
            #expect(await second.perform(cacheRequest("k")).isMiss)
            #expect(try await redis.cli("DBSIZE") == "0")
            await firstStore.close()
            await secondStore.close()
        }
    }

    @Test("many stores and lookups at once, through two workers, all complete with what was stored")
    func concurrentTraffic() async throws {
        let redis = try await TestRedis.start()
        defer { Task { await redis.remove() } }
        try await withCacheFixture { fixture in
            let (first, firstStore) = try await redisProvider(fixture, redis)
            let (second, secondStore) = try await redisProvider(fixture, redis, memoryBytes: 0)
            let failures = await withTaskGroup(of: Int.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        do {
                            try await first.store(textResponse("value \(index)"), under: "key \(index)")
                        } catch {
                            return 1
                        }
                        let read = await second.perform(cacheRequest("key \(index)")).response?.body
                        return read == Data("value \(index)".utf8) ? 0 : 1
                    }
                }
                var failures = 0
                for await failure in group { failures += failure }
                return failures
            }
            #expect(failures == 0)
            #expect(try await redis.cli("DBSIZE") == "200")
            #expect(firstStore.statusFigures["storeDroppedWrites"] == .integer(0))
            await firstStore.close()
            await secondStore.close()
        }
    }

    @Test("idle connections stay up: the command connection answers its pings, the subscription is not pinged")
    func idleConnections() async throws {
        let redis = try await TestRedis.start()
        defer { Task { await redis.remove() } }
        try await withCacheFixture { fixture in
            let settings = RedisSettings(timeoutMs: 400)
            let (first, firstStore) = try await redisProvider(fixture, redis, settings: settings)
            let (second, secondStore) = try await redisProvider(fixture, redis, settings: settings)
            // Ten timeouts of silence.
            try await Task.sleep(for: .seconds(4))
            try await first.store(textResponse("v"), under: "k")
            try await waitUntil { secondStore.statusFigures["storeNotifications"] == .integer(1) }
            #expect(await second.perform(cacheRequest("k")).response != nil)
            // However loaded the machine, a subscription is never dropped for want of an answer.
            let silentDrops = fixture.logs.messages(at: .warning).filter { $0.contains("notifications connection") && $0.contains("no answer") }
            #expect(silentDrops.isEmpty)
            await firstStore.close()
            await secondStore.close()
        }
    }

    @Test("Redis stopped: lookups miss at once, writes are dropped and counted; restarted: hits again")
    func redisRestart() async throws {
        let redis = try await TestRedis.start()
        defer { Task { await redis.remove() } }
        try await withCacheFixture { fixture in
            let (cache, store) = try await redisProvider(fixture, redis, memoryBytes: 0)
            try await cache.store(textResponse("before"), under: "k")
            #expect(await cache.perform(cacheRequest("k")).response != nil)

            await redis.stop()
            try await waitUntil { store.statusFigures["storeState"] != .string("connected") }
            let outcome = await cache.perform(cacheRequest("k"))
            #expect(outcome.isMiss)
            await #expect(throws: ProviderFailure.self) { try await cache.store(textResponse("lost"), under: "k2") }
            do {
                try await cache.store(textResponse("lost"), under: "k3")
                Issue.record("a store while Redis is down succeeded")
            } catch let error as ProviderFailure {
                #expect(error.code == "storeUnavailable")
            }
            #expect(store.statusFigures["storeDroppedWrites"] == .integer(2))
            #expect(store.statusFigures["storeUnavailableReads"] != .integer(0))
            await #expect(throws: ProviderFailure.self) { try await cache.invalidate(.key("k")) }

            try await redis.restart()
            try await waitUntil(.seconds(30)) { store.statusFigures["storeState"] == .string("connected") }
            #expect(store.statusFigures["storeReconnects"] == .integer(1))
            // This Redis keeps nothing across restarts: store again, then hit.
            try await cache.store(textResponse("after"), under: "k")
            #expect(await cache.perform(cacheRequest("k")).response?.body == Data("after".utf8))
            await store.close()
            #expect(store.statusFigures["storeState"] == .string("closed"))
        }
    }

    @Test("a Redis that stops answering is dropped after the timeout; too many commands waiting are refused at once")
    func silentRedis() async throws {
        let redis = try await TestRedis.start()
        defer { Task { await redis.remove() } }
        try await withCacheFixture { fixture in
            let settings = RedisSettings(timeoutMs: 300, maxPending: 4)
            let (cache, store) = try await redisProvider(fixture, redis, memoryBytes: 0, settings: settings)
            try await cache.store(textResponse("v"), under: "k")
            // Redis holds every command for 3 s from its OK: nothing it is sent is answered
            // meanwhile. (Unlike DEBUG SLEEP, whose start nothing tells, the OK says when it began.)
            #expect(try await redis.cli("CLIENT", "PAUSE", "3000", "ALL") == "OK")
            let outcomes = await withTaskGroup(of: ProviderOutcome.self) { group in
                for _ in 0..<20 { group.addTask { await cache.perform(cacheRequest("k")) } }
                var outcomes: [ProviderOutcome] = []
                for await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
            #expect(outcomes.allSatisfy { $0.isMiss })
            #expect(store.statusFigures["storeUnavailableReads"] == .integer(20))
            try await waitUntil(.seconds(30)) { store.statusFigures["storeState"] == .string("connected") }
            try await waitUntil(.seconds(30)) { store.statusFigures["storeSubscribed"] == .bool(true) }
            // The timeouts in a row backed Redis off (RedisSlowGuard): lookups hit again once a
            // probe after the back-off is answered in time.
            var hit = false
            for _ in 0..<600 where !hit {
                hit = await cache.perform(cacheRequest("k")).response?.body == Data("v".utf8)
                if !hit { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(hit)
            await store.close()
        }
    }

    @Test("a password comes from the settings (AUTH); a wrong one keeps the store unavailable")
    func password() async throws {
        let redis = try await TestRedis.start(password: "s3cret words")
        defer { Task { await redis.remove() } }
        try await withCacheFixture { fixture in
            let (cache, store) = try await redisProvider(fixture, redis, memoryBytes: 0)
            try await cache.store(textResponse("v"), under: "k")
            #expect(await cache.perform(cacheRequest("k")).response != nil)
            await store.close()

            let wrong = try await RedisStore(
                address: RedisAddress(parsing: redis.url()), password: "wrong", keepStale: .seconds(10), on: fixture.loop,
                logger: fixture.logs.logger)
            let refused = CacheProvider(memoryBytes: 0, store: wrong)
            try await waitUntil { fixture.logs.messages(at: .error).contains { $0.contains("refused AUTH") } }
            await #expect(throws: ProviderFailure.self) { try await refused.store(textResponse("v"), under: "k") }
            await wrong.close()
        }
    }

    @Test("addresses: redis://HOST:PORT/DB; rediss://, passwords in the address and bad ports are refused with reasons")
    func addresses() throws {
        #expect(try RedisAddress(parsing: "redis://cache.internal:6380/2") == RedisAddress(host: "cache.internal", port: 6380, database: 2))
        #expect(try RedisAddress(parsing: "redis://127.0.0.1") == RedisAddress(host: "127.0.0.1"))
        #expect(try RedisAddress(parsing: "redis://[::1]:7000/") == RedisAddress(host: "::1", port: 7000))
        #expect(RedisAddress(host: "::1", port: 7000).description == "redis://[::1]:7000/0")
        #expect(throws: RedisAddressError.self) { try RedisAddress(parsing: "rediss://host:6379/0") }
        do {
            _ = try RedisAddress(parsing: "rediss://host:6379/0")
        } catch {
            #expect(error.message.contains("TLS"))
        }
        #expect(throws: RedisAddressError.self) { try RedisAddress(parsing: "redis://:pw@host:6379/0") }
        #expect(throws: RedisAddressError.self) { try RedisAddress(parsing: "redis://host:0/0") }
        #expect(throws: RedisAddressError.self) { try RedisAddress(parsing: "redis://host:6379/x") }
        #expect(throws: RedisAddressError.self) { try RedisAddress(parsing: "redis://:6379") }
        #expect(throws: RedisAddressError.self) { try RedisAddress(parsing: "http://host") }
        #expect(RedisStore.globEscaped("a*b?[c]\\") == Array("a\\*b\\?\\[c\\]\\\\".utf8))
    }
}

/// A provider over a fresh Redis store on `redis` (with its password), on the system clock
/// (Redis expires entries in real time), once the store is connected and subscribed. The
/// timeout is generous by default: a loaded test machine must not drop connections.
func redisProvider(
    _ fixture: CacheFixture, _ redis: TestRedis, keepStale: Duration = .seconds(10), memoryBytes: Int = 1 << 20,
    settings: RedisSettings = RedisSettings(timeoutMs: 5000)
) async throws -> (CacheProvider, RedisStore) {
    let store = try await RedisStore(
        address: RedisAddress(parsing: redis.url()), password: redis.password, settings: settings, keepStale: keepStale,
        on: fixture.loop, logger: fixture.logs.logger)
    try await waitUntil(.seconds(30)) {
        store.statusFigures["storeState"] == .string("connected") && store.statusFigures["storeSubscribed"] == .bool(true)
    }
    return (CacheProvider(memoryBytes: memoryBytes, store: store, keepStale: keepStale), store)
}
