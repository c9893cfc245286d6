import Monarch
import MonarchConfig
import MonarchRouter

/// What a request is routed by: the configuration in force (its routes, domains and limits),
/// the router built from its routes, each domain's chain over the coordinator's pools, and
/// the paths routed lately. A reload replaces it as a whole, between two loop callbacks, so a
/// request is planned by one routing or the next, never a mix.
struct Routing {
    /// The configuration in force.
    let configuration: Configuration
    /// Its routes, compiled.
    let router: Router<RouteOptions>
    /// Chains by domain name, in the configured order.
    let chains: [String: [any RequestProvider]]
    /// Paths seen lately, parsed and routed by ``router`` (empty after a reload).
    let routeCache: RouteCache
    /// Whether some route sets its own `httpBody`.
    private let routesLimitBodies: Bool

    /// The routing of `configuration` compiled to `router`, over `pools` (cache pools in
    /// `cachePools` by kind); every provider kind its domains name must have a pool.
    init(configuration: Configuration, router: Router<RouteOptions>, pools: [String: WorkerPool], cachePools: [String: CachePool]) {
        self.configuration = configuration
        self.router = router
        self.chains = Dictionary(uniqueKeysWithValues: configuration.domains.map { domain in
            (domain.name, domain.providers.map { kind -> any RequestProvider in cachePools[kind] ?? pools[kind]! })
        })
        self.routeCache = RouteCache(capacity: configuration.limits.routeCache)
        self.routesLimitBodies = configuration.routes.contains { $0.httpBodyBytes != nil }
    }

    /// The largest body an HTTP request for `target` (its request target: a path, or an
    /// absolute URL) and `host` (normalized, nil when it names none) may have: the `httpBody`
    /// of the route it is routed to, else `limits.httpBody` (also when the target is not a
    /// path or no route matches it: the request is refused later, but its body is read within
    /// the listener's limit). Routes only when some route sets `httpBody`.
    func httpBodyBytes(target: String, host: String?) -> Int {
        let limit = configuration.limits.httpBodyBytes
        guard routesLimitBodies, let path = try? ResourcePath(parsing: target) else { return limit }
        return router.match(path, host: router.routedHost(host))?.target.httpBodyBytes ?? limit
    }
}
