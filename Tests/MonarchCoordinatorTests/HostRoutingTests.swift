import Monarch
import MonarchConfig
import MonarchLoop
import MonarchRouter
import MonarchWire
import Testing

@testable import MonarchCoordinator

/// Two sites on one listener: `a.test` and `*.b.test` have a `page` route of their own, in
/// domain `site`; `page` and `shared/...` serve any host from `site` too (`api/...`, with its
/// own `httpBody`, too).
@Suite struct HostRoutingTests {
    static let routes: [Configuration.Route] = [
        .init(match: "page", domain: "site", upstream: "http://127.0.0.1:9/any"),
        .init(match: "page", host: "a.test", domain: "site", upstream: "http://127.0.0.1:9/a", httpBodyBytes: 4 << 20),
        .init(match: ":name", host: "*.b.test", domain: "site", upstream: "http://127.0.0.1:9/b/:name"),
        .init(match: "shared/...", domain: "site"),
        .init(match: "api/...", domain: "site", httpBodyBytes: 10),
    ]

    /// `body` with the routes above compiled, and a chain for `site` that never runs.
    private func withRouting(_ body: (Router<RouteOptions>, [String: [any RequestProvider]]) throws -> Void) throws {
        try body(try Router<RouteOptions>(routes: Self.routes), ["site": [WorkerPool(kind: "network", clock: .system)]])
    }

    private func plan(
        _ path: String, host: String?, method: String? = nil, router: Router<RouteOptions>, chains: [String: [any RequestProvider]],
        routes: RouteCache = RouteCache(capacity: 0)
    ) throws -> RequestPlan {
        try RequestPlan(
            RequestMessage(id: 1, path: path, method: method, relay: true), host: host, router: router, chains: chains,
            limits: Configuration.Limits(), routes: routes)
    }

    @Test("Each host reaches its route and keys its entries under the route's host; others keep the keys without host")
    func hostsKeyApart() throws {
        try withRouting { router, chains in
            let a = try plan("/page", host: "a.test", router: router, chains: chains)
            #expect(a.request.route.upstream == "http://127.0.0.1:9/a")
            #expect(a.request.route.cacheKey == "GET site //a.test/page")
            let b = try plan("/page?x=1", host: "www.b.test", router: router, chains: chains)
            #expect(b.request.route.upstream == "http://127.0.0.1:9/b/page?x=1")
            #expect(b.request.route.cacheKey == "GET site //*.b.test/page?x=1")
            for host in [nil, "c.test", "b.test"] as [String?] {
                let any = try plan("/page", host: host, router: router, chains: chains)
                #expect(any.request.route.upstream == "http://127.0.0.1:9/any", "\(host ?? "no host")")
                #expect(any.request.route.cacheKey == "GET site page", "\(host ?? "no host")")
            }
            // A route without host is found from a host with routes of its own, its key unchanged.
            #expect(try plan("/shared/x", host: "a.test", router: router, chains: chains).request.route.cacheKey == "GET site shared/x")
            // A relayed HEAD is answered from the GET's entry, of the same host.
            #expect(try plan("/page", host: "a.test", method: "HEAD", router: router, chains: chains).request.route.cacheKey
                == "GET site //a.test/page")
        }
    }

    @Test("The route cache keeps a path per host: a path routed for one host is never the plan of another")
    func routeCacheKeepsHostsApart() throws {
        try withRouting { router, chains in
            let cache = RouteCache()
            for _ in 0..<2 {
                for (host, key) in [("a.test", "GET site //a.test/page"), ("x.b.test", "GET site //*.b.test/page"), ("c.test", "GET site page")] {
                    let cached = try plan("page", host: host, router: router, chains: chains, routes: cache)
                    let fresh = try plan("page", host: host, router: router, chains: chains)
                    #expect(cached.request == fresh.request)
                    #expect(cached.request.route.cacheKey == key)
                }
            }
            // a.test, x.b.test, and no host for c.test (a host no route names is not kept apart).
            #expect(cache.count == 3)
            _ = try plan("page", host: "d.test", router: router, chains: chains, routes: cache)
            #expect(cache.count == 3)
        }
    }

    @Test("A path resolves for its host, to the keys of that host's route; without host, to the route without one")
    func invalidationByPathReachesTheHost() throws {
        let router = try Router<RouteOptions>(routes: Self.routes)
        let resolution = TargetResolution(router: router, domains: ["site"], cachedDomains: ["site"], limits: Configuration.Limits())
        #expect(try resolution.resolve(.path("/page"), host: "a.test") == [.key("GET site //a.test/page"), .key("HEAD site //a.test/page")])
        #expect(try resolution.resolve(.path("/page"), host: "x.b.test")
            == [.key("GET site //*.b.test/page"), .key("HEAD site //*.b.test/page")])
        #expect(try resolution.resolve(.path("/page")) == [.key("GET site page"), .key("HEAD site page")])
        #expect(try resolution.resolve(.path("/page"), host: "c.test") == [.key("GET site page"), .key("HEAD site page")])
        // Only *.b.test's route matches `other`: a request naming no host cannot reach it, and is told how to.
        #expect {
            try resolution.resolve(.path("/other"))
        } throws: { error in
            guard let error = error as? ChainError else { return false }
            return error.code == .noRoute && error.message.contains("PURGE with that Host")
        }
        #expect(try resolution.resolve(.path("/other"), host: "x.b.test").first == .key("GET site //*.b.test/other"))
    }

    @Test("A request's body limit is its route's httpBody, for its host; else limits.httpBody")
    func bodyLimits() throws {
        var configuration = Configuration(
            listen: .init(clients: [.unix(path: "/tmp/c.sock")], workers: .unix(path: "/tmp/w.sock")),
            domains: [.init(name: "site", providers: ["network"])], routes: Self.routes)
        configuration.limits.httpBodyBytes = 1000
        let routing = Routing(
            configuration: configuration, router: try Router<RouteOptions>(routes: Self.routes),
            pools: ["network": WorkerPool(kind: "network", clock: .system)], cachePools: [:])
        #expect(routing.httpBodyBytes(target: "/page", host: "a.test") == 4 << 20)
        #expect(routing.httpBodyBytes(target: "http://a.test/page", host: "a.test") == 4 << 20)
        #expect(routing.httpBodyBytes(target: "/page", host: "c.test") == 1000)
        #expect(routing.httpBodyBytes(target: "/page", host: nil) == 1000)
        #expect(routing.httpBodyBytes(target: "/api/upload", host: "a.test") == 10)
        #expect(routing.httpBodyBytes(target: "/nowhere/at/all", host: nil) == 1000)
        #expect(routing.httpBodyBytes(target: "/a/../b", host: nil) == 1000, "not a path: the listener's limit")
    }
}
