import Monarch
import MonarchConfig
import MonarchLoop
import MonarchRouter
import MonarchWire
import Testing

@testable import MonarchCoordinator

/// The route cache keeps a path without its query: a path asked for with a different query
/// each time is planned as it would be with no cache at all.
@Suite struct RequestPlanQueryTests {
    static let routes: [Configuration.Route] = [
        .init(match: "users/:id", constraints: ["id": "[0-9]+"], domain: "api",
              upstream: "http://127.0.0.1:8080/users/:id", ttl: .seconds(60), policy: .cacheFirst),
        .init(match: "f/...", domain: "api", upstream: "http://127.0.0.1:8080/k/...", policy: .noCache),
    ]

    /// Plans `message` against the routes above, through `routes`.
    func plan(_ message: RequestMessage, host: String? = nil, routes: RouteCache) throws(ChainError) -> RequestPlan {
        let router = try! Router<RouteOptions>(routes: Self.routes)
        let chains = ["api": [WorkerPool(kind: "network", clock: .system)]]
        return try RequestPlan(message, host: host, router: router, chains: chains, limits: Configuration.Limits(), routes: routes)
    }

    @Test("A path with a query is planned through the cache as without it, and kept once whatever its query", arguments: [
        "users/42?a=1", "users/42?a=1&b", "users/42?", "users/42?&", "users/42?a=%2B+b", "f/x/y?q=1-2", "f/x?q#frag",
        "http://example.com/users/7?z=9", "users/42", "other?x=1",
    ])
    func queriesPlanAsWithoutACache(path: String) throws {
        let cache = RouteCache()
        for relay in [false, true] {
            for query in [nil, [QueryItem(name: "extra", value: "1")]] {
                let message = RequestMessage(id: 1, path: path, query: query, relay: relay ? true : nil)
                let cached = Result { () throws(ChainError) in try plan(message, routes: cache) }
                let again = Result { () throws(ChainError) in try plan(message, routes: cache) }
                let fresh = Result { () throws(ChainError) in try plan(message, routes: RouteCache(capacity: 0)) }
                switch (cached, again, fresh) {
                case (.success(let cached), .success(let again), .success(let fresh)):
                    #expect(cached.request == fresh.request && again.request == fresh.request)
                    #expect(cached.sharedKey == fresh.sharedKey && again.sharedKey == fresh.sharedKey)
                case (.failure(let cached), .failure(let again), .failure(let fresh)):
                    #expect(cached.code == fresh.code && cached.message == fresh.message)
                    #expect(again.code == fresh.code && again.message == fresh.message)
                default:
                    Issue.record("\(path): cached \(cached), fresh \(fresh)")
                }
            }
        }
    }

    @Test("Distinct queries of one path take one place in the cache")
    func distinctQueriesShareAnEntry() throws {
        let cache = RouteCache()
        for n in 0..<50 {
            let plan = try plan(RequestMessage(id: 1, path: "f/a?q=\(n)"), routes: cache)
            #expect(plan.request.query == [QueryItem(name: "q", value: "\(n)")])
            #expect(plan.request.route.upstream == "http://127.0.0.1:8080/k/a?q=\(n)")
        }
        #expect(cache.count == 1)
    }

    @Test("A bad path or a bad query is refused with the message the whole path's parse gives", arguments: [
        "?x=1", "users/%zz?x=1", "users/42?x=%zz", "users/42?%00=1", "../a?b", "docs/./x?y",
    ])
    func badPartsAreRefusedAsBefore(path: String) {
        let cache = RouteCache()
        let whole: PathError
        do {
            _ = try ResourcePath(parsing: path)
            Issue.record("\(path) parses")
            return
        } catch {
            whole = error
        }
        for _ in 0..<2 {
            do {
                _ = try plan(RequestMessage(id: 1, path: path), routes: cache)
                Issue.record("\(path) is planned")
            } catch {
                #expect(error.code == .invalidPath)
                #expect(error.message == "invalid path \(LogText.quoted(path)): \(whole.message)")
            }
        }
    }
}
