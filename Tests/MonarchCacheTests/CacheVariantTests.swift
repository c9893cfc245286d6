import Foundation
import Monarch
@testable import MonarchCache
import Testing

/// Issue 26, finding 5: variants of one key (responses with a `Vary`) kept apart and bounded.
@Suite struct CacheVariantTests {
    /// A `GET` of `key` with `headers`.
    private func request(_ key: String, _ headers: [String: String]) -> Request {
        Request(path: key, headers: headers, route: RouteContext(cacheKey: key))
    }

    /// Stores `text`, varying on Accept-Language, as fetched for a request with `headers`.
    private func storeVariant(_ text: String, for headers: [String: String], in cache: CacheProvider) async throws {
        let response = textResponse(text, headers: ["content-type": "text/plain", "vary": "Accept-Language"])
        let variant = SharingRules.storedVariant(of: response, for: request("news", headers))
        try await cache.store(response, under: "news", tags: ["news"], variant: variant)
    }

    @Test("A variant answers only requests with its values; variants of one key coexist, in memory and in the file")
    func variantsCoexist() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let cache = fixture.provider(store: store)
            try await storeVariant("bonjour", for: ["accept-language": "fr"], in: cache)
            try await storeVariant("hello", for: ["accept-language": "en"], in: cache)
            for provider in [cache, fixture.provider(store: store)] {
                let french = try #require(await provider.perform(request("news", ["accept-language": "FR"])).response)
                #expect(french.body == Data("bonjour".utf8))
                #expect(french.headers[CacheVariants.header] == nil)
                let english = try #require(await provider.perform(request("news", ["Accept-Language": "en"])).response)
                #expect(english.body == Data("hello".utf8))
                #expect(await provider.perform(request("news", ["accept-language": "de"])).response == nil)
                #expect(await provider.perform(request("news", [:])).response == nil)
            }
            await store.close()
        }
    }

    @Test("Invalidating a key drops its variants, and they are reported as the key")
    func invalidationDropsVariants() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let cache = fixture.provider(store: store)
            try await storeVariant("bonjour", for: ["accept-language": "fr"], in: cache)
            try await storeVariant("hello", for: ["accept-language": "en"], in: cache)
            #expect(try await cache.invalidateKeys(.key("news")) == ["news"])
            for provider in [cache, fixture.provider(store: store)] {
                #expect(await provider.perform(request("news", ["accept-language": "fr"])).response == nil)
                #expect(await provider.perform(request("news", ["accept-language": "en"])).response == nil)
            }
            await store.close()
        }
    }

    @Test("A key keeps at most 1 + slots entries however many variants are stored")
    func variantsAreBounded() async throws {
        try await withCacheFixture { fixture in
            let cache = fixture.provider(store: nil)
            for index in 0..<100 {
                try await storeVariant("v\(index)", for: ["accept-language": "x-\(index)"], in: cache)
            }
            #expect(cache.memoryUsage.entries <= 1 + CacheVariants.slots)
            // The latest is answered; every answer given is the requested variant's.
            #expect(try #require(await cache.perform(request("news", ["accept-language": "x-99"])).response).body == Data("v99".utf8))
            for index in 0..<100 {
                if let answer = await cache.perform(request("news", ["accept-language": "x-\(index)"])).response {
                    #expect(answer.body == Data("v\(index)".utf8))
                }
            }
        }
    }

    @Test("Slot keys name their key, and no cache key is taken for a slot's")
    func slotKeys() {
        let slot = CacheVariants.slotKey("GET api news?a=1", variant: "accept-language:fr")
        #expect(CacheVariants.isSlotKey(slot))
        #expect(CacheVariants.baseKey(of: slot) == "GET api news?a=1")
        #expect(!CacheVariants.isSlotKey("GET api news"))
        #expect(CacheVariants.baseKey(of: "GET api a~v1") == "GET api a~v1")
    }
}
