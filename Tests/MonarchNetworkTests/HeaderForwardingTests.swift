import MonarchNetwork
import Testing

@Suite struct HeaderForwardingTests {
    @Test func hopByHopAndLibcurlOwnedHeadersAreNotForwarded() throws {
        let result = HeaderForwarding.requestHeaders([
            "Accept": "application/json", "Connection": "close, X-Secret-Hop", "X-Secret-Hop": "1", "Keep-Alive": "5",
            "Transfer-Encoding": "chunked", "TE": "trailers", "Upgrade": "h2c", "Host": "elsewhere", "Content-Length": "9",
            "If-None-Match": "\"v1\"",
        ])
        let forwarded = try result.get()
        #expect(forwarded.map(\.name) == ["Accept", "If-None-Match"])
    }

    @Test(arguments: ["a\r\nX-Injected: 1", "a\nb", "a\u{0}b"])
    func valuesWithLineBreaksAreRefused(value: String) {
        #expect(throws: HeaderError.self) { try HeaderForwarding.requestHeaders(["X-Test": value]).get() }
    }

    @Test(arguments: ["", "Bad Name", "Bad:Name", "Naïve"])
    func namesThatAreNotTokensAreRefused(name: String) {
        #expect(throws: HeaderError.self) { try HeaderForwarding.requestHeaders([name: "v"]).get() }
    }

    @Test("A Connection value lists field names, trimmed and lowercase; the fields it names do not reach the client")
    func connectionOptions() {
        #expect(HeaderForwarding.connectionOptions(" close ,X-Secret-Hop,,\tUpgrade ") == ["close", "x-secret-hop", "upgrade"])
        #expect(HeaderForwarding.connectionOptions(nil) == [])
        #expect(HeaderForwarding.connectionOptions(" , ") == [])
        let headers = HTTPHeaders([("Content-Type", "text/plain"), ("Connection", "keep-alive, X-Hop"), ("X-Hop", "1"), ("X-Kept", "2")])
        #expect(HeaderForwarding.responseHeaders(headers, bodyLength: 1) == ["content-type": "text/plain", "x-kept": "2"])
    }

    @Test func decodedBodiesLoseTheirContentEncoding() {
        let headers = HTTPHeaders([
            ("Content-Type", "text/plain"), ("Content-Encoding", "gzip"), ("Content-Length", "31"),
            ("Transfer-Encoding", "chunked"), ("Connection", "keep-alive"),
        ])
        #expect(HeaderForwarding.responseHeaders(headers, bodyLength: 3600) == [
            "content-type": "text/plain", "content-length": "3600",
        ])
        #expect(HeaderForwarding.responseHeaders(headers, bodyLength: nil) == ["content-type": "text/plain"])
    }

    @Test func responseHeaderNamesAreLowercaseWhateverTheUpstreamSent() {
        let headers = HTTPHeaders([("Content-type", "text/html"), ("ETag", "\"v1\""), ("x-MiXeD", "1"), ("X-Mixed", "2")])
        #expect(HeaderForwarding.responseHeaders(headers, bodyLength: 5) == [
            "content-type": "text/html", "etag": "\"v1\"", "x-mixed": "1, 2",
        ])
    }

    @Test func everyHopByHopResponseHeaderIsDropped() {
        let hopByHop = [
            "Connection", "Keep-Alive", "Proxy-Connection", "TE", "Trailer", "Transfer-Encoding", "Upgrade",
            "Proxy-Authenticate", "Proxy-Authorization",
        ]
        let headers = HTTPHeaders(hopByHop.map { ($0, "x") } + [("X-Kept", "1"), ("Trailers", "2"), ("Tea", "3")])
        #expect(HeaderForwarding.responseHeaders(headers, bodyLength: 1) == ["x-kept": "1", "trailers": "2", "tea": "3"])
    }

    @Test("Past the fields found by a walk through their names, they are found, joined and removed alike")
    func manyHeadersBehaveAsFew() {
        var headers = HTTPHeaders((0..<40).map { ("X-H\($0)", "\($0)") })
        headers.add("x-h3", "again")
        headers.add("X-H39", "last")
        #expect(headers["X-H3"] == "3, again")
        #expect(headers["x-h39"] == "39, last")
        headers["X-H0"] = nil
        #expect(headers["x-h0"] == nil)
        #expect(headers["x-h1"] == "1")
        #expect(headers["X-h20"] == "20")
        #expect(headers.fields.count == 39)
        headers["X-New"] = "n"
        #expect(headers.fields.last?.name == "X-New")
        #expect(headers["x-new"] == "n")
        #expect(HeaderForwarding.responseHeaders(headers, bodyLength: 1).count == 40)
    }

    @Test func repeatedResponseHeadersAreJoinedUnderTheFirstSpelling() {
        var headers = HTTPHeaders([("Vary", "Accept"), ("vary", "Origin"), ("X-One", "1")])
        #expect(headers["VARY"] == "Accept, Origin")
        #expect(headers.dictionary == ["Vary": "Accept, Origin", "X-One": "1"])
        headers["vary"] = nil
        #expect(headers.dictionary == ["X-One": "1"])
        #expect(headers["x-one"] == "1")
    }
}
