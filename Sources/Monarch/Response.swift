#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A resource as a provider returned it.
public struct Response: Sendable, Hashable {
    /// The HTTP-style status.
    public var status: Int
    /// Response headers.
    public var headers: [String: String]
    /// The body.
    public var body: Data
    /// Which provider answered (`cache`, `bundle`, `network`, or a Swift provider's name).
    public var source: String?
    /// Whether the response came from a cache past its TTL.
    public var stale: Bool
    /// How old a cached response is.
    public var age: Duration?
    /// How long the response may be cached; nil leaves it to the route.
    public var ttl: Duration?
    /// Whether the response may be kept by caches at all.
    public var cacheable: Bool

    /// Creates a response; a bare `Response(body:)` is a fresh, cacheable 200.
    public init(
        status: Int = 200, headers: [String: String] = [:], body: Data = Data(), source: String? = nil,
        stale: Bool = false, age: Duration? = nil, ttl: Duration? = nil, cacheable: Bool = true
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.source = source
        self.stale = stale
        self.age = age
        self.ttl = ttl
        self.cacheable = cacheable
    }

    /// Whether the status is a success (2xx).
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// Whether a shared cache may keep this response for other requests: a fresh, cacheable
    /// 200, 203 or 204 (not a partial 206) that sets no cookie and varies with no request
    /// header but `Accept-Encoding` (bodies are kept decoded).
    public var mayBeStored: Bool {
        guard cacheable, !stale, [200, 203, 204].contains(status) else { return false }
        for (name, value) in headers {
            switch name.lowercased() {
            case "set-cookie": return false
            case "vary":
                let varied = value.split(separator: ",").map { $0.filter { !$0.isWhitespace }.lowercased() }
                if varied.contains(where: { !$0.isEmpty && $0 != "accept-encoding" }) { return false }
            default: continue
            }
        }
        return true
    }
}
