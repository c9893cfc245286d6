import MonarchNetwork
import Testing

@Suite struct UpstreamAllowlistTests {
    @Test func entriesParseWithIPv6InBrackets() throws {
        let allowlist = try UpstreamAllowlist(parsing: ["127.0.0.1:8080", "[::1]:8080", "API.Example.com:443"])
        #expect(allowlist.origins == [
            UpstreamOrigin(host: "127.0.0.1", port: 8080), UpstreamOrigin(host: "::1", port: 8080),
            UpstreamOrigin(host: "api.example.com", port: 443),
        ])
        #expect(allowlist.description == "allowed: 127.0.0.1:8080, [::1]:8080, api.example.com:443")
    }

    @Test(arguments: ["127.0.0.1", "127.0.0.1:", ":80", "host:0", "host:70000", "::1:80", "[::1]80", "host:http"])
    func invalidEntriesAreRejected(entry: String) {
        #expect(throws: UpstreamAllowlistError.self) { try UpstreamAllowlist(parsing: [entry]) }
    }

    @Test func defaultPortsComeFromTheScheme() throws {
        let allowlist = try UpstreamAllowlist(parsing: ["api.example.com:443", "plain.example.com:80"])
        #expect(allowlist.allows(try UpstreamURL(parsing: "https://api.example.com/v1/users?id=1")))
        #expect(allowlist.allows(try UpstreamURL(parsing: "http://PLAIN.example.com/")))
        #expect(!allowlist.allows(try UpstreamURL(parsing: "http://api.example.com/")), "port 80 is not 443")
        #expect(!allowlist.allows(try UpstreamURL(parsing: "https://api.example.com:8443/")))
    }

    @Test func portsAreTheURLsOrTheSchemesDefault() throws {
        #expect(try UpstreamURL(parsing: "http://h.example/").port == 80)
        #expect(try UpstreamURL(parsing: "https://h.example/").port == 443)
        #expect(try UpstreamURL(parsing: "http://h.example:1/").port == 1)
        #expect(try UpstreamURL(parsing: "http://h.example:8080/x?y=1").port == 8080)
        #expect(try UpstreamURL(parsing: "http://[::1]:65535/").port == 65535)
    }

    @Test func ipv6HostsMatchTheirBracketedEntries() throws {
        let allowlist = try UpstreamAllowlist(parsing: ["[::1]:8080"])
        #expect(allowlist.allows(try UpstreamURL(parsing: "http://[::1]:8080/x")))
        #expect(!allowlist.allows(try UpstreamURL(parsing: "http://127.0.0.1:8080/x")))
    }

    @Test func userinfoIsNotTheHost() throws {
        let allowlist = try UpstreamAllowlist(parsing: ["127.0.0.1:8080"])
        let url = try UpstreamURL(parsing: "http://127.0.0.1:8080@evil.example.com/")
        #expect(url.host == "evil.example.com")
        #expect(!allowlist.allows(url))
        #expect(allowlist.refusal(of: url)?.contains("evil.example.com:80") == true)
    }

    @Test(arguments: ["file:///etc/passwd", "ftp://127.0.0.1:8080/", "gopher://127.0.0.1:8080/", "dict://127.0.0.1:8080/"])
    func onlyHttpAndHttpsAreEverAllowed(url: String) throws {
        let allowlist = try UpstreamAllowlist(parsing: ["127.0.0.1:8080"])
        let parsed = try UpstreamURL(parsing: url)
        #expect(!allowlist.allows(parsed))
        #expect(allowlist.refusal(of: parsed)?.hasPrefix("only http and https") == true)
    }

    @Test func relativeOrMalformedURLsDoNotParse() {
        #expect(throws: UpstreamURLError.self) { try UpstreamURL(parsing: "/users/1") }
        #expect(throws: UpstreamURLError.self) { try UpstreamURL(parsing: "http://exa mple.com/") }
    }

    @Test func anEmptyAllowlistAllowsNothing() throws {
        let allowlist = try UpstreamAllowlist(parsing: [])
        #expect(!allowlist.allows(try UpstreamURL(parsing: "http://127.0.0.1:80/")))
        #expect(allowlist.description == "nothing allowed")
    }
}
