import MonarchWire

/// The route a `Router` chose for a path, with what the path bound.
public struct RouteMatch<Target: Sendable>: Sendable {
    /// The target the route was added with.
    public var target: Target
    /// The parameters the route's pattern bound, by name (decoded components).
    public var parameters: [String: String]
    /// The components covered by a trailing `...` (one or more), or empty for other routes.
    public var remainder: [String]
    /// The route's declaration index: 0 for the first route added to the router, and so on.
    public var index: Int
    /// The pattern of the route.
    public var pattern: RoutePattern
    /// The host the route was added for; nil for a route that serves any host.
    public var host: HostPattern?

    /// Creates a match.
    public init(
        target: Target, parameters: [String: String], remainder: [String], index: Int, pattern: RoutePattern,
        host: HostPattern? = nil
    ) {
        self.target = target
        self.parameters = parameters
        self.remainder = remainder
        self.index = index
        self.pattern = pattern
        self.host = host
    }
}
