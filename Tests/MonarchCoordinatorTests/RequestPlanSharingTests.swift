import Monarch
import MonarchConfig
import MonarchLoop
import MonarchRouter
import MonarchWire
import Testing

@testable import MonarchCoordinator

/// Issue 26, finding 5: what a planned request carries upstream and shares under, per route.
@Suite struct RequestPlanSharingTests {
    static let routes: [Configuration.Route] = [
        .init(match: "news/...", domain: "api", upstream: "http://127.0.0.1:8080/news/..."),
        .init(match: "logo", domain: "api", upstream: "http://127.0.0.1:8080/logo", isPublic: true),
        .init(match: "reports/...", domain: "api", upstream: "http://127.0.0.1:8080/reports/...", headers: ["x-tenant", "traceparent"]),
    ]

    func plan(_ path: String, _ headers: [String: String]) throws -> RequestPlan {
        let router = try Router<RouteOptions>(routes: Self.routes)
        return try RequestPlan(
            RequestMessage(id: 1, path: path, headers: headers), router: router,
            chains: ["api": [WorkerPool(kind: "network", clock: .system)]], limits: Configuration.Limits())
    }

    @Test("A shared read does not carry tracing ids upstream; one that shares nothing carries all its headers")
    func tracingIdsStayHome() throws {
        let shared = try plan("news/1", ["X-Request-Id": "r-1", "Traceparent": "00-1", "Accept": "text/html"])
        #expect(shared.request.headers == ["accept": "text/html"])
        #expect(shared.sharedKey != nil)
        let personal = try plan("news/1", ["X-Request-Id": "r-2", "Authorization": "Bearer x"])
        #expect(personal.request.headers == ["x-request-id": "r-2", "authorization": "Bearer x"])
        #expect(personal.sharedKey == nil)
    }

    @Test("A public route lets a credentialed read share; a route's keyed headers are forwarded and part of the shared key")
    func routeChooses() throws {
        let logo = try plan("logo", ["Cookie": "sid=1"])
        #expect(logo.request.route.isPublic)
        #expect(logo.sharedKey != nil)
        #expect(logo.request.headers == ["cookie": "sid=1"])
        let acme = try plan("reports/q1", ["X-Tenant": "acme", "Traceparent": "00-1"])
        let globex = try plan("reports/q1", ["X-Tenant": "globex", "Traceparent": "00-1"])
        #expect(acme.request.headers == ["x-tenant": "acme", "traceparent": "00-1"])
        #expect(acme.sharedKey != nil && acme.sharedKey != globex.sharedKey)
    }
}
