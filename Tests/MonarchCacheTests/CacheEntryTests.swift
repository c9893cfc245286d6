import MonarchCache
import Testing

@Suite struct CacheEntryTests {
    @Test func freshWhileTheAgeIsBelowTheTTL() {
        let entry = CacheEntry(status: 200, storedAtMs: 10_000, ttlMs: 1000)
        #expect(entry.isFresh(at: 10_999))
        #expect(!entry.isFresh(at: 11_000))
        #expect(entry.ageMs(at: 11_500) == 1500)
        #expect(entry.expiresAtMs == 11_000)
    }

    @Test func withoutATTLFreshForEver() {
        let entry = CacheEntry(status: 200, storedAtMs: 0)
        #expect(entry.isFresh(at: .max))
        #expect(!entry.isSweepable(at: .max, keepStaleMs: 0))
    }

    @Test func aClockSetBackGivesAgeZeroNotNegative() {
        let entry = CacheEntry(status: 200, storedAtMs: 10_000, ttlMs: 5)
        #expect(entry.ageMs(at: 9_000) == 0)
        #expect(entry.isFresh(at: 9_000), "within the tolerance for clocks that disagree")
    }

    @Test("An entry stored by a clock well ahead of this one is not fresh: it is revalidated, not kept for the difference")
    func anEntryFromTheFutureIsNotFresh() {
        let day: Int64 = 86_400_000
        let entry = CacheEntry(status: 200, storedAtMs: 10_000 + day, ttlMs: 60_000)
        #expect(!entry.isFresh(at: 10_000))
        #expect(entry.isFresh(at: 10_000 + day - CacheEntry.clockSkewToleranceMs))
        #expect(!entry.isFresh(at: 10_000 + day - CacheEntry.clockSkewToleranceMs - 1))
        #expect(CacheEntry(status: 200, storedAtMs: 10_000 + day).isFresh(at: 10_000), "no TTL: fresh for ever")
    }

    @Test func sweepableOnceKeepStalePastExpiry() {
        let entry = CacheEntry(status: 200, storedAtMs: 0, ttlMs: 100)
        #expect(!entry.isSweepable(at: 1099, keepStaleMs: 1000))
        #expect(entry.isSweepable(at: 1100, keepStaleMs: 1000))
        // A TTL so large that expiry overflows never expires.
        #expect(!CacheEntry(status: 200, storedAtMs: 10, ttlMs: .max).isSweepable(at: .max, keepStaleMs: 0))
    }
}
