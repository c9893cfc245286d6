import Foundation
import Monarch
@testable import MonarchCache
import TestOrigins
import Testing

/// Issue 26, finding 9: Redis down or slow.
extension RedisStoreTests {
    @Suite(.serialized, .timeLimit(.minutes(2))) struct RedisOutageTests {
        @Test("Redis down: memory answers what it holds for the grace, keeping nothing new, then is emptied; it is emptied again when Redis is back")
        func memoryGrace() async throws {
            let redis = try await TestRedis.start()
            defer { Task { await redis.remove() } }
            try await withCacheFixture { fixture in
                let (_, store) = try await redisProvider(fixture, redis)
                let cache = CacheProvider(
                    memoryBytes: 1 << 20, store: store, keepStale: .seconds(10), clock: fixture.clock.clock,
                    memoryGrace: .seconds(5))
                try await cache.store(textResponse("kept", ttl: .seconds(600)), under: "k")
                #expect(cache.memoryUsage.entries == 1)

                await redis.stop()
                try await waitUntil(.seconds(30)) { store.statusFigures["storeSubscribed"] == .bool(false) }
                // Within the grace: memory answers.
                #expect(await cache.perform(cacheRequest("k")).response?.body == Data("kept".utf8))
                fixture.clock.advance(by: .seconds(4))
                #expect(await cache.perform(cacheRequest("k")).response?.body == Data("kept".utf8))
                // Past it: emptied, a miss at once.
                fixture.clock.advance(by: .seconds(2))
                #expect(await cache.perform(cacheRequest("k")).isMiss)
                #expect(cache.memoryUsage.entries == 0)

                try await redis.restart()
                try await waitUntil(.seconds(30)) { store.statusFigures["storeSubscribed"] == .bool(true) }
                // Heard again: memory keeps what is stored.
                try await cache.store(textResponse("again", ttl: .seconds(600)), under: "k")
                #expect(cache.memoryUsage.entries == 1)
                await store.close()
            }
        }

        @Test("A grace of zero empties memory as soon as the notifications stop")
        func noGrace() async throws {
            let redis = try await TestRedis.start()
            defer { Task { await redis.remove() } }
            try await withCacheFixture { fixture in
                let (_, store) = try await redisProvider(fixture, redis)
                let cache = CacheProvider(
                    memoryBytes: 1 << 20, store: store, keepStale: .seconds(10), clock: fixture.clock.clock, memoryGrace: .zero)
                try await cache.store(textResponse("kept", ttl: .seconds(600)), under: "k")
                await redis.stop()
                try await waitUntil(.seconds(30)) { store.statusFigures["storeSubscribed"] == .bool(false) }
                #expect(await cache.perform(cacheRequest("k")).isMiss)
                await store.close()
            }
        }

        @Test("A Redis answering slowly (under the timeout) is backed off after 3 slow replies: lookups then miss at once; once fast again, a probe ends the back-off")
        func slowRedisIsBackedOff() async throws {
            let redis = try await TestRedis.start()
            defer { Task { await redis.remove() } }
            let proxy = try SlowProxy(to: redis.port)
            defer { proxy.close() }
            try await withCacheFixture { fixture in
                let settings = RedisSettings(timeoutMs: 5000, slowMs: 200, slowLimit: 3, slowBackoffMinMs: 300)
                let store = try await RedisStore(
                    address: RedisAddress(parsing: "redis://127.0.0.1:\(proxy.port)/0"), password: nil, settings: settings,
                    keepStale: .seconds(10), on: fixture.loop, logger: fixture.logs.logger)
                try await waitUntil(.seconds(30)) { store.statusFigures["storeSubscribed"] == .bool(true) }
                let cache = CacheProvider(memoryBytes: 0, store: store, keepStale: .seconds(10))
                try await cache.store(textResponse("v"), under: "k")

                proxy.delayMs = 500
                // Slow answers, then the back-off: a miss that says why.
                var outcomes: [ProviderOutcome] = []
                for _ in 0..<10 {
                    let outcome = await cache.perform(cacheRequest("k"))
                    outcomes.append(outcome)
                    if outcome.isMiss { break }
                }
                let slowHits = outcomes.filter { $0.response != nil }.count
                #expect(slowHits <= 3, "Redis answered \(slowHits) lookups slowly without being backed off")
                guard case .miss(let reason)? = outcomes.last else {
                    Issue.record("never backed off: \(outcomes.count) lookups all waited for a slow Redis")
                    return
                }
                #expect(reason?.contains("too slow") == true, "\(reason ?? "")")
                #expect(store.statusFigures["storeSlowBackoffs"] != .integer(0))

                // Fast again: a probe gets through after the back-off, and lookups hit.
                proxy.delayMs = 0
                var hit = false
                for _ in 0..<600 where !hit {
                    hit = await cache.perform(cacheRequest("k")).response?.body == Data("v".utf8)
                    if !hit { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(hit, "lookups never hit again once Redis was fast")
                await store.close()
            }
        }
    }
}
