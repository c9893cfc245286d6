import Foundation
import Logging
import Monarch
@testable import MonarchCache
import MonarchLoop
import MonarchWorker
import Testing

@Suite struct CacheProviderTests {
    @Test func aStoredResponseComesBackFromTheCache() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let cache = fixture.provider(store: store)
            try await cache.store(textResponse("hello", headers: ["content-type": "text/plain", "etag": "1"]), under: "users/1")
            let response = try #require(await cache.perform(cacheRequest("users/1")).response)
            #expect(response.status == 200)
            #expect(response.body == Data("hello".utf8))
            #expect(response.headers == ["content-type": "text/plain", "etag": "1"])
            #expect(response.source == "cache")
            #expect(!response.stale)
            #expect(response.age == .zero)
            // HEAD: the same, with no body.
            let head = try #require(await cache.perform(cacheRequest("users/1", method: "HEAD")).response)
            #expect(head.body.isEmpty)
            #expect(head.headers["etag"] == "1")
            await store.close()
        }
    }

    @Test func headerNamesAreStoredAndAnsweredInLowercase() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let cache = fixture.provider(store: store)
            try await cache.store(textResponse("x", headers: ["Content-Type": "text/plain", "ETag": "\"1\""]), under: "new")
            let kept = try #require(try await store.entry(forKey: "new"))
            #expect(kept.headers == ["content-type": "text/plain", "etag": "\"1\""])
            #expect(try #require(await cache.perform(cacheRequest("new")).response).headers == kept.headers)
            // An entry an earlier version kept with the upstream's spelling is answered in lowercase.
            try await store.put(
                CacheEntry(status: 200, headers: ["Content-type": "text/html"], body: Data("old".utf8), storedAtMs: 0),
                under: "old")
            let reopened = fixture.provider(store: store)
            #expect(try #require(await reopened.perform(cacheRequest("old")).response).headers == ["content-type": "text/html"])
            await store.close()
        }
    }

    @Test func missesSayWhy() async throws {
        try await withCacheFixture { fixture in
            let cache = fixture.provider(store: nil)
            try await cache.store(textResponse("x"), under: "k")
            #expect(await cache.perform(cacheRequest("other")) == .miss(reason: "not cached"))
            guard case .miss(let method?) = await cache.perform(cacheRequest("k", method: "POST")) else {
                Issue.record("expected a miss for POST")
                return
            }
            #expect(method.contains("POST"))
            guard case .miss(let noKey?) = await cache.perform(Request(path: "k")) else {
                Issue.record("expected a miss for a request with no key")
                return
            }
            #expect(noKey.contains("no cache key"))
        }
    }

    @Test func pastItsTTLAnEntryIsStillAnsweredFlaggedStaleWithItsAge() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let cache = fixture.provider(store: store)
            try await cache.store(textResponse("v1", ttl: .seconds(60)), under: "k")
            fixture.clock.advance(by: .seconds(30))
            let fresh = try #require(await cache.perform(cacheRequest("k")).response)
            #expect(!fresh.stale)
            #expect(fresh.age == .seconds(30))
            fixture.clock.advance(by: .seconds(30))
            let stale = try #require(await cache.perform(cacheRequest("k")).response)
            #expect(stale.stale)
            #expect(stale.age == .seconds(60))
            #expect(stale.body == Data("v1".utf8))
            await store.close()

            // The time it was stored survives a restart, so it is still stale, and older.
            fixture.clock.advance(by: .seconds(40))
            let reopened = try await fixture.openStore()
            let fromDisk = try #require(await fixture.provider(store: reopened).perform(cacheRequest("k")).response)
            #expect(fromDisk.stale)
            #expect(fromDisk.age == .seconds(100))
            await reopened.close()
        }
    }

    /// A hit carries the entry's TTL (nil when it has none), from memory and from the file.
    @Test func aHitCarriesTheEntrysTTL() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let cache = fixture.provider(store: store)
            try await cache.store(textResponse("a", ttl: .seconds(90)), under: "timed")
            try await cache.store(textResponse("b"), under: "forever")
            #expect(await cache.perform(cacheRequest("timed")).response?.ttl == .seconds(90))
            #expect(await cache.perform(cacheRequest("forever")).response.map { $0.ttl == nil } == true)
            fixture.clock.advance(by: .seconds(100))
            #expect(await cache.perform(cacheRequest("timed", method: "HEAD")).response?.ttl == .seconds(90))
            await store.close()

            let reopened = try await fixture.openStore()
            let fromDisk = fixture.provider(store: reopened)
            #expect(await fromDisk.perform(cacheRequest("timed")).response?.ttl == .seconds(90))
            #expect(await fromDisk.perform(cacheRequest("forever")).response.map { $0.ttl == nil } == true)
            await reopened.close()
        }
    }

    @Test func anEntryIsAHitAfterReopeningTheFileAndIsPromotedIntoMemory() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let first = fixture.provider(store: store)
            try await first.store(textResponse("persisted"), under: "docs/a")
            await store.close()

            let reopened = try await fixture.openStore()
            let second = fixture.provider(store: reopened)
            #expect(second.memoryUsage.entries == 0)
            #expect(await second.perform(cacheRequest("docs/a")).response?.body == Data("persisted".utf8))
            #expect(second.memoryUsage.entries == 1)
            // The next hit comes from memory: it holds even once the file is closed.
            await reopened.close()
            #expect(await second.perform(cacheRequest("docs/a")).response?.body == Data("persisted".utf8))
        }
    }

    @Test func anEntryTooLargeForMemoryIsStillKeptOnDisk() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let cache = fixture.provider(store: store, memoryBytes: 4096)
            let big = String(repeating: "x", count: 10_000)
            try await cache.store(textResponse(big), under: "big")
            #expect(cache.memoryUsage.entries == 0)
            #expect(await cache.perform(cacheRequest("big")).response?.body.count == 10_000)
            #expect(cache.memoryUsage.bytes <= 4096)
            await store.close()
        }
    }

    @Test func memoryOnlyWorksTheSameWithoutPersistence() async throws {
        try await withCacheFixture { fixture in
            let cache = fixture.provider(store: nil, memoryBytes: 2 * (MemoryCache.entryOverhead + 2) + 100)
            try await cache.store(textResponse("a", headers: [:]), under: "a")
            try await cache.store(textResponse("b", headers: [:]), under: "b")
            #expect(await cache.perform(cacheRequest("a")).response?.body == Data("a".utf8))
            try await cache.store(textResponse("c", headers: [:]), under: "c")
            // "b" was the least recently used.
            #expect(await cache.perform(cacheRequest("b")).isMiss)
            #expect(await cache.perform(cacheRequest("a")).response != nil)
            #expect(try await cache.invalidate(.key("a")) == 1)
            #expect(await cache.perform(cacheRequest("a")).isMiss)
            #expect(try fixture.files().isEmpty)
        }
    }

    @Test func invalidationByKeyRemovesFromMemoryAndDisk() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let cache = fixture.provider(store: store)
            try await cache.store(textResponse("a"), under: "a")
            try await cache.store(textResponse("b"), under: "b")
            #expect(try await cache.invalidate(.key("a")) == 1)
            #expect(try await cache.invalidate(.key("a")) == 0)
            #expect(await cache.perform(cacheRequest("a")).isMiss)
            #expect(await cache.perform(cacheRequest("b")).response != nil)
            await store.close()
            let reopened = try await fixture.openStore()
            #expect(try await reopened.entry(forKey: "a") == nil)
            #expect(reopened.entriesAtOpen == 1)
            await reopened.close()
        }
    }

    /// `%` and `_` are LIKE's wildcards; a prefix must match them literally. Each key is in
    /// memory and on disk and counts once.
    @Test func invalidationByPrefixIsExactAndCountsDistinctKeys() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let cache = fixture.provider(store: store)
            let keys = ["100%/a", "100%/b", "100x/a", "a_b/1", "axb/1", "items/1", "items/2", "items2", "caf\u{e9}", "cafe\u{301}"]
            for key in keys { try await cache.store(textResponse(key), under: key) }
            #expect(try await cache.invalidate(.prefix("100%")) == 2)
            #expect(try await cache.invalidate(.prefix("a_")) == 1)
            // A prefix that is no key itself, only the start of others.
            #expect(try await cache.invalidate(.prefix("item")) == 3)
            #expect(try await cache.invalidate(.prefix("caf\u{e9}")) == 1)
            #expect(try await cache.invalidate(.prefix("nothing")) == 0)
            for key in ["100x/a", "axb/1", "cafe\u{301}"] {
                #expect(await cache.perform(cacheRequest(key)).response?.body == Data(key.utf8), "\(key)")
            }
            for key in ["100%/a", "a_b/1", "items2", "caf\u{e9}"] {
                #expect(await cache.perform(cacheRequest(key)).isMiss, "\(key)")
            }
            await store.close()

            // On disk only (memory empty after reopening), the count is the file's.
            let reopened = try await fixture.openStore()
            #expect(reopened.entriesAtOpen == 3)
            let fresh = fixture.provider(store: reopened)
            #expect(try await fresh.invalidate(.prefix("")) == 3)
            await reopened.close()
        }
    }

    @Test func aSweepDropsOnlyEntriesExpiredLongerThanKeepStale() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let cache = fixture.provider(store: store, keepStale: .seconds(10))
            try await cache.store(textResponse("short"), under: "short")
            try await cache.store(textResponse("short", ttl: .seconds(1)), under: "short")
            try await cache.store(textResponse("long", ttl: .seconds(3600)), under: "long")
            try await cache.store(textResponse("forever"), under: "forever")

            fixture.clock.advance(by: .seconds(5))
            #expect(try await cache.sweep() == 0)
            #expect(await cache.perform(cacheRequest("short")).response?.stale == true)

            fixture.clock.advance(by: .seconds(6))
            #expect(try await cache.sweep() == 1)
            #expect(await cache.perform(cacheRequest("short")).isMiss)
            #expect(cache.memoryUsage.entries == 2)
            #expect(try await store.count() == 2)
            await store.close()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func theSweeperRunsOnATimer() async throws {
        try await withCacheFixture { fixture in
            let cache = fixture.provider(store: nil, keepStale: .zero)
            try await cache.store(textResponse("x", ttl: .milliseconds(1)), under: "k")
            fixture.clock.advance(by: .seconds(1))
            let sweeper = try await CacheSweeper(provider: cache, every: .milliseconds(5), on: fixture.loop, logger: fixture.logs.logger)
            try await waitUntil { cache.memoryUsage.entries == 0 }
            await sweeper.close()
        }
    }

    @Test func aStoreThatCannotCommitFailsAndIsNotServed() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let cache = fixture.provider(store: store)
            await store.close()
            await #expect(throws: ProviderFailure.self) {
                try await cache.store(textResponse("lost"), under: "k")
            }
            do throws(ProviderFailure) {
                try await cache.store(textResponse("lost"), under: "k")
            } catch {
                #expect(error.code == "storeFailed")
            }
            #expect(cache.memoryUsage.entries == 0)
        }
    }

    @Test func aCancelledTaskGetsCancelled() async throws {
        try await withCacheFixture { fixture in
            let cache = fixture.provider(store: nil)
            try await cache.store(textResponse("x"), under: "k")
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return await cache.perform(cacheRequest("k"))
            }
            #expect(await task.value.failureCode == "cancelled")
        }
    }

    /// A read waiting for the file is cancelled at once, without waiting for its turn.
    @Test(.timeLimit(.minutes(1)))
    func aReadWaitingForTheFileEndsAtOnceWhenCancelled() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            try await store.put(CacheEntry(status: 200, storedAtMs: 0), under: "on-disk")
            let cache = fixture.provider(store: store)
            let latch = Latch()
            let holding = Task { await store.hold { latch.block() } }
            try await waitUntil { latch.hasEntered }
            let read = Task { await cache.perform(cacheRequest("on-disk")) }
            try await waitUntil { store.waitingCount == 1 }
            read.cancel()
            #expect(await read.value.failureCode == "cancelled")
            latch.open()
            await holding.value
            #expect(cache.memoryUsage.entries == 0)
            await store.close()
        }
    }

    /// A file read that raced with an invalidation of its key must not bring the entry back
    /// into memory.
    @Test(.timeLimit(.minutes(1)))
    func aReadRacingAnInvalidationDoesNotResurrectTheEntry() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            try await store.put(CacheEntry(status: 200, body: Data("old".utf8), storedAtMs: 0), under: "k")
            let cache = fixture.provider(store: store)
            let latch = Latch()
            let holding = Task { await store.hold { latch.block() } }
            try await waitUntil { latch.hasEntered }
            // The read is queued before the invalidation, so it finds the entry on disk…
            let read = Task { await cache.perform(cacheRequest("k")) }
            try await waitUntil { store.waitingCount == 1 }
            let invalidation = Task { try await cache.invalidate(.key("k")) }
            try await waitUntil { store.waitingCount == 2 }
            latch.open()
            await holding.value
            #expect(await read.value.response?.body == Data("old".utf8))
            #expect(try await invalidation.value == 1)
            // …but memory must not keep it.
            #expect(await cache.perform(cacheRequest("k")).isMiss)
            await store.close()
        }
    }

    /// A read queued after a change to its key, in the same batch of the file's queue, sees
    /// the change: the file runs it after the batch's writes, so it neither answers with the
    /// entry the change dropped nor puts that entry back into memory (the change, done
    /// already, bumped nothing the read could notice: it registered after it).
    @Test(.timeLimit(.minutes(1)), arguments: ["invalidate", "sweep", "store too big for memory"])
    func aReadQueuedAfterAChangeInTheSameBatchSeesTheChange(change: String) async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let cache = fixture.provider(store: store, memoryBytes: 4096, keepStale: .seconds(10))
            try await cache.store(textResponse("old", ttl: .seconds(1)), under: "k")
            #expect(cache.memoryUsage.entries == 1)
            let big = String(repeating: "n", count: 10_000)
            // The runner is busy with an earlier batch…
            let latch = Latch()
            let holding = Task { await store.hold { latch.block() } }
            try await waitUntil { latch.hasEntered }
            // …when the change drops the entry from memory and queues its write…
            let changing: Task<Void, any Error>
            switch change {
            case "invalidate":
                changing = Task {
                    let removed = try await cache.invalidate(.key("k"))
                    #expect(removed == 1)
                }
            case "sweep":
                fixture.clock.advance(by: .seconds(20))
                changing = Task {
                    let swept = try await cache.sweep()
                    #expect(swept == 1)
                }
            default:
                changing = Task { try await cache.store(textResponse(big), under: "k") }
            }
            try await waitUntil { store.waitingCount == 1 }
            #expect(cache.memoryUsage.entries == 0)
            // …and a read of the key misses memory and queues a read into the same batch.
            let read = Task { await cache.perform(cacheRequest("k")) }
            try await waitUntil { store.waitingCount == 2 }
            latch.open()
            await holding.value
            try await changing.value
            let answered = await read.value
            let again = await cache.perform(cacheRequest("k"))
            if change == "store too big for memory" {
                #expect(answered.response?.body == Data(big.utf8))
                #expect(again.response?.body == Data(big.utf8))
                #expect(cache.memoryUsage.entries == 0)
            } else {
                #expect(answered.isMiss, "\(answered)")
                #expect(again.isMiss, "\(again)")
            }
            await store.close()
        }
    }

    @Test func theProviderIsACacheForTheWorkerRuntime() async throws {
        try await withCacheFixture { fixture in
            let provider: any RequestProvider = fixture.provider(store: nil)
            #expect(provider is any CacheMaintenance)
            #expect(provider.name == "cache")
        }
    }
}
