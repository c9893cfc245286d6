import Monarch
import MonarchRouter

extension CacheKey {
    /// The key a cluster caches `request`'s answer under when its route's domain (or the
    /// domain the request names) is `domain`: its method, its path parsed as the coordinator
    /// parses it, and its query items after the path's own.
    ///
    /// - Throws: ``PathError`` when the request's path is not usable.
    public init(_ request: Request, domain: String) throws(PathError) {
        try self.init(method: request.method, domain: domain, parsing: request.path, query: request.query)
    }
}
