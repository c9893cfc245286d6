#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MonarchWire

/// A request that knows the type of its answer, and what to show when there is no service to
/// ask (previews, tests).
///
/// Only ``path`` and ``previewData`` are required; everything else has a default (`GET`, the
/// route's domain, no query, headers or body, the route's policy and deadline).
///
/// ```swift
/// struct CurrentUser: MonarchRequest {
///     typealias Response = User
///     var path: String { "users/me" }
///     var previewData: User { .example }
/// }
/// let user = try await service.perform(CurrentUser())
/// ```
public protocol MonarchRequest: Sendable {
    /// What a successful (2xx) body decodes to.
    associatedtype Response: Decodable & Sendable
    /// The resource's path, such as `users/1`.
    var path: String { get }
    /// The method, uppercase; `GET` by default.
    var method: String { get }
    /// Which providers (in one process) or which chain (in a cluster) answer; ``RequestDomain/any``
    /// (the route's) by default.
    var domain: RequestDomain { get }
    /// Query items, in order; none by default. ``QueryItem/init(_:_:)`` takes typed values.
    var query: [QueryItem] { get }
    /// Request headers; none by default. A ``body`` adds its `Content-Type` unless set here.
    var headers: [String: String] { get }
    /// The body of a mutation; none by default (see ``RequestBody/json(_:encoder:)``).
    var body: RequestBody? { get }
    /// The cache policy; nil leaves it to the route.
    var policy: CachePolicy? { get }
    /// How long to wait at most; nil leaves it to the route (or 30 s).
    var deadline: Duration? { get }
    /// How long caches may keep the answer (sent as `ttlMs`; a coordinator keeps it within the
    /// route's limits); nil leaves it to the route.
    var ttl: Duration? { get }
    /// The answer a preview service gives (see ``MonarchPreview``).
    var previewData: Response { get }
    /// Turns a successful body into a ``Response``; JSON by default.
    func decode(_ body: Data) throws -> Response
}

extension MonarchRequest {
    /// `GET`.
    public var method: String { "GET" }
    /// ``RequestDomain/any``: the route decides.
    public var domain: RequestDomain { .any }
    /// No query items.
    public var query: [QueryItem] { [] }
    /// No headers.
    public var headers: [String: String] { [:] }
    /// No body.
    public var body: RequestBody? { nil }
    /// The route's policy.
    public var policy: CachePolicy? { nil }
    /// The route's deadline.
    public var deadline: Duration? { nil }
    /// The route's TTL.
    public var ttl: Duration? { nil }

    /// Decodes `body` as JSON.
    public func decode(_ body: Data) throws -> Response {
        try JSONDecoder().decode(Response.self, from: body)
    }

    /// The untyped request: every part this typed request sets, the body's content type
    /// added to the headers unless they name one.
    ///
    /// - Throws: ``MonarchError/chainFailure(_:)`` with code `invalidRequest` when the body
    ///   could not be encoded.
    public func request() throws(MonarchError) -> Request {
        var headers = headers
        var data: Data?
        if let body {
            data = try body.data()
            if let type = body.contentType, !headers.keys.contains(where: { $0.lowercased() == "content-type" }) {
                headers["Content-Type"] = type
            }
        }
        return Request(
            path: path, domain: domain, query: query, method: method.uppercased(), headers: headers, body: data,
            policy: policy, deadline: deadline, route: RouteContext(ttl: ttl))
    }
}
