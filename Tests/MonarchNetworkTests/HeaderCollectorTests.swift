@testable import MonarchNetwork
import Testing

@Suite struct HeaderCollectorTests {
    private func collect(_ lines: [String]) -> HeaderCollector {
        var collector = HeaderCollector()
        for line in lines {
            Array(line.utf8).withUnsafeBytes { _ = collector.take($0) }
        }
        return collector
    }

    @Test func onlyTheLastResponsesHeadersAreKept() {
        let collector = collect([
            "HTTP/1.1 100 Continue\r\n", "X-Interim: yes\r\n", "\r\n",
            "HTTP/1.1 201 Created\r\n", "Content-Type: text/plain\r\n", "Content-Length: 12\r\n", "\r\n",
        ])
        #expect(collector.status == 201)
        #expect(collector.headers["x-interim"] == nil)
        #expect(collector.headers.dictionary == ["Content-Type": "text/plain", "Content-Length": "12"])
        #expect(collector.contentLength == 12)
    }

    @Test func http2StatusLinesAndRepeatedFieldsAreRead() {
        let collector = collect(["HTTP/2 304\r\n", "set-cookie: a=1\r\n", "set-cookie: b=2\r\n", "etag:  \"v1\" \r\n", "\r\n"])
        #expect(collector.status == 304)
        #expect(collector.headers["Set-Cookie"] == "a=1, b=2")
        #expect(collector.headers["ETag"] == "\"v1\"")
    }

    @Test func anInvalidContentLengthIsIgnored() {
        #expect(collect(["HTTP/1.1 200 OK\r\n", "Content-Length: lots\r\n"]).contentLength == nil)
    }
}
