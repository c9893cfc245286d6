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
/// other. Of the request's headers, those that choose among shared representations
/// (`Accept`, `Accept-Language`, `Accept-Charset`), the credentials (`Authorization`, `Cookie`,
/// `X-Api-Key`), the tracing ids, and `Content-Type` with a body are passed on; the others
/// (`Host`, `User-Agent`, conditionals, hop-by-hop headers) are not, so that browsers' reads
/// share the cache. The answer's status, headers and body go back as they are (an upstream's
/// 404 is a 404 with its body), with `Content-Length`, `Date`, `Age` for a cached answer,
/// `Via` and `Cache-Status` (RFC 9211); a request every provider missed is a 404 saying so,
/// and a failure is 4xx or 5xx with its code in `Monarch-Error`.
enum HTTPExchange {
    /// The request headers passed on, besides the tracing ids.
    static let forwardedHeaders: Set<String> = [
        "accept", "accept-language", "accept-charset", "authorization", "cookie", "x-api-key",
    ]

    /// Response headers a hop does not pass on (`Content-Length` is written anew).
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "content-length",
    ]

    /// The Monarch request for `request`, with `id`.
    static func message(for request: HTTPRequest, id: MessageID) -> RequestMessage {
        var headers: [String: String] = [:]
        for header in request.headers {
            let name = header.name.lowercased()
            let passed = forwardedHeaders.contains(name) || HeaderRole(name: name) == .tracing
                || (name == "content-type" && !request.body.isEmpty)
            guard passed else { continue }
            headers[name] = headers[name].map { $0 + ", " + header.value } ?? header.value
        }
        return RequestMessage(
            id: id, path: request.target, method: request.method == "GET" ? nil : request.method,
            headers: headers.isEmpty ? nil : headers, body: request.body.isEmpty ? nil : Data(request.body))
    }

    /// The HTTP response to `answer`, without a body for a `HEAD`; `Connection: close` when
    /// `closing`.
    static func response(to answer: ClientAnswer, method: String, closing: Bool) -> [UInt8] {
        switch answer {
        case .prepared(let prepared, _, let ageMs):
            var message = prepared.message
            if let ageMs { message.ageMs = ageMs }
            return response(message, method: method, closing: closing)
        case .message(.response(let message)):
            return response(message, method: method, closing: closing)
        case .message(.failure(let failure)):
            return refusal(failure.error, closing: closing)
        case .message(let other):
            return plain(502, "the chain answered \(other.type)", code: "invalidMessage", closing: true)
        }
    }

    /// A response the front door writes itself: `status`, a text body, `Monarch-Error: code`.
    static func plain(_ status: Int, _ text: String, code: String? = nil, closing: Bool, extra: [HTTPHeader] = []) -> [UInt8] {
        let body = Array((text + "\n").utf8)
        var headers = [
            HTTPHeader(name: "Content-Type", value: "text/plain; charset=utf-8"),
            HTTPHeader(name: "Content-Length", value: String(body.count)),
            HTTPHeader(name: "Date", value: httpDate()),
        ]
        if let code { headers.append(HTTPHeader(name: "Monarch-Error", value: code)) }
        headers += extra
        if closing { headers.append(HTTPHeader(name: "Connection", value: "close")) }
        return HTTPResponseHead(status: status, headers: headers).bytes + body
    }

    private static func response(_ message: ResponseMessage, method: String, closing: Bool) -> [UInt8] {
        // A 1xx is interim: sent as the final answer, the client would take the next answer
        // on the connection for this request's.
        if (100..<200).contains(message.status) {
            return plain(502, "the upstream's final answer was \(message.status), an interim status", code: "upstreamStatus", closing: closing)
        }
        let body = message.content.map { Array($0.bytes) } ?? []
        var headers: [HTTPHeader] = []
        var hasDate = false
        var headLength: String?
        for (name, value) in (message.headers ?? [:]).sorted(by: { $0.key < $1.key }) {
            let lowered = name.lowercased()
            if lowered == "content-length" { headLength = value }
            guard !hopByHop.contains(lowered), lowered != "age", lowered != "via", lowered != "cache-status" else { continue }
            if lowered == "date" { hasDate = true }
            headers.append(HTTPHeader(name: name, value: value))
        }
        if !hasDate { headers.append(HTTPHeader(name: "Date", value: httpDate())) }
        let cached = message.source == "cache"
        if cached { headers.append(HTTPHeader(name: "Age", value: String((message.ageMs ?? 0) / 1000))) }
        headers.append(HTTPHeader(name: "Via", value: "1.1 monarch"))
        headers.append(HTTPHeader(name: "Cache-Status", value: cacheStatus(of: message)))
        let noBody = method == "HEAD" || message.status == 204 || message.status == 304
        if message.status == 204 {
            // A 204 carries no Content-Length (RFC 9110, 8.6).
        } else if method == "HEAD" || message.status == 304 {
            // The length a GET would have: the upstream's, when it said it.
            if let length = body.isEmpty ? headLength : String(body.count) {
                headers.append(HTTPHeader(name: "Content-Length", value: length))
            }
        } else {
            headers.append(HTTPHeader(name: "Content-Length", value: String(body.count)))
        }
        if closing { headers.append(HTTPHeader(name: "Connection", value: "close")) }
        return HTTPResponseHead(status: message.status, headers: headers).bytes + (noBody ? [] : body)
    }

    /// RFC 9211's `Cache-Status` of an answer: a hit, a stale hit, or forwarded.
    private static func cacheStatus(of message: ResponseMessage) -> String {
        guard message.source == "cache" else {
            return "monarch; fwd=" + (message.cacheable == true ? "miss; stored" : "miss")
        }
        if message.stale == true { return "monarch; hit; fwd=stale" }
        let ttl = message.ttlMs.map { "; ttl=\($0 / 1000)" } ?? ""
        return "monarch; hit\(ttl)"
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

    /// Now as an HTTP date: `Fri, 27 Nov 2026 09:40:00 GMT`.
    static func httpDate() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
