import Foundation
import Monarch
import MonarchClient
import MonarchWire
import TestOrigins
import Testing

/// A cluster whose `api` domain is [cache, network] in front of the test origin, with two
/// cache workers keeping entries in the Redis at `redisURL`.
private func sharedRedisConfig(_ redisURL: String, origin: TestServerProcess) -> ClusterOptions {
    ClusterOptions(custom: """
        domains:
          api: [cache, network]
        routes:
          - match: "api/..."
            domain: api
            upstream: http://127.0.0.1:\(origin.port)/...
            ttl: 60s
        workers:
          cache: { count: 2, store: "\(redisURL)", memory: 8MB, storeTimeout: 3s }
          network: { count: 1, allow: ["\(origin.allowEntry)"] }

        """)
}

/// The next change of `watch`, or nil when it ended; fails the test after 30 s.
private func nextChange(_ watch: CacheWatch) async throws -> CacheChange? {
    try await within(30, "a change of \(watch.targets)") {
        var iterator = watch.makeAsyncIterator()
        return await iterator.next()
    }
}

/// Watches on one coordinator and changes made through another sharing its Redis: real
/// `monarch up` clusters, a real `redis-server`, the test origin.
@Suite("Watches across coordinators sharing Redis", .serialized)
struct RedisWatchTests {
    @Test("A watch on one coordinator hears of entries stored and invalidated through another, by key, prefix and tag, each change once")
    func watchesAcrossCoordinators() async throws {
        let redis = try await TestRedis.start()
        defer { Task { await redis.remove() } }
        try await TestServerProcess.withOrigin { origin in
            try await TestCluster.with(sharedRedisConfig(redis.url(), origin: origin)) { first in
                try await TestCluster.with(sharedRedisConfig(redis.url(), origin: origin)) { second in
                    try await watchAndChange(first: first, second: second)
                }
            }
        }
    }

    private func watchAndChange(first: TestCluster, second: TestCluster) async throws {
        try await eventually("all four cache workers connected and subscribed") {
            let stores = try await first.stores() + second.stores()
            return stores.count == 4 && stores.allSatisfy { $0.state == .connected && $0.subscribed }
        }
        let watcher = try await first.connect()
        let local = try await first.connect()
        let remote = try await second.connect()
        defer {
            Task {
                await watcher.close()
                await local.close()
                await remote.close()
            }
        }
        let byPath = try await watcher.watch(.path("api/tagged/x"))
        let byPrefix = try await watcher.watch(.prefix("GET api api/tagged/"))
        let byTag = try await watcher.watch(.tag("users"))

        // Stored through the second coordinator: the first one's watchers hear of it.
        _ = try await perform(remote, Request(path: "api/tagged/x"))
        #expect(try await nextChange(byPath) == CacheChange(kind: .stored, key: "GET api api/tagged/x"))
        #expect(try await nextChange(byPrefix) == CacheChange(kind: .stored, key: "GET api api/tagged/x"))

        // Invalidated through the second (by both its cache workers; one of them dropped it).
        #expect(try await remote.invalidate(path: "api/tagged/x").removed >= 1)
        #expect(try await nextChange(byPath) == CacheChange(kind: .invalidated, key: "GET api api/tagged/x"))
        #expect(try await nextChange(byPrefix) == CacheChange(kind: .invalidated, key: "GET api api/tagged/x"))

        // A tagged entry, then its tag invalidated, through the second.
        _ = try await perform(remote, Request(path: "api/tagged/t?keys=users"))
        let stored = CacheChange(kind: .stored, key: "GET api api/tagged/t?keys=users", tags: ["users"])
        #expect(try await nextChange(byTag) == stored)
        #expect(try await nextChange(byPrefix) == stored)
        #expect(try await remote.invalidate(tag: "users").removed >= 1)
        #expect(try await nextChange(byTag) == CacheChange(kind: .invalidated, tag: "users"))
        // The other coordinator did not list the keys the tag dropped: key and prefix watches hear of it too.
        #expect(try await nextChange(byPrefix) == CacheChange(kind: .invalidated, tag: "users"))
        #expect(try await nextChange(byPath) == CacheChange(kind: .invalidated, tag: "users"))

        // Each change came once, although both of the first coordinator's cache workers
        // forwarded it, and the first coordinator's own write-back is told once too (its own
        // workers do not forward it): the next events are the next changes, no copies.
        _ = try await perform(local, Request(path: "api/tagged/y"))
        #expect(try await nextChange(byPrefix) == CacheChange(kind: .stored, key: "GET api api/tagged/y"))
        _ = try await perform(remote, Request(path: "api/tagged/x"))
        #expect(try await nextChange(byPath) == CacheChange(kind: .stored, key: "GET api api/tagged/x"))
        #expect(try await nextChange(byPrefix) == CacheChange(kind: .stored, key: "GET api api/tagged/x"))
        _ = try await perform(remote, Request(path: "api/tagged/t?keys=users"))
        #expect(try await nextChange(byTag) == stored)
        #expect(try await nextChange(byPrefix) == stored)

        // A prefix invalidated through the second reaches the prefix watch once too.
        #expect(try await remote.invalidate(.prefix("GET api api/tagged/")).removed >= 1)
        #expect(try await nextChange(byPrefix) == CacheChange(kind: .invalidated, prefix: "GET api api/tagged/"))
        #expect(try await nextChange(byPath) == CacheChange(kind: .invalidated, prefix: "GET api api/tagged/"))
        _ = try await perform(remote, Request(path: "api/tagged/z"))
        #expect(try await nextChange(byPrefix) == CacheChange(kind: .stored, key: "GET api api/tagged/z"))
        // Eight changes through the second coordinator, each counted once (the first's own write-back of y not at all).
        #expect(try await first.status().counter("sharedChanges") == 8)
    }
}

