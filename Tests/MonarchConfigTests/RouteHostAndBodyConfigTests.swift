import MonarchConfig
import MonarchWire
import Testing

@Suite("Route host and httpBody")
struct RouteHostAndBodyConfigTests {
    @Test("host and httpBody parse; a wildcard host too; both are absent by default")
    func parses() throws {
        let configuration = try Configuration.parse(yaml: validHead + """
            routes:
              - match: "..."
                host: example.com
                domain: static
                httpBody: 4MB
              - match: "..."
                host: "*.example.com"
                domain: static
                httpBody: 0
              - match: "..."
                domain: static

            """, baseDirectory: "/srv")
        #expect(configuration.routes.map(\.host) == ["example.com", "*.example.com", nil])
        #expect(configuration.routes.map(\.httpBodyBytes) == [4 << 20, 0, nil])
    }

    @Test(
        "A host that is not a lowercase DNS name (or *. and one) is refused at its line, saying why",
        arguments: [
            ("Example.com", "lowercase"), ("example.com:8080", "port"), ("exa mple.com", "a lowercase letter"),
            ("a.*.com", "leading"), ("example.com.", "dot"), ("\"\"", "empty"),
        ])
    func badHost(text: String, problem: String) {
        let error = parseError(validHead + """
            routes:
              - match: "..."
                domain: static
              - match: "..."
                domain: static
                host: \(text)

            """)
        #expect(error?.keyPath == "routes[1].host")
        #expect(error?.line == 8)
        #expect(error?.description.hasPrefix("test.yml:8: routes[1].host: host ") == true, "\(String(describing: error))")
        #expect(error?.problem.contains(problem) == true, "\(String(describing: error))")
    }

    @Test("A host that is not a string is refused")
    func hostNotAString() {
        let error = parseError(validHead + """
            routes:
              - {match: "...", domain: static, host: [a.test]}

            """)
        #expect(error?.keyPath == "routes[0].host")
        #expect(error?.problem.contains("expected a host name") == true, "\(String(describing: error))")
    }

    @Test("httpBody may be as large as a frame of limits.maxFrame carries in base64, not a byte more; a bad size is refused")
    func bodyBound() throws {
        let largest = FrameBodyRoom.largestBody(fitting: 16 << 20)
        #expect(largest == 12_533_760)
        func routes(_ size: String, maxFrame: String? = nil) -> String {
            validHead + """
                routes:
                  - {match: "...", domain: static, httpBody: \(size)}
                \(maxFrame.map { "limits: {maxFrame: \($0)}" } ?? "")

                """
        }
        let fits = try Configuration.parse(yaml: routes("\(largest)"), baseDirectory: "/srv")
        #expect(fits.routes[0].httpBodyBytes == largest)
        let over = parseError(routes("\(largest + 1)"))
        #expect(over?.keyPath == "routes[0].httpBody")
        #expect(over?.line == 4)
        #expect(over?.problem.contains("over the \(largest)") == true, "\(String(describing: over))")
        #expect(over?.problem.contains("limits.maxFrame") == true, "\(String(describing: over))")
        // A smaller frame lowers the bound; a larger one raises it.
        #expect(parseError(routes("1MB", maxFrame: "1MB"))?.keyPath == "routes[0].httpBody")
        let raised = try Configuration.parse(yaml: routes("32MB", maxFrame: "64MB"), baseDirectory: "/srv")
        #expect(raised.routes[0].httpBodyBytes == 32 << 20)
        #expect(parseError(routes("lots"))?.problem.contains("expected a byte size") == true)
    }
}
