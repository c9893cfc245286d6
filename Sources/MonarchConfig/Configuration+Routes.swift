import MonarchWire

extension Configuration {
    /// The longest a request may run: `limits.timeout`, or a route's longer `timeout`.
    public var longestRequestTimeout: Duration {
        routes.compactMap(\.timeout).reduce(limits.timeout, max)
    }

    /// The keys a route may have.
    static let routeKeys = [
        "match", "host", "where", "domain", "upstream", "ttl", "timeout", "policy", "public", "headers", "httpBody",
    ]

    /// Parses `routes`: a list of routes, each naming one of `domains`, their `httpBody` within
    /// what `limits.maxFrame` carries.
    static func parseRoutes(_ node: ConfigNode, domains: [String], limits: Limits) throws(ConfigError) -> [Route] {
        var routes: [Route] = []
        for item in try node.sequence(expecting: "a list of routes") {
            routes.append(try parseRoute(item, domains: domains, limits: limits))
        }
        return routes
    }

    /// Parses one route: `match` and `domain` required; `host` (a ``HostPattern``), `where`,
    /// `upstream`, `ttl`, `timeout`, `policy`, `public`, `headers` and `httpBody` (a byte size
    /// no larger than ``FrameBodyRoom/largestBody(fitting:)`` of `limits.maxFrame`) optional.
    private static func parseRoute(_ node: ConfigNode, domains: [String], limits: Limits) throws(ConfigError) -> Route {
        let fields = try node.mapping(allowedKeys: routeKeys, expecting: "a route mapping with match and domain")
        let match = try fields.required("match", describing: "a path pattern such as users/:id")
            .nonEmptyString(expecting: "a path pattern such as users/:id")
        let domainNode = try fields.required("domain", describing: "one of the domains (\(listing(domains, conjunction: "or")))")
        let domain = try domainNode.string(expecting: "a domain name")
        guard domains.contains(domain) else {
            throw domainNode.error(unknownKeyProblem(domain, allowed: domains, noun: "domain"))
        }
        var route = Route(match: match, domain: domain)
        if let hostNode = fields.optional("host") {
            let text = try hostNode.string(expecting: "a host name such as example.com or *.example.com")
            do {
                _ = try HostPattern(text)
            } catch {
                throw hostNode.error(error.message)
            }
            route.host = text
        }
        if let whereNode = fields.optional("where") {
            let constraints = try whereNode.mapping(
                allowedKeys: nil, expecting: "a mapping of parameter name to regular expression"
            )
            for entry in constraints.entries {
                let pattern = try entry.value.string(expecting: "a regular expression")
                do {
                    _ = try Regex(pattern)
                } catch {
                    throw entry.value.error("\"\(pattern)\" is not a valid regular expression: \(error)")
                }
                route.constraints[entry.key] = pattern
            }
        }
        route.upstream = try fields.optional("upstream")?.nonEmptyString(expecting: "an upstream URL")
        // 0s: an answer is fresh only as long as its upstream's Cache-Control says (an HTTP cache's rule).
        route.ttl = try fields.optional("ttl")?.duration()
        route.timeout = try fields.optional("timeout")?.positiveDuration()
        if let policyNode = fields.optional("policy") {
            let names = CachePolicy.allCases.map(\.rawValue)
            let name = try policyNode.string(expecting: "a cache policy (\(listing(names, conjunction: "or")))")
            guard let policy = CachePolicy(rawValue: name) else {
                throw policyNode.error(unknownKeyProblem(name, allowed: names, noun: "cache policy"))
            }
            route.policy = policy
        }
        route.isPublic = try fields.optional("public")?.bool() ?? false
        if let headersNode = fields.optional("headers") {
            for item in try headersNode.sequence(expecting: "a list of request header names") {
                let name = try item.nonEmptyString(expecting: "a request header name such as X-Tenant")
                guard name.utf8.allSatisfy(isHeaderNameByte) else {
                    throw item.error("\"\(name)\" is not a header name (an HTTP token)")
                }
                let lowered = name.lowercased()
                if !route.headers.contains(lowered) { route.headers.append(lowered) }
            }
        }
        if let bodyNode = fields.optional("httpBody") {
            let bytes = try bodyNode.byteSize()
            let largest = FrameBodyRoom.largestBody(fitting: limits.maxFrameBytes)
            guard bytes <= largest else {
                throw bodyNode.error(
                    "is \(bytes) bytes, over the \(largest) a body may be so that its request fits one frame "
                        + "(limits.maxFrame, \(limits.maxFrameBytes) bytes, in base64 with 64KB for the rest); "
                        + "lower it, or raise limits.maxFrame (at most 256MB)")
            }
            route.httpBodyBytes = bytes
        }
        return route
    }

    /// Whether `byte` may be in a header name (a tchar of RFC 9110 §5.6.2).
    private static func isHeaderNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
