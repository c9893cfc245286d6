#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
@testable import MonarchCoordinator
import MonarchWire
import Testing

/// The hot tier alone: what it holds, for how long, and what a change does to it.
@Suite("Hot tier")
struct HotTierTests {
    static let now: Int64 = 1_700_000_000_000

    /// A read of `key` (the path's `GET` key) with `headers`, on a route that is `public` or not.
    static func read(_ key: String = "GET docs a", headers: [String: String] = [:], isPublic: Bool = false,
                     keyedHeaders: [String] = [], method: String = "GET") -> Request {
        Request(path: "a", method: method, headers: headers, route: RouteContext(
            ttl: .seconds(60), cacheKey: key, isPublic: isPublic, keyedHeaders: keyedHeaders))
    }

    /// A cache worker's hit holding `body`, `ageMs` old, fresh for `ttlMs`.
    static func hit(_ body: String = "cached", headers: [String: String] = [:], ageMs: Int64 = 0, ttlMs: Int64? = 60_000,
                    stale: Bool = false) -> Response {
        Response(
            headers: headers, body: Data(body.utf8), source: "cache", stale: stale, age: .milliseconds(ageMs),
            ttl: ttlMs.map { .milliseconds($0) })
    }

    /// Keeps `response` for `request` in `tier` from a read begun now, asked at ``now``.
    @discardableResult
    static func keep(_ response: Response, for request: Request = read(), in tier: inout HotTier) -> Bool {
        let ticket = tier.beginRead()
        return tier.keep(response, for: request, ticket: ticket, askedAtMs: now)
    }

    static func body(_ hit: (prepared: PreparedResponse, ageMs: UInt64)?) -> String? {
        hit?.prepared.message.content.map { String(decoding: $0.bytes, as: UTF8.self) }
    }

    @Test("A fresh hit that every caller may get is kept and answered with its age at the time of the answer")
    func keepsAndAnswersWithItsAge() {
        var tier = HotTier(budgetBytes: 1 << 20, entryLimitBytes: 1 << 16)
        #expect(Self.keep(Self.hit(ageMs: 200), in: &tier))
        let answer = tier.answer(for: "GET docs a", nowMs: Self.now + 300)
        #expect(Self.body(answer) == "cached")
        #expect(answer?.ageMs == 500)
        #expect(answer?.prepared.message.source == "cache")
        #expect(answer?.prepared.message.ttlMs == 60_000)
        #expect(tier.hits == 1)
    }

    @Test("It stops answering where the cache worker would call the entry stale, and drops it")
    func staleIsDropped() {
        var tier = HotTier(budgetBytes: 1 << 20, entryLimitBytes: 1 << 16)
        Self.keep(Self.hit(ageMs: 400, ttlMs: 1000), in: &tier)
        #expect(tier.answer(for: "GET docs a", nowMs: Self.now + 599) != nil)
        #expect(tier.answer(for: "GET docs a", nowMs: Self.now + 600) == nil)
        #expect(tier.count == 0)
        // Without a TTL it stays fresh, as in the cache worker.
        Self.keep(Self.hit(ttlMs: nil), in: &tier)
        #expect(tier.answer(for: "GET docs a", nowMs: Self.now + 86_400_000) != nil)
    }

    @Test(
        "It keeps nothing a cache worker would not hand to every caller",
        arguments: [
            ("private", read(), hit(headers: ["cache-control": "private"])),
            ("no-store", read(), hit(headers: ["cache-control": "max-age=60, no-store"])),
            ("Set-Cookie", read(), hit(headers: ["set-cookie": "a=1"])),
            ("Vary", read(headers: ["accept-language": "fr"]), hit(headers: ["vary": "Accept-Language"])),
            ("keyed header", read(headers: ["x-tenant": "a"], keyedHeaders: ["x-tenant"]), hit()),
            ("credentials off a public route", read(headers: ["authorization": "Bearer a"]), hit()),
            ("stale", read(), hit(stale: true)),
            ("HEAD", read("HEAD docs a", method: "HEAD"), hit()),
            ("a 404", read(), Response(status: 404, body: Data("no".utf8), source: "cache")),
        ])
    func refusesWhatIsNotForEveryone(_ what: String, request: Request, response: Response) {
        var tier = HotTier(budgetBytes: 1 << 20, entryLimitBytes: 1 << 16)
        #expect(!Self.keep(response, for: request, in: &tier), "\(what)")
        #expect(tier.count == 0, "\(what)")
    }

    @Test("Credentials on a public route, and Vary on Accept-Encoding alone, are kept as the cache worker keeps them")
    func keepsWhatTheCacheSharesWithEveryone() {
        var tier = HotTier(budgetBytes: 1 << 20, entryLimitBytes: 1 << 16)
        #expect(Self.keep(Self.hit(), for: Self.read(headers: ["authorization": "Bearer a"], isPublic: true), in: &tier))
        #expect(Self.keep(Self.hit(headers: ["vary": "accept-encoding"]), for: Self.read("GET docs b"), in: &tier))
    }

