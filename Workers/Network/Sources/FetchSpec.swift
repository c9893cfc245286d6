#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One HTTP exchange for ``CurlMulti/fetch(_:)`` to perform: exactly one request, with no
/// redirect followed and no retry (those are the caller's decisions).
public struct FetchSpec: Sendable, Hashable {
    /// The absolute `http` or `https` URL, as libcurl's URL parser normalised it.
    public var url: String
    /// The method, uppercase: `GET`, `HEAD`, `POST`, `PUT`, `PATCH` or `DELETE` (any other
    /// token is sent as it is).
    public var method: String
    /// Header lines to send, in order, as (name, value); they replace libcurl's own header
    /// of the same name.
    public var headers: [(name: String, value: String)]
    /// The body to send; nil sends none (a `POST` with no body sends an empty one).
    public var body: Data?
    /// How long connecting (name lookup, TCP and TLS handshakes) may take.
    public var connectTimeout: Duration
    /// How long the whole exchange may take, connecting included.
    public var timeout: Duration
    /// The largest response body accepted, in bytes, after content decoding; a larger body (or
    /// a `Content-Length` announcing one) ends the exchange with
    /// ``FetchFailure/Kind-swift.enum/responseTooLarge``.
    public var maxResponseBytes: Int
    /// Whether the encodings libcurl decodes are offered and bodies decoded (`gzip`, …);
    /// otherwise none is asked for, and a body comes as the upstream sent it, its
    /// `Content-Encoding` kept (what a relay passes on).
    public var decodesContent: Bool

    /// Creates a spec; only the URL is required.
    public init(
        url: String, method: String = "GET", headers: [(name: String, value: String)] = [], body: Data? = nil,
        connectTimeout: Duration = .seconds(5), timeout: Duration = .seconds(30), maxResponseBytes: Int = 64 << 20,
        decodesContent: Bool = true
    ) {
        self.decodesContent = decodesContent
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.connectTimeout = connectTimeout
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
    }

    /// Whether two specs describe the same exchange, headers compared in order.
    public static func == (lhs: FetchSpec, rhs: FetchSpec) -> Bool {
        lhs.url == rhs.url && lhs.method == rhs.method && lhs.body == rhs.body
            && lhs.connectTimeout == rhs.connectTimeout && lhs.timeout == rhs.timeout
            && lhs.maxResponseBytes == rhs.maxResponseBytes && lhs.decodesContent == rhs.decodesContent
            && lhs.headers.map(\.name) == rhs.headers.map(\.name) && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }

    /// Hashes the URL, method, headers and body.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        hasher.combine(method)
        for header in headers {
            hasher.combine(header.name)
            hasher.combine(header.value)
        }
        hasher.combine(body)
    }
}
