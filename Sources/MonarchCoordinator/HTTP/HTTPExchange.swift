#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Monarch
import MonarchHTTP
import MonarchWire

/// How an HTTP request becomes a Monarch request, and the chain's answer an HTTP response.
///
/// The target (`/path?query`, or an absolute URL) is the request's path, routed like any
/// other, and the request is relayed (``Monarch/Request/relay``): the chain keeps HTTP's
/// caching rules (RFC 9111) and the upstream's answer comes back as it is. Every end-to-end
/// request header is passed on; the connection's own (hop-by-hop, those `Connection` names,
/// `Host`, `Content-Length`, `Expect`) are not. The answer's status, headers and body go back
/// as they are (an upstream's 404 is a 404 with its body), with `Content-Length`, `Date`,
/// `Via`, and the chain's `Age` and `Cache-Status` (RFC 9211); a `GET` or `HEAD` whose
/// conditions the answer meets gets `304 Not Modified`; a request every provider missed is a
/// 404 saying so, and a failure is 4xx or 5xx with its code in `Monarch-Error`.
enum HTTPExchange {
    /// Request headers that belong to the client's connection, never passed on.
    static let connectionHeaders: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "host",
        "content-length", "expect", "proxy-authorization",
    ]

    /// Response headers a hop does not pass on (`Content-Length` is written anew).
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "content-length",
    ]

    /// The Monarch request for `request`, with `id`: relayed, with its end-to-end headers
    /// (names lowercased, repeated ones joined with `, `).
    static func message(for request: HTTPRequest, id: MessageID) -> RequestMessage {
        var named: Set<String> = []
        for header in request.headers where header.isNamed("connection") {
            for option in header.value.split(separator: ",") { named.insert(String(option).trimmingHTTPSpaces.lowercased()) }
        }
        var headers: [String: String] = [:]
        for header in request.headers {
            let name = header.name.lowercased()
            guard !connectionHeaders.contains(name), !named.contains(name) else { continue }
            if name == "content-type" && request.body.isEmpty { continue }
            headers[name] = headers[name].map { $0 + ", " + header.value } ?? header.value
        }
        return RequestMessage(
            id: id, path: request.target, method: request.method == "GET" ? nil : request.method,
            headers: headers.isEmpty ? nil : headers, body: request.body.isEmpty ? nil : Data(request.body), relay: true)
    }

    /// The paths whose stored responses an answer with `status` to `request` makes stale (RFC
    /// 9111 §4.4): after an unsafe method answered 2xx or 3xx, the request's target and the
    /// `Location` and `Content-Location` of the answer when they name this listener (a path,
    /// or a URL whose host is the request's `Host`); none otherwise.
    static func invalidatedPaths(by request: HTTPRequest, status: Int, responseHeaders: [String: String]) -> [String] {
        guard HTTPCacheRules.invalidates(method: request.method, status: status) else { return [] }
        var paths = [request.target]
        let host = request.value(of: "host")?.lowercased()
        for name in ["location", "content-location"] {
            guard let value = HTTPCacheRules.value(name, in: responseHeaders), let path = localPath(of: value, host: host),
                !paths.contains(path)
            else { continue }
            paths.append(path)
        }
        return paths
    }

    /// The path `reference` names on this listener: itself when it starts with `/`; for an
    /// `http` URL whose authority is `host`, its path; nil for anything else.
    private static func localPath(of reference: String, host: String?) -> String? {
        if reference.hasPrefix("/") && !reference.hasPrefix("//") { return reference }
        guard let host, reference.lowercased().hasPrefix("http://") else { return nil }
        let rest = reference.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard authority.lowercased() == host else { return nil }
        let path = rest.dropFirst(authority.count)
        return path.hasPrefix("/") ? String(path) : nil
    }

    /// The HTTP response to `answer` for `request`: `304 Not Modified` when the request's
    /// conditions are met, no body for a `HEAD`, `Connection: close` when `closing`.
    static func response(to answer: ClientAnswer, for request: HTTPRequest, closing: Bool) -> [UInt8] {
        output(to: answer, for: request, closing: closing).joined
    }

    /// The HTTP response to `answer` for `request` (``response(to:for:closing:)``) as the front
    /// door writes it: a large hot-tier body follows the head uncopied.
    static func output(to answer: ClientAnswer, for request: HTTPRequest, closing: Bool) -> HTTPOutput {
        switch answer {
        case .prepared(let prepared, _, let ageMs):
            var message = prepared.message
            if let ageMs { message.ageMs = ageMs }
            return HTTPOutput(response(message, for: request, closing: closing))
        case .relayedHit(let hit):
            let status = hit.prepared.message.status
            if request.method == "GET", status >= 200, status != 204, status != 304, conditionHeaders(of: request).isEmpty {
                return hit.httpResponse(closing: closing)
            }
            return HTTPOutput(response(hit.message, for: request, closing: closing))
        case .message(.response(let message)):
            return HTTPOutput(response(message, for: request, closing: closing))
        case .message(.failure(let failure)):
            return HTTPOutput(refusal(failure.error, closing: closing))
        case .message(let other):
            return HTTPOutput(plain(502, "the chain answered \(other.type)", code: "invalidMessage", closing: true))
        }
    }

    /// The status and headers `answer` has, for the invalidation that follows an unsafe
    /// method's answer; nil for a failure.
    static func statusAndHeaders(of answer: ClientAnswer) -> (Int, [String: String])? {
        switch answer {
        case .prepared(let prepared, _, _): (prepared.message.status, prepared.message.headers ?? [:])
        case .relayedHit(let hit): (hit.prepared.message.status, hit.prepared.message.headers ?? [:])
        case .message(.response(let message)): (message.status, message.headers ?? [:])
        default: nil
        }
    }

    /// A response the front door writes itself: `status`, a text body, `Monarch-Error: code`.
    static func plain(_ status: Int, _ text: String, code: String? = nil, closing: Bool, extra: [HTTPHeader] = []) -> [UInt8] {
        let body = Array((text + "\n").utf8)
        var headers = [
            HTTPHeader(name: "Content-Type", value: "text/plain; charset=utf-8"),
            HTTPHeader(name: "Content-Length", value: String(body.count)),
            HTTPHeader(name: "Date", value: HTTPDate.now()),  // wall-clock time, sent to the client
        ]
        if let code { headers.append(HTTPHeader(name: "Monarch-Error", value: code)) }
        headers += extra
        if closing { headers.append(HTTPHeader(name: "Connection", value: "close")) }
        return HTTPResponseHead(status: status, headers: headers).bytes(followedBy: body)
    }

    private static func response(_ message: ResponseMessage, for request: HTTPRequest, closing: Bool) -> [UInt8] {
        // A 1xx is interim: sent as the final answer, the client would take the next answer
        // on the connection for this request's.
        if (100..<200).contains(message.status) {
            return plain(502, "the upstream's final answer was \(message.status), an interim status", code: "upstreamStatus", closing: closing)
        }
        let method = request.method
        var fields = message.headers ?? [:]
        var status = message.status
        let requestHeaders = conditionHeaders(of: request)
        if method == "GET" || method == "HEAD",
            HTTPConditions.isNotModified(requestHeaders: requestHeaders, responseHeaders: fields, status: status)
        {
            status = 304
            fields = HTTPConditions.notModifiedHeaders(of: fields)
        }
        var body = status == 304 ? [] : message.content.map { Array($0.bytes) } ?? []
        if method == "GET", status == 200, rangeApplies(requestHeaders["if-range"], to: fields) {
            // A part of a whole answer, as a cache serves one (RFC 9110 §14).
            switch ByteRange.selection(requestHeaders["range"], length: body.count) {
            case .range(let range):
                fields["content-range"] = range.contentRange(of: body.count)
                body = Array(body[range.first...range.last])
                status = 206
            case .unsatisfiable:
                fields["content-range"] = "bytes */\(body.count)"
                body = []
                status = 416
            case .whole:
                break
            }
        }
        let lines = headLines(of: fields)
        var headers = lines.headers
        // Wall-clock time: the `Date` header is sent to the client.
        if !lines.hasDate { headers.append(HTTPHeader(name: "Date", value: HTTPDate.now())) }
        let headLength = lines.contentLength
        let noBody = method == "HEAD" || status == 204 || status == 304
        if status == 204 || status == 304 {
            // A 204 carries no Content-Length (RFC 9110, 8.6); a 304 none that could mislead.
        } else if method == "HEAD" {
            // The length a GET would have: the upstream's, when it said it.
            if let length = body.isEmpty ? headLength : String(body.count) {
                headers.append(HTTPHeader(name: "Content-Length", value: length))
            }
        } else {
            headers.append(HTTPHeader(name: "Content-Length", value: String(body.count)))
        }
        if closing { headers.append(HTTPHeader(name: "Connection", value: "close")) }
        return HTTPResponseHead(status: status, headers: headers).bytes(followedBy: noBody ? [] : body)
    }

    /// The header lines an answer's `fields` become: hop-by-hop ones (and `Content-Length`,
    /// written anew) left out, names as HTTP/1.1 spells them, in order of name, then `Via`
    /// naming this hop; whether `Date` is among them, and the `Content-Length` the fields gave.
    static func headLines(of fields: [String: String]) -> (headers: [HTTPHeader], hasDate: Bool, contentLength: String?) {
        var headers: [HTTPHeader] = []
        headers.reserveCapacity(fields.count + 1)
        var hasDate = false
        var contentLength: String?
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            let lowered = name.lowercased()
            if lowered == "content-length" { contentLength = value }
            guard !hopByHop.contains(lowered), lowered != "via" else { continue }
            if lowered == "date" { hasDate = true }
            headers.append(HTTPHeader(name: canonicalName(name), value: value))
        }
        let via = fields["via"].map { $0 + ", " } ?? ""
        headers.append(HTTPHeader(name: "Via", value: via + "1.1 monarch"))
        return (headers, hasDate, contentLength)
    }

    /// `name` as HTTP/1.1 usually spells it, each word capitalised (`content-type` →
    /// `Content-Type`): Monarch keeps names in lowercase, and names compare without case.
    static func canonicalName(_ name: String) -> String {
        var bytes = Array(name.utf8)
        var startOfWord = true
        for index in bytes.indices {
            let byte = bytes[index]
            if startOfWord, byte >= UInt8(ascii: "a"), byte <= UInt8(ascii: "z") { bytes[index] = byte - 32 }
            startOfWord = byte == UInt8(ascii: "-")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The headers of `request` that may turn its answer into a 304, 206 or 416 (conditions
    /// and ranges), names lowercase; empty for most requests.
    private static func conditionHeaders(of request: HTTPRequest) -> [String: String] {
        var found: [String: String] = [:]
        for header in request.headers {
            let name = header.name.utf8
            guard name.count >= 5, name.first.map({ $0 | 0x20 == UInt8(ascii: "i") || $0 | 0x20 == UInt8(ascii: "r") }) == true
            else { continue }
            let lowered = header.name.lowercased()
            guard conditionNames.contains(lowered) else { continue }
            found[lowered] = found[lowered].map { $0 + ", " + header.value } ?? header.value
        }
        return found
    }

    private static let conditionNames: Set<String> = ["if-none-match", "if-modified-since", "if-range", "range"]

    /// Whether a `Range` applies to an answer with `headers` given the request's `If-Range`
    /// (absent, or the answer's strong `ETag` or its `Last-Modified` exactly).
    private static func rangeApplies(_ ifRange: String?, to headers: [String: String]) -> Bool {
        guard let ifRange = ifRange?.trimmingHTTPSpaces else { return true }
        if ifRange.hasPrefix("\"") { return HTTPCacheRules.value("etag", in: headers) == ifRange }
        return HTTPCacheRules.value("last-modified", in: headers) == ifRange
    }

    /// The response to a chain that failed with `error`.
    private static func refusal(_ error: FailureMessage.Detail, closing: Bool) -> [UInt8] {
        let code = error.code.rawValue
        let status: Int
        var extra: [HTTPHeader] = []
        switch code {
        case "exhausted", "noRoute": status = 404
        case "invalidPath", "invalidRequest", "unknownDomain": status = 400
        case "requestTooLarge": status = 413
        case "forbidden": status = 403
        case "overloaded", "shuttingDown", "unavailable":
            status = 503
            extra.append(HTTPHeader(name: "Retry-After", value: "1"))
        case "deadlineExceeded", "timeout": status = 504
        default: status = 502
        }
        let text = code == "exhausted" ? "Not found: \(error.message)" : "\(code): \(error.message)"
        return plain(status, text, code: code, closing: closing || code == "shuttingDown", extra: extra)
    }
}
