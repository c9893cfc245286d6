import MonarchConfig
import Testing

@Suite("Route sharing options (public, headers)")
struct RouteSharingConfigTests {
    @Test("public and headers parse; header names are lowercased and deduplicated; defaults are off and empty")
    func parses() throws {
        let configuration = try Configuration.parse(yaml: validHead + """
            routes:
              - match: docs/...
                domain: static
                public: true
                headers: [X-Tenant, x-tenant, Traceparent]
              - match: other/...
                domain: static

            """, baseDirectory: "/srv")
        #expect(configuration.routes[0].isPublic)
        #expect(configuration.routes[0].headers == ["x-tenant", "traceparent"])
        #expect(!configuration.routes[1].isPublic)
        #expect(configuration.routes[1].headers.isEmpty)
    }

    @Test("a header name that is not an HTTP token, or public that is not a boolean, is refused")
    func refusals() {
        let badName = parseError(validHead + """
            routes:
              - match: docs/...
                domain: static
                headers: ["X Tenant"]

            """)
        #expect(badName?.keyPath == "routes[0].headers[0]")
        let badPublic = parseError(validHead + """
            routes:
              - match: docs/...
                domain: static
                public: sometimes

            """)
        #expect(badPublic?.keyPath == "routes[0].public")
    }
}
