import MonarchConfig
import MonarchRouter
import MonarchWire

/// What a route says about the requests it matches.
struct RouteOptions: Sendable {
    /// The domain whose chain serves the route.
    var domain: String
    /// Where network workers fetch from, with the route's parameters to fill in.
    var upstream: UpstreamTemplate?
    /// How long responses may be cached.
    var ttl: Duration?
    /// The route's deadline, when it sets one.
    var timeout: Duration?
    /// The route's cache policy, when it sets one.
    var policy: CachePolicy?
    /// Whether credentialed requests may share (`public:`).
    var isPublic = false
    /// The request headers the route forwards and keys (`headers:`), lowercase.
    var keyedHeaders: [String] = []
    /// The largest HTTP request body of the route (`httpBody:`), when it sets one.
    var httpBodyBytes: Int?
}

extension Router where Target == RouteOptions {
    /// The router of a configuration's routes, in declaration order.
    ///
    /// - Throws: ``ConfigError`` naming the route (`routes[2].match`) whose pattern, host or
    ///   upstream template is invalid.
    init(routes: [Configuration.Route]) throws(ConfigError) {
        self.init()
        for (index, route) in routes.enumerated() {
            let pattern: RoutePattern
            do {
                pattern = try RoutePattern(route.match, where: route.constraints)
            } catch {
                throw ConfigError(file: nil, line: nil, keyPath: "routes[\(index)].match", problem: error.message)
            }
            var upstream: UpstreamTemplate?
            if let template = route.upstream {
                do {
                    upstream = try UpstreamTemplate(template, for: pattern)
                } catch {
                    throw ConfigError(file: nil, line: nil, keyPath: "routes[\(index)].upstream", problem: error.message)
                }
            }
            var host: HostPattern?
            if let text = route.host {
                do {
                    host = try HostPattern(text)
                } catch {
                    throw ConfigError(file: nil, line: nil, keyPath: "routes[\(index)].host", problem: error.message)
                }
            }
            add(pattern, host: host, RouteOptions(
                domain: route.domain, upstream: upstream, ttl: route.ttl, timeout: route.timeout, policy: route.policy,
                isPublic: route.isPublic, keyedHeaders: route.headers, httpBodyBytes: route.httpBodyBytes))
        }
    }
}
