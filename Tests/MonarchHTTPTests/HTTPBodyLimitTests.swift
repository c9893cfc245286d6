import MonarchHTTP
import Testing

/// A parser whose `bodyLimit` gives each request a limit by its target and `Host`.
@Suite struct HTTPBodyLimitTests {
    /// `/big` may have 64 bytes, anything for `small.test` 4; the rest `limits.bodyBytes` (16).
    private func parser(asked: @escaping (String) -> Void = { _ in }) -> HTTPRequestParser {
        var limits = HTTPLimits()
        limits.bodyBytes = 16
        return HTTPRequestParser(limits: limits) { head in
            asked(head.target)
            if head.host == "small.test" { return 4 }
            return head.target == "/big" ? 64 : 16
        }
    }

    private func outcome(_ text: String, parser: HTTPRequestParser) -> Result<HTTPRequest, HTTPParseError>? {
        parser.append(Array(text.utf8))
        return parser.next()
    }

    private func status(_ outcome: Result<HTTPRequest, HTTPParseError>?) -> Int? {
        if case .failure(let error)? = outcome { error.status } else { nil }
    }

    private func body(_ outcome: Result<HTTPRequest, HTTPParseError>?) -> Int? {
        if case .success(let request)? = outcome { request.body.count } else { nil }
    }

    @Test("A request's own limit raises or lowers the listener's, for Content-Length and chunked bodies alike")
    func raisedAndLowered() {
        let bytes = String(repeating: "x", count: 40)
        #expect(body(outcome("POST /big HTTP/1.1\r\nHost: h\r\nContent-Length: 40\r\n\r\n" + bytes, parser: parser())) == 40)
        #expect(status(outcome("POST /other HTTP/1.1\r\nHost: h\r\nContent-Length: 40\r\n\r\n" + bytes, parser: parser())) == 413)
        #expect(body(outcome("POST /big HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n28\r\n" + bytes + "\r\n0\r\n\r\n",
            parser: parser())) == 40)
        #expect(status(outcome("POST /other HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n28\r\n" + bytes + "\r\n0\r\n\r\n",
            parser: parser())) == 413)
        #expect(status(outcome("POST /big HTTP/1.1\r\nHost: Small.Test:80\r\nContent-Length: 5\r\n\r\nhello", parser: parser())) == 413)
        #expect(body(outcome("POST /big HTTP/1.1\r\nHost: small.test\r\nContent-Length: 4\r\n\r\nhell", parser: parser())) == 4)
    }

    @Test("A Content-Length over the request's limit is refused once the head is there, before any body (nor a 100 Continue)")
    func refusedBeforeTheBody() {
        let parser = parser()
        let result = outcome("POST /other HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 17\r\n\r\n", parser: parser)
        #expect(status(result) == 413)
        #expect(!parser.isReadingBody)
    }

    @Test("Requests without a body are not asked about; the read-ahead follows the limit of the body arriving")
    func readAhead() {
        var asked: [String] = []
        let parser = parser { asked.append($0) }
        let plain = parser.largestRequestBytes
        #expect(body(outcome("GET /big HTTP/1.1\r\nHost: h\r\n\r\n", parser: parser)) == 0)
        #expect(body(outcome("POST /big HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", parser: parser)) == 0)
        #expect(asked.isEmpty)
        #expect(outcome("POST /big HTTP/1.1\r\nHost: h\r\nContent-Length: 64\r\n\r\n", parser: parser) == nil)
        #expect(asked == ["/big"])
        #expect(parser.isReadingBody)
        #expect(parser.largestRequestBytes == plain + 48 + 48 / 8, "64 bytes of body ahead instead of 16")
        #expect(body(outcome(String(repeating: "y", count: 64), parser: parser)) == 64)
        #expect(parser.largestRequestBytes == plain)
    }
}
