import Monarch
import MonarchRouter
import MonarchWire

/// What the coordinator does with one client request: the request as the providers see it,
/// the chain it goes down, its deadline, and the key it shares a trip under.
struct RequestPlan {
    /// The request with its route context, its path in canonical form.
    var request: Request
    /// The domain's chain.
    var providers: [any RequestProvider]
    /// The time the client waits at most.
    var deadline: Duration
    /// The key identical reads in flight (same request key and cache policy) share; nil for
    /// requests that are not ``Request/isShareable`` (mutations, credentials, conditions),
    /// which never share a trip.
    var sharedKey: String?

    /// Plans `message`: parses its path, finds its route and domain, fills in the upstream.
    ///
    /// The deadline is the shortest of the client's `deadlineMs`, the route's timeout and
    /// `defaultTimeout` (the latter only when the route sets none).
    /// - Throws: ``ChainError`` `invalidPath`, `noRoute` or `unknownDomain`.
    init(
        _ message: RequestMessage, router: Router<RouteOptions>, chains: [String: [WorkerPool]],
        defaultTimeout: Duration
    ) throws(ChainError) {
        let path: ResourcePath
        do {
            path = try ResourcePath(parsing: message.path)
        } catch {
            throw ChainError(.invalidPath, "invalid path \"\(message.path)\": \(error.message)")
        }
        guard let match = router.match(path) else {
            throw ChainError(.noRoute, "no route matches \"\(path.encoded)\"")
        }
        let route = match.target
        let domain = message.domain ?? route.domain
        guard let chain = chains[domain] else {
            throw ChainError(.unknownDomain, "no domain is called \"\(domain)\"")
        }
        let query = path.query + (message.query ?? [])
        let method = message.method ?? "GET"
        let key = RequestKey.make(method: method, domain: domain, encodedPath: path.encoded, query: query)
        var deadline = route.timeout ?? defaultTimeout
        if let asked = message.deadlineMs { deadline = min(deadline, .milliseconds(Int64(clamping: asked))) }
        request = Request(
            path: path.encoded, query: query, method: method, headers: message.headers ?? [:], body: message.body,
            policy: message.policy ?? route.policy, deadline: deadline,
            route: RouteContext(
                parameters: match.parameters,
                upstream: route.upstream?.url(parameters: match.parameters, remainder: match.remainder, query: query),
                ttl: route.ttl, cacheKey: key))
        providers = chain
        self.deadline = deadline
        // Reads share a trip only under the same policy: a `noCache` read must not take a cache's answer.
        // Nor does a read whose answer may be for its caller alone (credentials, conditions, ranges).
        sharedKey = request.isShareable ? "\(key) \(request.policy?.rawValue ?? "default")" : nil
    }
}
