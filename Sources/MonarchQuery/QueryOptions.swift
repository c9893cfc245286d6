#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
import MonarchWire

/// How a query fetches: when it starts, whether it polls, its cache policy and how long its
/// value stays fresh in this process.
public struct QueryOptions: Sendable {
    /// When a query first asks.
    public enum Start: Sendable {
        /// As soon as the query is made (unless a shared value is still fresh).
        case immediately
        /// Not until ``Query/start()`` or ``Query/refetch()``; the state is `idle` until then.
        case onDemand
    }

    /// When the query first asks; ``Start/immediately`` by default.
    public var start: Start
    /// Refetch every interval while the query lives (the shortest interval among the queries
    /// sharing a key wins); nil (the default) never polls.
    public var pollInterval: Duration?
    /// The cache policy sent with the request, replacing the request's own; nil keeps it.
    public var policy: CachePolicy?
    /// How long a fetched value stays fresh: a query made or started within it uses the
    /// shared value without asking, and the request asks caches to keep the answer that long
    /// (its ``MonarchRequest/ttl``). Nil (the default) asks on every start and leaves the
    /// caches' TTL to the request.
    public var ttl: Duration?

    /// Options, each defaulting as described.
    public init(start: Start = .immediately, pollInterval: Duration? = nil, policy: CachePolicy? = nil, ttl: Duration? = nil) {
        self.start = start
        self.pollInterval = pollInterval
        self.policy = policy
        self.ttl = ttl
    }
}

/// A typed request with its cache policy and TTL replaced where a query's options set them.
struct QueryRequest<Base: MonarchRequest>: MonarchRequest {
    typealias Response = Base.Response
    var base: Base
    var options: QueryOptions

    var policy: CachePolicy? { options.policy ?? base.policy }
    var ttl: Duration? { options.ttl ?? base.ttl }

    var path: String { base.path }
    var method: String { base.method }
    var domain: RequestDomain { base.domain }
    var query: [QueryItem] { base.query }
    var headers: [String: String] { base.headers }
    var body: RequestBody? { base.body }
    var deadline: Duration? { base.deadline }
    var previewData: Response { base.previewData }
    func decode(_ body: Data) throws -> Response { try base.decode(body) }
}
