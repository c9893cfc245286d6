import Monarch
import MonarchConfig
import MonarchRouter
import MonarchWire

/// Turns what a client names — a resource path, a path prefix, a key, a key prefix or a tag —
/// into what cache workers keep: keys, key prefixes and tags. Paths go through the router
/// exactly as a request's path does (``CacheKey``), so `users/1` names the entries a `monarch
/// get users/1` made.
struct TargetResolution {
    let router: Router<RouteOptions>
    let domains: Set<String>
    /// The domains whose chain has a cache.
    let cachedDomains: Set<String>
    let limits: Configuration.Limits

    /// The keys, prefixes or tag `target` stands for, never empty:
    /// - a key, prefix or tag: itself;
    /// - a path: its `GET` and `HEAD` keys in its domain (the given one, else its route's), as
    ///   requested for `host` (an HTTP request's `Host`, normalized; nil for the wire's): the
    ///   keys of a route with a host carry it (``CacheKey``);
    /// - a path prefix: the `GET` and `HEAD` key prefixes in the given domain, else in each
    ///   domain with a cache of the routes without host that paths starting with it may match
    ///   (the entries of routes with a host are named by their key prefix, `GET site
    ///   //example.com/`).
    ///
    /// - Throws: ``ChainError``: `requestTooLarge` (over `limits.invalidateBytes`),
    ///   `invalidPath`, `noRoute` (no route matches the path, or no route of a domain with a
    ///   cache may match paths with the prefix), `unknownDomain`.
    func resolve(_ target: CacheTarget, host: String? = nil) throws(ChainError) -> [CacheTarget] {
        let bytes = target.text.utf8.count
        guard bytes <= limits.invalidateBytes else {
            throw ChainError(.requestTooLarge, "the \(Self.noun(target)) is \(bytes) bytes; the limit is \(limits.invalidateBytes) (limits.invalidateBytes)")
        }
        switch target {
        case .key, .prefix, .tag:
            return [target]
        case .path(let text, let domain):
            let path: ResourcePath
            do throws(PathError) {
                path = try ResourcePath(parsing: text)
            } catch {
                throw ChainError(.invalidPath, "invalid path \(LogText.quoted(text)): \(error.message)")
            }
            guard let match = router.match(path, host: router.routedHost(host)) else {
                let hosts = host == nil && router.hasHostRoutes
                    ? " without host (the entries of a route with a host are named by PURGE with that Host, or by key: GET DOMAIN //HOST/PATH)"
                    : ""
                throw ChainError(
                    .noRoute, "no route\(hosts) matches \(LogText.quoted(path.encoded)), so nothing can be cached under it")
            }
            let name = try checked(domain ?? match.target.domain)
            let routeHost = match.host?.description
            return CacheKey.cachedMethods.map { .key(CacheKey(method: $0, domain: name, host: routeHost, path: path).rawValue) }
        case .pathPrefix(let text, let domain):
            let prefix: (components: [String], encoded: String, endsWithSlash: Bool)
            do throws(PathError) {
                prefix = try CacheKey.canonicalPathPrefix(text)
            } catch {
                throw ChainError(.invalidPath, "invalid path prefix \(LogText.quoted(text)): \(error.message)")
            }
            var names: [String]
            if let domain {
                names = [try checked(domain)]
            } else {
                let reached = router.targets(forPathsStartingWith: prefix.components, lastIsWhole: prefix.endsWithSlash).map(\.domain)
                guard !reached.isEmpty else {
                    throw ChainError(.noRoute, "no route matches paths starting with \(LogText.quoted(prefix.encoded))")
                }
                names = Set(reached).intersection(cachedDomains).sorted()
                guard !names.isEmpty else {
                    throw ChainError(.noRoute, "paths starting with \(LogText.quoted(prefix.encoded)) reach only domains "
                        + "that keep no cache (\(Set(reached).sorted().joined(separator: ", "))), so nothing is cached under it")
                }
            }
            return names.flatMap { name in
                CacheKey.cachedMethods.map { .prefix(CacheKey.prefix(method: $0, domain: name, pathPrefix: prefix.encoded)) }
            }
        }
    }

    private func checked(_ domain: String) throws(ChainError) -> String {
        guard domains.contains(domain) else { throw ChainError(.unknownDomain, "no domain is called \(LogText.quoted(domain))") }
        return domain
    }

    private static func noun(_ target: CacheTarget) -> String {
        switch target {
        case .key: "key"
        case .prefix: "prefix"
        case .tag: "tag"
        case .path: "path"
        case .pathPrefix: "path prefix"
        }
    }
}

extension Coordinator {
    /// The resolution of client targets against this coordinator's routes and domains.
    var targetResolution: TargetResolution {
        TargetResolution(
            router: router, domains: Set(chains.keys),
            cachedDomains: Set(chains.filter { $0.value.contains { $0 is CachePool } }.keys), limits: limits)
    }
}
