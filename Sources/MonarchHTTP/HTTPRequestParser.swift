import CHTTPParser

/// Reads HTTP/1.x requests off one connection's bytes, one at a time, never leniently.
///
/// Bytes are added as they arrive (``append(_:)``); ``next()`` gives the next whole request
/// (head and body), nil while it is not all there, or the error to answer before closing. A
/// head is first checked strictly (``HTTPHeadCheck``: smuggling forms, bare line ends,
/// folding, versions, the ``HTTPLimits``), then parsed by the C parser of Debian's
/// libhttp-parser (nodejs/http-parser, strict), which also de-chunks the body. Pipelined
/// requests come out one by one, in order: the parser stops at the end of each, and the bytes
/// after it wait for the next call. After an error every call returns it again. One
/// connection's; not thread-safe.
public final class HTTPRequestParser {
    /// The bounds every request is held to.
    public let limits: HTTPLimits
    private var buffer: [UInt8] = []
    /// Where the next unread byte of ``buffer`` is.
    private var offset = 0
    private var failure: HTTPParseError?
    /// The request being parsed, once its head has passed the check.
    private var current: Parse?

    /// What is gathered of one request while the C parser reads it.
    fileprivate final class Parse {
        var parser = http_parser()
        var target: [UInt8] = []
        var fields: [(name: [UInt8], value: [UInt8])] = []
        var readingValue = false
        var body: [UInt8] = []
        var bodyLimit: Int
        var bodyTooLarge = false
        var keepAlive = false
        var complete = false

        init(bodyLimit: Int) {
            self.bodyLimit = bodyLimit
            http_parser_init(&parser, HTTP_REQUEST)
        }

        /// The parse whose C parser is `parser`.
        static func of(_ parser: UnsafeMutablePointer<http_parser>?) -> Parse {
            Unmanaged<Parse>.fromOpaque(parser!.pointee.data).takeUnretainedValue()
        }
    }

    /// A parser holding requests to `limits`.
    public init(limits: HTTPLimits = HTTPLimits()) {
        self.limits = limits
    }

    /// Bytes received that ``next()`` has not consumed yet.
    public var bufferedBytes: Int { buffer.count - offset }

    /// Whether the head of the request under way has arrived and passed the check, and its
    /// body is still coming (when to answer `Expect: 100-continue`).
    public var isReadingBody: Bool { current != nil }

    /// Whether the request whose body is coming asked for `100 Continue` first.
    public private(set) var expectsContinue = false

