import MonarchHTTP
import Testing

/// `text` fed to a fresh parser at once: every request it gives, then the error if any.
private func parse(_ text: String, limits: HTTPLimits = HTTPLimits()) -> (requests: [HTTPRequest], error: HTTPParseError?) {
    let parser = HTTPRequestParser(limits: limits)
    parser.append(Array(text.utf8))
    var requests: [HTTPRequest] = []
    while let next = parser.next() {
        switch next {
        case .success(let request): requests.append(request)
        case .failure(let error): return (requests, error)
        }
    }
    return (requests, nil)
}

/// The status `text` is refused with; nil when it is not refused.
private func refusal(_ text: String, limits: HTTPLimits = HTTPLimits()) -> Int? {
    parse(text, limits: limits).error?.status
}

/// The status `text` is refused with when it arrives one byte at a time; nil when it is not.
private func refusalByteByByte(_ text: String, limits: HTTPLimits = HTTPLimits()) -> Int? {
    let parser = HTTPRequestParser(limits: limits)
    for byte in text.utf8 {
        parser.append([byte])
        while let next = parser.next() {
            if case .failure(let error) = next { return error.status }
        }
    }
    return nil
}

@Suite struct HTTPRequestParserTests {
    @Test func aGetIsReadWithItsHeadersAndKeepsTheConnection() throws {
        let (requests, error) = parse("GET /docs/a.txt?x=1 HTTP/1.1\r\nHost: example\r\nAccept:  text/plain \r\n\r\n")
        #expect(error == nil)
        let request = try #require(requests.first)
        #expect(request.method == "GET")
        #expect(request.target == "/docs/a.txt?x=1")
        #expect(request.minorVersion == 1)
        #expect(request.value(of: "accept") == "text/plain")
        #expect(request.keepAlive)
        #expect(request.body.isEmpty)
    }

    @Test func connectionCloseAndHTTP10DoNotKeepTheConnection() throws {
        #expect(parse("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n").requests.first?.keepAlive == false)
        #expect(parse("GET / HTTP/1.0\r\n\r\n").requests.first?.keepAlive == false)
        #expect(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").requests.first?.keepAlive == true)
    }

    @Test func pipelinedRequestsComeOutOneByOneInOrder() {
        let text = "GET /a HTTP/1.1\r\nHost: h\r\n\r\nPOST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nxyzGET /c HTTP/1.1\r\nHost: h\r\n\r\n"
        let (requests, error) = parse(text)
        #expect(error == nil)
        #expect(requests.map(\.target) == ["/a", "/b", "/c"])
        #expect(requests[1].body == Array("xyz".utf8))
    }

    @Test func bytesArrivingOneByOneMakeTheSameRequests() {
        let text = "PUT /k HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\nGET /n HTTP/1.1\r\nHost: h\r\n\r\n"
        let parser = HTTPRequestParser()
        var requests: [HTTPRequest] = []
        for byte in text.utf8 {
            parser.append([byte])
            while case .success(let request)? = parser.next() { requests.append(request) }
        }
        #expect(requests.map(\.method) == ["PUT", "GET"])
        #expect(requests.first?.body == Array("abcde".utf8))
    }

    @Test func expectContinueIsSeen() {
        let text = "POST /u HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"
        let parser = HTTPRequestParser()
        parser.append(Array(text.utf8))
        #expect(parser.next() == nil)
        #expect(parser.isReadingBody)
        parser.append(Array("ok".utf8))
        guard case .success(let request)? = parser.next() else {
            Issue.record("no request")
            return
        }
        #expect(request.expectsContinue)
        #expect(refusal("GET / HTTP/1.1\r\nHost: h\r\nExpect: magic\r\n\r\n") == 417)
    }

