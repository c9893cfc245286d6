import Foundation
import Monarch
@testable import MonarchCache
import MonarchWire
import Testing

@Suite struct CacheTagTests {
    @Test func aTagDropsEveryEntryCarryingItFromMemoryAndFile() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let cache = fixture.provider(store: store)
            try await cache.store(textResponse("1"), under: "GET api users/1", tags: ["user-1", "users"])
            try await cache.store(textResponse("2"), under: "GET api users/2", tags: ["user-2", "users"])
            try await cache.store(textResponse("x"), under: "GET api other", tags: [])
            #expect(try await cache.invalidate(.tag("user-1")) == 1)
            #expect(await cache.perform(cacheRequest("GET api users/1")).response == nil)
            #expect(try await store.entry(forKey: "GET api users/1") == nil)
            #expect(try await cache.invalidate(.tag("users")) == 1)
            #expect(try await cache.invalidate(.tag("users")) == 0)
            #expect(await cache.perform(cacheRequest("GET api other")).response != nil)
            await store.close()
        }
    }

    @Test func tagsSurviveReopeningAndAReplacedEntryTakesItsNewTags() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let cache = fixture.provider(store: store)
            try await cache.store(textResponse("v1"), under: "k", tags: ["old", "both"])
            try await cache.store(textResponse("v2"), under: "k", tags: ["new", "both"])
            #expect(try await store.entry(forKey: "k")?.tags == ["both", "new"])
            await store.close()

            let reopened = try await fixture.openStore()
            let fromDisk = fixture.provider(store: reopened)
            #expect(try await fromDisk.invalidate(.tag("old")) == 0)
            // Promoted into memory with its tags: memory drops it by tag too.
            #expect(await fromDisk.perform(cacheRequest("k")).response?.body == Data("v2".utf8))
            #expect(try await fromDisk.invalidate(.tag("new")) == 1)
            #expect(fromDisk.memoryUsage.entries == 0)
            #expect(try await reopened.count() == 0)
            await reopened.close()
        }
    }

    @Test func aMemoryOnlyCacheDropsByTagAndRefusesPaths() async throws {
        try await withCacheFixture { fixture in
            let cache = fixture.provider(store: nil)
            try await cache.store(textResponse("a"), under: "a", tags: ["t"])
            try await cache.store(textResponse("b"), under: "b", tags: ["t", "u"])
            #expect(try await cache.invalidate(.tag("t")) == 2)
            await #expect(throws: ProviderFailure.self) { try await cache.invalidate(.path("users/1")) }
        }
    }

    @Test func tagsCountAgainstTheMemoryBudget() {
        let plain = CacheEntry(status: 200, storedAtMs: 0)
        var tagged = plain
        tagged.tags = ["abcdef"]
        #expect(MemoryCache.cost(key: "k", entry: tagged) == MemoryCache.cost(key: "k", entry: plain) + MemoryCache.headerOverhead + 6)
    }
}
