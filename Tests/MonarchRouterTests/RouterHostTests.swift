import MonarchWire
import Testing
@testable import MonarchRouter

/// Routes with a host: they match only requests for it, and outrank routes without one.
@Suite struct RouterHostTests {
    /// A router of `routes` (pattern, host), each route's target its own description.
    private func router(_ routes: [(String, String?)]) throws -> Router<String> {
        var router = Router<String>()
        for (pattern, host) in routes {
            router.add(try RoutePattern(pattern), host: try host.map { try HostPattern($0) }, "\(host ?? "any") \(pattern)")
        }
        return router
    }

    private func winner(_ router: Router<String>, _ path: String, host: String?) throws -> String? {
        router.match(try ResourcePath(parsing: path), host: host)?.target
    }

    @Test("A route with a host matches requests for it alone; one without matches any host and none")
    func hostsSelectRoutes() throws {
        let router = try router([("page", "a.test"), ("page", "b.test"), ("other", nil)])
        #expect(try winner(router, "page", host: "a.test") == "a.test page")
        #expect(try winner(router, "page", host: "b.test") == "b.test page")
        #expect(try winner(router, "page", host: "c.test") == nil)
        #expect(try winner(router, "page", host: nil) == nil, "a request naming no host (the wire's) reaches no host route")
        #expect(try winner(router, "other", host: "a.test") == "any other")
        #expect(try winner(router, "other", host: nil) == "any other")
        #expect(router.match(try ResourcePath(parsing: "page"), host: "a.test")?.host?.description == "a.test")
        #expect(router.match(try ResourcePath(parsing: "other"), host: "a.test")?.host == nil)
    }

    @Test("The host is compared before the path, in either declaration order: exact, then wildcards by labels, then none")
    func hostOutranksPath() throws {
        let routes: [(String, String?)] = [("a/b", nil), ("...", "x.example.com"), ("a/...", "*.example.com"), ("...", "*.x.example.com")]
        for order in [routes, routes.reversed()] {
            let router = try router(order)
            #expect(try winner(router, "a/b", host: "x.example.com") == "x.example.com ...", "the exact host beats all")
            #expect(try winner(router, "a/b", host: "y.x.example.com") == "*.x.example.com ...", "more labels beat fewer")
            #expect(try winner(router, "a/b", host: "y.example.com") == "*.example.com a/...", "any host route beats a more specific path")
            #expect(try winner(router, "c", host: "y.example.com") == nil)
            #expect(try winner(router, "a/b", host: "example.com") == "any a/b", "a wildcard does not cover its own name")
            #expect(try winner(router, "a/b", host: nil) == "any a/b")
            let all = router.matches(try ResourcePath(parsing: "a/b"), host: "y.x.example.com").map(\.target)
            #expect(all == ["*.x.example.com ...", "*.example.com a/...", "any a/b"])
        }
    }

    @Test("Among the routes of one host the path's precedence holds, then the declaration order")
    func pathPrecedenceWithinAHost() throws {
        let router = try router([("a/:x", "h.test"), ("a/b", "h.test"), ("a/:y", "h.test")])
        #expect(try winner(router, "a/b", host: "h.test") == "h.test a/b")
        #expect(try winner(router, "a/c", host: "h.test") == "h.test a/:x")
    }

    @Test("routedHost keeps a host some route names, and drops one none does")
    func routedHost() throws {
        let router = try router([("...", "a.test"), ("...", "*.b.test"), ("...", nil)])
        #expect(router.hasHostRoutes)
        #expect(router.routedHost("a.test") == "a.test")
        #expect(router.routedHost("x.b.test") == "x.b.test")
        #expect(router.routedHost("b.test") == nil)
        #expect(router.routedHost("made-up.test") == nil)
        #expect(router.routedHost(nil) == nil)
        let plain = try self.router([("...", nil)])
        #expect(!plain.hasHostRoutes && plain.routedHost("a.test") == nil)
    }

    @Test("A path prefix reaches the routes without host alone")
    func prefixesReachRoutesWithoutHost() throws {
        let router = try router([("docs/...", "a.test"), ("docs/:page", nil)])
        #expect(router.targets(forPathsStartingWith: ["docs"], lastIsWhole: true) == ["any docs/:page"])
    }
}
