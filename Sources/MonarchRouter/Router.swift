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
/// Routes are kept in precedence order and matching tries them in turn: O(routes) per path.
public struct Router<Target: Sendable>: Sendable {
    private struct Route: Sendable {
        var pattern: RoutePattern
        var target: Target
        var index: Int
    }

    /// In precedence order: by component kinds, then by declaration index.
    private var routes: [Route] = []

    /// Creates a router with no routes.
    public init() {}

    /// Adds a route. Its declaration index is the number of routes added before it; it ranks
    /// after every earlier route with the same component kinds.
    public mutating func add(_ pattern: RoutePattern, _ target: Target) {
        let route = Route(pattern: pattern, target: target, index: routes.count)
        let position = routes.firstIndex { Self.ranksBefore(route.pattern, $0.pattern) } ?? routes.endIndex
        routes.insert(route, at: position)
    }

    /// The winning route for `path` by the precedence rule above, or nil when no route matches.
    public func match(_ path: ResourcePath) -> RouteMatch<Target>? {
        for route in routes {
            if let found = matched(route, path) { return found }
        }
        return nil
    }

    /// Every route that matches `path`, the winner first, then the routes it shadows in
    /// precedence order (for diagnostics such as explaining why a route was not chosen).
    public func matches(_ path: ResourcePath) -> [RouteMatch<Target>] {
        routes.compactMap { matched($0, path) }
    }

    /// Every route's pattern and target, in precedence order.
    public var patterns: [(pattern: RoutePattern, target: Target)] { routes.map { ($0.pattern, $0.target) } }

    /// The number of routes added.
    public var count: Int { routes.count }

    /// True when no route was added.
    public var isEmpty: Bool { routes.isEmpty }

    private func matched(_ route: Route, _ path: ResourcePath) -> RouteMatch<Target>? {
        guard let (parameters, remainder) = route.pattern.match(path) else { return nil }
        return RouteMatch(
            target: route.target, parameters: parameters, remainder: remainder, index: route.index,
            pattern: route.pattern)
    }

    /// True when `lhs` strictly outranks `rhs`: at the first position where their kinds differ
    /// `lhs` has the smaller kind. (When one kind list is a prefix of the other the shorter
    /// ranks first; such routes can never match the same path, so this only fixes an order.)
    private static func ranksBefore(_ lhs: RoutePattern, _ rhs: RoutePattern) -> Bool {
        lhs.kinds.lexicographicallyPrecedes(rhs.kinds)
    }
}
