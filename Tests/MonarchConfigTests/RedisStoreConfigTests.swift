@testable import MonarchConfig
import Testing

/// `workers.cache.store: redis://…` and the keys that go with it.
struct RedisStoreConfigTests {
    private func cache(_ settings: String, environment: [String: String] = [:]) throws -> Configuration.WorkerSettings.Cache? {
        let configuration = try Configuration.parse(
            yaml: validHead + "workers:\n  cache: \(settings)\n", baseDirectory: "/srv", environment: environment)
        if case .cache(let cache)? = configuration.workers.first?.settings { return cache }
        return nil
    }

    @Test("a Redis store is kept as written, with its password expanded and its timeout and bound")
    func redisStore() throws {
        let redis = try #require(try cache(
            "{store: 'redis://10.0.0.5:6380/3', password: '${SECRET}', storeTimeout: 250ms, storeMaxPending: 64}",
            environment: ["SECRET": "p@ss word"]))
        #expect(redis.store == "redis://10.0.0.5:6380/3")
        #expect(redis.usesRedis)
        #expect(redis.password == "p@ss word")
        #expect(redis.storeTimeout == .milliseconds(250))
        #expect(redis.storeMaxPending == 64)
        // Port and database may be left out; IPv6 addresses in brackets.
        #expect(try cache("{store: 'redis://cache'}")?.store == "redis://cache")
        #expect(try cache("{store: 'redis://[::1]:6379/0'}")?.store == "redis://[::1]:6379/0")
        // A file is still resolved against the configuration's folder, and is not Redis.
        let file = try #require(try cache("{store: 'sqlite:run/cache.db'}"))
        #expect(file.store == "sqlite:/srv/run/cache.db")
        #expect(!file.usesRedis)
        // The bound on operations waiting holds for a file too.
        #expect(try cache("{store: 'sqlite:run/cache.db', storeMaxPending: 16}")?.storeMaxPending == 16)
    }
}