    @Test("Bounded: an answer over the entry cap is not kept, and the least recently used go at the budget")
    func bounded() {
        let body = String(repeating: "x", count: 1000)
        var large = HotTier(budgetBytes: 1 << 20, entryLimitBytes: 999)
        #expect(!Self.keep(Self.hit(body), in: &large))
        // The cap is the body's: a body of exactly the cap is held, its headers aside.
        var exact = HotTier(budgetBytes: 1 << 20, entryLimitBytes: 1000)
        #expect(Self.keep(Self.hit(body, headers: ["content-type": "text/plain"]), in: &exact))
        // Room for exactly three such entries (keys of one length): what one costs, three times.
        var one = HotTier(budgetBytes: 1 << 20, entryLimitBytes: 1 << 16)
        Self.keep(Self.hit(body), for: Self.read("GET docs 0"), in: &one)
        #expect(one.usedBytes > HotTier.entryOverhead + 10 + 1000 + 1336, "the key, the body in both forms and the HTTP head are counted")
        var tier = HotTier(budgetBytes: 3 * one.usedBytes, entryLimitBytes: 1 << 16)
        for key in ["GET docs 1", "GET docs 2", "GET docs 3"] { Self.keep(Self.hit(body), for: Self.read(key), in: &tier) }
        #expect(tier.count == 3)
        _ = tier.answer(for: "GET docs 1", nowMs: Self.now)
        Self.keep(Self.hit(body), for: Self.read("GET docs 4"), in: &tier)
        #expect(tier.count == 3)
        #expect(tier.evictions == 1)
        #expect(tier.answer(for: "GET docs 2", nowMs: Self.now) == nil, "the least recently used goes first")
        #expect(tier.answer(for: "GET docs 1", nowMs: Self.now) != nil)
        #expect(tier.usedBytes <= tier.budgetBytes)
        var off = HotTier(budgetBytes: 0, entryLimitBytes: 1 << 16)
        #expect(!Self.keep(Self.hit(), in: &off))
    }

    @Test(
        "A change drops what it covers, and nothing else",
        arguments: [
            (CacheTarget.key("GET docs a"), ["GET docs b", "GET docs ab"]),
            (CacheTarget.prefix("GET docs a"), ["GET docs b"]),
            (CacheTarget.tag("t1"), ["GET docs b", "GET docs ab"]),
        ])
    func changesDrop(_ target: CacheTarget, survivors: [String]) {
        var tier = HotTier(budgetBytes: 1 << 20, entryLimitBytes: 1 << 16)
        Self.keep(Self.hit(headers: ["surrogate-key": "t0 t1"]), for: Self.read("GET docs a"), in: &tier)
        Self.keep(Self.hit(headers: ["surrogate-key": "t2"]), for: Self.read("GET docs ab"), in: &tier)
        Self.keep(Self.hit(), for: Self.read("GET docs b"), in: &tier)
        tier.change(target)
        #expect(tier.answer(for: "GET docs a", nowMs: Self.now) == nil)
        for key in survivors { #expect(tier.answer(for: key, nowMs: Self.now) != nil, "\(key)") }
    }

    @Test(
        "An answer read before a change that covers it is not kept; one read after it is",
        arguments: [CacheTarget.key("GET docs a"), .prefix("GET docs"), .tag("t1")])
    func aReadRacedByAChangeIsNotKept(_ target: CacheTarget) {
        var tier = HotTier(budgetBytes: 1 << 20, entryLimitBytes: 1 << 16)
        let raced = tier.beginRead()
        tier.change(target)
        let after = tier.beginRead()
        let response = Self.hit(headers: ["surrogate-key": "t1"])
        let racedKept = tier.keep(response, for: Self.read(), ticket: raced, askedAtMs: Self.now)
        #expect(!racedKept)
        #expect(tier.refusedAfterChange == 1)
        let afterKept = tier.keep(response, for: Self.read(), ticket: after, askedAtMs: Self.now)
        #expect(afterKept)
    }

    @Test("A change to another key does not refuse a read, and the changes are forgotten once no read is under way")
    func changesToOtherKeys() {
        var tier = HotTier(budgetBytes: 1 << 20, entryLimitBytes: 1 << 16, changeMemory: 2)
        let ticket = tier.beginRead()
        tier.change(.key("GET docs b"))
        let kept = tier.keep(Self.hit(), for: Self.read(), ticket: ticket, askedAtMs: Self.now)
        #expect(kept)
        // Past its memory, every read under way is refused (as after a change to everything).
        let second = tier.beginRead()
        for key in ["GET docs c", "GET docs d", "GET docs e"] { tier.change(.key(key)) }
        let keptPastMemory = tier.keep(Self.hit(), for: Self.read(), ticket: second, askedAtMs: Self.now)
        #expect(!keptPastMemory)
    }

    @Test("A shared store's entry is answered for its hold at most, however fresh")
    func sharedStoreHold() {
        var tier = HotTier(budgetBytes: 1 << 20, entryLimitBytes: 1 << 16, sharedStoreHoldMs: 5000)
        Self.keep(Self.hit(), in: &tier)
        #expect(tier.answer(for: "GET docs a", nowMs: Self.now + 4999) != nil)
        #expect(tier.answer(for: "GET docs a", nowMs: Self.now + 5000) == nil)
        var none = HotTier(budgetBytes: 1 << 20, entryLimitBytes: 1 << 16, sharedStoreHoldMs: 0)
        #expect(!none.isOn)
        #expect(!Self.keep(Self.hit(), in: &none))
    }
}
