import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Monarch
import MonarchClient
import MonarchRouter
import MonarchWire
import Testing

/// A cluster of a cache worker in front of a bundle worker (standing in for the network):
/// `docs/...` expires after `ttl`, `keep/...` never does.
private func cacheConfig(ttl: String = "1s", bundleLatency: String? = nil, cacheCount: Int = 1, file: Bool = true) -> ClusterOptions {
    let store = file ? "store: sqlite:$FOLDER/cache/cache.db, " : ""
    let latency = bundleLatency.map { ", latency: \($0)" } ?? ""
    return ClusterOptions(custom: """
        domains:
          static: [cache, bundle]
        routes:
          - match: "docs/..."
            domain: static
            ttl: \(ttl)
          - match: "keep/..."
            domain: static
        workers:
          cache: { count: \(cacheCount), \(store)memory: 8MB }
          bundle: { count: 1, root: Bundle\(latency) }

        """)
}

extension TestCluster {
    /// Replaces a bundle file, so an answer with the old body can only come from the cache.
    func rewrite(_ path: String, _ text: String) throws {
        try folder.write("Bundle/" + path, text)
    }

    /// Waits until cache workers acknowledged `count` write-backs in all.
    func waitForWriteBacks(_ count: Int) async throws {
        try await eventually("\(count) write-back(s)") { try await status().writeBacks >= count }
    }

    /// Waits until no write-back or refresh runs. A write-back is started before the answer it
    /// stores is sent, so once this returns every write-back of an answer already received has
    /// ended, acknowledged or not: what is counted then is final.
    func waitForBackgroundWork() async throws {
        try await eventually("the background work to end") { try await status().typed.backgroundRunning == 0 }
    }
}

private func body(_ result: Result<Response, ChainError>) -> String? {
    result.success.map { String(decoding: $0.body, as: UTF8.self) }
}

@Suite("Cache", .serialized)
struct CacheTests {
    @Test("A later provider's answer is written back; cacheFirst then answers from the cache until invalidated")
    func writeBackAndCacheFirst() async throws {
        try await TestCluster.with(cacheConfig()) { cluster in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            try cluster.rewrite("keep/a.txt", "version 1")

            let first = try #require(try await perform(client, Request(path: "keep/a.txt")).success)
            #expect(first.source == "bundle")
            try await cluster.waitForWriteBacks(1)
            try cluster.rewrite("keep/a.txt", "version 2")

            let cached = try #require(try await perform(client, Request(path: "keep/a.txt")).success)
            #expect(cached.source == "cache")
            #expect(String(decoding: cached.body, as: UTF8.self) == "version 1")
            #expect(!cached.stale)
            #expect(cached.headers["content-type"] == "text/plain; charset=utf-8")
            #expect(cached.age != nil)

            // Misses and mutations are not written back.
            _ = try await perform(client, Request(path: "keep/absent.txt"))
            _ = try await perform(client, Request(path: "keep/a.txt", method: "POST", body: Data("x".utf8)))
            // Then one that is: its write-back, started after any of theirs, is acknowledged.
            try cluster.rewrite("keep/marker.txt", "marker")
            #expect(try await perform(client, Request(path: "keep/marker.txt")).success?.source == "bundle")
            try await cluster.waitForWriteBacks(2)
            try await cluster.waitForBackgroundWork()
            let status = try await cluster.status()
            #expect(status.writeBacks == 2)
            #expect(status.typed.writeBackFailures == 0)
        }
    }

    @Test("noCache neither reads nor writes the cache")
    func noCache() async throws {
        try await TestCluster.with(cacheConfig()) { cluster in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            try cluster.rewrite("keep/n.txt", "one")
            let direct = try await perform(client, Request(path: "keep/n.txt", policy: .noCache))
            #expect(direct.success?.source == "bundle")
            try await cluster.waitForBackgroundWork()
            #expect(try await cluster.status().writeBacks == 0)
            #expect(try await cluster.status().typed.writeBackFailures == 0)
            #expect(try await cluster.status().workers("cache").first?.forwarded == 0)

            _ = try await perform(client, Request(path: "keep/n.txt"))
            try await cluster.waitForWriteBacks(1)
            try cluster.rewrite("keep/n.txt", "two")
            #expect(body(try await perform(client, Request(path: "keep/n.txt", policy: .noCache))) == "two")
            #expect(body(try await perform(client, Request(path: "keep/n.txt"))) == "one")
        }
    }

