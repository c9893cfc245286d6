import MonarchWire

/// Routes: patterns with their targets, and the choice of one route for a request path.
///
/// Precedence, when several routes match one path: compare the two patterns' component kinds
/// from the left, where a constant beats a parameter (`:name`, with or without `where`), which
/// beats `:_`, which beats `...`; the first component where the kinds differ decides. Two routes
/// that match the same path always differ somewhere unless their kinds are identical, because
/// a route without `...` has exactly as many components as the path and `...` can only be last.
/// Identical kinds (say `a/:x` and `a/:y`) are a tie, and the route declared first wins. So for
/// the path `a/b` the routes `a/b`, `a/:x`, `a/:_`, `a/...`, `:x/b`, `...` win in that order,
/// whatever order they were added in. The outcome depends only on the patterns and the
/// declaration order, never on the path's query or fragment.
///
/// A route may also name a host (``HostPattern``): it then matches only requests for that
/// host, and a route without one matches requests for any host and requests without host. The
/// host is compared before the path, as virtual hosts are: a route for the exact host beats a
/// wildcard one (`*.example.com`), a wildcard with more labels beats one with fewer, and any
/// route with a host that matches beats every route without one, whatever their patterns; the
/// path's precedence above then decides among routes of the same host rank.
///
/// Routes are kept in precedence order and matching tries them in turn: O(routes) per path.
public struct Router<Target: Sendable>: Sendable {
    private struct Route: Sendable {
        var pattern: RoutePattern
        var host: HostPattern?
        var target: Target
        var index: Int
    }

    /// In precedence order: by host, then by component kinds, then by declaration index.
    private var routes: [Route] = []
    /// The host patterns the routes name, each once.
    private var hosts: [HostPattern] = []

    /// Creates a router with no routes.
    public init() {}

    /// Adds a route, for requests to `host` alone when given. Its declaration index is the
    /// number of routes added before it; it ranks after every earlier route with the same host
    /// rank and component kinds.
    public mutating func add(_ pattern: RoutePattern, host: HostPattern? = nil, _ target: Target) {
        let route = Route(pattern: pattern, host: host, target: target, index: routes.count)
        let position = routes.firstIndex { Self.ranksBefore(route, $0) } ?? routes.endIndex
        routes.insert(route, at: position)
        if let host, !hosts.contains(host) { hosts.append(host) }
    }

    /// The winning route for `path` requested for `host` (lowercase, without port or trailing
    /// dot; nil when the request names none) by the precedence rule above, or nil when no route
    /// matches.
    public func match(_ path: ResourcePath, host: String? = nil) -> RouteMatch<Target>? {
        for route in routes {
            if let found = matched(route, path, host: host) { return found }
        }
        return nil
    }

    /// Every route that matches `path` requested for `host`, the winner first, then the routes
    /// it shadows in precedence order (for diagnostics such as explaining why a route was not
    /// chosen).
    public func matches(_ path: ResourcePath, host: String? = nil) -> [RouteMatch<Target>] {
        routes.compactMap { matched($0, path, host: host) }
    }

    /// `host` when some route's host matches it, else nil: the host as far as routing goes (a
    /// request for a host no route names is routed as one without host). Lets a caller keep
    /// what it works out per host without keeping a copy for every host a client makes up.
    public func routedHost(_ host: String?) -> String? {
        guard let host, hosts.contains(where: { $0.matches(host) }) else { return nil }
        return host
    }

    /// Whether some route names a host.
    public var hasHostRoutes: Bool { !hosts.isEmpty }

    /// Every route's pattern, host and target, in precedence order.
    public var patterns: [(pattern: RoutePattern, host: HostPattern?, target: Target)] {
        routes.map { ($0.pattern, $0.host, $0.target) }
    }

    /// The number of routes added.
    public var count: Int { routes.count }

    /// True when no route was added.
    public var isEmpty: Bool { routes.isEmpty }

    private func matched(_ route: Route, _ path: ResourcePath, host: String?) -> RouteMatch<Target>? {
        if let routeHost = route.host {
            guard let host, routeHost.matches(host) else { return nil }
        }
        guard let (parameters, remainder) = route.pattern.match(path) else { return nil }
        return RouteMatch(
            target: route.target, parameters: parameters, remainder: remainder, index: route.index,
            pattern: route.pattern, host: route.host)
    }

    /// True when `lhs` strictly outranks `rhs`: its host ranks first, or their hosts rank the
    /// same and at the first position where their kinds differ `lhs` has the smaller kind.
    /// (When one kind list is a prefix of the other the shorter ranks first; such routes can
    /// never match the same path, so this only fixes an order.)
    private static func ranksBefore(_ lhs: Route, _ rhs: Route) -> Bool {
        let (left, right) = (hostRank(lhs.host), hostRank(rhs.host))
        guard left == right else { return left < right }
        return lhs.pattern.kinds.lexicographicallyPrecedes(rhs.pattern.kinds)
    }

    /// A host's rank, the smaller first: an exact host, then wildcards by more labels, then none.
    /// Two different hosts of one rank never match the same request.
    private static func hostRank(_ host: HostPattern?) -> (Int, Int) {
        guard let host else { return (2, 0) }
        return host.isWildcard ? (1, -host.labelCount) : (0, 0)
    }
}
