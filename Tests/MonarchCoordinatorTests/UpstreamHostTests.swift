import Monarch
@testable import MonarchCoordinator
import Testing

/// The per-host lanes of a network pool are keyed by the upstream's `host:port`.
@Suite struct UpstreamHostTests {
    private func host(_ upstream: String?) -> String {
        var request = Request(path: "x")
        request.route = RouteContext(upstream: upstream)
        return WorkerPool.upstreamHost(of: request)
    }

    @Test func hostAndPortAreLowercasedAndCutAtThePathQueryOrFragment() {
        #expect(host("http://API.Example.com:8080/v1/users?id=1") == "api.example.com:8080")
        #expect(host("https://Example.COM?q=1") == "example.com")
        #expect(host("http://example.com#top") == "example.com")
        #expect(host("http://[::1]:9000/") == "[::1]:9000")
        #expect(host("HTTP://X:1") == "x:1")
        #expect(host("http://café.example/") == "café.example")
    }

    @Test func noUpstreamOrNoSchemeIsTheEmptyHost() {
        #expect(host(nil) == "")
        #expect(host("example.com/path") == "")
        #expect(host("http:/example.com") == "")
        #expect(host("http://") == "")
        #expect(host("://") == "")
        #expect(host("a:/") == "")
    }
}
