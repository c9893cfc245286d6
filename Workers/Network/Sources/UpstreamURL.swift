import CCurl

/// An upstream URL as libcurl's own URL parser reads it, so that the host checked against the
/// allowlist is the host libcurl connects to: no second parser to disagree with it.
public struct UpstreamURL: Sendable, Hashable, CustomStringConvertible {
    /// The URL, normalised by libcurl; the string handed to the transfer.
    public let url: String
    /// The scheme, lowercase (`http`, `https`, `ftp`, …).
    public let scheme: String
    /// The host, lowercase, an IPv6 address without its brackets; empty for URLs with none
    /// (`file:///x`).
    public let host: String
    /// The port, the scheme's default when the URL names none.
    public let port: Int

    /// Parses an absolute URL.
    ///
    /// - Throws: ``UpstreamURLError`` when libcurl cannot parse it (relative, malformed, …).
    public init(parsing text: String) throws(UpstreamURLError) {
        guard let handle = curl_url() else { throw UpstreamURLError(url: text, reason: "curl_url failed") }
        defer { curl_url_cleanup(handle) }
        let code = text.withCString { curl_url_set(handle, CURLUPART_URL, $0, UInt32(CURLU_NON_SUPPORT_SCHEME)) }
        guard code == CURLUE_OK else {
            throw UpstreamURLError(url: text, reason: String(cString: curl_url_strerror(code)))
        }
        func part(_ which: CURLUPart, _ flags: Int32 = 0) -> String? {
            var value: UnsafeMutablePointer<CChar>?
            guard curl_url_get(handle, which, &value, UInt32(flags)) == CURLUE_OK, let value else { return nil }
            defer { curl_free(value) }
            return String(cString: value)
        }
        guard let url = part(CURLUPART_URL), let scheme = part(CURLUPART_SCHEME) else {
            throw UpstreamURLError(url: text, reason: "no scheme")
        }
        self.url = url
        self.scheme = scheme.lowercased()
        var host = part(CURLUPART_HOST)?.lowercased() ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.host = host
        self.port = Self.port(of: handle)
    }

    /// The URL's port, its scheme's default when it names none, read from libcurl's digits
    /// with no string made; 0 when libcurl has none.
    private static func port(of handle: OpaquePointer) -> Int {
        var value: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, CURLUPART_PORT, &value, UInt32(CURLU_DEFAULT_PORT)) == CURLUE_OK, let value else {
            return 0
        }
        defer { curl_free(value) }
        var port = 0
        var digit = value
        while digit.pointee != 0 {
            let number = Int(digit.pointee) - Int(UInt8(ascii: "0"))
            // libcurl's ports are 1 to 65535: anything else is none.
            guard (0...9).contains(number), port <= 65535 else { return 0 }
            port = port * 10 + number
            digit += 1
        }
        return port <= 65535 ? port : 0
    }

    /// Whether the scheme is `http` or `https`, the only ones fetched.
    public var isHTTP: Bool { scheme == "http" || scheme == "https" }

    /// The host and port, as the allowlist names them.
    public var origin: UpstreamOrigin { UpstreamOrigin(host: host, port: port) }

    public var description: String { url }
}

/// A URL libcurl could not parse.
public struct UpstreamURLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text given.
    public let url: String
    /// libcurl's reason.
    public let reason: String
    public var description: String { "cannot parse the upstream URL \(url): \(reason)" }
}
