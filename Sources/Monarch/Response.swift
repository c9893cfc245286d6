#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MonarchWire

/// A resource as a provider returned it.
public struct Response: Sendable, Hashable {
    /// The HTTP-style status.
    public var status: Int
    /// Response headers.
    public var headers: [String: String]
    /// The body as it travels between processes: a worker's answer is forwarded to clients
    /// and caches without being decoded.
    public var content: MessageBody
    /// The body's bytes.
    public var body: Data {
        get { content.bytes }
        set { content = MessageBody(newValue) }
    }
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
        self.content = MessageBody(body)
        self.source = source
        self.stale = stale
        self.age = age
        self.ttl = ttl
        self.cacheable = cacheable
    }

    /// Whether the status is a success (2xx).
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// Whether a shared cache may keep this response for other requests, as a variant of its
    /// key when it has a `Vary` (see ``SharingRules``): a fresh response with status 200, 203
    /// or 204 (not a partial 206) that is ``cacheable``, whose `Cache-Control` says neither
    /// `private` nor `no-store`, that sets no cookie, and whose `Vary` is not `*`.
    public var mayBeStored: Bool {
        guard !stale, [200, 203, 204].contains(status), cacheable else { return false }
        for (name, value) in headers {
            guard Self.sharingHeaderLengths.contains(name.utf8.count) else { continue }
            switch name.asciiLowercased {
            case "set-cookie", "set-cookie2": return false
            case "vary":
                if Self.listItems(value).contains("*") { return false }
            case "cache-control":
                let directives = Self.listItems(value).map { $0.prefix { $0 != "=" } }
                if directives.contains(where: { $0 == "private" || $0 == "no-store" }) { return false }
            default: continue
            }
        }
        return true
    }

    /// Whether this answer, fetched for one request, may be handed to other requests for the
    /// same resource: it is ``cacheable``, its `Cache-Control` says neither `private` nor
    /// `no-store`, it sets no cookie, and it varies with no request header but
    /// `Accept-Encoding` (bodies are kept decoded). Identical reads in flight share a trip's
    /// answer only when this holds; otherwise each of them asks on its own.
    public var mayBeShared: Bool {
        guard cacheable else { return false }
        for (name, value) in headers {
            // Only names as long as those below can be one of them.
            guard Self.sharingHeaderLengths.contains(name.utf8.count) else { continue }
            switch name.asciiLowercased {
            case "set-cookie", "set-cookie2": return false
            case "vary":
                if Self.listItems(value).contains(where: { $0 != "accept-encoding" }) { return false }
            case "cache-control":
                let directives = Self.listItems(value).map { $0.prefix { $0 != "=" } }
                if directives.contains(where: { $0 == "private" || $0 == "no-store" }) { return false }
            default: continue
            }
        }
        return true
    }

    /// The lengths of the names of the headers ``mayBeShared`` reads.
    private static let sharingHeaderLengths = ["set-cookie", "set-cookie2", "vary", "cache-control"].map(\.utf8.count)

    /// The items of a comma-separated header value, lowercased, without spaces or empty items.
    private static func listItems(_ value: String) -> [String] {
        value.split(separator: ",").map { $0.filter { !$0.isWhitespace }.lowercased() }.filter { !$0.isEmpty }
    }
}

extension Response {
    /// `headers` with every name in lowercase, the one spelling Monarch's wire messages and
    /// workers use (as HTTP/2 does): `Content-Type` becomes `content-type`.
    ///
    /// Names that differ only in case become one header whose values are joined with `", "`, in
    /// the order of the names as given (sorted), so the result does not depend on dictionary
    /// order. Values are kept as they are.
    public static func lowercasedHeaderNames(_ headers: [String: String]) -> [String: String] {
        guard headers.keys.contains(where: hasUppercase) else { return headers }
        var result: [String: String] = [:]
        result.reserveCapacity(headers.count)
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            let key = name.lowercased()
            if let earlier = result[key] {
                result[key] = earlier + ", " + value
            } else {
                result[key] = value
            }
        }
        return result
    }

    /// Whether `name` has an ASCII capital letter (a byte in `A`…`Z`).
    private static func hasUppercase(_ name: String) -> Bool {
        for byte in name.utf8 where byte &- UInt8(ascii: "A") < 26 { return true }
        return false
    }
}
