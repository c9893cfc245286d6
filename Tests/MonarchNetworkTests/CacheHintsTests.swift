import MonarchNetwork
import Testing

@Suite struct CacheHintsTests {
    @Test func noHeaderLeavesItToTheRoute() {
        #expect(CacheHints(cacheControl: nil) == CacheHints(cacheable: true, ttl: nil))
        #expect(CacheHints(cacheControl: "public") == CacheHints(cacheable: true, ttl: nil))
    }

    @Test func maxAgeIsTheTtlAndSharedMaxAgeWins() {
        #expect(CacheHints(cacheControl: "max-age=60").ttl == .seconds(60))
        #expect(CacheHints(cacheControl: "s-maxage=5, max-age=60").ttl == .seconds(5))
        #expect(CacheHints(cacheControl: "max-age=60, s-maxage=5").ttl == .seconds(5))
        #expect(CacheHints(cacheControl: "Max-Age=\"42\"").ttl == .seconds(42))
    }

    @Test func noStoreAndPrivateAreNotCacheable() {
        #expect(!CacheHints(cacheControl: "no-store").cacheable)
        #expect(!CacheHints(cacheControl: "private, max-age=600").cacheable)
        #expect(!CacheHints(cacheControl: "PRIVATE").cacheable)
    }

    @Test func noCacheIsStoredButAlwaysRevalidated() {
        let hints = CacheHints(cacheControl: "no-cache, max-age=600")
        #expect(hints.cacheable)
        #expect(hints.ttl == .zero)
    }

    @Test func unparsableAgesAreIgnored() {
        #expect(CacheHints(cacheControl: "max-age=soon").ttl == nil)
        #expect(CacheHints(cacheControl: "max-age=-5").ttl == nil)
        #expect(CacheHints(cacheControl: "max-age=99999999999999999999999").ttl == .seconds(Int(Int32.max)))
    }

    @Test func quotedCommasDoNotSplitDirectives() {
        let hints = CacheHints(cacheControl: "no-cache=\"set-cookie, x-a\", max-age=10")
        #expect(hints.ttl == .zero)
    }
}