    /// Adds bytes received from the connection.
    public func append(_ bytes: some Sequence<UInt8>) {
        if offset > 0 && offset == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            offset = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole request; nil while more bytes are needed; the error to answer (then
    /// close) when the bytes are not a request this parser serves.
    public func next() -> Result<HTTPRequest, HTTPParseError>? {
        if let failure { return .failure(failure) }
        if current == nil {
            switch checkHead() {
            case nil: return nil
            case .failure(let error): return fail(error)
            case .success(let facts):
                current = Parse(bodyLimit: limits.bodyBytes)
                expectsContinue = facts.expectsContinue
            }
        }
        guard let parse = current else { return nil }
        let consumed = execute(parse)
        offset += consumed
        let errno = http_errno(rawValue: monarch_http_errno(&parse.parser))
        if parse.bodyTooLarge {
            return fail(HTTPParseError(status: 413, "the body is over \(limits.bodyBytes) bytes"))
        }
        if errno != HPE_OK && errno != HPE_PAUSED {
            return fail(HTTPParseError(status: 400, "the request does not parse: \(String(cString: http_errno_description(errno)))"))
        }
        guard parse.complete else { return nil }
        current = nil
        expectsContinue = false
        compact()
        return .success(request(from: parse))
    }

    /// Finds the end of the next head and checks it; nil while it has not all arrived.
    private func checkHead() -> Result<HTTPHeadCheck.Facts, HTTPParseError>? {
        // Empty lines before a request line are ignored (RFC 9112, 2.2).
        while bufferedBytes >= 2 && buffer[offset] == UInt8(ascii: "\r") && buffer[offset + 1] == UInt8(ascii: "\n") {
            offset += 2
        }
        let pending = buffer[offset...]
        guard let end = Self.endOfHead(in: pending) else {
            // Not all there yet: refuse at once what can only grow past a limit.
            let firstLine = pending.firstIndex(of: UInt8(ascii: "\n")).map { $0 - offset } ?? pending.count
            if firstLine > limits.requestLineBytes + 1 {
                return .failure(HTTPParseError(status: 414, "the request line is over \(limits.requestLineBytes) bytes"))
            }
            if pending.count > limits.requestLineBytes + limits.headerBlockBytes + 4 {
                return .failure(HTTPParseError(status: 431, "the head is over \(limits.headerBlockBytes) bytes of header lines"))
            }
            return nil
        }
        return HTTPHeadCheck.check(buffer[offset..<end], limits: limits)
    }

    /// The index just past the CRLFCRLF that ends the head in `bytes`; a bare LF in the head
    /// also ends the search (the check refuses it).
    private static func endOfHead(in bytes: ArraySlice<UInt8>) -> Int? {
        var index = bytes.startIndex
        while index + 2 < bytes.endIndex {
            if bytes[index] == UInt8(ascii: "\n") {
                if index > bytes.startIndex && bytes[index - 1] == UInt8(ascii: "\r") {
                    if bytes[index + 1] == UInt8(ascii: "\r") && bytes[index + 2] == UInt8(ascii: "\n") { return index + 3 }
                } else {
                    // A bare LF: hand the head to the check, which refuses it.
                    return bytes[index...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 }
                }
            }
            index += 1
        }
        return nil
    }

    /// Runs the C parser over the unread bytes; returns how many it consumed (it stops at the
    /// end of the request).
    private func execute(_ parse: Parse) -> Int {
        guard bufferedBytes > 0 else { return 0 }
        var settings = Self.settings
        let box = Unmanaged.passUnretained(parse)
        parse.parser.data = box.toOpaque()
        return buffer.withUnsafeBufferPointer { bytes in
            bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count) { base in
                http_parser_execute(&parse.parser, &settings, base + offset, bytes.count - offset)
            }
        }
    }

    private static let settings: http_parser_settings = {
        var settings = http_parser_settings()
        http_parser_settings_init(&settings)
        settings.on_url = { parser, data, length in
            Parse.of(parser).target.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
            return 0
        }
        settings.on_header_field = { parser, data, length in
            let parse = Parse.of(parser)
            if parse.readingValue || parse.fields.isEmpty {
                parse.fields.append(([], []))
                parse.readingValue = false
            }
            parse.fields[parse.fields.count - 1].name.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
            return 0
        }
        settings.on_header_value = { parser, data, length in
            let parse = Parse.of(parser)
            parse.readingValue = true
            if parse.fields.isEmpty { parse.fields.append(([], [])) }
            parse.fields[parse.fields.count - 1].value.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
            return 0
        }
        settings.on_headers_complete = { parser in
            let parse = Parse.of(parser)
            parse.keepAlive = http_should_keep_alive(parser) != 0
            return 0
        }
        settings.on_body = { parser, data, length in
            let parse = Parse.of(parser)
            guard parse.body.count + length <= parse.bodyLimit else {
                parse.bodyTooLarge = true
                return 1
            }
            parse.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
            return 0
        }
        settings.on_message_complete = { parser in
            let parse = Parse.of(parser)
            parse.complete = true
            // Stop here: the bytes after this request are the next one's.
            http_parser_pause(parser, 1)
            return 0
        }
        return settings
    }()

    private func request(from parse: Parse) -> HTTPRequest {
        let method = String(cString: http_method_str(http_method(rawValue: monarch_http_method(&parse.parser))))
        let headers = parse.fields.map { field in
            HTTPHeader(
                name: String(decoding: field.name, as: UTF8.self),
                value: String(decoding: field.value, as: UTF8.self).trimmingSpacesAndTabs())
        }
        let expects = headers.contains { $0.name.lowercased() == "expect" && $0.value.lowercased() == "100-continue" }
        return HTTPRequest(
            method: method, target: String(decoding: parse.target, as: UTF8.self), minorVersion: Int(parse.parser.http_minor),
            headers: headers, body: parse.body, keepAlive: parse.keepAlive, expectsContinue: expects)
    }

    private func fail(_ error: HTTPParseError) -> Result<HTTPRequest, HTTPParseError> {
        failure = error
        current = nil
        return .failure(error)
    }

    /// Drops the consumed bytes once they are most of the buffer.
    private func compact() {
        guard offset > 4096 && offset * 2 > buffer.count else { return }
        buffer.removeFirst(offset)
        offset = 0
    }
}

extension String {
    fileprivate func trimmingSpacesAndTabs() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
