import Foundation
import MonarchCache
import Testing

@Suite struct MemoryCacheTests {
    /// A convenient entry cost: the overhead and 1000 bytes.
    static let unit = MemoryCache.entryOverhead + 1000

    /// An entry whose cost under a one-letter key is exactly `cost`.
    static func entry(costing cost: Int, key: String = "k") -> CacheEntry {
        let bodyBytes = cost - MemoryCache.entryOverhead - key.utf8.count
        return CacheEntry(status: 200, body: Data(repeating: 7, count: bodyBytes), storedAtMs: 0)
    }

    @Test func theCostCountsKeyBodyHeadersAndOverhead() {
        let entry = CacheEntry(status: 200, headers: ["ab": "cde"], body: Data(count: 100), storedAtMs: 0)
        let expected = MemoryCache.entryOverhead + 4 + 100 + MemoryCache.headerOverhead + 5
        #expect(MemoryCache.cost(key: "keyy", entry: entry) == expected)
    }

    @Test func evictsTheLeastRecentlyUsedAtTheByteBudget() {
        var cache = MemoryCache(budgetBytes: 3 * Self.unit)
        for key in ["a", "b", "c"] {
            let kept = cache.put(key, Self.entry(costing: Self.unit, key: key))
            #expect(kept)
        }
        #expect(cache.usedBytes == 3 * Self.unit)
        #expect(cache.evictions == 0)
        cache.put("d", Self.entry(costing: Self.unit, key: "d"))
        #expect(cache.keysByRecency == ["d", "c", "b"])
        #expect(cache.peek("a") == nil)
        #expect(cache.evictions == 1)
        // One entry twice as large makes room by evicting the two oldest.
        cache.put("e", Self.entry(costing: 2 * Self.unit, key: "e"))
        #expect(cache.keysByRecency == ["e", "d"])
        #expect(cache.usedBytes == 3 * Self.unit)
    }

    @Test func aGetMakesAnEntryTheMostRecentlyUsed() {
        var cache = MemoryCache(budgetBytes: 3 * Self.unit)
        for key in ["a", "b", "c"] { cache.put(key, Self.entry(costing: Self.unit, key: key)) }
        let gotA = cache.get("a")
        #expect(gotA != nil)
        cache.put("d", Self.entry(costing: Self.unit, key: "d"))
        #expect(cache.keysByRecency == ["d", "a", "c"])
        #expect(cache.peek("b") == nil)
        // peek leaves the order alone.
        _ = cache.peek("c")
        cache.put("e", Self.entry(costing: Self.unit, key: "e"))
        #expect(cache.keysByRecency == ["e", "d", "a"])
    }

    @Test func anEntryLargerThanTheBudgetIsNotKeptAndDropsTheOlderOne() {
        var cache = MemoryCache(budgetBytes: 3 * Self.unit)
        cache.put("a", Self.entry(costing: Self.unit, key: "a"))
        cache.put("b", Self.entry(costing: Self.unit, key: "b"))
        let keptOversize = cache.put("b", Self.entry(costing: 3 * Self.unit + 1, key: "b"))
        #expect(!keptOversize)
        #expect(cache.peek("b") == nil)
        #expect(cache.keysByRecency == ["a"])
        #expect(cache.usedBytes == Self.unit)
        // Exactly the budget fits.
        let keptExact = cache.put("c", Self.entry(costing: 3 * Self.unit, key: "c"))
        #expect(keptExact)
        #expect(cache.keysByRecency == ["c"])
    }

    @Test func replacingAnEntryReplacesItsCost() {
        var cache = MemoryCache(budgetBytes: 10 * Self.unit)
        cache.put("a", Self.entry(costing: Self.unit, key: "a"))
        cache.put("a", Self.entry(costing: Self.unit / 2, key: "a"))
        #expect(cache.count == 1)
        #expect(cache.usedBytes == Self.unit / 2)
        let removed = cache.remove("a")
        #expect(removed != nil)
        #expect(cache.usedBytes == 0)
        let removedAgain = cache.remove("a")
        #expect(removedAgain == nil)
    }

    @Test func keysCompareByteForByte() {
        var cache = MemoryCache(budgetBytes: 10 * Self.unit)
        cache.put("caf\u{e9}", Self.entry(costing: Self.unit / 2))
        cache.put("cafe\u{301}", Self.entry(costing: Self.unit / 2 + 10))
        #expect(cache.count == 2)
        let removedKeys = cache.removeAll(withPrefix: "cafe")
        #expect(removedKeys == ["cafe\u{301}"])
        #expect(cache.peek("caf\u{e9}") != nil)
    }

    /// Random operations checked against a plain list kept in order of use.
    @Test func agreesWithASimpleModelOverRandomOperations() {
        var generator = SplitMix(seed: 42)
        var cache = MemoryCache(budgetBytes: 20_000)
        var model: [(key: String, cost: Int)] = []  // most recent first
        for _ in 0..<5000 {
            let key = "k\(generator.next() % 40)"
            switch generator.next() % 4 {
            case 0, 1:
                let cost = MemoryCache.entryOverhead + key.utf8.count + Int(generator.next() % 3000)
                cache.put(key, Self.entry(costing: cost, key: key))
                model.removeAll { $0.key == key }
                model.insert((key, cost), at: 0)
                while model.reduce(0, { $0 + $1.cost }) > 20_000 { model.removeLast() }
            case 2:
                let found = cache.get(key) != nil
                #expect(found == model.contains { $0.key == key })
                if let index = model.firstIndex(where: { $0.key == key }) { model.insert(model.remove(at: index), at: 0) }
            default:
                cache.remove(key)
                model.removeAll { $0.key == key }
            }
            #expect(cache.keysByRecency == model.map(\.key))
            #expect(cache.usedBytes == model.reduce(0) { $0 + $1.cost })
        }
    }
}

/// A small deterministic random number generator.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
