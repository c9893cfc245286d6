extension HTTPRequest {
    /// The host the request is for, as routes compare hosts (``normalizedHost(_:)``): the
    /// authority of an absolute-form target (`GET http://example.com/a`, which overrides `Host`:
    /// RFC 9112 §3.2.2), else the `Host` header; nil when neither names one (an HTTP/1.0
    /// request without `Host`) or what it names is not a host.
    public var host: String? {
        if let authority = Self.absoluteAuthority(of: target) { return Self.normalizedHost(authority) }
        return value(of: "host").flatMap { Self.normalizedHost(Substring($0)) }
    }

    /// `authority` (a `Host` value, or a URL's authority) as routes compare hosts: lowercased,
    /// without userinfo, port or one trailing dot (`User@Example.COM.:8080` is `example.com`);
    /// an IP literal keeps its brackets (`[::1]:8080` is `[::1]`). Nil when nothing is left, or
    /// the port is not digits, or a bracket is not closed, or colons stand outside brackets
    /// (an IPv6 address must be in brackets).
    public static func normalizedHost(_ authority: Substring) -> String? {
        var rest = authority
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        let name: Substring
        let port: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            name = rest[...close]
            port = rest[rest.index(after: close)...]
        } else if let colon = rest.firstIndex(of: ":") {
            name = rest[..<colon]
            port = rest[colon...]
        } else {
            name = rest
            port = ""
        }
        guard port.isEmpty || (port.first == ":" && port.utf8.dropFirst().allSatisfy { (48...57).contains($0) }) else {
            return nil
        }
        let bare = name.hasSuffix(".") ? name.dropLast() : name
        guard !bare.isEmpty else { return nil }
        return bare.lowercased()
    }

    /// The authority of `target` when it is in absolute form (`http://…` or `https://…`, any
    /// case), else nil.
    private static func absoluteAuthority(of target: String) -> Substring? {
        guard let first = target.utf8.first, first != UInt8(ascii: "/") else { return nil }
        let lowered = target.prefix(8).lowercased()
        let scheme = lowered.hasPrefix("http://") ? 7 : lowered.hasPrefix("https://") ? 8 : 0
        guard scheme > 0 else { return nil }
        let rest = target.dropFirst(scheme)
        return rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    }
}
