import Foundation
import Monarch
import MonarchClient
import MonarchWire
import TestOrigins
import Testing

/// A cluster whose cache worker keeps entries in the Redis at `redisURL`, in front of a bundle
/// worker standing in for the network: `keep/...` never expires.
private func redisConfig(_ redisURL: String, password: Bool = false, metrics: Bool = false) -> ClusterOptions {
    let secret = password ? ", password: \"${MONARCH_TEST_REDIS_PASSWORD}\"" : ""
    return ClusterOptions(custom: (metrics ? "metrics: tcp:127.0.0.1:0\n" : "") + """
        domains:
          static: [cache, bundle]
        routes:
          - match: "keep/..."
            domain: static
        workers:
          cache: { count: 1, store: "\(redisURL)", memory: 8MB, storeTimeout: 3s\(secret) }
          bundle: { count: 1, root: Bundle }

        """)
}

private func text(_ result: Result<Response, ChainError>) -> String? {
    result.success.map { String(decoding: $0.body, as: UTF8.self) }
}

extension TestCluster {
    /// The shared stores of the cache workers, as status reports them.
    func stores() async throws -> [StatusReport.Worker.Store] {
        try await status().typed.workers.compactMap(\.store)
    }
}

/// Several coordinators sharing one Redis store, and a Redis that goes away: real `monarch up`
/// clusters and a real `redis-server`.
@Suite("Redis store across coordinators", .serialized)
struct RedisClusterTests {
    @Test("A write-back through one coordinator is a hit through another; an invalidation through one drops the other's memory copy")
    func twoCoordinators() async throws {
        let redis = try await TestRedis.start()
        defer { Task { await redis.remove() } }
        try await TestCluster.with(redisConfig(redis.url())) { first in
            try await TestCluster.with(redisConfig(redis.url())) { second in
                try await eventually("both cache workers connected and subscribed") {
                    let stores = try await first.stores() + second.stores()
                    return stores.count == 2 && stores.allSatisfy { $0.state == .connected && $0.subscribed }
                }
                // Only the first cluster's bundle has the file: the second can answer only
                // from the shared cache.
                try first.rewrite("keep/shared.txt", "from the first")
                let firstClient = try await first.connect()
                let secondClient = try await second.connect()
                defer {
                    Task {
                        await firstClient.close()
                        await secondClient.close()
                    }
                }
                #expect(try await perform(firstClient, Request(path: "keep/shared.txt")).success?.source == "bundle")
                try await first.waitForWriteBacks(1)

                let shared = try await perform(secondClient, Request(path: "keep/shared.txt"))
                #expect(shared.success?.source == "cache")
                #expect(text(shared) == "from the first")
                // Now in the second cache worker's memory too; invalidated through the first.
                let dropped = try await within(20, "invalidate") { try await firstClient.invalidate(.prefix("GET static keep/")) }
                #expect(dropped.removed == 1)
                try await eventually("the second coordinator no longer answers from its cache") {
                    try await perform(secondClient, Request(path: "keep/shared.txt")).success == nil
                }
                // And a new version written back through the first reaches the second.
                try first.rewrite("keep/shared.txt", "second version")
                #expect(text(try await perform(firstClient, Request(path: "keep/shared.txt"))) == "second version")
                try await eventually("the second coordinator answers the new version") {
                    text(try await perform(secondClient, Request(path: "keep/shared.txt"))) == "second version"
                }
            }
        }
    }