    @Test("An expired entry is not answered under cacheFirst: the later provider is asked again")
    func ttlExpiry() async throws {
        try await TestCluster.with(cacheConfig(ttl: "300ms")) { cluster in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            try cluster.rewrite("docs/t.txt", "old")
            _ = try await perform(client, Request(path: "docs/t.txt"))
            try await cluster.waitForWriteBacks(1)
            try cluster.rewrite("docs/t.txt", "new")
            // Past the 300 ms TTL: the time is what is tested, and a longer wait only makes it truer.
            try await Task.sleep(for: .milliseconds(400))

            let answer = try #require(try await perform(client, Request(path: "docs/t.txt", policy: .cacheFirst)).success)
            #expect(answer.source == "bundle")
            #expect(String(decoding: answer.body, as: UTF8.self) == "new")
            #expect(!answer.stale)
            try await cluster.waitForWriteBacks(2)
            let again = try #require(try await perform(client, Request(path: "docs/t.txt")).success)
            #expect(again.source == "cache")
            #expect(String(decoding: again.body, as: UTF8.self) == "new")
        }
    }

    @Test("networkFirst asks the bundle first; when it has nothing, the cache answers, stale and saying so")
    func networkFirst() async throws {
        try await TestCluster.with(cacheConfig(ttl: "300ms")) { cluster in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            try cluster.rewrite("docs/n.txt", "first")
            _ = try await perform(client, Request(path: "docs/n.txt"))
            try await cluster.waitForWriteBacks(1)
            try cluster.rewrite("docs/n.txt", "second")

            let fetched = try #require(try await perform(client, Request(path: "docs/n.txt", policy: .networkFirst)).success)
            #expect(fetched.source == "bundle")
            #expect(String(decoding: fetched.body, as: UTF8.self) == "second")
            try await cluster.waitForWriteBacks(2)

            try FileManager.default.removeItem(atPath: cluster.folder.path + "/Bundle/docs/n.txt")
            // Past the 300 ms TTL (the age is checked below): the time is what is tested.
            try await Task.sleep(for: .milliseconds(400))
            let fallback = try #require(try await perform(client, Request(path: "docs/n.txt", policy: .networkFirst)).success)
            #expect(fallback.source == "cache")
            #expect(fallback.stale)
            #expect((fallback.age ?? .zero) >= .milliseconds(300))
            #expect(String(decoding: fallback.body, as: UTF8.self) == "second")

            // cacheFirst does not answer the stale entry: the bundle misses, and so does the chain.
            let strict = try await perform(client, Request(path: "docs/n.txt", policy: .cacheFirst))
            #expect(strict.failure?.code == .exhausted)
        }
    }

