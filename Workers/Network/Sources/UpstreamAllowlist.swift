/// A host and a port, such as `127.0.0.1:8080`, `[::1]:8080` or `api.example.com:443`.
public struct UpstreamOrigin: Sendable, Hashable, CustomStringConvertible {
    /// The host, lowercase; an IPv6 address without brackets.
    public let host: String
    /// The port.
    public let port: Int

    /// Creates an origin; the host is lowercased and stripped of IPv6 brackets.
    public init(host: String, port: Int) {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`, with an IPv6 host in brackets (`[::1]:8080`).
    ///
    /// - Throws: ``UpstreamAllowlistError`` when the port is missing or not in 1...65535, or
    ///   the host is empty.
    public init(parsing entry: String) throws(UpstreamAllowlistError) {
        let host: Substring
        let port: Substring
        if entry.hasPrefix("[") {
            guard let close = entry.firstIndex(of: "]"), entry[entry.index(after: close)...].hasPrefix(":") else {
                throw UpstreamAllowlistError(entry: entry, reason: "an IPv6 host is written [ADDRESS]:PORT")
            }
            host = entry[entry.index(after: entry.startIndex)..<close]
            port = entry[entry.index(close, offsetBy: 2)...]
        } else {
            guard let colon = entry.lastIndex(of: ":") else {
                throw UpstreamAllowlistError(entry: entry, reason: "expected HOST:PORT")
            }
            host = entry[..<colon]
            port = entry[entry.index(after: colon)...]
            if host.contains(":") {
                throw UpstreamAllowlistError(entry: entry, reason: "an IPv6 host is written [ADDRESS]:PORT")
            }
        }
        guard !host.isEmpty else { throw UpstreamAllowlistError(entry: entry, reason: "the host is empty") }
        guard let number = Int(port), (1...65535).contains(number) else {
            throw UpstreamAllowlistError(entry: entry, reason: "the port must be a number from 1 to 65535")
        }
        self.init(host: String(host), port: number)
    }

    /// `HOST:PORT`, an IPv6 host in brackets.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// The upstreams a network worker may contact: exact host and port pairs, compared after
/// lowercasing (no wildcards, no name resolution: `localhost:8080` does not allow
/// `127.0.0.1:8080`). Only `http` and `https` URLs are ever allowed. Empty allows nothing.
public struct UpstreamAllowlist: Sendable, Hashable, CustomStringConvertible {
    /// The allowed origins.
    public let origins: Set<UpstreamOrigin>

    /// An allowlist of `origins`.
    public init(_ origins: Set<UpstreamOrigin>) {
        self.origins = origins
    }

    /// Parses entries such as `127.0.0.1:8080`, `[::1]:8080`, `api.example.com:443`.
    ///
    /// - Throws: ``UpstreamAllowlistError`` naming the first entry that is not `HOST:PORT`.
    public init(parsing entries: [String]) throws(UpstreamAllowlistError) {
        var origins: Set<UpstreamOrigin> = []
        for entry in entries { origins.insert(try UpstreamOrigin(parsing: entry)) }
        self.init(origins)
    }

    /// Whether `url` may be fetched: an `http` or `https` URL whose host and port are listed.
    public func allows(_ url: UpstreamURL) -> Bool {
        url.isHTTP && origins.contains(url.origin)
    }

    /// Why `url` may not be fetched, as a sentence naming its host; nil when it may.
    public func refusal(of url: UpstreamURL) -> String? {
        guard url.isHTTP else {
            return "only http and https upstreams are fetched, not \(url.scheme) (\(url.url))"
        }
        guard origins.contains(url.origin) else {
            return "the upstream host \(url.origin) is not in the network worker's allowlist (\(self))"
        }
        return nil
    }

    /// The entries, sorted, comma-separated; `nothing allowed` when empty.
    public var description: String {
        origins.isEmpty ? "nothing allowed" : "allowed: " + origins.map(\.description).sorted().joined(separator: ", ")
    }
}

/// An allowlist entry that is not `HOST:PORT`.
public struct UpstreamAllowlistError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The entry as given.
    public let entry: String
    /// What is wrong with it.
    public let reason: String
    public var description: String { "invalid allowlist entry \"\(entry)\": \(reason)" }
}
