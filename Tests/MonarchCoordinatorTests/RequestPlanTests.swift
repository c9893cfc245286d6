import Monarch
import MonarchConfig
import MonarchLoop
import MonarchRouter
import MonarchWire
import Testing

@testable import MonarchCoordinator

@Suite struct RequestPlanTests {
    static let routes: [Configuration.Route] = [
        .init(match: "users/:id", constraints: ["id": "[0-9]+"], domain: "api",
              upstream: "http://127.0.0.1:8080/users/:id", ttl: .seconds(60), timeout: .seconds(5), policy: .cacheFirst),
        .init(match: "docs/...", domain: "static"),
    ]

    /// Plans `message` against the routes above, with pools that never run.
    func plan(
        _ message: RequestMessage, defaultTimeout: Duration = .seconds(30), limits: Configuration.Limits = Configuration.Limits()
    ) throws(ChainError) -> RequestPlan {
        let loop = try! EventLoop(name: "plan-tests")
        defer { _ = loop.shutdown() }
        let router = try! Router<RouteOptions>(routes: Self.routes)
        let chains = ["api": [WorkerPool(kind: "network", loop: loop)], "static": [WorkerPool(kind: "bundle", loop: loop)]]
        var limits = limits
        limits.timeout = defaultTimeout
        return try RequestPlan(message, router: router, chains: chains, limits: limits)
    }

    @Test func aRouteGivesItsDomainParametersUpstreamTTLPolicyAndKey() throws {
        let plan = try plan(RequestMessage(id: 1, path: "/users/42?b=2&a=1"))
        #expect(plan.providers.map(\.name) == ["network"])
        #expect(plan.request.path == "users/42")
        #expect(plan.request.query == [QueryItem(name: "b", value: "2"), QueryItem(name: "a", value: "1")])
        #expect(plan.request.route.parameters == ["id": "42"])
        #expect(plan.request.route.upstream == "http://127.0.0.1:8080/users/42?b=2&a=1")
        #expect(plan.request.route.ttl == .seconds(60))
        #expect(plan.request.policy == .cacheFirst)
        #expect(plan.request.route.cacheKey == "GET api users/42?a=1&b=2")
        #expect(plan.deadline == .seconds(5))
    }

    @Test func theDeadlineIsTheShortestOfClientRouteAndDefault() throws {
        #expect(try plan(RequestMessage(id: 1, path: "users/1", deadlineMs: 200)).deadline == .milliseconds(200))
        #expect(try plan(RequestMessage(id: 1, path: "users/1", deadlineMs: 60_000)).deadline == .seconds(5))
        #expect(try plan(RequestMessage(id: 1, path: "docs/a")).deadline == .seconds(30))
        #expect(try plan(RequestMessage(id: 1, path: "docs/a"), defaultTimeout: .seconds(2)).deadline == .seconds(2))
        #expect(try plan(RequestMessage(id: 1, path: "docs/a", deadlineMs: 0)).deadline == .zero)
    }

    @Test func identicalReadsShareAKeyAndMutationsNone() throws {
        let one = try plan(RequestMessage(id: 1, path: "docs/a?x=1&y=2"))
        let two = try plan(RequestMessage(id: 2, path: "docs/a", query: [QueryItem(name: "y", value: "2"), QueryItem(name: "x", value: "1")]))
        #expect(one.sharedKey != nil)
        #expect(one.sharedKey == two.sharedKey)
        #expect(try plan(RequestMessage(id: 3, path: "docs/a?x=1&y=3")).sharedKey != one.sharedKey)
        #expect(try plan(RequestMessage(id: 4, path: "docs/a?x=1&y=2", policy: .noCache)).sharedKey != one.sharedKey)
        #expect(try plan(RequestMessage(id: 5, path: "docs/a?x=1&y=2", method: "HEAD")).sharedKey != one.sharedKey)
        #expect(try plan(RequestMessage(id: 6, path: "docs/a", method: "POST")).sharedKey == nil)
        // Reads with credentials may be answered for their caller alone: they share nothing.
        #expect(try plan(RequestMessage(id: 7, path: "docs/a", headers: ["Authorization": "Bearer t"])).sharedKey == nil)
        #expect(try plan(RequestMessage(id: 8, path: "docs/a", headers: ["COOKIE": "s=1"])).sharedKey == nil)
        // So may conditional and range reads: a 304 or a part is no answer for a plain GET.
        #expect(try plan(RequestMessage(id: 9, path: "docs/a", headers: ["If-None-Match": "\"v1\""])).sharedKey == nil)
        #expect(try plan(RequestMessage(id: 10, path: "docs/a", headers: ["range": "bytes=0-9"])).sharedKey == nil)
    }

    @Test func separatorsInsideQueryValuesDoNotCollide() throws {
        let joined = try plan(RequestMessage(id: 1, path: "docs/a", query: [QueryItem(name: "a", value: "1&b=2")]))
        let split = try plan(RequestMessage(id: 2, path: "docs/a?a=1&b=2"))
        #expect(joined.request.route.cacheKey != split.request.route.cacheKey)
    }

    @Test(arguments: [
        ("", ChainError.Code.invalidPath), ("docs/../x", .invalidPath), ("docs/%zz", .invalidPath),
        ("users/abc", .noRoute), ("other/x", .noRoute),
    ])
    func badPathsAndUnroutedPathsAreChainErrors(path: String, code: ChainError.Code) {
        do {
            _ = try plan(RequestMessage(id: 1, path: path))
            Issue.record("expected \(code)")
        } catch {
            #expect(error.code == code)
        }
    }

    @Test func anUnknownDomainIsAChainError() {
        do {
            _ = try plan(RequestMessage(id: 1, path: "docs/a", domain: "nope"))
            Issue.record("expected unknownDomain")
        } catch {
            #expect(error.code == .unknownDomain)
        }
    }

    @Test func anInvalidRoutePatternNamesItsKeyPath() {
        #expect(throws: ConfigError.self) {
            _ = try Router<RouteOptions>(routes: [.init(match: "a/.../b", domain: "static")])
        }
        do {
            _ = try Router<RouteOptions>(routes: [
                .init(match: "ok", domain: "static"), .init(match: "x", domain: "static", upstream: "http://h/:missing"),
            ])
            Issue.record("expected a ConfigError")
        } catch {
            #expect(error.keyPath == "routes[1].upstream")
        }
    }
}
