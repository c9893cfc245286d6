/// Which headers travel between the client and the upstream, in each direction.
///
/// Hop-by-hop headers (RFC 9110 §7.6.1: `Connection` and the fields it names, `Keep-Alive`,
/// `Proxy-Connection`, `TE`, `Trailer`, `Transfer-Encoding`, `Upgrade`, and the proxy
/// credentials) belong to one connection and never pass. Towards the upstream, `Host`,
/// `Content-Length`, `Expect` and `Accept-Encoding` are libcurl's to write (it always offers
/// the encodings it decodes). Towards the client, the body has been decoded, so
/// `Content-Encoding` is dropped and `Content-Length` is the decoded length.
public enum HeaderForwarding {
    private static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
        "proxy-authenticate", "proxy-authorization",
    ]
    private static let writtenByLibcurl: Set<String> = ["host", "content-length", "expect", "accept-encoding"]

    /// The request headers to send upstream, sorted by name, or the reason they cannot be
    /// sent: a name that is not an HTTP token, or a value holding CR, LF or NUL (which would
    /// let a client write headers of its own choosing).
    public static func requestHeaders(_ headers: [String: String]) -> Result<[(name: String, value: String)], HeaderError> {
        let named = connectionOptions(headers.first { $0.key.asciiLowercased == "connection" }?.value)
        var forwarded: [(name: String, value: String)] = []
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else {
                return .failure(HeaderError(message: "the request header name \"\(name)\" is not a valid HTTP token"))
            }
            guard !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
                return .failure(HeaderError(message: "the value of request header \(name) holds CR, LF or NUL"))
            }
            let key = name.lowercased()
            if hopByHop.contains(key) || writtenByLibcurl.contains(key) || named.contains(key) { continue }
            forwarded.append((name, value.trimmingSpaces))
        }
        return .success(forwarded)
    }

    /// The upstream's response headers as the client gets them, for a body of `bodyLength`
    /// bytes (nil for `HEAD`, whose length is unknown once decoding is accounted for). Names
    /// are lowercase, whatever case the upstream used (as HTTP/2 sends them).
    public static func responseHeaders(_ headers: HTTPHeaders, bodyLength: Int?, decoded decoding: Bool = true) -> [String: String] {
        let named = connectionOptions(headers.value(lowercased: "connection"))
        let decoded = decoding && headers.value(lowercased: "content-encoding") != nil
        var lowercased: [String: String] = [:]
        lowercased.reserveCapacity(headers.fields.count)
        // HTTPHeaders holds each name once, compared without case: lowercasing joins nothing.
        for field in headers.lowercasedFields {
            let name = field.name
            if isHopByHop(name) || named.contains(name) { continue }
            if decoded && (name == "content-encoding" || name == "content-length") { continue }
            lowercased[name] = field.value
        }
        if decoded, let bodyLength { lowercased["content-length"] = String(bodyLength) }
        return lowercased
    }

    /// Whether `name`, in lowercase, is one of ``hopByHop``: its length is looked at first, so
    /// most names are passed with no string compared and none hashed.
    private static func isHopByHop(_ name: String) -> Bool {
        switch name.utf8.count {
        case 2: name == "te"
        case 7: name == "trailer" || name == "upgrade"
        case 10: name == "connection" || name == "keep-alive"
        case 16: name == "proxy-connection"
        case 17: name == "transfer-encoding"
        case 18: name == "proxy-authenticate"
        case 19: name == "proxy-authorization"
        default: false
        }
    }

    /// The field names a `Connection` value lists (its options, RFC 9110 §7.6.1), lowercase;
    /// empty without one.
    package static func connectionOptions(_ value: String?) -> [String] {
        guard let value else { return [] }
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        return value.utf8.split(separator: UInt8(ascii: ",")).compactMap { item in
            guard let first = item.firstIndex(where: { !isSpace($0) }), let last = item.lastIndex(where: { !isSpace($0) })
            else { return nil }
            return String(decoding: item[first...last], as: UTF8.self).asciiLowercased
        }
    }

    /// tchar of RFC 9110 §5.6.2.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

/// A request header that cannot be sent.
public struct HeaderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, naming the header.
    public let message: String
    public var description: String { message }
}
