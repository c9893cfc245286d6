import CHTTPParser

/// Reads HTTP/1.x requests off one connection's bytes, one at a time, never leniently.
///
/// Bytes are added as they arrive (``append(_:)``); ``next()`` gives the next whole request
/// (head and body), nil while it is not all there, or the error to answer before closing. A
/// head is first checked strictly (``HTTPHeadCheck``: smuggling forms, bare line ends,
/// folding, versions, CONNECT, the ``HTTPLimits``), then parsed by the C parser of Debian's
/// libhttp-parser (nodejs/http-parser), which gives the method, target, header fields and
/// keep-alive. The body is framed here, strictly: exactly `Content-Length` bytes, or a chunked
/// body (``ChunkedBody``: CRLFs checked, no trailer fields), within the request's own body
/// limit: ``HTTPLimits/bodyBytes``, or what ``bodyLimit`` says for its head. Pipelined
/// requests come out one by one, in order; the bytes after a request wait for the next call.
/// After an error every call returns it again. One connection's; not thread-safe.
public final class HTTPRequestParser {
    /// The bounds every request is held to.
    public let limits: HTTPLimits
    /// The largest body of the request whose head is given (its body empty), once that head
    /// has passed the check and before any of its body is read; nil: ``HTTPLimits/bodyBytes``
    /// for every request. Asked only of requests that have a body (a `Content-Length` above 0,
    /// or chunked).
    public let bodyLimit: ((HTTPRequest) -> Int)?
    private var buffer: [UInt8] = []
    /// Where the next unread byte of ``buffer`` is.
    private var offset = 0
    /// How far the search for the end of the head has looked, so each byte is looked at once.
    private var scanned = 0
    private var failure: HTTPParseError?
    /// The head of the request whose body is arriving, once it has passed the check, and the
    /// largest body it may have.
    private var pending: (head: Head, facts: HTTPHeadCheck.Facts, bodyLimit: Int)?
    /// The chunked body arriving, as far as it has been read (its framing is dropped from
    /// ``buffer`` as it is read, so that it never piles up nor is read twice).
    private var chunks: ChunkedBody?

    /// What the C parser read of a head.
    private struct Head {
        var method: String
        var target: String
        var minorVersion: Int
        var headers: [HTTPHeader]
        var keepAlive: Bool
    }

    /// What the C parser's callbacks gather.
    fileprivate final class Gathered {
        var target: [UInt8] = []
        var fields: [(name: [UInt8], value: [UInt8])] = []
        var readingValue = false
        var keepAlive = false
        var headersDone = false

        /// The gathering of the C parser `parser`.
        static func of(_ parser: UnsafeMutablePointer<http_parser>?) -> Gathered {
            Unmanaged<Gathered>.fromOpaque(parser!.pointee.data).takeUnretainedValue()
        }
    }

    /// A parser holding requests to `limits`, and each body to what `bodyLimit` says for its
    /// head when given (see ``bodyLimit``).
    public init(limits: HTTPLimits = HTTPLimits(), bodyLimit: ((HTTPRequest) -> Int)? = nil) {
        self.limits = limits
        self.bodyLimit = bodyLimit
    }

    /// Bytes received that ``next()`` has not consumed yet (a body still arriving included:
    /// of a chunked one, the data decoded so far and the bytes not read yet).
    public var bufferedBytes: Int { buffer.count - offset + (chunks?.body.count ?? 0) }

    /// Whether the head of the request under way has arrived and passed the check, and its
    /// body is still coming (when to answer `Expect: 100-continue`).
    public var isReadingBody: Bool { pending != nil }

    /// Whether the request whose body is coming asked for `100 Continue` first.
    public var expectsContinue: Bool { pending?.facts.expectsContinue ?? false }

    /// The most bytes one whole request may take: its head and its body (with room for chunk
    /// framing, which is dropped as it is read), the body within the limit of the request
    /// whose body is arriving, else within ``HTTPLimits/bodyBytes``. A connection need not read
    /// further ahead than this.
    public var largestRequestBytes: Int {
        let body = pending?.bodyLimit ?? limits.bodyBytes
        return limits.requestLineBytes + limits.headerBlockBytes + 4 + body + body / 8 + 4096
    }