/// The coordinator's side of `sharedChange`, played by fake workers over raw sockets.
@Suite("Shared changes forwarded by workers")
struct SharedChangeForwardingTests {
    @Test("Copies of one change from several cache workers reach a watcher once; another kind's or an oversized one ends the worker's connection")
    func onceAndOnlyFromCacheWorkers() async throws {
        try await TestCluster.with(fakeWorkerCluster(limits: ["invalidateBytes: 64"])) { cluster in
            let watcher = try await cluster.connect()
            defer { Task { await watcher.close() } }
            let watch = try await watcher.watch(.prefix("GET static docs/"))
            let first = try await FakeWorker(at: cluster.workerPath, kind: "cache", name: "c1")
            let second = try await FakeWorker(at: cluster.workerPath, kind: "cache", name: "c2")
            let storedA = SharedChangeMessage(change: "w9.1", event: .stored, target: .key("GET static docs/a"), tags: ["t"])
            first.socket.send(.sharedChange(storedA))
            second.socket.send(.sharedChange(storedA))
            second.socket.send(.sharedChange(SharedChangeMessage(change: "w9.2", event: .invalidated, target: .key("GET static docs/a"))))
            first.socket.send(.sharedChange(SharedChangeMessage(change: "w9.2", event: .invalidated, target: .key("GET static docs/a"))))
            #expect(try await nextChange(watch) == CacheChange(kind: .stored, key: "GET static docs/a", tags: ["t"]))
            #expect(try await nextChange(watch) == CacheChange(kind: .invalidated, key: "GET static docs/a"))

            // Only cache workers share a store.
            let bundle = try await FakeWorker(at: cluster.workerPath, kind: "bundle", name: "b1")
            bundle.socket.send(.sharedChange(SharedChangeMessage(change: "w9.3", event: .invalidated, target: .prefix("GET static "))))
            guard case .error(let refusal)? = try await bundle.next() else { throw SpawnError("the bundle worker got no error") }
            #expect(refusal.code == .unexpectedMessage)
            #expect(try await bundle.next() == nil)
            // A key past limits.invalidateBytes.
            let long = "GET static docs/" + String(repeating: "x", count: 64)
            first.socket.send(.sharedChange(SharedChangeMessage(change: "w9.4", event: .invalidated, target: .key(long))))
            guard case .error(let oversized)? = try await first.next() else { throw SpawnError("c1 got no error") }
            #expect(oversized.code == .invalidField)
            #expect(oversized.message.contains("limits.invalidateBytes"))
            #expect(try await first.next() == nil)

            // Neither reached the watcher: its next event is the next change.
            second.socket.send(.sharedChange(SharedChangeMessage(change: "w9.5", event: .stored, target: .key("GET static docs/b"))))
            #expect(try await nextChange(watch) == CacheChange(kind: .stored, key: "GET static docs/b"))
            #expect(try await cluster.status().counter("sharedChanges") == 3)
        }
    }
}