    @Test("cacheThenRefresh answers a stale entry at once and refreshes it in the background, once")
    func cacheThenRefresh() async throws {
        try await TestCluster.with(cacheConfig(ttl: "500ms", bundleLatency: "1500ms")) { cluster in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            try cluster.rewrite("docs/r.txt", "old")
            _ = try await perform(client, Request(path: "docs/r.txt"))
            try await cluster.waitForWriteBacks(1)
            try cluster.rewrite("docs/r.txt", "new")
            // Past the 500 ms TTL: the time is what is tested, and a longer wait only makes it truer.
            try await Task.sleep(for: .milliseconds(600))
            let bundleBefore = try await cluster.status().workers("bundle").first?.forwarded ?? -1

            for _ in 0..<3 {
                let stale = try #require(try await perform(client, Request(path: "docs/r.txt", policy: .cacheThenRefresh)).success)
                #expect(stale.source == "cache")
                #expect(stale.stale)
                #expect(String(decoding: stale.body, as: UTF8.self) == "old")
                // The answer did not wait for the refresh: the slow bundle (1.5 s) has not answered
                // it, so nothing new is stored yet. (Whether the refresh has reached the bundle at
                // this instant is a race; that it is sent once is checked below.)
                #expect(try await cluster.status().writeBacks == 1)
            }
            try await eventually("the refresh at the bundle") {
                let status = try await cluster.status()
                return status.workers("bundle").first?.inFlight == 1 || status.writeBacks >= 2
            }
            try await cluster.waitForWriteBacks(2)
            let status = try await cluster.status()
            #expect(status.refreshesStarted == 1)
            #expect(status.workers("bundle").first?.forwarded == bundleBefore + 1)

            let fresh = try #require(try await perform(client, Request(path: "docs/r.txt", policy: .cacheThenRefresh)).success)
            #expect(fresh.source == "cache")
            #expect(!fresh.stale)
            #expect(String(decoding: fresh.body, as: UTF8.self) == "new")
        }
    }

    @Test("monarch invalidate drops a path, then a path prefix, through the routes; says when nothing matched; --key and --key-prefix take raw keys")
    func invalidation() async throws {
        try await TestCluster.with(cacheConfig()) { cluster in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            for name in ["a", "b", "c", "d"] {
                try cluster.rewrite("keep/\(name).txt", "\(name)1")
                _ = try await perform(client, Request(path: "keep/\(name).txt"))
            }
            try await cluster.waitForWriteBacks(4)
            for name in ["a", "b", "c", "d"] { try cluster.rewrite("keep/\(name).txt", "\(name)2") }
            let address = "\(cluster.clientAddress)"

            // A path, written as monarch get takes it (a leading / is the same path).
            let one = try await Spawned.run(Executables.monarch, ["invalidate", "/keep/a.txt", "--address", address])
            #expect(one.status == 0, "\(one.stderr)")
            #expect(
                String(decoding: one.stdout, as: UTF8.self)
                    == "removed 1 entry on 1 cache worker (GET static keep/a.txt, HEAD static keep/a.txt)\n")
            #expect(body(try await perform(client, Request(path: "keep/a.txt"))) == "a2")
            #expect(body(try await perform(client, Request(path: "keep/b.txt"))) == "b1")

            let none = try await Spawned.run(Executables.monarch, ["invalidate", "keep/zzz", "--address", address])
            #expect(none.status == 0, "\(none.stderr)")
            #expect(
                String(decoding: none.stdout, as: UTF8.self)
                    == "nothing matched GET static keep/zzz, HEAD static keep/zzz: removed 0 entries on 1 cache worker\n")

            let noRoute = try await Spawned.run(Executables.monarch, ["invalidate", "users/1", "--address", address])
            #expect(noRoute.status == 1)
            #expect(noRoute.stderr.contains("noRoute"), "\(noRoute.stderr)")
            #expect(noRoute.stderr.contains("no route matches \"users/1\""), "\(noRoute.stderr)")

            let looksLikeKey = try await Spawned.run(Executables.monarch, ["invalidate", "GET static keep/b.txt", "--address", address])
            #expect(looksLikeKey.status == 64)
            #expect(looksLikeKey.stderr.contains("looks like a raw cache key"), "\(looksLikeKey.stderr)")

            let raw = try await Spawned.run(Executables.monarch, ["invalidate", "--key", "GET static keep/b.txt", "--address", address])
            #expect(String(decoding: raw.stdout, as: UTF8.self) == "removed 1 entry on 1 cache worker (GET static keep/b.txt)\n")