    /// Adds bytes received from the connection.
    public func append(_ bytes: some Sequence<UInt8>) {
        if offset > 0 && offset == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            scanned -= offset
            offset = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole request; nil while more bytes are needed; the error to answer (then
    /// close) when the bytes are not a request this parser serves.
    public func next() -> Result<HTTPRequest, HTTPParseError>? {
        if let failure { return .failure(failure) }
        if pending == nil {
            switch readHead() {
            case nil: return nil
            case .failure(let error): return fail(error)
            case .success(let head): pending = head
            }
        }
        guard let (head, facts, bodyLimit) = pending else { return nil }
        let body: [UInt8]
        if facts.chunked {
            var reader = chunks ?? ChunkedBody(limit: bodyLimit)
            // The reader alone holds its body while it reads (appending then copies nothing).
            chunks = nil
            switch reader.read(buffer[offset...]) {
            case .incomplete(let consumed):
                offset += consumed
                chunks = reader
                scanned = max(scanned, offset)
                compact()
                return nil
            case .invalid(let status, let reason): return fail(HTTPParseError(status: status, reason))
            case .complete(let consumed):
                body = reader.body
                offset += consumed
            }
        } else if let length = facts.contentLength, length > 0 {
            guard bufferedBytes >= length else { return nil }
            body = Array(buffer[offset..<(offset + length)])
            offset += length
        } else {
            body = []
        }
        pending = nil
        scanned = max(scanned, offset)
        compact()
        return .success(HTTPRequest(
            method: head.method, target: head.target, minorVersion: head.minorVersion, headers: head.headers, body: body,
            keepAlive: head.keepAlive, expectsContinue: facts.expectsContinue))
    }

    /// Finds the next head, checks it, parses it and works out its body limit; nil while it has
    /// not all arrived.
    private func readHead() -> Result<(head: Head, facts: HTTPHeadCheck.Facts, bodyLimit: Int), HTTPParseError>? {
        // Empty lines before a request line are ignored (RFC 9112, 2.2).
        while bufferedBytes >= 2 && buffer[offset] == UInt8(ascii: "\r") && buffer[offset + 1] == UInt8(ascii: "\n") {
            offset += 2
        }
        scanned = max(scanned, offset)
        guard let end = endOfHead() else {
            // Not all there yet: refuse at once what can only grow past a limit.
            let pendingBytes = buffer[offset...]
            let firstLine = pendingBytes.firstIndex(of: UInt8(ascii: "\n")).map { $0 - offset } ?? pendingBytes.count
            if firstLine > limits.requestLineBytes + 1 {
                return .failure(HTTPParseError(status: 414, "the request line is over \(limits.requestLineBytes) bytes"))
            }
            if pendingBytes.count > limits.requestLineBytes + limits.headerBlockBytes + 4 {
                return .failure(HTTPParseError(status: 431, "the head is over \(limits.headerBlockBytes) bytes of header lines"))
            }
            return nil
        }
        let facts: HTTPHeadCheck.Facts
        switch HTTPHeadCheck.check(buffer[offset..<end], limits: limits) {
        case .failure(let error): return .failure(error)
        case .success(let checked): facts = checked
        }
        guard let head = parseHead(offset..<end) else {
            return .failure(HTTPParseError(status: 400, "the request head does not parse"))
        }
        let limit = facts.chunked || (facts.contentLength ?? 0) > 0 ? bodyLimit(of: head) : limits.bodyBytes
        // Refused before any of the body is read (nor a `100 Continue` sent for it).
        if let length = facts.contentLength, length > limit {
            return .failure(HTTPParseError(status: 413, "the body is \(length) bytes; the limit is \(limit)"))
        }
        offset = end
        scanned = end
        return .success((head, facts, limit))
    }

    /// The largest body the request of `head` may have (see ``bodyLimit``).
    private func bodyLimit(of head: Head) -> Int {
        guard let bodyLimit else { return limits.bodyBytes }
        return bodyLimit(HTTPRequest(
            method: head.method, target: head.target, minorVersion: head.minorVersion, headers: head.headers,
            keepAlive: head.keepAlive))
    }

    /// The index just past the CRLFCRLF that ends the head starting at ``offset``, looking at
    /// each byte once across calls; a bare LF also ends the search (the check refuses it).
    private func endOfHead() -> Int? {
        var index = max(scanned, offset)
        while index < buffer.count {
            if buffer[index] == UInt8(ascii: "\n") {
                if index > offset && buffer[index - 1] == UInt8(ascii: "\r") {
                    if index + 2 < buffer.count {
                        if buffer[index + 1] == UInt8(ascii: "\r") && buffer[index + 2] == UInt8(ascii: "\n") { return index + 3 }
                    } else {
                        // Not enough bytes to tell yet: look here again next time.
                        scanned = index
                        return nil
                    }
                } else {
                    // A bare LF: hand the head so far to the check, which refuses it.
                    return index + 1
                }
            }
            index += 1
        }
        scanned = index
        return nil
    }

    /// The C parser's reading of the head in `range` (checked already), or nil when it
    /// finds an error.
    private func parseHead(_ range: Range<Int>) -> Head? {
        var parser = http_parser()
        http_parser_init(&parser, HTTP_REQUEST)
        let gathered = Gathered()
        parser.data = Unmanaged.passUnretained(gathered).toOpaque()
        var settings = Self.settings
        _ = withExtendedLifetime(gathered) {
            buffer.withUnsafeBufferPointer { bytes in
                bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count) { base in
                    http_parser_execute(&parser, &settings, base + range.lowerBound, range.count)
                }
            }
        }
        let errno = http_errno(rawValue: monarch_http_errno(&parser))
        guard errno == HPE_OK || errno == HPE_PAUSED, gathered.headersDone else { return nil }
        let method = String(cString: http_method_str(http_method(rawValue: monarch_http_method(&parser))))
        let headers = gathered.fields.map { field in
            HTTPHeader(
                name: String(decoding: field.name, as: UTF8.self),
                value: String(decoding: field.value.trimmingSpacesAndTabs(), as: UTF8.self))
        }
        return Head(
            method: method, target: String(decoding: gathered.target, as: UTF8.self), minorVersion: Int(parser.http_minor),
            headers: headers, keepAlive: gathered.keepAlive)
    }

    private static let settings: http_parser_settings = {
        var settings = http_parser_settings()
        http_parser_settings_init(&settings)
        settings.on_url = { parser, data, length in
            Gathered.of(parser).target.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
            return 0
        }
        settings.on_header_field = { parser, data, length in
            let gathered = Gathered.of(parser)
            if gathered.readingValue || gathered.fields.isEmpty {
                gathered.fields.append(([], []))
                gathered.readingValue = false
            }
            gathered.fields[gathered.fields.count - 1].name.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
            return 0
        }
        settings.on_header_value = { parser, data, length in
            let gathered = Gathered.of(parser)
            gathered.readingValue = true
            if gathered.fields.isEmpty { gathered.fields.append(([], [])) }
            gathered.fields[gathered.fields.count - 1].value.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
            return 0
        }
        settings.on_headers_complete = { parser in
            let gathered = Gathered.of(parser)
            gathered.keepAlive = http_should_keep_alive(parser) != 0
            gathered.headersDone = true
            // The body is framed by the caller, strictly: the C parser stops at the head.
            http_parser_pause(parser, 1)
            return 0
        }
        return settings
    }()

    private func fail(_ error: HTTPParseError) -> Result<HTTPRequest, HTTPParseError> {
        failure = error
        pending = nil
        chunks = nil
        return .failure(error)
    }

    /// Drops the consumed bytes once they are most of the buffer; a large buffer with nothing
    /// left in it is let go (an idle connection keeps no megabyte of its last request).
    private func compact() {
        if offset == buffer.count && buffer.capacity > 64 << 10 {
            buffer = []
            scanned -= offset
            offset = 0
            return
        }
        guard offset > 4096 && offset * 2 > buffer.count else { return }
        buffer.removeFirst(offset)
        scanned -= offset
        offset = 0
    }
}

extension [UInt8] {
    /// The bytes without the spaces and tabs at either end.
    fileprivate func trimmingSpacesAndTabs() -> ArraySlice<UInt8> {
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else { return [] }
        return self[first...last]
    }
}