    @Test(arguments: [
        ("Content-Length beside Transfer-Encoding",
         "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        ("two Content-Lengths", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc"),
        ("a Content-Length that is not digits", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +3\r\n\r\nabc"),
        ("a bad chunk size", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"),
        ("a bare LF", "GET / HTTP/1.1\nHost: h\n\n"),
        ("a bare LF in a header", "GET / HTTP/1.1\r\nHost: h\nX: y\r\n\r\n"),
        ("a bare CR", "GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n"),
        ("obsolete line folding", "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n"),
        ("HTTP/0.9", "GET /\r\n\r\n"),
        ("a control character in the request line", "GET /a\u{01}b HTTP/1.1\r\nHost: h\r\n\r\n"),
        ("a control character in a header", "GET / HTTP/1.1\r\nHost: h\r\nX: a\u{00}b\r\n\r\n"),
        ("an encoded CR LF in the path", "GET /a%0d%0aSet-Cookie:x HTTP/1.1\r\nHost: h\r\n\r\n"),
        ("an encoded NUL in the path", "GET /a%00b HTTP/1.1\r\nHost: h\r\n\r\n"),
        ("whitespace before a colon", "GET / HTTP/1.1\r\nHost: h\r\nContent-Length : 0\r\n\r\n"),
        ("no Host in HTTP/1.1", "GET / HTTP/1.1\r\nX: y\r\n\r\n"),
        ("two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
        ("Transfer-Encoding in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        ("two spaces in the request line", "GET  / HTTP/1.1\r\nHost: h\r\n\r\n"),
        ("chunk data not followed by CRLF", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXY0\r\n\r\n"),
        ("a bare LF after a chunk size", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n"),
        ("trailer fields", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nAuthorization: x\r\n\r\n"),
        ("a chunk extension with a space", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5; a=b\r\nhello\r\n0\r\n\r\n"),
    ])
    func smugglingFormsAreRefusedWith400(_ form: String, _ text: String) {
        #expect(refusal(text) == 400, "\(form)")
        #expect(refusalByteByByte(text) == 400, "\(form), one byte at a time")
    }

    @Test func aChunkedBodyIsReadAsItArrivesAndItsFramingDoesNotPileUp() throws {
        // 4,000 one-byte chunks: 24,000 bytes of framing, more than one request's read-ahead.
        var limits = HTTPLimits()
        limits.requestLineBytes = 64
        limits.headerBlockBytes = 1024
        limits.bodyBytes = 4096
        let data = (0..<4000).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        var text = Array("POST /u HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        for byte in data { text += Array("1\r\n".utf8) + [byte] + Array("\r\n".utf8) }
        text += Array("0\r\n\r\nGET /n HTTP/1.1\r\nHost: h\r\n\r\n".utf8)
        #expect(text.count > HTTPRequestParser(limits: limits).largestRequestBytes)
        let parser = HTTPRequestParser(limits: limits)
        var requests: [HTTPRequest] = []
        var most = 0
        var start = 0
        while start < text.count {
            // Pieces of 7 bytes: size lines, data and CRLFs split every way.
            parser.append(text[start..<min(start + 7, text.count)])
            start += 7
            while let next = parser.next() {
                guard case .success(let request) = next else {
                    Issue.record("refused: \(next)")
                    return
                }
                requests.append(request)
            }
            most = max(most, parser.bufferedBytes)
        }
        #expect(requests.map(\.target) == ["/u", "/n"])
        #expect(requests.first?.body == data)
        // What is held is the decoded data and a piece, never the framing: the session reading
        // only while this is under largestRequestBytes never stops short of a body within bodyBytes.
        #expect(most <= data.count + 7)
        #expect(most < parser.largestRequestBytes)
    }

    @Test func aConnectIsRefusedAndItsBodyIsNeverReadAsARequest() {
        let text = "CONNECT a:443 HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\nGET /secret HTTP/1.1\r\nHost: x\r\n\r\n"
        let (requests, error) = parse(text)
        #expect(requests.isEmpty)
        #expect(error?.status == 501)
    }

    @Test func anUpgradeRequestIsAnOrdinaryRequestAndItsBodyIsItsOwn() {
        let text = "POST /u HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: websocket\r\nContent-Length: 5\r\n\r\nhello"
            + "GET /n HTTP/1.1\r\nHost: x\r\n\r\n"
        let (requests, error) = parse(text)
        #expect(error == nil)
        #expect(requests.map(\.target) == ["/u", "/n"])
        #expect(requests.first?.body == Array("hello".utf8))
    }

    @Test func chunkExtensionsOfTokensAreAccepted() {
        let text = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhello\r\n0\r\n\r\n"
        #expect(parse(text).requests.first?.body == Array("hello".utf8))
    }

    @Test func otherVersionsAndCodingsHaveTheirOwnStatuses() {
        #expect(refusal("GET / HTTP/2.0\r\nHost: h\r\n\r\n") == 505)
        #expect(refusal("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n") == 501)
    }

    @Test func theLimitsHaveTheirStatuses() {
        var limits = HTTPLimits()
        limits.requestLineBytes = 100
        limits.headerBlockBytes = 200
        limits.headerCount = 3
        limits.bodyBytes = 10
        #expect(refusal("GET /" + String(repeating: "a", count: 120) + " HTTP/1.1\r\nHost: h\r\n\r\n", limits: limits) == 414)
        // Still arriving, but already past the limit: refused without waiting for the rest.
        #expect(refusal("GET /" + String(repeating: "a", count: 120), limits: limits) == 414)
        #expect(refusal("GET / HTTP/1.1\r\nHost: h\r\nX: " + String(repeating: "v", count: 250) + "\r\n\r\n", limits: limits) == 431)
        #expect(refusal("GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", limits: limits) == 431)
        #expect(refusal("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n", limits: limits) == 413)
        #expect(refusal("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nb\r\n" + String(repeating: "x", count: 11)
            + "\r\n0\r\n\r\n", limits: limits) == 413)
    }

    @Test func anErrorStays() {
        let parser = HTTPRequestParser()
        parser.append(Array("GET / HTTP/1.1\nHost: h\n\n".utf8))
        #expect(parser.next().map { if case .failure(let error) = $0 { error.status } else { 0 } } == 400)
        parser.append(Array("GET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        #expect(parser.next().map { if case .failure = $0 { true } else { false } } == true)
    }

    @Test func emptyLinesBeforeARequestAreSkipped() {
        #expect(parse("\r\n\r\nGET /x HTTP/1.1\r\nHost: h\r\n\r\n").requests.map(\.target) == ["/x"])
    }
}

@Suite struct HTTPResponseHeadTests {
    @Test func theHeadIsWrittenWithItsReasonAndUnsafeHeadersLeftOut() {
        let head = HTTPResponseHead(status: 404, headers: [
            HTTPHeader(name: "Content-Length", value: "3"),
            HTTPHeader(name: "X-Evil", value: "a\r\nSet-Cookie: x=1"),
            HTTPHeader(name: "Bad Name", value: "v"),
        ])
        #expect(String(decoding: head.bytes, as: UTF8.self) == "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\n")
    }
}
