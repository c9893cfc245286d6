import MonarchWire
import Testing
@testable import MonarchRouter

@Suite struct UpstreamTemplateTests {
    private let users = try! RoutePattern("users/:id")
    private let assets = try! RoutePattern("assets/:kind/...")

    @Test func exposesSchemeHostAndPort() throws {
        let template = try UpstreamTemplate("http://127.0.0.1:8080/users/:id", for: users)
        #expect(template.scheme == "http")
        #expect(template.host == "127.0.0.1")
        #expect(template.port == 8080)
        #expect(template.effectivePort == 8080)
        #expect(template.description == "http://127.0.0.1:8080/users/:id")

        let secure = try UpstreamTemplate("HTTPS://Example.COM/u/:id", for: users)
        #expect(secure.scheme == "https")
        #expect(secure.host == "example.com")
        #expect(secure.port == nil)
        #expect(secure.effectivePort == 443)
        #expect(try UpstreamTemplate("http://h", for: users).effectivePort == 80)

        let ipv6 = try UpstreamTemplate("http://[::1]:9000/users/:id", for: users)
        #expect(ipv6.host == "::1")
        #expect(ipv6.port == 9000)
        #expect(try ipv6.url(parameters: ["id": "1"], remainder: [], query: []) == "http://[::1]:9000/users/1")
    }

    @Test(arguments: [
        ("1", "1"),
        ("a b", "a%20b"),
        ("what?", "what%3F"),
        ("#top", "%23top"),
        ("café", "caf%C3%A9"),
        ("100%", "100%25"),
        ("a+b&c=d", "a%2Bb%26c%3Dd"),
        ("-._~", "-._~"),
    ])
    func encodesParameterValues(value: String, encoded: String) throws {
        let template = try UpstreamTemplate("http://127.0.0.1:8080/users/:id", for: users)
        #expect(try template.url(parameters: ["id": value], remainder: [], query: []) == "http://127.0.0.1:8080/users/\(encoded)")
    }

    @Test func fillsTheRemainderComponentByComponent() throws {
        let template = try UpstreamTemplate("http://h:1/static/:kind/...", for: assets)
        let url = try template.url(parameters: ["kind": "img"], remainder: ["x y", "b.png"], query: [])
        #expect(url == "http://h:1/static/img/x%20y/b.png")
    }