            try await cluster.waitForWriteBacks(5)
            let prefix = try await Spawned.run(Executables.monarch, ["invalidate", "--prefix", "keep/", "--address", address])
            #expect(prefix.status == 0, "\(prefix.stderr)")
            #expect(
                String(decoding: prefix.stdout, as: UTF8.self)
                    == "removed 3 entries on 1 cache worker (GET static keep/, HEAD static keep/)\n")
            #expect(body(try await perform(client, Request(path: "keep/c.txt"))) == "c2")
            #expect(body(try await perform(client, Request(path: "keep/d.txt"))) == "d2")

            try await cluster.waitForWriteBacks(7)
            let keyPrefix = try await Spawned.run(
                Executables.monarch, ["invalidate", "--key-prefix", "GET static keep/", "--address", address])
            #expect(String(decoding: keyPrefix.stdout, as: UTF8.self).hasPrefix("removed 2 entries"), "\(keyPrefix.stderr)")

            let noPrefixRoute = try await Spawned.run(Executables.monarch, ["invalidate", "--prefix", "users/", "--address", address])
            #expect(noPrefixRoute.status == 1)
            #expect(noPrefixRoute.stderr.contains("no route matches paths starting with \"users/\""), "\(noPrefixRoute.stderr)")

            let bad = try await Spawned.run(Executables.monarch, ["invalidate", "--address", address])
            #expect(bad.status != 0)
            #expect(bad.stderr.contains("give one of PATH, --prefix PATH, --tag TAG, --key KEY or --key-prefix PREFIX"))
        }
    }

    @Test("MonarchClient invalidates by path and path prefix in a named domain, and by CacheKey")
    func clientInvalidation() async throws {
        try await TestCluster.with(cacheConfig()) { cluster in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            for name in ["x", "y"] {
                try cluster.rewrite("keep/\(name).txt", "\(name)1")
                _ = try await perform(client, Request(path: "keep/\(name).txt"))
            }
            try await cluster.waitForWriteBacks(2)
            #expect(try CacheKey(Request(path: "/keep/x.txt"), domain: "static") == CacheKey(domain: "static", parsing: "keep/x.txt"))
            let byKey = try await client.invalidate(key: CacheKey(Request(path: "keep/x.txt"), domain: "static"))
            #expect(byKey == Invalidation(removed: 1, workers: 1, targets: ["GET static keep/x.txt"]))
            let byPath = try await client.invalidate(path: "keep/x.txt")
            #expect(byPath.matchedNothing)
            #expect(byPath.targets == ["GET static keep/x.txt", "HEAD static keep/x.txt"])
            let elsewhere = try await client.invalidate(pathPrefix: "keep/", domain: "static")
            #expect(elsewhere.removed == 1)
            do {
                _ = try await client.invalidate(path: "keep/y.txt", domain: "nope")
                Issue.record("an unknown domain was accepted")
            } catch {
                #expect("\(error)".contains("unknownDomain"), "\(error)")
            }
        }
    }

    @Test("invalidate fails clearly when no cache worker is connected")
    func invalidateWithoutCache() async throws {
        try await TestCluster.with { cluster in
            let result = try await Spawned.run(
                Executables.monarch, ["invalidate", "docs/hello.txt", "--address", "\(cluster.clientAddress)"])
            #expect(result.status == 1)
            #expect(result.stderr.contains("no cache worker is connected"))
        }
    }

    @Test("An acknowledged entry survives a SIGKILL of the cache worker")
    func persistence() async throws {
        try await TestCluster.with(cacheConfig()) { cluster in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            try cluster.rewrite("keep/p.txt", "kept")
            _ = try await perform(client, Request(path: "keep/p.txt"))
            try await cluster.waitForWriteBacks(1)
            try cluster.rewrite("keep/p.txt", "changed")

            let victim = try #require(try await cluster.status().workers("cache").first)
            kill(victim.pid, SIGKILL)
            try await eventually("a new cache worker", timeout: 30) {
                let workers = try await cluster.status().workers("cache")
                return workers.count == 1 && workers[0].pid != victim.pid
            }
            let answer = try #require(try await perform(client, Request(path: "keep/p.txt")).success)
            #expect(answer.source == "cache")
            #expect(String(decoding: answer.body, as: UTF8.self) == "kept")
        }
    }

    @Test("Three cache workers: each key lives on one of them, every worker holds some, and reads find them")
    func sharding() async throws {
        try await TestCluster.with(cacheConfig(cacheCount: 3, file: false)) { cluster in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            let paths = (0..<30).map { "keep/s\($0).txt" }
            for path in paths {
                try cluster.rewrite(path, "\(path) v1")
                _ = try await perform(client, Request(path: path))
            }
            try await cluster.waitForWriteBacks(30)
            for path in paths { try cluster.rewrite(path, "\(path) v2") }

            // Memory-only workers share nothing: a read finds the entry only on the worker it was stored on.
            for path in paths {
                let answer = try #require(try await perform(client, Request(path: path)).success)
                #expect(answer.source == "cache", "\(path)")
                #expect(String(decoding: answer.body, as: UTF8.self) == "\(path) v1")
            }
            let workers = try await cluster.status().workers("cache")
            #expect(workers.count == 3)
            for worker in workers {
                // Each got a share of the 60 reads (30 misses, 30 hits); an even split would be 20.
                #expect(worker.forwarded >= 4, "\(workers)")
            }
            #expect(workers.map(\.forwarded).reduce(0, +) == 60)

            // Invalidation by prefix reaches all three.
            let client2 = try await cluster.connect()
            let done = try await client2.invalidate(.prefix("GET static keep/s"))
            await client2.close()
            #expect(done == Invalidation(removed: 30, workers: 3, targets: ["GET static keep/s"]))
        }
    }
}

