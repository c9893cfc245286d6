#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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
        let router = try! Router<RouteOptions>(routes: Self.routes)
        let chains = [
            "api": [WorkerPool(kind: "network", clock: .system)],
            "static": [WorkerPool(kind: "bundle", clock: .system)],
        ]
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
        // The upstream is asked in the key's order (issue 26, finding 10).
        #expect(plan.request.route.upstream == "http://127.0.0.1:8080/users/42?a=1&b=2")
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
        // An API key in a header of its own, or any header Monarch does not know: nothing shared.
        #expect(try plan(RequestMessage(id: 11, path: "docs/a", headers: ["X-Api-Key": "alice-secret"])).sharedKey == nil)
        // A GET with a body asks something its key does not say.
        #expect(try plan(RequestMessage(id: 12, path: "docs/a", body: Data("{}".utf8))).sharedKey == nil)
        // Tracing ids change nothing; negotiation headers pick whom a trip is shared with.
        #expect(try plan(RequestMessage(id: 13, path: "docs/a?x=1&y=2", headers: ["X-Request-Id": "r1"])).sharedKey == one.sharedKey)
        let json = try plan(RequestMessage(id: 14, path: "docs/a", headers: ["Accept": "application/json"])).sharedKey
        let xml = try plan(RequestMessage(id: 15, path: "docs/a", headers: ["Accept": "application/xml"])).sharedKey
        #expect(json != nil && xml != nil && json != xml)
        #expect(try plan(RequestMessage(id: 16, path: "docs/a", headers: ["accept": "application/json"])).sharedKey == json)
    }

    @Test("A plain read's shared key, kept with its path, is the key the same read gets when worked out in full")
    func plainReadsShareTheFullKey() throws {
        let plain = try plan(RequestMessage(id: 1, path: "users/42"))
        let key = try #require(plain.request.route.cacheKey)
        #expect(plain.sharedKey == "\(key) cacheFirst\n")
        // Worked out in full: the route's own policy named, a header that changes nothing.
        #expect(try plan(RequestMessage(id: 2, path: "users/42", policy: .cacheFirst)).sharedKey == plain.sharedKey)
        #expect(try plan(RequestMessage(id: 3, path: "users/42", headers: ["X-Request-Id": "r"])).sharedKey == plain.sharedKey)
        #expect(try plan(RequestMessage(id: 4, path: "users/42", body: Data())).sharedKey == plain.sharedKey)
        #expect(try plan(RequestMessage(id: 5, path: "users/42", ttlMs: 1_000)).sharedKey == "\(key) cacheFirst ttl=1000\n")
        let docs = try plan(RequestMessage(id: 6, path: "docs/a"))
        #expect(docs.sharedKey == "\(try #require(docs.request.route.cacheKey)) default\n")
    }

    @Test("Repeated query names keep their order in the key; different names do not")
    func repeatedNamesKeepTheirOrder() throws {
        let ab = try plan(RequestMessage(id: 1, path: "docs/a?tag=a&tag=b&z=1")).request.route.cacheKey
        let ba = try plan(RequestMessage(id: 2, path: "docs/a?tag=b&tag=a&z=1")).request.route.cacheKey
        let moved = try plan(RequestMessage(id: 3, path: "docs/a?z=1&tag=a&tag=b")).request.route.cacheKey
        #expect(ab == "GET static docs/a?tag=a&tag=b&z=1")
        #expect(ba == "GET static docs/a?tag=b&tag=a&z=1")
        #expect(moved == ab)
    }

    @Test("Sizes over the limits are refused before the path is parsed", arguments: [
        (RequestMessage(id: 1, path: "docs/" + String(repeating: "a", count: 200)), "limits.pathBytes"),
        (RequestMessage(id: 2, path: "docs/" + String(repeating: "a/", count: 20) + "b"), "limits.pathComponents"),
        (RequestMessage(id: 3, path: "docs/a", headers: Dictionary(uniqueKeysWithValues: (0..<5).map { ("x-h\($0)", "v") })),
         "limits.headers"),
        (RequestMessage(id: 4, path: "docs/a", headers: ["accept": String(repeating: "v", count: 300)]), "limits.headerBytes"),
        (RequestMessage(id: 5, path: "docs/a", query: (0..<6).map { QueryItem(name: "q\($0)", value: nil) }), "limits.queryItems"),
        (RequestMessage(id: 6, path: "docs/a?a&b&c&d&e&f"), "limits.queryItems"),
        (RequestMessage(id: 7, path: "docs/a", query: [QueryItem(name: "q", value: String(repeating: "v", count: 300))]),
         "limits.queryBytes"),
    ])
    func sizeLimits(message: RequestMessage, limit: String) throws {
        var limits = Configuration.Limits()
        limits.pathBytes = 100
        limits.pathComponents = 10
        limits.headers = 4
        limits.headerBytes = 200
        limits.queryItems = 5
        limits.queryBytes = 200
        let error = #expect(throws: ChainError.self) { try plan(message, limits: limits) }
        #expect(error?.code == .requestTooLarge)
        #expect(error?.message.contains(limit) == true, "\(error?.message ?? "")")
        // Within the same limits, a plain request goes through.
        #expect(throws: Never.self) { try plan(RequestMessage(id: 9, path: "docs/a?x=1"), limits: limits) }
    }

    @Test("A relayed request (an HTTP client's, with all of its headers) may have as many headers as the HTTP listener takes; others keep limits.headers")
    func relayedRequestsHaveTheHTTPListenersHeaderLimits() throws {
        var limits = Configuration.Limits()
        limits.headers = 4
        limits.httpHeaders = 10
        limits.headerBytes = 100
        limits.httpHeaderBlockBytes = 2 << 10
        let eight = Dictionary(uniqueKeysWithValues: (0..<8).map { ("x-h\($0)", String(repeating: "v", count: 20)) })
        #expect(throws: Never.self) { try plan(RequestMessage(id: 1, path: "docs/a", headers: eight, relay: true), limits: limits) }
        let error = #expect(throws: ChainError.self) { try plan(RequestMessage(id: 2, path: "docs/a", headers: eight), limits: limits) }
        #expect(error?.message.contains("limits.headers") == true, "\(error?.message ?? "")")
        let twelve = Dictionary(uniqueKeysWithValues: (0..<12).map { ("x-h\($0)", "v") })
        let relayed = #expect(throws: ChainError.self) {
            try plan(RequestMessage(id: 3, path: "docs/a", headers: twelve, relay: true), limits: limits)
        }
        #expect(relayed?.message.contains("limits.httpHeaders") == true, "\(relayed?.message ?? "")")
    }

    @Test("A 16 MB path is refused by its size before anything is parsed, and the refusal does not carry it")
    func hugePath() throws {
        // The path is also malformed (a bad escape, a traversal) and comes with a header that
        // would be refused: only a refusal by size, before anything is parsed, names the bytes.
        let path = "docs/%zz/../" + String(repeating: "a", count: 16 << 20)
        let error = #expect(throws: ChainError.self) {
            try plan(RequestMessage(id: 1, path: path, headers: ["bad name": "v"]))
        }
        #expect(error?.code == .requestTooLarge)
        #expect(error?.message == "the path is \(path.utf8.count) bytes; the limit is \(Configuration.Limits().pathBytes) (limits.pathBytes)")
    }

    @Test("Header names must be HTTP tokens and values free of control characters but HTAB", arguments: [
        ["x-ok": "a\r\nInjected: yes"], ["x-ok": "a\u{0}b"], ["x-ok": "bell\u{7}"], ["x-ok": "del\u{7f}"],
        ["bad name": "v"], ["": "v"], ["x:y": "v"],
    ])
    func headerValidation(headers: [String: String]) throws {
        let error = #expect(throws: ChainError.self) { try plan(RequestMessage(id: 1, path: "docs/a", headers: headers)) }
        #expect(error?.code == .invalidRequest)
        #expect(throws: Never.self) { try plan(RequestMessage(id: 2, path: "docs/a", headers: ["x-ok": "tab\there é"])) }
    }

    @Test("A parameter holding an encoded slash never reaches the upstream")
    func encodedSlashInParameter() throws {
        let routes: [Configuration.Route] = [
            .init(match: "u/:name", domain: "api", upstream: "http://127.0.0.1:8080/data/users/:name"),
        ]
        let router = try Router<RouteOptions>(routes: routes)
        let chains = ["api": [WorkerPool(kind: "network", clock: .system)]]
        for path in ["u/..%2F..%2F.env", "u/a%5Cb", "u/%2F"] {
            let error = #expect(throws: ChainError.self) {
                try RequestPlan(RequestMessage(id: 1, path: path), router: router, chains: chains, limits: Configuration.Limits())
            }
            #expect(error?.code == .invalidPath, "\(path)")
        }
        let fine = try RequestPlan(RequestMessage(id: 1, path: "u/alice"), router: router, chains: chains, limits: Configuration.Limits())
        #expect(fine.request.route.upstream == "http://127.0.0.1:8080/data/users/alice")
    }

    @Test("Header names differing only in case become one header, so reads asking differently never share")
    func headerNamesAreCaseInsensitive() throws {
        let first = try plan(RequestMessage(id: 1, path: "docs/a", headers: ["Accept": "text/html", "accept": "text/plain"]))
        let second = try plan(RequestMessage(id: 2, path: "docs/a", headers: ["accept": "text/html", "Accept": "text/plain"]))
        #expect(first.request.headers == ["accept": "text/html, text/plain"])
        #expect(second.request.headers == ["accept": "text/plain, text/html"])
        #expect(first.sharedKey != nil && first.sharedKey != second.sharedKey)
        let same = try plan(RequestMessage(id: 3, path: "docs/a", headers: ["ACCEPT": "text/html, text/plain"]))
        #expect(same.request.headers == first.request.headers && same.sharedKey == first.sharedKey)
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
