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
        #expect(collect(["HTTP/1.1 200 OK\r\n", "Content-Length: 12x\r\n"]).contentLength == nil)
        #expect(collect(["HTTP/1.1 200 OK\r\n", "Content-Length: \r\n"]).contentLength == nil)
        #expect(collect(["HTTP/1.1 200 OK\r\n", "Content-Length: 99999999999999999999\r\n"]).contentLength == nil)
    }

    @Test("Content-Length is read from the bytes as Int(_:) reads the value, whatever the name's case")
    func contentLengthIsReadAsIntReadsIt() {
        for value in ["0", "12", "+12", "-5", "9223372036854775807", "9223372036854775808", "007"] {
            let collector = collect(["HTTP/1.1 200 OK\r\n", "CONTENT-length:  \(value) \r\n"])
            #expect(collector.contentLength == Int(value), "for \(value)")
            #expect(collector.headers["content-length"] == value)
        }
    }

    @Test("A name's lowercase spelling is made from its bytes: mixed, lowercase and long names are all found")
    func namesAreFoundWhateverTheirCase() {
        let collector = collect([
            "HTTP/1.1 200 OK\r\n", "X-Some-Rather-Long-Header-Name: 1\r\n", "x-lower: 2\r\n", "X-UPPER: 3\r\n",
            "x-some-rather-long-header-name: 4\r\n",
        ])
        #expect(collector.headers["x-some-rather-long-header-name"] == "1, 4")
        #expect(collector.headers["X-Lower"] == "2")
        #expect(collector.headers["x-upper"] == "3")
        #expect(collector.headers.fields.map(\.name) == ["X-Some-Rather-Long-Header-Name", "x-lower", "X-UPPER"])
    }
}