@Suite("Cache workers started by hand")
struct HandStartedCacheTests {
    @Test("A second worker with a connected worker's name is refused; invalidate names a known worker that is not connected")
    func duplicateNamesAndAbsentWorkers() async throws {
        try await TestCluster.with(cacheConfig(cacheCount: 0, file: false)) { cluster in
            let worker = "\(cluster.workerAddress)"
            let first = try Spawned(Executables.cacheWorker, ["--coordinator", worker, "--name", "twin", "--memory-only"])
            defer { first.signal(SIGKILL) }
            try await eventually("the first cache worker") { try await cluster.status().workers("cache").count == 1 }
            // An impostor (or a mistake) with the same name: refused, so it never takes the twin's keys.
            let impostor = try Spawned(Executables.cacheWorker, ["--coordinator", worker, "--name", "twin", "--memory-only"])
            defer { impostor.signal(SIGKILL) }
            #expect(try await impostor.waitForExit(timeout: 20) != 0)
            #expect(impostor.stderr.text.contains("already connected"), "\(impostor.stderr.text)")
            let other = try Spawned(Executables.cacheWorker, ["--coordinator", worker, "--name", "other", "--memory-only"])
            defer { other.signal(SIGKILL) }
            try await eventually("the second cache worker") { try await cluster.status().workers("cache").count == 2 }

            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            let paths = (0..<20).map { "keep/twin\($0).txt" }
            for path in paths {
                try cluster.rewrite(path, "v1")
                _ = try await perform(client, Request(path: path))
            }
            try await cluster.waitForWriteBacks(20)
            for path in paths {
                #expect(try await perform(client, Request(path: path)).success?.source == "cache", "\(path)")
            }
            for status in try await cluster.status().workers("cache") {
                #expect(status.forwarded > 0, "a worker got no keys")
            }

            // The worker registered under its own name leaves: invalidation says so.
            first.signal(SIGKILL)
            _ = try await first.waitForExit(timeout: 20)
            try await eventually("one cache worker left") { try await cluster.status().workers("cache").count == 1 }
            let result = try await Spawned.run(
                Executables.monarch, ["invalidate", "--prefix", "keep/", "--address", "\(cluster.clientAddress)"])
            #expect(result.status == 1)
            #expect(result.stderr.contains("invalidateIncomplete"), "\(result.stderr)")
            #expect(result.stderr.contains("twin: not connected"), "\(result.stderr)")
        }
    }
}
