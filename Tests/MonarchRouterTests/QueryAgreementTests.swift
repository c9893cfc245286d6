import MonarchRouter
import MonarchWire
import Testing

/// Issue 26, finding 10: the cache key and the upstream URL agree on the query — its order and
/// its `+`.
@Suite struct QueryAgreementTests {
    let pattern = try! RoutePattern("qs")

    /// The query part of the upstream URL and of the key for the path `text`.
    func queries(_ text: String) throws -> (upstream: String, key: String) {
        let path = try ResourcePath(parsing: text)
        let template = try UpstreamTemplate("http://127.0.0.1:8080/qs", for: pattern)
        let url = try template.url(parameters: [:], remainder: [], query: path.query)
        let key = CacheKey(domain: "api", path: path).rawValue
        return (String(url.drop { $0 != "?" }), String(key.drop { $0 != "?" }))
    }

    @Test("Two orders of one query share a key and reach the upstream as one URL, the key's", arguments: [
        ("qs?b=2&a=1", "?a=1&b=2"),
        ("qs?a=1&b=2", "?a=1&b=2"),
        ("qs?tag=b&z&tag=a", "?tag=b&tag=a&z"),
    ])
    func order(text: String, expected: String) throws {
        let (upstream, key) = try queries(text)
        #expect(upstream == expected)
        #expect(key == expected)
    }

    @Test("A + reaches the upstream as it was given and the key reads it so; %2B stays %2B", arguments: [
        ("qs?q=1+2", "?q=1+2"),
        ("qs?q=1%2B2", "?q=1%2B2"),
        ("qs?q=a+b&plus=%2B", "?plus=%2B&q=a+b"),
        ("qs?q=a%20b", "?q=a+b"),
    ])
    func plus(text: String, expected: String) throws {
        let (upstream, key) = try queries(text)
        #expect(upstream == expected)
        #expect(key == expected)
    }

    @Test("Structured query items are form-encoded alike in both: a space is +, a + is %2B")
    func structuredItems() throws {
        let query = [QueryItem(name: "q", value: "1+1 is 2"), QueryItem(name: "a", value: nil)]
        let template = try UpstreamTemplate("http://127.0.0.1:8080/qs", for: pattern)
        let url = try template.url(parameters: [:], remainder: [], query: query)
        let key = CacheKey(method: "GET", domain: "api", encodedPath: "qs", query: query).rawValue
        #expect(url.hasSuffix("?a&q=1%2B1+is+2"))
        #expect(key.hasSuffix("?a&q=1%2B1+is+2"))
    }
}
