import MonarchHTTP
import Testing

@Suite struct HTTPRequestHostTests {
    private func host(_ value: String?, target: String = "/a") -> String? {
        HTTPRequest(method: "GET", target: target, headers: value.map { [HTTPHeader(name: "Host", value: $0)] } ?? []).host
    }

    @Test(
        "Host is lowercased, its port, userinfo and one trailing dot dropped; an IPv6 literal keeps its brackets",
        arguments: [
            ("example.com", "example.com"), ("Example.COM", "example.com"), ("example.com:8080", "example.com"),
            ("example.com.", "example.com"), ("Example.com.:80", "example.com"), ("127.0.0.1:8080", "127.0.0.1"),
            ("[::1]", "[::1]"), ("[::1]:8080", "[::1]"), ("[FE80::1]:80", "[fe80::1]"), ("example.com:", "example.com"),
        ])
    func normalized(value: String, expected: String) {
        #expect(host(value) == expected)
    }

    @Test("Nothing that is not a host: no Host, an empty one, a port of letters, colons outside brackets, an open bracket")
    func notAHost() {
        #expect(host(nil) == nil)
        #expect(host("") == nil)
        #expect(host(":80") == nil)
        #expect(host("example.com:http") == nil)
        #expect(host("::1") == nil)
        #expect(host("[::1") == nil)
        #expect(host("[::1]x") == nil)
    }

    @Test("An absolute-form target's authority overrides Host (RFC 9112 §3.2.2)")
    func absoluteForm() {
        #expect(host("other.test", target: "http://User@Example.com:8080/a?b") == "example.com")
        #expect(host("other.test", target: "HTTPS://example.com") == "example.com")
        #expect(host("other.test", target: "/http://example.com/a") == "other.test")
        #expect(host(nil, target: "http://example.com?x") == "example.com")
    }
}