    @Test("A parameter or remainder component holding / or \\ (from %2F, %5C) is refused, never sent upstream",
          arguments: ["../../.env", "a/b", "..\\..\\x", "\\", "/"])
    func refusesSeparatorsInFilledSegments(value: String) throws {
        let users = try UpstreamTemplate("http://h/data/users/:id", for: users)
        let error = #expect(throws: PathError.self) { try users.url(parameters: ["id": value], remainder: [], query: []) }
        #expect(error?.code == .separatorInComponent)
        let static_ = try UpstreamTemplate("http://h:1/static/:kind/...", for: assets)
        let remainderError = #expect(throws: PathError.self) {
            try static_.url(parameters: ["kind": "img"], remainder: ["ok", value], query: [])
        }
        #expect(remainderError?.code == .separatorInComponent)
        // Separators in query values are data, not structure: they are encoded and sent.
        let withQuery = try users.url(parameters: ["id": "1"], remainder: [], query: [QueryItem(name: "q", value: value)])
        #expect(withQuery.hasPrefix("http://h/data/users/1?q=") && !withQuery.dropFirst(24).contains("/"))
    }

    @Test func appendsTheQueryEncoded() throws {
        let template = try UpstreamTemplate("http://h/users/:id", for: users)
        let query = [
            QueryItem(name: "a", value: "1"), QueryItem(name: "b", value: nil),
            QueryItem(name: "a", value: "x y&z"), QueryItem(name: "e", value: ""),
            QueryItem(name: "k=", value: "+"),
        ]
        // In the key's order (by name, one name's items as they came), form-encoded.
        #expect(try template.url(parameters: ["id": "1"], remainder: [], query: query) == "http://h/users/1?a=1&a=x+y%26z&b&e=&k%3D=%2B")
        #expect(
            try template.url(parameters: ["id": "1"], remainder: [], query: [QueryItem(name: "a", value: "1"), QueryItem(name: "b", value: nil)])
                == "http://h/users/1?a=1&b")
    }

    @Test func keepsTheTemplatesOwnQueryFirst() throws {
        let template = try UpstreamTemplate("http://h/users/:id?key=k1", for: users)
        #expect(try template.url(parameters: ["id": "1"], remainder: [], query: []) == "http://h/users/1?key=k1")
        #expect(try template.url(parameters: ["id": "1"], remainder: [], query: [QueryItem(name: "b", value: nil)]) == "http://h/users/1?key=k1&b")
        let bare = try UpstreamTemplate("http://h/users/:id?", for: users)
        #expect(try bare.url(parameters: ["id": "1"], remainder: [], query: [QueryItem(name: "b", value: nil)]) == "http://h/users/1?b")
    }

    @Test func copiesLiteralSegmentsAndSlashesAsWritten() throws {
        #expect(try UpstreamTemplate("http://h", for: users).url(parameters: ["id": "1"], remainder: [], query: []) == "http://h")
        #expect(try UpstreamTemplate("http://h/", for: users).url(parameters: ["id": "1"], remainder: [], query: []) == "http://h/")
        let template = try UpstreamTemplate("http://h/v1/people/:id/", for: users)
        #expect(try template.url(parameters: ["id": "7"], remainder: [], query: []) == "http://h/v1/people/7/")
    }

    @Test func fillsFromARealMatch() throws {
        var router = Router<UpstreamTemplate>()
        router.add(assets, try UpstreamTemplate("http://127.0.0.1:8080/assets/:kind/...", for: assets))
        let path = try ResourcePath(parsing: "/assets/img/a%20b/c%3Fd.png?v=1&raw")
        let match = try #require(router.match(path))
        #expect(
            try match.target.url(parameters: match.parameters, remainder: match.remainder, query: path.query)
                == "http://127.0.0.1:8080/assets/img/a%20b/c%3Fd.png?raw&v=1")
        let escaping = try ResourcePath(parsing: "/assets/img/..%2F..%2F.env")
        let escapingMatch = try #require(router.match(escaping))
        #expect(throws: PathError.self) {
            try escapingMatch.target.url(parameters: escapingMatch.parameters, remainder: escapingMatch.remainder, query: [])
        }
    }

    static let invalid: [(String, String)] = [
        ("http://h/users/:name", "\":name\" is not a parameter of the route"),
        ("http://h/users/:_", "binds nothing"),
        ("http://h/users/:1", "not a valid parameter name"),
        ("http://h/users/...", "needs a route pattern that ends with"),
        ("ftp://h/users/:id", "scheme must be http or https"),
        ("file:///etc/passwd", "scheme must be http or https"),
        ("127.0.0.1:8080/users/:id", "not a URL"),
        ("http:///users/:id", "host is missing"),
        ("http://h:0/users/:id", "port"),
        ("http://h:70000/users/:id", "port"),
        ("http://h:/users/:id", "port"),
        ("http://h:8o/users/:id", "port"),
        ("http://u:p@h/users/:id", "user information"),
        ("http://h/users/:id#x", "fragment"),
        ("http://[::1/users/:id", "closing"),
    ]

    @Test(arguments: invalid)
    func refusesInvalidTemplates(text: String, problem: String) {
        #expect {
            try UpstreamTemplate(text, for: users)
        } throws: { error in
            guard let error = error as? RoutePatternError else { return false }
            return error.message.contains(problem) && error.message.contains(text.debugDescription)
        }
    }

    @Test func remainderMustBeLast() throws {
        let error = try #require(throws: RoutePatternError.self) {
            try UpstreamTemplate("http://h/.../x", for: assets)
        }
        #expect(error.message.contains("must be the last path segment"))
        #expect(throws: Never.self) { try UpstreamTemplate("http://h/a/...", for: assets) }
    }
}
