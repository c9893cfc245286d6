#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
import MonarchConfig
@testable import MonarchCoordinator
import MonarchLoop
import MonarchRouter
import MonarchWire
import Testing

@Suite struct RouteCacheTests {
    func entry(_ text: String) throws(ChainError) -> RouteCache.Entry {
        do throws(PathError) {
            let path = try ResourcePath(parsing: text)
            return RouteCache.Entry(path: path, encoded: path.encoded, match: nil)
        } catch {
            throw ChainError(.invalidPath, error.message)
        }
    }

    @Test("A path is parsed once; failures are not kept; the cache stays within its bounds")
    func bounded() throws {
        let cache = RouteCache(capacity: 3, longestPath: 10)
        var parses = 0
        func lookUp(_ text: String) throws(ChainError) -> RouteCache.Entry {
            try cache.entry(for: text) { (text) throws(ChainError) in
                parses += 1
                return try entry(text)
            }
        }
        _ = try lookUp("a/b")
        _ = try lookUp("a/b")
        #expect(parses == 1)
        #expect(throws: ChainError.self) { try lookUp("a/../b") }
        #expect(throws: ChainError.self) { try lookUp("a/../b") }
        #expect(parses == 3, "a failure is parsed again, never kept")
        _ = try lookUp("a/very/long/path")
        #expect(cache.count == 1, "paths longer than the bound are not kept")
        for name in ["c", "d", "e", "f"] { _ = try lookUp(name) }
        #expect(cache.count <= 3)
        // limits.routeCache 0: nothing is kept.
        let none = RouteCache(capacity: 0)
        var noneParses = 0
        for _ in 0..<2 {
            _ = try none.entry(for: "a/b") { (text) throws(ChainError) in
                noneParses += 1
                return try entry(text)
            }
        }
        #expect(none.count == 0 && noneParses == 2)
    }

    @Test("When full, paths asked for again and again stay while one-off paths take each other's place")
    func hotPathsStay() throws {
        let cache = RouteCache(capacity: 8)
        var parsed: [String] = []
        func lookUp(_ text: String) throws(ChainError) {
            _ = try cache.entry(for: text) { (text) throws(ChainError) in
                parsed.append(text)
                return try entry(text)
            }
        }
        let hot = ["h/0", "h/1", "h/2", "h/3"]
        for path in hot { try lookUp(path) }
        // Each hot path is asked for again between one-off paths, 100 times over a cache of 8.
        for round in 0..<100 {
            try lookUp("once/\(round)")
            for path in hot { try lookUp(path) }
        }
        #expect(parsed.filter { $0.hasPrefix("h/") } == hot, "each hot path is parsed once, then kept")
        #expect(parsed.filter { $0.hasPrefix("once/") }.count == 100)
        #expect(cache.count == 8)
        // One-off paths that fill it anew may push out what no one asks for any more.
        for round in 0..<16 { try lookUp("later/\(round)") }
        try lookUp("h/0")
        #expect(parsed.last == "h/0", "a path not asked for while the cache turned over is parsed again")
        #expect(cache.count == 8)
    }

    @Test("A plan made with the cache is the plan made without it")
    func samePlans() throws {
        let router = try Router<RouteOptions>(routes: RequestPlanTests.routes)
        let chains = [
            "api": [WorkerPool(kind: "network", clock: .system)],
            "static": [WorkerPool(kind: "bundle", clock: .system)],
        ]
        let cache = RouteCache()
        for message in [
            RequestMessage(id: 1, path: "/users/42?b=2&a=1"), RequestMessage(id: 2, path: "docs/a/b?x=1"),
            RequestMessage(id: 3, path: "users/42", query: [QueryItem(name: "q", value: "v")]),
            // The same path again, read in other ways than the plain read kept for it.
            RequestMessage(id: 4, path: "/users/42?b=2&a=1", method: "POST", body: Data("x".utf8)),
            RequestMessage(id: 5, path: "/users/42?b=2&a=1", domain: "static"),
            RequestMessage(id: 6, path: "/users/42?b=2&a=1", query: [QueryItem(name: "c", value: "3")]),
        ] {
            for _ in 0..<2 {
                let cached = try RequestPlan(message, router: router, chains: chains, limits: Configuration.Limits(), routes: cache)
                let fresh = try RequestPlan(message, router: router, chains: chains, limits: Configuration.Limits())
                #expect(cached.request == fresh.request)
                #expect(cached.sharedKey == fresh.sharedKey)
                #expect(cached.domain == fresh.domain)
            }
        }
        #expect(cache.count == 3)
    }
}