    @Test("Redis stopped and restarted mid-test: the cluster answers throughout, misses while it is down, hits again after")
    func redisRestart() async throws {
        let redis = try await TestRedis.start(password: "pass word")
        defer { Task { await redis.remove() } }
        setenv("MONARCH_TEST_REDIS_PASSWORD", "pass word", 1)
        try await TestCluster.with(redisConfig(redis.url(), password: true, metrics: true)) { cluster in
            try await eventually("the cache worker connected") { try await cluster.stores().first?.state == .connected }
            // The password reached the worker in its environment, not on its command line.
            let cachePid = try #require(try await cluster.status().typed.workers.first { $0.kind == "cache" }?.pid)
            let commandLine = try #require(FileManager.default.contents(atPath: "/proc/\(cachePid)/cmdline"))
            let arguments = commandLine.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            #expect(arguments.contains(redis.url()))
            #expect(!arguments.contains { $0.contains("pass word") })
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            try cluster.rewrite("keep/a.txt", "version 1")
            #expect(try await perform(client, Request(path: "keep/a.txt")).success?.source == "bundle")
            try await cluster.waitForWriteBacks(1)
            #expect(try await perform(client, Request(path: "keep/a.txt")).success?.source == "cache")

            await redis.stop()
            try await eventually("the store is seen unreachable") {
                try await cluster.stores().first?.state == .reconnecting
            }
            // Memory answers for its grace (memoryGrace, 5 s) after the notifications stopped,
            // then is emptied: the cache misses, the bundle answers.
            try cluster.rewrite("keep/a.txt", "version 2")
            let withinGrace = try await perform(client, Request(path: "keep/a.txt"), timeout: 10)
            #expect(withinGrace.success?.source == "cache" && text(withinGrace) == "version 1")
            try await eventually("memory's grace has passed", timeout: 30) {
                try await perform(client, Request(path: "keep/a.txt"), timeout: 10).success?.source == "bundle"
            }
            for _ in 0..<5 {
                let answer = try await perform(client, Request(path: "keep/a.txt"), timeout: 10)
                #expect(answer.success?.source == "bundle")
                #expect(text(answer) == "version 2")
            }
            try await eventually("write-backs are dropped and counted") {
                (try await cluster.stores().first?.droppedWrites ?? 0) >= 1
            }
            // Not every request looks up: one arriving while the previous trip's write-back is
            // under way gets that trip's answer (HeldAnswers).
            #expect((try await cluster.stores().first?.unavailableReads ?? 0) >= 1)
            // `monarch status` and the metrics say so.
            let table = try await Spawned.run(Executables.monarch, ["status", "--address", "\(cluster.clientAddress)"])
            let text = String(decoding: table.stdout, as: UTF8.self)
            #expect(text.contains("STORE") && text.contains("reconnecting"))
            let samples = try await storeSamples(cluster)
            #expect(samples["monarch_cache_store_workers{kind=cache,state=unreachable}"] == 1)
            #expect(samples["monarch_cache_store_workers{kind=cache,state=connected}"] == 0)
            #expect((samples["monarch_cache_store_dropped_writes_total{kind=cache}"] ?? 0) >= 1)

            try await redis.restart()
            try await eventually("the store is connected again", timeout: 60) {
                let store = try await cluster.stores().first
                return store?.state == .connected && store?.subscribed == true
            }
            #expect(try await cluster.stores().first?.reconnects == 1)
            #expect(try await perform(client, Request(path: "keep/a.txt")).success?.source == "bundle")
            try await eventually("the cache answers again") {
                try await perform(client, Request(path: "keep/a.txt")).success?.source == "cache"
            }
            // Memory takes the entry at once and Redis when its write completes: a hit from
            // memory may come first.
            try await eventually("the entry is kept in Redis") {
                try await redis.cli("EXISTS", "monarch:e:GET static keep/a.txt") == "1"
            }
            #expect(try await storeSamples(cluster)["monarch_cache_store_workers{kind=cache,state=connected}"] == 1)
        }
    }
}

/// The cache store's metrics the cluster serves, by `name{labels}`.
private func storeSamples(_ cluster: TestCluster) async throws -> [String: Double] {
    let url = try await cluster.metricsURL()
    let summary = try await python("""
        import json, sys, urllib.request
        from prometheus_client.parser import text_string_to_metric_families
        text = urllib.request.urlopen(sys.argv[1], timeout=10).read().decode()
        samples = {}
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name.startswith("monarch_cache_store"):
                    labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
                    samples[f"{sample.name}{{{labels}}}"] = sample.value
        print(json.dumps(samples))
        """, [url])
    return try JSONDecoder().decode([String: Double].self, from: Data(summary.utf8))
}
