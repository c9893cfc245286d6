/// The head of an HTTP/1.1 response, written as bytes: the status line and the header lines.
///
/// Header names and values that could split the response (a CR, LF or NUL in them, a name
/// that is not a token) are left out, so an upstream's header can never inject another.
public struct HTTPResponseHead: Sendable, Equatable {
    /// The status code, 100 to 599.
    public var status: Int
    /// The header lines, in order.
    public var headers: [HTTPHeader]

    /// A head with `status` and `headers`.
    public init(status: Int, headers: [HTTPHeader] = []) {
        self.status = status
        self.headers = headers
    }

    /// The status line, the header lines that are safe to send, and the empty line.
    public var bytes: [UInt8] { bytes(followedBy: []) }

    /// ``bytes``, then `body`, in one array allocated once at the size of both (a response
    /// written whole is neither grown line by line nor copied again to add its body).
    public func bytes(followedBy body: [UInt8]) -> [UInt8] {
        // The status line (its reason phrase 31 bytes at most), each line's ": " and CRLF, the
        // last CRLF.
        var size = 64 + 2 + body.count
        for header in headers { size += header.name.utf8.count + header.value.utf8.count + 4 }
        var out: [UInt8] = []
        out.reserveCapacity(size)
        out.append(contentsOf: "HTTP/1.1 ".utf8)
        // A small string: no allocation.
        out.append(contentsOf: String(status).utf8)
        out.append(UInt8(ascii: " "))
        out.append(contentsOf: Self.reason(for: status).utf8)
        out.append(contentsOf: "\r\n".utf8)
        for header in headers { Self.append(header, to: &out) }
        out.append(contentsOf: "\r\n".utf8)
        out.append(contentsOf: body)
        return out
    }

    /// The status line of a response with `status`, its CRLF included.
    public static func statusLine(_ status: Int) -> [UInt8] {
        Array("HTTP/1.1 \(status) \(reason(for: status))\r\n".utf8)
    }

    /// Adds the line of `header` to `out` when it is safe to send (nothing when it could
    /// split the response).
    public static func append(_ header: HTTPHeader, to out: inout [UInt8]) {
        guard isSafe(header) else { return }
        out.append(contentsOf: header.name.utf8)
        out.append(contentsOf: ": ".utf8)
        out.append(contentsOf: header.value.utf8)
        out.append(contentsOf: "\r\n".utf8)
    }

    /// Whether `header` can be written without splitting the response.
    static func isSafe(_ header: HTTPHeader) -> Bool {
        !header.name.isEmpty && header.name.utf8.allSatisfy(HTTPHeadCheck.isTokenByte)
            && header.value.utf8.allSatisfy(HTTPHeadCheck.isFieldValueByte)
    }

    /// The reason phrase of `status` (RFC 9110's), or an empty one for a status it does not name.
    public static func reason(for status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 203: "Non-Authoritative Information"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 410: "Gone"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 416: "Range Not Satisfiable"
        case 417: "Expectation Failed"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: ""
        }
    }
}
